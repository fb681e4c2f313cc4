"""attention_core.projections: seeded weight matrices at unit-variance scale, and recovering W by least squares."""

from __future__ import annotations

import dataclasses
import math

import pandas as pd
import pytest
import torch

from attention_core.attention import self_attention
from attention_core.presets import JOURNEY, LIGHT
from attention_core.projections import (
    MAX_D_K,
    Projections,
    matches_002_inputs,
    projection_parameter_count,
    random_matrix,
    random_output_projection,
    random_projections,
    recover_projection,
    recovered_002_projections,
    reproduce_002,
    tutorial_002_pitfall,
    validate_projection_matrix,
)
from attention_core.reference import sdpa_reference


@pytest.fixture
def synthetic() -> tuple[torch.Tensor, torch.Tensor]:
    """X (10, 4) and a known W (4, 3), both float64 and seeded."""
    generator = torch.Generator().manual_seed(2024)
    X = torch.randn(10, 4, generator=generator, dtype=torch.float64)
    W = torch.randn(4, 3, generator=generator, dtype=torch.float64)
    return X, W


def test_random_projections_are_seeded():
    first = random_projections(6, 4, seed=9)
    again = random_projections(6, 4, seed=9)
    other = random_projections(6, 4, seed=10)
    assert isinstance(first, Projections)
    for name in ("W_q", "W_k", "W_v"):
        W = getattr(first, name)
        assert W.shape == (6, 4) and W.dtype == torch.float32
        assert torch.equal(W, getattr(again, name))
        assert not torch.equal(W, getattr(other, name))
    assert not torch.equal(first.W_q, first.W_k) and not torch.equal(first.W_k, first.W_v)
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.W_q = first.W_k  # type: ignore[misc]


def test_random_projections_float64_are_the_same_numbers():
    W64 = random_projections(5, 3, seed=1, dtype=torch.float64)
    assert W64.W_q.dtype == torch.float64
    assert torch.allclose(W64.W_q.to(torch.float32), random_projections(5, 3, seed=1).W_q)


def test_unit_variance_scale():
    d_model = 64
    W = random_projections(d_model, MAX_D_K, seed=0, dtype=torch.float64)
    entries = torch.cat([W.W_q, W.W_k, W.W_v]).flatten()  # 12,288 entries ~ N(0, 1 / d_model)
    assert abs(entries.std().item() * math.sqrt(d_model) - 1) < 0.05
    X = torch.randn(2000, d_model, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    assert abs((X @ W.W_q).var().item() - 1) < 0.2  # X W keeps unit variance
    generator = torch.Generator().manual_seed(3)
    assert abs(random_matrix(400, 400, generator).std().item() * 20 - 1) < 0.02


@pytest.mark.parametrize("d_k", [0, MAX_D_K + 1])
def test_bad_d_k_raises(d_k):
    with pytest.raises(ValueError, match="d_k must be between 1 and"):
        random_projections(4, d_k, seed=0)


@pytest.mark.parametrize("seed", [-1, 1.5, True])
def test_bad_seed_raises(seed):
    with pytest.raises(ValueError, match="seed"):
        random_projections(4, 2, seed=seed)
    with pytest.raises(ValueError, match="seed"):
        random_output_projection(4, seed=seed)


def test_random_output_weight():
    W_o = random_output_projection(8, seed=5)
    assert W_o.shape == (8, 8) and W_o.dtype == torch.float32
    assert torch.equal(W_o, random_output_projection(8, seed=5))
    assert not torch.equal(W_o, random_output_projection(8, seed=6))
    assert not torch.equal(W_o, random_projections(8, 8, seed=5).W_q)  # its own generator
    assert random_output_projection(8, seed=5, dtype=torch.float64).dtype == torch.float64


def test_recover_weight_is_exact_on_synthetic_data(synthetic):
    X, W = synthetic
    recovered, residual = recover_projection(X, X @ W)
    assert recovered.shape == (4, 3) and recovered.dtype == torch.float64
    assert torch.allclose(recovered, W, atol=1e-10)
    assert residual < 1e-10


def test_recover_weight_reports_the_residual(synthetic):
    X, W = synthetic
    noise = torch.zeros(10, 3, dtype=torch.float64)
    noise[0, 0] = 1.0  # one projected value no W can explain
    recovered, residual = recover_projection(X, X @ W + noise)
    assert 0.1 < residual <= 1.0
    assert residual == pytest.approx((X @ recovered - (X @ W + noise)).abs().max().item())


def test_recover_weight_keeps_the_input_dtype(synthetic):
    X, W = synthetic
    recovered, residual = recover_projection(X.to(torch.float32), (X @ W).to(torch.float32))
    assert recovered.dtype == torch.float32
    assert torch.allclose(recovered.to(torch.float64), W, atol=1e-4)
    assert residual < 1e-5


# --- the lesson page's helpers (formerly test_projections_extra.py) ---


@pytest.fixture(scope="module")
def recovered() -> tuple[Projections, dict[str, float]]:
    """002's W_q, W_k, W_v recovered by least squares, with their residuals."""
    return recovered_002_projections()


# ---------------------------------------------------------------- validate_projection_matrix


def test_validate_accepts_numbers_and_numeric_strings() -> None:
    frame = pd.DataFrame({"q1": ["1.5", "-2"], "q2": [0.25, "3e-2"]})
    W = validate_projection_matrix(frame, 2, 2, "W_q")
    assert torch.equal(W, torch.tensor([[1.5, 0.25], [-2.0, 0.03]]))


@pytest.mark.parametrize(
    ("cell", "reason"),
    [("abc", "not a number"), ("", "empty"), (None, "empty"), ("nan", "NaN"), ("inf", "infinite"), ("1e9", "keep")],
)
def test_validate_names_the_matrix_and_the_cell(cell: object, reason: str) -> None:
    values = [[1.0, 2.0], [3.0, cell]]
    with pytest.raises(ValueError) as error:
        validate_projection_matrix(values, 2, 2, "W_k")
    message = str(error.value)
    assert message.startswith("W_k: ")
    assert "row 2, column 2" in message
    assert reason in message


def test_validate_refuses_a_wrong_shape() -> None:
    with pytest.raises(ValueError, match=r"W_v is 2 × 3 but must be 3 × 2"):
        validate_projection_matrix([[1, 2, 3], [4, 5, 6]], 3, 2, "W_v")
    with pytest.raises(ValueError, match="must be a table"):
        validate_projection_matrix([], 3, 2, "W_v")


def test_validated_weights_give_the_same_attention_as_pytorch() -> None:
    """Round trip: a seeded W through the editor's text and back, then attention vs F.sdpa."""
    W = random_projections(3, 2, seed=5)
    edited = {name: validate_projection_matrix(getattr(W, name).tolist(), 3, 2, name) for name in ("W_q", "W_k", "W_v")}
    X = LIGHT.matrix()
    steps = self_attention(X, edited["W_q"], edited["W_k"], edited["W_v"])
    expected = sdpa_reference(X @ W.W_q, X @ W.W_k, X @ W.W_v)
    assert torch.allclose(steps.context, expected, atol=1e-6)


# ---------------------------------------------------------------- 002's recovered weights


def test_recovered_weights_reproduce_printed_projections(recovered) -> None:
    params, residuals = recovered
    X = JOURNEY.matrix()
    assert set(residuals) == {"W_q", "W_k", "W_v"}
    assert all(0 < r < 1e-4 for r in residuals.values())  # rounding of the printed 4 decimals only
    for W, key in ((params.W_q, "Q"), (params.W_k, "K"), (params.W_v, "V")):
        assert W.shape == (3, 3)
        assert torch.allclose(X @ W, torch.tensor(JOURNEY.printed[key]), atol=1e-4)
        assert bool(((W >= -1e-3) & (W < 1 + 1e-3)).all())  # torch.rand draws from [0, 1)


def test_reproduce_002_matches_every_printed_matrix(recovered) -> None:
    comparisons = reproduce_002(recovered[0], JOURNEY.matrix())
    assert [c.name for c in comparisons] == [
        "Q (queries)",
        "K (keys)",
        "V (values)",
        "scores Q Kᵀ",
        "weights",
        "context",
    ]
    for c in comparisons:
        assert c.ours.shape == c.printed.shape
        assert c.max_difference < 5e-4, c.name
        assert c.max_difference == pytest.approx((c.ours - c.printed).abs().max().item())
    weights = comparisons[4].ours
    assert torch.allclose(weights.sum(dim=-1), torch.ones(6))


def test_002_is_unscaled(recovered) -> None:
    """Scaling by sqrt(3) moves the weights far from 002's printout: 002 did not scale."""
    W = recovered[0]
    scaled = self_attention(JOURNEY.matrix(), W.W_q, W.W_k, W.W_v, scale=True)
    printed = torch.tensor(JOURNEY.printed["projected_weights"])
    assert (scaled.weights - printed).abs().max().item() > 0.02


def test_matches_002_inputs() -> None:
    assert matches_002_inputs(JOURNEY.matrix())
    assert matches_002_inputs(JOURNEY.matrix(torch.float64))
    assert not matches_002_inputs(LIGHT.matrix())
    assert not matches_002_inputs(JOURNEY.matrix()[:5])


def test_pitfall_reproduces_002_sections_2_2_4_to_2_2_6(recovered) -> None:
    X = JOURNEY.matrix()
    wrong_scores, column_weights, fake_context = tutorial_002_pitfall(X, recovered[0].W_k)
    assert torch.allclose(wrong_scores, torch.tensor(JOURNEY.printed["wrong_scores"]), atol=2e-4)
    assert torch.allclose(column_weights, torch.tensor(JOURNEY.printed["wrong_column_weights"]), atol=2e-4)
    assert torch.allclose(column_weights.sum(dim=0), torch.ones(3), atol=1e-6)  # columns, not rows
    assert torch.allclose(fake_context, X, atol=1e-6)  # the printed "context vector" is X again


def test_pitfall_context_by_loops_equals_inputs() -> None:
    """The broadcast sum written as loops: sum_i w[i, d] * X[j, d] = X[j, d] * (column sum = 1)."""
    X = LIGHT.matrix(torch.float64)
    W_k = torch.tensor([[0.2, 0.5, 0.1], [0.7, 0.3, 0.9], [0.4, 0.6, 0.8]], dtype=torch.float64)
    _, weights, fake = tutorial_002_pitfall(X, W_k)
    for j in range(6):
        for d in range(3):
            assert fake[j, d].item() == pytest.approx(sum(weights[i, d].item() * X[j, d].item() for i in range(6)))
    assert torch.allclose(fake, X)


def test_projection_parameter_count() -> None:
    assert projection_parameter_count(3, 2) == 18
    assert projection_parameter_count(4, 2, d_v=3) == 4 * 2 + 4 * 2 + 4 * 3
    assert projection_parameter_count(512, 64) == 3 * 512 * 64
    assert math.isclose(projection_parameter_count(1, 1), 3)
