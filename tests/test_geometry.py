"""attention_core.geometry: the weighted sum, the loop version and the 2-D picture."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import attention_core as ac
from attention_core.geometry import (
    can_use_pca,
    contributions_frame,
    first_two_dims,
    loop_self_attention,
    pca_basis,
    project_2d,
    scatter_frame,
    weighted_sum_table,
)
from attention_core.presets import LIGHT, ONE_HOT, PRESETS, TRANSFORMER


@pytest.fixture
def transformer_steps() -> ac.AttentionSteps:
    """Simplified attention (Q = K = V = X, unscaled) on 000's printed embeddings."""
    return ac.self_attention(TRANSFORMER.matrix(), scale=False)


def test_weighted_sum_table_ends_with_the_context_vector(transformer_steps):
    X = TRANSFORMER.matrix()
    table = weighted_sum_table(transformer_steps.weights[1], X)
    assert table.shape == (7, 4)
    assert torch.allclose(table[:-1, 0], transformer_steps.weights[1])
    assert torch.allclose(table[:-1, 1:], transformer_steps.weights[1].unsqueeze(1) * X)
    assert table[-1, 0].item() == pytest.approx(1.0, abs=1e-6)
    assert torch.allclose(table[-1, 1:], transformer_steps.context[1], atol=1e-6)
    assert torch.allclose(table[-1, 1:], torch.tensor(TRANSFORMER.printed["query_context"]), atol=2e-4)


def test_weighted_sum_table_light_matches_001():
    steps = ac.self_attention(LIGHT.matrix(), scale=False)
    table = weighted_sum_table(steps.weights[4], LIGHT.matrix())
    assert torch.allclose(table[-1, 1:], torch.tensor(LIGHT.printed["query_context"]), atol=1e-4)


def test_contributions_frame_sums_to_the_context(transformer_steps):
    frame = contributions_frame(transformer_steps.weights[1], TRANSFORMER.matrix(), list(TRANSFORMER.tokens))
    assert len(frame) == 6 * 3
    assert set(frame.columns) >= {"token", "token_pos", "dimension", "weight", "value", "contribution"}
    totals = frame.groupby("dimension", sort=False)["contribution"].sum().to_numpy()
    assert totals.tolist() == pytest.approx(transformer_steps.context[1].tolist(), abs=1e-6)
    assert (frame["contribution"] - frame["weight"] * frame["value"]).abs().max() < 1e-6


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.key)
def test_loops_equal_matrices_and_torch(preset):
    X = preset.matrix()
    loop_weights, loop_context = loop_self_attention(X)
    steps = ac.self_attention(X, scale=False)
    assert torch.allclose(loop_weights, steps.weights, atol=1e-6)
    assert torch.allclose(loop_context, steps.context, atol=1e-6)
    reference = F.scaled_dot_product_attention(X, X, X, scale=1.0)
    assert torch.allclose(loop_context, reference, atol=1e-6)


def test_loops_one_hot_give_004s_outputs():
    _, context = loop_self_attention(ONE_HOT.matrix())
    assert torch.allclose(context[0], torch.tensor(ONE_HOT.printed["query_weights"]), atol=1e-6)
    assert torch.allclose(context.diagonal(), torch.full((4,), 0.47536689), atol=1e-6)


def test_first_two_dims():
    M = torch.arange(12.0).reshape(4, 3)
    assert torch.equal(first_two_dims(M), M[:, :2])
    one = torch.tensor([[1.0], [2.0]])
    assert first_two_dims(one).tolist() == [[1.0, 0.0], [2.0, 0.0]]


def test_pca_basis_is_orthonormal_and_matches_svd():
    X = ac.random_embeddings([f"w{i}" for i in range(10)], 6, seed=3)
    mean, basis, share = pca_basis(X)
    assert torch.allclose(mean, X.mean(dim=0))
    assert torch.allclose(basis.T @ basis, torch.eye(2), atol=1e-5)
    s = torch.linalg.svdvals(X - X.mean(dim=0))
    assert share == pytest.approx(float((s[:2] ** 2).sum() / (s**2).sum()), rel=1e-5)
    assert 0 < share <= 1


def test_pca_of_planar_points_keeps_all_distances():
    """Points that lie in a plane inside 4-D space keep their pairwise distances in the PCA picture."""
    plane = torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.0, 0.6, 0.8, 0.0]])  # orthonormal rows
    coords = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [3.0, 1.0], [-1.0, 1.5]])
    X = coords @ plane + torch.tensor([5.0, -1.0, 2.0, 0.5])
    picture = project_2d(X, X)
    assert picture.method == "pca"
    assert picture.explained == pytest.approx(1.0, abs=1e-5)
    assert torch.allclose(torch.cdist(picture.inputs, picture.inputs), torch.cdist(X, X), atol=1e-4)


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.key)
@pytest.mark.parametrize("method", ["pca", "first two"])
def test_same_map_keeps_blends(preset, method):
    """The map is affine and each row of W sums to 1, so picture(context) = W @ picture(inputs)."""
    X = preset.matrix()
    steps = ac.self_attention(X, scale=False)
    picture = project_2d(X, steps.context, method)
    assert picture.inputs.shape == picture.context.shape == (X.shape[0], 2)
    assert torch.allclose(picture.context, steps.weights @ picture.inputs, atol=1e-5)


def test_project_2d_falls_back_when_pca_cannot_work():
    single = torch.tensor([[0.3, -0.2, 0.9]])
    assert not can_use_pca(single)
    picture = project_2d(single, single)
    assert picture.method == "first two" and picture.explained is None
    assert torch.allclose(picture.inputs, single[:, :2])
    flat = torch.ones(3, 4)
    assert not can_use_pca(flat)
    assert project_2d(flat, flat).method == "first two"
    two_d = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert project_2d(two_d, two_d).axis_titles == ("d1", "d2")
    one_d = torch.tensor([[1.0], [2.0]])
    picture = project_2d(one_d, one_d)
    assert picture.inputs.tolist() == [[1.0, 0.0], [2.0, 0.0]]


def test_project_2d_is_deterministic():
    X = ac.random_embeddings([f"w{i}" for i in range(8)], 5, seed=11)
    first, second = project_2d(X, X), project_2d(X, X)
    assert torch.equal(first.inputs, second.inputs)
    _, basis, _ = pca_basis(X)
    largest = basis.gather(0, basis.abs().argmax(dim=0, keepdim=True))
    assert bool((largest > 0).all())


def test_scatter_frame(transformer_steps):
    picture = project_2d(TRANSFORMER.matrix(), transformer_steps.context)
    frame = scatter_frame(picture, list(TRANSFORMER.tokens))
    assert list(frame.columns) == ["x", "y", "label", "kind"]
    assert len(frame) == 12
    assert frame["kind"].value_counts().to_dict() == {"input": 6, "context": 6}
    context_rows = frame[frame["kind"] == "context"]
    assert torch.allclose(torch.tensor(context_rows[["x", "y"]].to_numpy()), picture.context.double(), atol=1e-6)
    assert context_rows["label"].tolist() == list(TRANSFORMER.tokens)
