"""attention_core.normalization against torch.softmax, hand-computed values and the tutorials' printed numbers."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import attention_core as ac
from attention_core.normalization import (
    column_sums,
    max_weight,
    one_hot_weights,
    overflow_demo,
    row_sums,
    softmax_row_steps,
    with_sums,
)
from attention_core.presets import ONE_HOT, SCALING_EXAMPLE, TRANSFORMER


@pytest.fixture
def scores_003() -> torch.Tensor:
    """003's scaled scores Q K^T / sqrt(2), computed from its printed Q and K."""
    Q, K, _ = SCALING_EXAMPLE.tensors()
    return ac.scale_scores(ac.attention_scores(Q, K), 2)


def test_softmax_row_steps_matches_torch_and_003(scores_003):
    row = softmax_row_steps(scores_003[0])
    assert torch.allclose(row.weights, torch.softmax(scores_003[0], dim=-1), atol=1e-7)
    assert torch.allclose(row.raw_exps, torch.tensor(SCALING_EXAMPLE.printed["t1_scaled_exps"]), atol=1e-4)
    assert torch.allclose(row.weights, torch.tensor(SCALING_EXAMPLE.printed["weights"][0]), atol=1e-4)
    assert row.row_max == pytest.approx(0.6175, abs=1e-4)
    assert float(row.shifted.max()) == 0.0
    assert row.exp_sum == pytest.approx(float(row.exps.sum()))
    assert row.exp_sum >= 1.0


def test_softmax_row_steps_by_hand():
    row = softmax_row_steps(torch.tensor([0.0, math.log(3.0)]))
    assert row.exps.tolist() == pytest.approx([1 / 3, 1.0])
    assert row.exp_sum == pytest.approx(4 / 3)
    assert row.weights.tolist() == pytest.approx([0.25, 0.75])


def test_softmax_row_steps_temperature_and_the_transformer_row():
    scores = ac.self_attention(TRANSFORMER.matrix(), scale=False).scores[1]
    assert torch.allclose(
        softmax_row_steps(scores).weights, torch.tensor(TRANSFORMER.printed["query_weights"]), atol=1e-4
    )
    hot = softmax_row_steps(scores, temperature=0.25)
    assert torch.allclose(hot.weights, torch.softmax(scores / 0.25, dim=-1), atol=1e-6)
    assert torch.allclose(hot.scores, scores * 4)
    with pytest.raises(ValueError, match="temperature"):
        softmax_row_steps(scores, temperature=0.0)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-50, 50, allow_nan=False), min_size=1, max_size=40), st.floats(0.1, 5.0))
def test_softmax_row_steps_property(values, temperature):
    scores = torch.tensor(values, dtype=torch.float64)
    row = softmax_row_steps(scores, temperature)
    assert torch.allclose(row.weights, torch.softmax(scores / temperature, dim=-1))
    assert float(row.weights.sum()) == pytest.approx(1.0)
    assert bool((row.exps <= 1).all()) and bool((row.exps >= 0).all())  # may underflow to 0, never overflow
    assert float(row.exps.max()) == 1.0


def test_rows_sum_to_one_columns_do_not(scores_003):
    weights = ac.softmax(scores_003)
    assert torch.allclose(row_sums(weights), torch.ones(3), atol=1e-6)
    assert float(column_sums(weights)[1]) == pytest.approx(SCALING_EXAMPLE.printed["t2_column_sum"][0], abs=1e-4)
    assert torch.allclose(column_sums(weights), weights.sum(dim=0))
    assert float(column_sums(weights).sum()) == pytest.approx(3.0, abs=1e-5)


def test_with_sums_borders_the_matrix():
    M = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert with_sums(M).tolist() == [[1.0, 2.0, 3.0], [3.0, 4.0, 7.0], [4.0, 6.0, 10.0]]
    wrong = ac.column_softmax(ac.self_attention(TRANSFORMER.matrix(), scale=False).scores)
    bordered = with_sums(wrong)
    assert torch.allclose(bordered[-1, :-1], torch.ones(6), atol=1e-6)  # the pitfall's columns sum to 1
    assert bordered[-1, -1].item() == pytest.approx(6.0, abs=1e-5)


def test_max_weight():
    assert max_weight(torch.tensor([0.1, 0.7, 0.2])) == (1, pytest.approx(0.7))
    assert max_weight(torch.tensor([1.0])) == (0, 1.0)


def test_uniform_entropy_is_the_entropy_of_a_uniform_row():
    for T in (1, 2, 6, 128):
        assert ac.uniform_entropy(T) == pytest.approx(float(ac.row_entropy(torch.full((T,), 1.0 / T))), abs=1e-5)
    with pytest.raises(ValueError):
        ac.uniform_entropy(0)


def test_overflow_demo_naive_overflows_stable_does_not():
    scores = ac.self_attention(TRANSFORMER.matrix(), scale=False).scores[1]
    demo = overflow_demo(scores, 1000.0)
    assert bool(torch.isinf(demo.naive_exps).all())
    assert math.isinf(demo.naive_sum)
    assert bool(torch.isnan(demo.naive_weights).all())
    assert float(demo.shifted.max()) == 0.0
    assert torch.allclose(demo.stable_weights, torch.softmax(scores.double(), dim=-1), atol=1e-12, rtol=0)
    assert torch.allclose(demo.stable_exps, torch.exp(demo.shifted))


def test_overflow_demo_without_offset_agrees():
    scores = torch.tensor([1.0, 2.0, 3.0])
    demo = overflow_demo(scores, 0.0)
    assert torch.allclose(demo.naive_weights.double(), demo.stable_weights)
    assert demo.naive_sum == pytest.approx(math.e + math.e**2 + math.e**3, rel=1e-6)


def test_one_hot_weights_match_004_and_attention():
    self_weight, other_weight = one_hot_weights(4)
    printed = ONE_HOT.printed["query_weights"]
    assert self_weight == pytest.approx(printed[0], abs=1e-7)
    assert other_weight == pytest.approx(printed[1], abs=1e-7)
    weights = ac.self_attention(ONE_HOT.matrix(), scale=False).weights
    assert float(weights[0, 0]) == pytest.approx(self_weight, abs=1e-6)
    assert float(weights[0, 1]) == pytest.approx(other_weight, abs=1e-6)
    assert one_hot_weights(1) == (pytest.approx(1.0), pytest.approx(1 / math.e))
    with pytest.raises(ValueError):
        one_hot_weights(0)


def test_naive_normalisation_of_the_transformer_row_is_000s_pitfall():
    """The lab starts from 4-decimal embeddings and the row sum is near 0, so agreement is to ~1e-3 only."""
    scores = ac.self_attention(TRANSFORMER.matrix(), scale=False).scores
    naive = ac.naive_normalize(scores)[1]
    assert torch.allclose(naive, torch.tensor(TRANSFORMER.printed["query_naive_weights"]), atol=2e-3)
    assert float(row_sums(scores)[1]) == pytest.approx(-0.2926, abs=5e-4)


def test_softmax_row_steps_of_a_masked_row_by_hand():
    """A masked key (-inf) gets exp(-inf) = 0; m is the largest allowed score."""
    row = softmax_row_steps(torch.tensor([1.0, float("-inf"), 0.0]))
    assert row.row_max == 1.0
    assert torch.allclose(row.exps, torch.tensor([1.0, 0.0, math.exp(-1)]))
    assert row.exp_sum == pytest.approx(1 + math.exp(-1))
    assert torch.allclose(row.weights, ac.softmax(torch.tensor([1.0, float("-inf"), 0.0])))


def test_softmax_row_steps_of_a_fully_masked_row():
    row = softmax_row_steps(torch.full((3,), float("-inf")))
    assert row.row_max == 0.0 and row.exp_sum == 0.0
    assert row.exps.eq(0).all() and row.weights.eq(0).all()  # zeros, as ac.softmax gives


def test_overflow_demo_keeps_s_plus_c_exact():
    """Issue 22 item 5c: s + c is not rounded to float32, so every stable cell matches float64 to 4 decimals."""
    scores = ac.self_attention(TRANSFORMER.matrix(), scale=False).scores[1]  # tutorial 000's query row
    for offset in (0.0, 10.0, 50.0, 80.0, 89.0, 100.0, 1000.0):
        demo = overflow_demo(scores, offset)
        exact = scores.double() + offset
        assert torch.equal(demo.scores, exact)
        assert torch.equal(demo.shifted, exact - exact.max())
        assert torch.allclose(demo.stable_weights, torch.softmax(exact, dim=-1), atol=1e-12, rtol=0)
    assert f"{float(overflow_demo(scores, 1000.0).stable_weights[3]):.4f}" == "0.1329"  # not 0.1330
