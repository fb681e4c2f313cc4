"""Each classic bug: the right result equals PyTorch's, the wrong one differs in the way the museum says."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import attention_core as ac
from attention_core import mistakes
from attention_core.reference import mha_reference


@pytest.fixture
def X() -> torch.Tensor:
    """Seeded random embeddings: 5 tokens, d_model 4 (negative scores included)."""
    return ac.random_embeddings(list("abcde"), 4, seed=2)


@pytest.fixture
def scores(X) -> torch.Tensor:
    return ac.attention_scores(X, X)  # (T, T)


def test_softmax_over_the_wrong_axis_normalises_columns(scores):
    wrong, right = mistakes.softmax_wrong_axis(scores)
    assert torch.allclose(right, torch.softmax(scores, dim=-1))
    assert torch.allclose(wrong, torch.softmax(scores, dim=0))
    assert torch.allclose(wrong.sum(dim=0), torch.ones(5)) and not torch.allclose(wrong.sum(dim=1), torch.ones(5))


def test_dividing_by_the_sum_can_give_negative_weights(scores):
    wrong, right = mistakes.divide_by_sum(scores)
    assert torch.allclose(right, torch.softmax(scores, dim=-1))
    assert bool((wrong < 0).any()) or bool((wrong > 1).any())


def test_scaling_by_sqrt_d_k_is_what_sdpa_does(X):
    W = ac.random_projections(4, 4, seed=1)
    Q, K, V = X @ W.W_q, X @ W.W_k, X @ W.W_v
    wrong, right = mistakes.no_scaling(Q, K)
    assert torch.allclose(right @ V, F.scaled_dot_product_attention(Q, K, V), atol=1e-6)
    assert wrong.max() > right.max(), "unscaled weights are sharper"


def test_sqrt_d_model_in_a_head_flattens_its_weights(X):
    W = ac.random_projections(4, 4, seed=1)
    Q_head = ac.split_heads(X @ W.W_q, 2)[0]  # (T, 2)
    K_head = ac.split_heads(X @ W.W_k, 2)[0]
    wrong, right = mistakes.sqrt_d_model(Q_head, K_head, 4)
    assert torch.allclose(right, torch.softmax(Q_head @ K_head.T / 2**0.5, dim=-1))
    assert wrong.max() < right.max()


def test_masking_after_softmax_breaks_the_row_sums(scores):
    mask = ac.causal_mask(5)
    wrong, right = mistakes.mask_after_softmax(scores, mask)
    assert torch.allclose(right.sum(dim=-1), torch.ones(5))
    assert bool((wrong.sum(dim=-1)[:-1] < 1 - 1e-6).all()), "every row but the last loses weight"
    assert torch.allclose(right, torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1))


def test_the_inverted_mask_attends_to_the_future_only(scores):
    mask = ac.causal_mask(5)
    wrong, right = mistakes.inverted_mask(scores, mask)
    sdpa_weights = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)  # SDPA given MHA's True = blocked
    assert torch.allclose(wrong[:-1], sdpa_weights[:-1])
    assert torch.equal(wrong[-1], torch.zeros(5)), "the last token has no future: a row of zeros"
    assert bool((wrong * mask).eq(0).all())
    assert torch.allclose(right, torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1))


def test_minus_1e9_does_not_fit_in_float16(scores):
    wrong, right = mistakes.large_negative_in_half(scores, ac.causal_mask(5))
    assert isinstance(wrong, str) and "overflow" in wrong
    assert torch.isfinite(right).all() and torch.allclose(right.sum(dim=-1), torch.ones(5, dtype=torch.float64))


def test_what_the_float16_exhibit_should_give_is_the_exact_float64_answer(X):
    """Issue 22 part 5: 'what it should be' is softmax in float64 of the exhibit's inputs, not float16's rounding."""
    X64 = X.to(torch.float64)
    mask = ac.causal_mask(5)
    exact = torch.softmax((X64 @ X64.T).masked_fill(~mask, float("-inf")), dim=-1)  # (T, T) in float64
    _, right = mistakes.large_negative_in_half(X64 @ X64.T, mask)
    assert right.dtype == torch.float64
    assert torch.allclose(right, exact, rtol=0, atol=1e-12)
    fixed = mistakes.finfo_min_in_half(X64 @ X64.T, mask)  # the fix, still in float16
    assert torch.allclose(fixed.double(), exact, atol=2e-3) and not torch.allclose(fixed.double(), exact, atol=1e-6)


def test_x_times_w_k_transposed_is_not_the_keys(X):
    W_k = ac.random_projections(4, 4, seed=1).W_k
    wrong, right = mistakes.keys_transposed(X, W_k)
    assert torch.allclose(right, X @ W_k) and not torch.allclose(wrong, right)


def test_tutorial_003s_last_printed_row_is_from_another_run():
    printed, recomputed = mistakes.printed_from_another_run()
    assert torch.allclose(recomputed, torch.tensor(ac.SCALING_EXAMPLE.printed["weights"][2]), atol=1e-4)
    assert not torch.allclose(printed, recomputed, atol=1e-2)


def test_forgetting_w_o_returns_the_unmixed_heads(X):
    W = ac.random_projections(4, 4, seed=1)
    W_o = ac.random_output_projection(4, 1)
    wrong, right = mistakes.forgotten_output_projection(X, W.W_q, W.W_k, W.W_v, W_o, 2)
    reference, _ = mha_reference(X, W.W_q, W.W_k, W.W_v, W_o, num_heads=2)
    assert torch.allclose(right, reference, atol=1e-5)
    assert torch.allclose(wrong @ W_o, right, atol=1e-6) and not torch.allclose(wrong, right)
