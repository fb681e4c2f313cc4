"""attention_core.masks: the boolean masks, the other convention, and the -1e9 / renormalise variants."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from attention_core.attention import softmax
from attention_core.heads import multi_head_attention
from attention_core.masks import (
    LARGE_NEGATIVE,
    causal_mask,
    fully_masked_rows,
    mask_with_constant,
    multiply_and_renormalize,
    no_mask,
    padding_mask,
    sliding_window_mask,
    to_blocked,
)


@pytest.fixture
def scores() -> torch.Tensor:
    """A seeded (6, 6) float64 score matrix."""
    return torch.randn(6, 6, generator=torch.Generator().manual_seed(5), dtype=torch.float64)


@pytest.fixture
def mask_with_empty_row() -> torch.Tensor:
    """A causal (6, 6) mask whose row 3 is fully masked (query 4 may attend to nothing)."""
    mask = causal_mask(6)
    mask[3] = False
    return mask


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The -inf convention, computed with torch directly (a fully masked row gives NaN here)."""
    return torch.softmax(scores.masked_fill(~mask, -math.inf), dim=-1)


def test_no_mask():
    assert no_mask(4).dtype == torch.bool
    assert no_mask(4).all() and no_mask(4).shape == (4, 4)


@pytest.mark.parametrize("T", [1, 2, 5, 9])
def test_causal_mask(T):
    mask = causal_mask(T)
    assert mask.dtype == torch.bool and mask.shape == (T, T)
    for i in range(T):
        for j in range(T):
            assert bool(mask[i, j]) == (j <= i)
    q = torch.randn(T, 3, generator=torch.Generator().manual_seed(T), dtype=torch.float64)
    ours = F.scaled_dot_product_attention(q, q, q, attn_mask=mask)
    assert torch.allclose(ours, F.scaled_dot_product_attention(q, q, q, is_causal=True))


def test_padding_mask_hides_keys():
    mask = padding_mask(5, [1, 4])
    assert mask.shape == (5, 5) and mask.dtype == torch.bool
    assert not mask[:, 1].any() and not mask[:, 4].any()
    assert mask[:, [0, 2, 3]].all()  # every query, padding or not, still sees the real keys
    assert torch.equal(padding_mask(3, []), no_mask(3))


@pytest.mark.parametrize("position", [-1, 5, 9])
def test_padding_outside_the_sentence_raises(position):
    with pytest.raises(ValueError, match="outside the sentence of 5 tokens"):
        padding_mask(5, [position])


@pytest.mark.parametrize("padded", [[4], [0, 3], [1, 2, 5]])
def test_padding_mask_matches_key_padding_mask(padded):
    T, d_model, h = 6, 8, 2
    generator = torch.Generator().manual_seed(len(padded))
    X = torch.randn(T, d_model, generator=generator, dtype=torch.float64)
    W_q, W_k, W_v, W_o = (torch.randn(d_model, d_model, generator=generator, dtype=torch.float64) for _ in range(4))
    steps = multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads=h, mask=padding_mask(T, padded))

    mha = torch.nn.MultiheadAttention(d_model, h, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([W_q.T, W_k.T, W_v.T]))
        mha.out_proj.weight.copy_(W_o.T)
        key_padding_mask = torch.zeros(1, T, dtype=torch.bool)
        key_padding_mask[0, padded] = True  # True = padding, ignored as a key
        out, weights = mha(X[None], X[None], X[None], key_padding_mask=key_padding_mask, average_attn_weights=False)
    assert torch.allclose(steps.output, out[0], atol=1e-10)
    assert torch.allclose(steps.weights, weights[0], atol=1e-10)
    assert (steps.weights[:, :, padded] == 0).all()


@pytest.mark.parametrize("window", [1, 2, 3, 10])
def test_sliding_window_sees_itself_and_window_minus_one_before(window):
    T = 7
    mask = sliding_window_mask(T, window)
    for i in range(T):
        seen = [j for j in range(T) if mask[i, j]]
        assert seen == list(range(max(0, i - window + 1), i + 1))
    assert mask.sum(-1).max() == min(window, T)


def test_sliding_window_extremes():
    assert torch.equal(sliding_window_mask(5, 1), torch.eye(5, dtype=torch.bool))
    assert torch.equal(sliding_window_mask(5, 5), causal_mask(5))
    assert torch.equal(sliding_window_mask(5, 50), causal_mask(5))
    with pytest.raises(ValueError, match="at least 1 token"):
        sliding_window_mask(5, 0)


def test_to_blocked_inverts_the_convention():
    mask = sliding_window_mask(4, 2)
    blocked = to_blocked(mask)
    assert torch.equal(blocked, ~mask)
    assert torch.equal(to_blocked(blocked), mask)
    assert blocked[0, 3] and not blocked[0, 0]


def test_fully_masked_rows(mask_with_empty_row):
    rows = fully_masked_rows(mask_with_empty_row)
    assert rows.tolist() == [False, False, False, True, False, False]
    assert not fully_masked_rows(causal_mask(4)).any()
    assert fully_masked_rows(torch.zeros(3, 3, dtype=torch.bool)).all()


@pytest.mark.parametrize("value", [LARGE_NEGATIVE, -9e15])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_large_negative_constant_agrees_with_minus_inf(value, dtype, scores):
    scores = scores.to(dtype)
    mask = sliding_window_mask(6, 3)
    with_constant = softmax(mask_with_constant(scores, mask, value))
    assert torch.allclose(with_constant, masked_softmax(scores, mask), atol=1e-7)
    assert torch.equal(mask_with_constant(scores, mask, value)[~mask], torch.full(((~mask).sum(),), value, dtype=dtype))


@pytest.mark.parametrize("value", [LARGE_NEGATIVE, -9e15])
def test_large_negative_constant_gives_uniform_weights_on_a_fully_masked_row(value, scores, mask_with_empty_row):
    weights = softmax(mask_with_constant(scores, mask_with_empty_row, value))
    assert torch.allclose(weights[3], torch.full((6,), 1 / 6, dtype=torch.float64))  # attends to everything
    minus_inf = softmax(scores.masked_fill(~mask_with_empty_row, -math.inf))
    assert torch.equal(minus_inf[3], torch.zeros(6, dtype=torch.float64))  # the -inf convention: nothing
    others = ~fully_masked_rows(mask_with_empty_row)
    assert torch.allclose(weights[others], minus_inf[others])


def test_multiply_and_renormalize_agrees_when_no_row_is_empty(scores):
    mask = sliding_window_mask(6, 2)
    renormalised = multiply_and_renormalize(torch.softmax(scores, dim=-1), mask)
    assert torch.allclose(renormalised, masked_softmax(scores, mask), atol=1e-14)
    assert (renormalised[~mask] == 0).all()


def test_multiply_and_renormalize_gives_nan_on_a_fully_masked_row(scores, mask_with_empty_row):
    renormalised = multiply_and_renormalize(torch.softmax(scores, dim=-1), mask_with_empty_row)
    assert torch.isnan(renormalised[3]).all()  # 0 / 0: the lesson
    others = ~fully_masked_rows(mask_with_empty_row)
    assert torch.isfinite(renormalised[others]).all()
    assert torch.allclose(renormalised[others], masked_softmax(scores, mask_with_empty_row)[others])
