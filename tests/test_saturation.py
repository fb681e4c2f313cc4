"""The scaling lesson's core: 003 reproduced, the variance of q.k, softmax saturation."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from attention_core.attention import attention, row_entropy, softmax, uniform_entropy
from attention_core.normalization import column_sums, row_sums, softmax_row_steps
from attention_core.presets import SCALING_EXAMPLE
from attention_core.saturation import (
    SERIES_SCALED,
    SERIES_UNSCALED,
    d_k_grid,
    dot_product_variance,
    entry_variances,
    gradient_size,
    gradient_to_query,
    long_series,
    projected_scores,
    reproduce_003,
    saturation,
    scaling_effect,
    summary,
)


def softmax_jacobian(weights_row: torch.Tensor) -> torch.Tensor:
    """The oracle for gradient_size: J = d softmax(s) / d s = diag(w) - w w^T, built explicitly; (..., T, T)."""
    return torch.diag_embed(weights_row) - weights_row.unsqueeze(-1) * weights_row.unsqueeze(-2)


# ---------------------------------------------------------------- 003's worked example


def test_003_every_step_matches_the_printout() -> None:
    steps, comparisons = reproduce_003()
    assert [c.name for c in comparisons] == ["Q Kᵀ", "Q Kᵀ / √d_k", "weights (softmax)", "context (weights V)"]
    for c in comparisons:
        assert c.max_difference < 1e-4, c.name
        assert torch.allclose(c.ours, c.printed, atol=1e-4)
    Q, K, V = SCALING_EXAMPLE.tensors()
    expected = F.scaled_dot_product_attention(Q, K, V)
    assert torch.allclose(steps.context, expected, atol=1e-6)


def test_003_exponentials_and_sums() -> None:
    steps, _ = reproduce_003()
    row = softmax_row_steps(steps.scaled_scores[0])
    exps, total = row.raw_exps, row.raw_exp_sum
    assert torch.allclose(exps, torch.tensor(SCALING_EXAMPLE.printed["t1_scaled_exps"]), atol=1e-4)
    assert torch.allclose(exps / total, steps.weights[0], atol=1e-6)
    rows, columns = row_sums(steps.weights), column_sums(steps.weights)
    assert torch.allclose(rows, torch.ones(3), atol=1e-6)
    assert columns[1].item() == pytest.approx(SCALING_EXAMPLE.printed["t2_column_sum"][0], abs=1e-4)
    assert columns.sum().item() == pytest.approx(3.0, abs=1e-5)


def test_003_other_run_is_not_this_run() -> None:
    """The last cells' row-3 weights cannot come from 003's Q, K, V."""
    steps, _ = reproduce_003()
    other = torch.tensor(SCALING_EXAMPLE.printed["other_run_t3_weights"])
    assert (steps.weights[2] - other).abs().max().item() > 0.1


def test_attention_on_given_qkv_unscaled() -> None:
    Q, K, V = SCALING_EXAMPLE.tensors()
    steps = attention(Q, K, V, scale=False)
    assert torch.equal(steps.scaled_scores, steps.scores)
    assert torch.allclose(steps.weights, torch.softmax(Q @ K.T, dim=-1), atol=1e-6)


# ---------------------------------------------------------------- softmax gradient


def test_jacobian_matches_autograd() -> None:
    s = torch.tensor([0.3, -1.2, 2.0, 0.5], dtype=torch.float64)
    expected = torch.autograd.functional.jacobian(lambda x: torch.softmax(x, dim=-1), s)
    assert torch.allclose(softmax_jacobian(torch.softmax(s, dim=-1)), expected, atol=1e-12)


def test_gradient_size_vanishes_for_one_hot_and_is_largest_near_uniform() -> None:
    one_hot = torch.tensor([[0.0, 1.0, 0.0]])
    uniform = torch.full((1, 4), 0.25)
    assert gradient_size(one_hot).item() == 0.0
    # ||diag(w) - w w^T||_F for uniform w over 4: hand value sqrt(4 * (1/4 - 1/16)^2 + 12 * (1/16)^2)
    assert gradient_size(uniform).item() == pytest.approx(math.sqrt(4 * (3 / 16) ** 2 + 12 / 256))
    assert gradient_size(softmax(torch.tensor([[0.0, 10.0, 0.0]]))).item() < 1e-3


def test_uniform_entropy() -> None:
    assert uniform_entropy(16) == pytest.approx(row_entropy(torch.full((16,), 1 / 16)).item())
    assert uniform_entropy(1) == 0.0


# ---------------------------------------------------------------- simulations


def test_d_k_grid() -> None:
    assert d_k_grid() == (1, 2, 4, 8, 16, 32, 64, 128, 256)
    assert d_k_grid(20) == (1, 2, 4, 8, 16, 20, 32, 64, 128, 256)
    assert d_k_grid(16, largest=32) == (1, 2, 4, 8, 16, 32)


def test_variance_grows_with_d_k_and_scaling_keeps_it_at_one() -> None:
    d_ks = (1, 4, 16, 64, 256)
    result = dot_product_variance(d_ks, 4000, seed=0)
    for d_k, unscaled, scaled in zip(d_ks, result[SERIES_UNSCALED], result[SERIES_SCALED], strict=True):
        assert unscaled == pytest.approx(d_k, rel=0.15)  # theory: var(q . k) = d_k
        assert scaled == pytest.approx(1.0, rel=0.15)  # theory: 1
        assert scaled == pytest.approx(unscaled / d_k, rel=1e-4)


def test_simulations_are_seeded_and_independent_of_the_grid() -> None:
    a = dot_product_variance((4, 16), 500, seed=3)
    b = dot_product_variance((16,), 500, seed=3)
    c = dot_product_variance((16,), 500, seed=4)
    assert a[SERIES_UNSCALED][1] == b[SERIES_UNSCALED][0]
    assert b[SERIES_UNSCALED][0] != c[SERIES_UNSCALED][0]
    s1, s2 = saturation((8,), 16, 50, seed=1), saturation((2, 8), 16, 50, seed=1)
    assert s1["max weight"][SERIES_UNSCALED][0] == s2["max weight"][SERIES_UNSCALED][1]


def test_saturation_without_scaling_becomes_one_hot() -> None:
    result = saturation((1, 256), 16, 300, seed=0)
    max_w, entropy, grad = result["max weight"], result["entropy"], result["gradient size"]
    assert max_w[SERIES_UNSCALED][1] > 0.85 > max_w[SERIES_SCALED][1]
    assert max_w[SERIES_SCALED][1] == pytest.approx(max_w[SERIES_SCALED][0], abs=0.08)
    assert entropy[SERIES_UNSCALED][1] < 0.4 < 2.0 < entropy[SERIES_SCALED][1] < uniform_entropy(16)
    assert grad[SERIES_UNSCALED][1] < 0.5 * grad[SERIES_SCALED][1]
    # d_k = 1: scaling divides by 1, so both series agree exactly
    for measure in result.values():
        assert measure[SERIES_UNSCALED][0] == measure[SERIES_SCALED][0]


def test_simulation_refuses_bad_arguments() -> None:
    with pytest.raises(ValueError, match="samples"):
        dot_product_variance((4,), 1, seed=0)
    with pytest.raises(ValueError, match="d_k"):
        saturation((0,), 4, 10, seed=0)
    with pytest.raises(ValueError, match="seed"):
        dot_product_variance((4,), 10, seed=-1)


# ---------------------------------------------------------------- summary and frames


def test_summary_by_hand() -> None:
    scores = torch.tensor([[2.0, 0.0], [0.0, 2.0]])
    table = summary(scores, d_k=4)
    assert list(table.columns) == [SERIES_UNSCALED, SERIES_SCALED]
    assert table.iloc[0].tolist() == pytest.approx([1.0, 0.5])  # population std of {2, 0, 0, 2}, then halved
    w_unscaled, w_scaled = math.exp(2) / (math.exp(2) + 1), math.exp(1) / (math.exp(1) + 1)
    assert table.iloc[1].tolist() == pytest.approx([w_unscaled, w_scaled])
    assert table.iloc[2, 0] < table.iloc[2, 1]  # sharper without scaling


def test_summary_single_token() -> None:
    table = summary(torch.tensor([[3.0]]), d_k=2)
    assert table.to_numpy().tolist() == [[0.0, 0.0], [1.0, 1.0], [0.0, 0.0]]


def test_long_series() -> None:
    frame = long_series((1, 2), {"a": [0.5, 0.6], "b": [1.0, 2.0]}, "d_k", "variance")
    assert list(frame.columns) == ["d_k", "variance", "series"]
    assert frame.to_dict("records")[3] == {"d_k": 2, "variance": 2.0, "series": "b"}


def test_gradient_size_closed_form_equals_the_norm_of_the_jacobian() -> None:
    """The closed form sqrt(sum w^2 - 2 sum w^3 + (sum w^2)^2) is the Frobenius norm of diag(w) - w w^T."""
    generator = torch.Generator().manual_seed(3)
    weights = torch.softmax(3 * torch.randn(40, 40, generator=generator, dtype=torch.float64), dim=-1)
    expected = torch.linalg.matrix_norm(softmax_jacobian(weights))  # (40,)
    assert torch.allclose(gradient_size(weights), expected, atol=1e-12)


# ---------------------------------------------------------------- the gradient reaching q


def test_gradient_to_query_matches_autograd() -> None:
    """dL/dq of L = g · softmax(c q K^T), computed by hand, equals torch.autograd's, scaled and unscaled."""
    from attention_core.saturation import _generator

    d_k, n_keys, n_trials = 8, 5, 7
    generator = _generator(3, d_k)
    q = torch.randn(n_trials, 1, d_k, generator=generator).double().requires_grad_()
    K = torch.randn(n_trials, n_keys, d_k, generator=generator).double()
    g = torch.randn(n_trials, n_keys, generator=generator).double()
    result = gradient_to_query((d_k,), n_keys, n_trials, seed=3)
    for series, c in ((SERIES_UNSCALED, 1.0), (SERIES_SCALED, 1 / math.sqrt(d_k))):
        w = torch.softmax(c * (q @ K.transpose(-2, -1)).squeeze(1), dim=-1)
        (grad,) = torch.autograd.grad((g * w).sum(), q)
        norms = grad.squeeze(1).norm(dim=-1)
        expected = torch.quantile(norms, torch.tensor([0.1, 0.5, 0.9], dtype=torch.float64)).tolist()
        shown = [result[name][series][0] for name in ("10th percentile", "median", "90th percentile")]
        assert shown == pytest.approx(expected, rel=1e-9)


def test_unscaled_gradient_spreads_out_with_d_k_and_scaled_stays() -> None:
    result = gradient_to_query((1, 256), 16, 200, seed=0)
    low, median, high = (result[name] for name in ("10th percentile", "median", "90th percentile"))
    assert low[SERIES_UNSCALED][1] < 0.01 < 1 < high[SERIES_UNSCALED][1]  # saturated rows vs rows near a tie
    assert median[SERIES_SCALED][1] == pytest.approx(median[SERIES_SCALED][0], rel=0.6)
    assert high[SERIES_SCALED][1] / low[SERIES_SCALED][1] < 5
    assert gradient_to_query((4,), 16, 50, seed=1) == gradient_to_query((4,), 16, 50, seed=1)


def test_projected_scores_are_random_projections_scores_at_any_d_k() -> None:
    from attention_core.projections import random_projections

    X = torch.randn(4, 3, generator=torch.Generator().manual_seed(0))
    W = random_projections(3, 16, seed=5)
    assert torch.allclose(projected_scores(X, 16, 5), (X @ W.W_q) @ (X @ W.W_k).T, atol=1e-6)
    assert projected_scores(X, 256, 5).shape == (4, 4)


def test_entry_variances_and_scaling_effect() -> None:
    Q = torch.tensor([[1.0, -1.0], [1.0, -1.0]])
    assert entry_variances(Q, 2 * Q) == (1.0, 4.0)
    assert scaling_effect(torch.tensor([[40.0, 0.0], [0.0, 40.0]]), d_k=256) == "saturated"
    assert scaling_effect(torch.tensor([[0.1, 0.0], [0.0, 0.1]]), d_k=4) == "barely"
    assert scaling_effect(torch.tensor([[1.5, 0.0], [0.0, 1.5]]), d_k=16) == "visible"
