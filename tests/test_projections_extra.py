"""Extra projection helpers: validating an edited W, 002's recovered weights, 002's pitfall."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import torch

from attention_core.attention import self_attention
from attention_core.presets import JOURNEY, LIGHT, PRINTED
from attention_core.projections import (
    Projections,
    matches_002_inputs,
    projection_parameter_count,
    random_projections,
    recovered_002_weights,
    reproduce_002,
    tutorial_002_pitfall,
    validate_weight_matrix,
)
from attention_core.reference import sdpa_reference


@pytest.fixture(scope="module")
def recovered() -> tuple[Projections, dict[str, float]]:
    """002's W_q, W_k, W_v recovered by least squares, with their residuals."""
    return recovered_002_weights()


# ---------------------------------------------------------------- validate_weight_matrix


def test_validate_accepts_numbers_and_numeric_strings() -> None:
    frame = pd.DataFrame({"q1": ["1.5", "-2"], "q2": [0.25, "3e-2"]})
    W = validate_weight_matrix(frame, 2, 2, "W_q")
    assert torch.equal(W, torch.tensor([[1.5, 0.25], [-2.0, 0.03]]))


@pytest.mark.parametrize(
    ("cell", "reason"),
    [("abc", "not a number"), ("", "empty"), (None, "empty"), ("nan", "NaN"), ("inf", "infinite"), ("1e9", "keep")],
)
def test_validate_names_the_matrix_and_the_cell(cell: object, reason: str) -> None:
    values = [[1.0, 2.0], [3.0, cell]]
    with pytest.raises(ValueError) as error:
        validate_weight_matrix(values, 2, 2, "W_k")
    message = str(error.value)
    assert message.startswith("W_k: ")
    assert "row 2, column 2" in message
    assert reason in message


def test_validate_refuses_a_wrong_shape() -> None:
    with pytest.raises(ValueError, match=r"W_v is 2 × 3 but must be 3 × 2"):
        validate_weight_matrix([[1, 2, 3], [4, 5, 6]], 3, 2, "W_v")
    with pytest.raises(ValueError, match="must be a table"):
        validate_weight_matrix([], 3, 2, "W_v")


def test_validated_weights_give_the_same_attention_as_pytorch() -> None:
    """Round trip: a seeded W through the editor's text and back, then attention vs F.sdpa."""
    W = random_projections(3, 2, seed=5)
    edited = {name: validate_weight_matrix(getattr(W, name).tolist(), 3, 2, name) for name in ("W_q", "W_k", "W_v")}
    X = LIGHT.matrix()
    steps = self_attention(X, edited["W_q"], edited["W_k"], edited["W_v"])
    expected = sdpa_reference(X @ W.W_q, X @ W.W_k, X @ W.W_v)
    assert torch.allclose(steps.context, expected, atol=1e-6)


# ---------------------------------------------------------------- 002's recovered weights


def test_recovered_weights_reproduce_printed_projections(recovered) -> None:
    weights, residuals = recovered
    X = JOURNEY.matrix()
    assert set(residuals) == {"W_q", "W_k", "W_v"}
    assert all(0 < r < 1e-4 for r in residuals.values())  # rounding of the printed 4 decimals only
    for W, key in ((weights.W_q, "queries"), (weights.W_k, "keys"), (weights.W_v, "values")):
        assert W.shape == (3, 3)
        assert torch.allclose(X @ W, torch.tensor(PRINTED["002"][key]), atol=1e-4)
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
    printed = torch.tensor(PRINTED["002"]["projected_weights"])
    assert (scaled.weights - printed).abs().max().item() > 0.02


def test_matches_002_inputs() -> None:
    assert matches_002_inputs(JOURNEY.matrix())
    assert matches_002_inputs(JOURNEY.matrix(torch.float64))
    assert not matches_002_inputs(LIGHT.matrix())
    assert not matches_002_inputs(JOURNEY.matrix()[:5])


def test_pitfall_reproduces_002_sections_2_2_4_to_2_2_6(recovered) -> None:
    X = JOURNEY.matrix()
    wrong_scores, column_weights, fake_context = tutorial_002_pitfall(X, recovered[0].W_k)
    assert torch.allclose(wrong_scores, torch.tensor(PRINTED["002"]["section_2_2_4_x_wk_t"]), atol=2e-4)
    assert torch.allclose(column_weights, torch.tensor(PRINTED["002"]["section_2_2_5_dim0_weights"]), atol=2e-4)
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
