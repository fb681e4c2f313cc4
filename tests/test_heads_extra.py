"""Tests of the multi-head-lesson additions to attention_core.heads and attention_core.reference."""

from __future__ import annotations

import pytest
import torch

import attention_core as ac
from attention_core.heads import (
    LIFT_WIDTHS,
    head_column_labels,
    head_output_parts,
    head_shapes,
    lift_embeddings,
    lift_weight,
    parameter_counts,
    random_head_weights,
    valid_head_counts,
)
from attention_core.masks import block_query_row
from attention_core.reference import (
    check_heads_with_sdpa,
    check_multi_head,
    mha_reference,
    torch_parameter_count,
)


@pytest.fixture
def X() -> torch.Tensor:
    """The journey preset, (6, 3), lifted to d_model = 8 by a seeded W_in."""
    small = ac.PRESETS_BY_KEY["journey"].matrix()
    return lift_embeddings(small, lift_weight(3, 8, seed=0))


def test_random_head_weights_are_seeded_and_reuse_the_projection_helpers():
    W = random_head_weights(8, seed=5)
    again = random_head_weights(8, seed=5)
    other = random_head_weights(8, seed=6)
    projections = ac.random_projections(8, 8, 5)
    for name in ("W_q", "W_k", "W_v"):
        assert getattr(W, name).shape == (8, 8)
        assert torch.equal(getattr(W, name), getattr(again, name))
        assert torch.equal(getattr(W, name), getattr(projections, name))
        assert not torch.equal(getattr(W, name), getattr(other, name))
    assert torch.equal(W.W_o, ac.random_output_weight(8, 5))


@pytest.mark.parametrize("width", LIFT_WIDTHS)
def test_lift_is_a_seeded_matrix_product(width):
    small = ac.PRESETS_BY_KEY["light"].matrix()  # (6, 3)
    W_in = lift_weight(3, width, seed=1)
    assert W_in.shape == (3, width)
    assert torch.equal(W_in, lift_weight(3, width, seed=1))
    assert not torch.equal(W_in, lift_weight(3, width, seed=2))
    lifted = lift_embeddings(small, W_in)
    assert lifted.shape == (6, width)
    assert torch.allclose(lifted, torch.einsum("ti,id->td", small, W_in))


def test_lift_weight_refuses_a_bad_seed():
    with pytest.raises(ValueError):
        lift_weight(3, 8, seed=-1)


@pytest.mark.parametrize(
    ("d_model", "expected"), [(3, [1, 3]), (8, [1, 2, 4, 8]), (12, [1, 2, 3, 4, 6]), (16, [1, 2, 4, 8])]
)
def test_valid_head_counts(d_model, expected):
    assert valid_head_counts(d_model) == expected


def test_head_shapes_written_out():
    shapes = dict(head_shapes(6, 8, 2))
    assert shapes["X"] == (6, 8)
    assert shapes["split into heads"] == (2, 6, 4)
    assert shapes["weights = softmax(scores)"] == (2, 6, 6)
    assert shapes["context_h = weights_h V_h"] == (2, 6, 4)
    assert shapes["output = concat W_o"] == (6, 8)


def test_head_shapes_match_the_real_tensors(X):
    W = random_head_weights(8, seed=0)
    steps = ac.multi_head_attention(X, W.W_q, W.W_k, W.W_v, W.W_o, num_heads=4)
    shapes = dict(head_shapes(6, 8, 4))
    assert shapes["split into heads"] == tuple(ac.split_heads(X @ W.W_q, 4).shape)
    assert shapes["weights = softmax(scores)"] == tuple(steps.weights.shape)
    assert shapes["concat (heads side by side)"] == tuple(steps.concat.shape)


def test_head_shapes_refuse_a_count_that_does_not_divide():
    with pytest.raises(ValueError, match="cannot be split"):
        head_shapes(6, 8, 3)


def test_head_column_labels():
    assert head_column_labels(8, 2) == ["h1·1", "h1·2", "h1·3", "h1·4", "h2·1", "h2·2", "h2·3", "h2·4"]
    assert head_column_labels(3, 3) == ["h1·1", "h2·1", "h3·1"]


@pytest.mark.parametrize("num_heads", [1, 2, 4, 8])
def test_head_output_parts_add_up_to_the_output_and_to_nn_multihead_attention(X, num_heads):
    W = random_head_weights(8, seed=3)
    steps = ac.multi_head_attention(X, W.W_q, W.W_k, W.W_v, W.W_o, num_heads=num_heads, mask=ac.causal_mask(6))
    parts = head_output_parts(steps, W.W_o)
    assert parts.shape == (num_heads, 6, 8)
    assert torch.allclose(parts.sum(dim=0), steps.output, atol=1e-6)
    expected, _ = mha_reference(X, W.W_q, W.W_k, W.W_v, W.W_o, num_heads=num_heads, mask=ac.causal_mask(6))
    assert torch.allclose(parts.sum(dim=0), expected, atol=1e-5)


def test_parameter_counts_for_768():
    assert parameter_counts(768) == {
        "no biases": 2_359_296,
        "output bias only": 2_360_064,
        "all biases": 2_362_368,
    }


@pytest.mark.parametrize(("d_model", "num_heads"), [(8, 2), (768, 12)])
def test_parameter_counts_match_torch(d_model, num_heads):
    counts = parameter_counts(d_model)
    assert torch_parameter_count(d_model, num_heads, bias=False) == counts["no biases"]
    assert torch_parameter_count(d_model, num_heads, bias=True) == counts["all biases"]


def test_sdpa_check_covers_a_fully_masked_row_that_nn_multihead_attention_turns_into_nan(X):
    W = random_head_weights(8, seed=0)
    mask = block_query_row(ac.causal_mask(6), 2)
    steps = ac.multi_head_attention(X, W.W_q, W.W_k, W.W_v, W.W_o, num_heads=2, mask=mask)
    per_head = check_heads_with_sdpa(steps, mask=mask)
    assert len(per_head) == 2 and max(per_head) < 1e-6
    assert steps.output[2].eq(0).all()
    output, _ = mha_reference(X, W.W_q, W.W_k, W.W_v, W.W_o, num_heads=2, mask=mask)
    assert torch.isnan(output[2]).all()
    check = check_multi_head(steps, X, W.W_q, W.W_k, W.W_v, W.W_o, num_heads=2, mask=mask)
    assert check["fully_masked_rows"] == 1
    assert check["output"] < 1e-5 and check["weights"] < 1e-5


def test_sdpa_check_detects_a_wrong_context(X):
    W = random_head_weights(8, seed=0)
    steps = ac.multi_head_attention(X, W.W_q, W.W_k, W.W_v, W.W_o, num_heads=2)
    head = steps.heads[0]
    broken = type(head)(
        head.Q, head.K, head.V, head.scores, head.scaled_scores, head.masked_scores, head.weights, head.context + 0.01
    )
    wrong = type(steps)((broken, steps.heads[1]), steps.concat, steps.output)
    assert check_heads_with_sdpa(wrong, mask=None)[0] == pytest.approx(0.01, abs=1e-6)
