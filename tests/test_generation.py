"""attention_core.generation: KV cache = recomputing, multiply-add counts, cost table, online softmax."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

import attention_core as ac
from attention_core import generation as gen
from attention_core import training as tr


@pytest.fixture
def sequence() -> tuple[torch.Tensor, ...]:
    """X (7, 5) and W_q, W_k, W_v (5, 3) in float64 from a seeded generator."""
    generator = torch.Generator().manual_seed(7)
    X = torch.randn(7, 5, generator=generator, dtype=torch.float64)
    return (X, *(torch.randn(5, 3, generator=generator, dtype=torch.float64) for _ in range(3)))


def test_cached_attention_equals_recomputing_and_sdpa(sequence):
    X, W_q, W_k, W_v = sequence
    steps = gen.cached_attention(X, W_q, W_k, W_v)
    weights, context = gen.recomputed_attention(X, W_q, W_k, W_v)
    assert gen.max_difference(gen.cache_rows_as_matrix(steps), weights) < 1e-12
    assert gen.max_difference(torch.stack([s.context for s in steps]), context) < 1e-12
    expected = F.scaled_dot_product_attention(X @ W_q, X @ W_k, X @ W_v, is_causal=True)
    assert torch.allclose(context, expected, atol=1e-12)


def test_the_cache_grows_by_one_k_row_and_one_v_row_per_step(sequence):
    X, W_q, W_k, W_v = sequence
    steps = gen.cached_attention(X, W_q, W_k, W_v)
    for t, step in enumerate(steps):
        assert step.K.shape == (t + 1, 3) and step.V.shape == (t + 1, 3)
        assert torch.allclose(step.K[-1], X[t] @ W_k) and torch.allclose(step.V, X[: t + 1] @ W_v)
        if t:
            assert torch.equal(step.K[:-1], steps[t - 1].K), "earlier rows never change"


def test_generation_uses_the_causal_mask_row_of_lesson_6(sequence):
    X, W_q, W_k, _ = sequence
    scores = gen.masked_scores(X, W_q, W_k)
    assert torch.equal(torch.isfinite(scores), ac.causal_mask(7))
    for t, step in enumerate(gen.cached_attention(*sequence)):
        assert torch.allclose(step.scores, scores[t, : t + 1])


@pytest.mark.parametrize(
    "settings", [tr.TrainingSettings("reverse", 0, 2, 4, 10, 0.003, True), tr.DEFAULTS["previous"]]
)
def test_model_decoding_with_a_cache_equals_one_full_pass(settings):
    model = tr.build_model(settings).eval()
    tokens, _ = tr.make_batch(settings.task, 1, torch.Generator().manual_seed(2))
    prompt, new_tokens = gen.generation_prompt(settings.task, tokens[0])
    result = gen.generate(model, prompt, new_tokens)
    assert result.difference < 1e-5
    assert result.cache_lengths == list(range(1, tokens.shape[1] + 1))
    assert torch.equal(result.tokens[: prompt.shape[0]], prompt)
    with pytest.raises(ValueError, match="positions"):
        gen.generate(model, prompt, 100)


def test_first_head_matches_the_models_own_weights():
    run = tr.train(tr.TrainingSettings("previous", 0, 1, 2, 10, 0.003))
    X, W_q, W_k, W_v = gen.first_head(run.model, run.example)
    with torch.no_grad():
        _, weights = run.model(run.example.unsqueeze(0))  # (L, 1, h, T, T)
    assert torch.allclose(gen.recomputed_attention(X, W_q, W_k, W_v)[0], weights[0, 0, 0], atol=1e-6)


@pytest.mark.parametrize("T", [1, 2, 5, 16])
def test_multiply_add_totals_follow_the_formula(T):
    d_model, d_k, d_v = 6, 4, 3
    frame = gen.multiply_add_frame(T, d_model, d_k, d_v)
    for cached, column in ((True, "total with cache"), (False, "total without cache")):
        assert frame[column].iloc[-1] == gen.total_multiply_adds(T, d_model, d_k, d_v, cached)
    P = d_model * (2 * d_k + d_v)
    assert frame["with cache"].iloc[-1] == P + T * (d_k + d_v)
    assert frame["without cache"].iloc[-1] == T * P + T * T * (d_k + d_v)
    assert frame["with cache"].iloc[0] == frame["without cache"].iloc[0], "the first step is the same either way"


def test_cost_table_bytes_and_cells():
    frame = gen.cost_frame(sizes=(8, 16, 32), d_k=4)
    assert list(frame["cells"]) == [64, 256, 1024]
    assert list(frame["bytes (formula)"]) == [256, 1024, 4096]
    allocated = frame["allocated bytes (measured)"]
    assert (allocated > 4 * frame["bytes (formula)"]).all()  # scores, scaled, masked, exps, weights: several T²
    assert (frame["allocated / formula"] == allocated / frame["bytes (formula)"]).all()
    assert (frame["ms"] > 0).all() and frame["ms (c·T²)"].iloc[-1] == frame["ms"].iloc[-1]


ROWS = {
    "plain": torch.tensor([0.3, -1.2, 2.5, 0.0, 4.1, -0.7, 1.9]),
    "masked": torch.tensor([1.0, 3.0, -math.inf, 2.0, 5.0, -math.inf, -math.inf]),
    "large": torch.tensor([1000.0, 1001.0, 999.0, -math.inf, 1002.0]),
    "masked first block": torch.tensor([-math.inf, -math.inf, -math.inf, 0.5, 0.25]),
}


@pytest.mark.parametrize("name", list(ROWS))
@pytest.mark.parametrize("block_size", [1, 2, 3, 4, 8])
def test_online_softmax_equals_softmax(name, block_size):
    row = ROWS[name]
    assert gen.max_difference(gen.online_softmax(row, block_size), ac.softmax(row)) < 1e-6
    steps = gen.online_softmax_steps(row, block_size)
    assert len(steps) == math.ceil(row.shape[0] / block_size)
    maxima = [s.new_max for s in steps]
    assert maxima == sorted(maxima) and maxima[-1] == float(row.max())
    assert steps[-1].running_sum == pytest.approx(float(torch.exp(row.double() - row.max()).sum()), rel=1e-6)


def test_online_softmax_of_a_fully_masked_row_is_zeros_and_block_size_is_checked():
    row = torch.full((4,), -math.inf)
    assert torch.equal(gen.online_softmax(row, 2), torch.zeros(4)) and torch.equal(ac.softmax(row), torch.zeros(4))
    with pytest.raises(ValueError, match="block size"):
        gen.online_softmax_steps(row, 0)


def test_online_tables_for_the_page():
    row = ROWS["masked"]
    frame = gen.online_frame(gen.online_softmax_steps(row, 3))
    assert list(frame.index) == ["1: keys 1–3", "2: keys 4–6", "3: keys 7–7"]  # counted from 1 (issue 22)
    assert frame["running sum l"].iloc[-1] == gen.online_softmax_steps(row, 3)[-1].running_sum
    bars = gen.block_frame(row, [f"k{j}" for j in range(7)], 3)
    assert bars["score"].isna().tolist() == [False, False, True, False, False, True, True]
    assert bars["block"].tolist() == ["block 1"] * 3 + ["block 2"] * 3 + ["block 3"]


def test_allocation_counter_measures_new_storages_only():
    """Issue 22 item 6b: the measured bytes count what the computation allocates, so they can differ from 4·T²."""
    x = torch.ones(8, 8)
    with gen.AllocationCounter() as one:
        x @ x  # one new (8, 8) float32 matrix
    with gen.AllocationCounter() as views:
        x.T[0]  # views share x's storage
    with gen.AllocationCounter() as two:
        torch.exp(x @ x)  # two new matrices
    assert (one.bytes, views.bytes, two.bytes) == (256, 0, 512)
    seconds, allocated = gen.measure_attention(16, 4)
    assert allocated > 4 * gen.attention_matrix_bytes(16) and seconds > 0
