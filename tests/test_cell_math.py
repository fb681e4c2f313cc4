"""The arithmetic of one clicked cell equals the core's matrix entry, and PyTorch's; click payloads never raise."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import attention_core as ac
from attention_core import cell_math

TOL = dict(rtol=1e-6, atol=1e-6)


@pytest.fixture
def X() -> torch.Tensor:
    """Seeded random embeddings in float64: 5 tokens, d_model 4."""
    return ac.random_embeddings(list("abcde"), 4, seed=3).to(torch.float64)


@pytest.fixture
def projections(X) -> ac.Projections:
    """Seeded W_q, W_k, W_v in float64 with d_k = 3."""
    return ac.random_projections(4, 3, seed=5, dtype=torch.float64)


def every_cell(T: int):
    return [(i, j) for i in range(T) for j in range(T)]


@pytest.mark.parametrize("scale", [False, True, 7])
def test_score_cell_equals_the_score_matrix(X, projections, scale):
    Q, K = X @ projections.W_q, X @ projections.W_k  # (T, d_k)
    scores = ac.attention_scores(Q, K)
    d_k = Q.shape[-1] if scale is True else scale
    expected = ac.scale_scores(scores, d_k) if d_k else scores
    for i, j in every_cell(X.shape[0]):
        cell = cell_math.explain_score(Q, K, i, j, scale=scale)
        assert sum(cell.products) == pytest.approx(cell.dot)
        assert torch.allclose(torch.tensor(cell.result, dtype=torch.float64), expected[i, j], **TOL)


def test_score_cell_with_a_temperature_equals_self_attention(X, projections):
    steps = ac.self_attention(X, projections.W_q, projections.W_k, projections.W_v, temperature=0.5)
    cell = cell_math.explain_score(steps.Q, steps.K, 1, 3, scale=True, temperature=0.5)
    assert cell.divisor == pytest.approx(3**0.5 * 0.5)
    assert cell.result == pytest.approx(float(steps.scaled_scores[1, 3]), abs=1e-6)


@pytest.mark.parametrize("mask", [None, "causal", "padding", "window"])
def test_weight_cell_equals_softmax_and_sdpa(X, projections, mask):
    T = X.shape[0]
    masks = {
        None: None,
        "causal": ac.causal_mask(T),
        "padding": ac.padding_mask(T, [1]),
        "window": ac.sliding_window_mask(T, 2),
    }
    steps = ac.self_attention(X, projections.W_q, projections.W_k, projections.W_v, mask=masks[mask])
    sdpa_weights = torch.softmax(
        steps.Q @ steps.K.T / 3**0.5 + (0 if masks[mask] is None else torch.where(masks[mask], 0.0, float("-inf"))),
        dim=-1,
    )
    for i, j in every_cell(T):
        cell = cell_math.explain_weight(steps.masked_scores[i], j)
        assert cell.result == pytest.approx(float(steps.weights[i, j]), abs=1e-6)
        assert cell.result == pytest.approx(float(sdpa_weights[i, j]), abs=1e-6)
        assert sum(cell.exps) == pytest.approx(cell.total)
        assert cell.result == pytest.approx(cell.exps[j] / cell.total)


def test_weight_cell_of_a_fully_masked_row_is_zero():
    row = torch.full((4,), float("-inf"))
    cell = cell_math.explain_weight(row, 2)
    assert cell.result == 0.0 and cell.total == 0.0 and cell.row_max == 0.0


def test_context_cell_equals_context_vectors_and_sdpa(X, projections):
    mask = ac.causal_mask(X.shape[0])
    steps = ac.self_attention(X, projections.W_q, projections.W_k, projections.W_v, mask=mask)
    sdpa = F.scaled_dot_product_attention(steps.Q, steps.K, steps.V, attn_mask=mask)  # (T, d_v)
    for i in range(X.shape[0]):
        for d in range(steps.V.shape[1]):
            cell = cell_math.explain_context(steps.weights, steps.V, i, d)
            assert cell.result == pytest.approx(float(ac.context_vectors(steps.weights, steps.V)[i, d]), abs=1e-6)
            assert cell.result == pytest.approx(float(sdpa[i, d]), abs=1e-6)
            assert sum(cell.products) == pytest.approx(cell.result)


def test_projection_cell_equals_the_matrix_product(X, projections):
    Q = X @ projections.W_q
    for i in range(X.shape[0]):
        for c in range(Q.shape[1]):
            assert cell_math.explain_projection(X, projections.W_q, i, c).result == pytest.approx(float(Q[i, c]))


def test_float32_cells_match_the_core_too():
    X = ac.DEFAULT_PRESET.matrix()
    steps = ac.self_attention(X, scale=False)
    cell = cell_math.explain_score(steps.Q, steps.K, 2, 1)
    assert cell.result == pytest.approx(float(steps.scores[2, 1]), abs=1e-6)
    assert cell_math.explain_weight(steps.masked_scores[2], 1).result == pytest.approx(
        float(steps.weights[2, 1]), abs=1e-6
    )


def test_masked_cells_name_the_rule_that_blocked_them():
    T = 5
    causal = cell_math.explain_masked(ac.causal_mask(T), 1, 3)
    assert not causal.allowed and causal.rule == "causal" and "4 > 2" in causal.reason and "-∞" in causal.reason
    assert cell_math.explain_masked(ac.causal_mask(T), 3, 1).allowed
    padding = cell_math.explain_masked(ac.padding_mask(T, [2]), 0, 2)
    assert padding.rule == "padding" and "padding" in padding.reason
    window = cell_math.explain_masked(ac.sliding_window_mask(T, 2), 4, 1)
    assert window.rule == "sliding window" and window.window == 2 and "too far back" in window.reason
    custom = torch.ones(T, T, dtype=torch.bool)
    custom[0, 0] = False
    assert cell_math.explain_masked(custom, 0, 0).rule == "custom"
    assert cell_math.mask_rule(ac.no_mask(T)) == ("none", None)


PAYLOADS_WITHOUT_A_CELL = [
    None,
    "",
    0,
    [],
    {},
    {"selection": None},
    {"selection": {}},
    {"selection": {"cell": []}},
    {"selection": {"cell": {}}},
    {"selection": {"cell": "row"}},
    {"selection": {"cell": [None]}},
    {"selection": {"cell": [{"row": "a"}]}},
    {"selection": {"cell": [{"_vgsid_": 3}]}},
    {"selection": {"other": [{"x": 1}]}},
    {"selection": "garbage"},
]


@pytest.mark.parametrize("payload", PAYLOADS_WITHOUT_A_CELL)
def test_an_empty_or_malformed_click_gives_no_cell(payload):
    assert cell_math.selected_cell(payload, "cell") is None


def test_a_click_on_a_cell_gives_its_labels():
    event = {"selection": {"cell": [{"row": "cat", "col": "sat"}]}}
    assert cell_math.selected_cell(event, "cell") == ("cat", "sat")
    assert cell_math.selected_cell(event) == ("cat", "sat")
    assert cell_math.cell_indices(("cat", "sat"), ["the", "cat"], ["sat", "on"]) == (1, 0)
    assert cell_math.cell_indices(("dog", "sat"), ["the", "cat"], ["sat", "on"]) is None
    assert cell_math.cell_indices(None, ["a"], ["b"]) is None


def test_a_biased_projection_shows_the_bias_as_its_first_term():
    """Entry (i, c) of X W + b, as a Linear layer computes it: [1, x_i] . [b_c, W[:, c]]."""
    generator = torch.Generator().manual_seed(3)
    X, W, b = torch.randn(5, 4, generator=generator), torch.randn(4, 3, generator=generator), torch.randn(3)
    linear = torch.nn.Linear(4, 3)
    with torch.no_grad():
        linear.weight.copy_(W.T)
        linear.bias.copy_(b)
    cell = cell_math.explain_biased_projection(X, W, b, 2, 1)
    assert cell.x[0] == 1.0 and cell.w[0] == pytest.approx(float(b[1]))
    assert cell.result == pytest.approx(float(linear(X).detach()[2, 1]), abs=1e-6)
    assert sum(cell.products) == pytest.approx(cell.result)


def test_a_weight_known_only_by_its_row_of_weights():
    """ln w recovers the scores up to a constant, so the softmax fraction gives w back; a 0 weight is masked."""
    row = torch.softmax(torch.tensor([0.3, -1.2, 2.0, float("-inf")]), dim=-1)
    for j in range(4):
        cell = cell_math.explain_weight_from_weights(row, j)
        assert cell.result == pytest.approx(float(row[j]), abs=1e-6)  # row is float32
    assert cell_math.explain_weight_from_weights(row, 3).exps[3] == 0.0
