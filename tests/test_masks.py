"""attention_core.masks: the boolean masks, the other convention, and the -1e9 / renormalise variants."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch
import torch.nn.functional as F

import attention_core as ac
from attention_core.attention import softmax
from attention_core.heads import multi_head_attention
from attention_core.masks import (
    LARGE_NEGATIVE,
    MASK_TYPES,
    MASKING_METHODS,
    VERY_LARGE_NEGATIVE,
    MaskChoice,
    block_query_row,
    blocked_count,
    blocked_weight,
    causal_mask,
    fully_masked_rows,
    key_padding_vector,
    mask_by_kind,
    mask_with_constant,
    masked_attention,
    masking_methods,
    method_differences,
    multiply_and_renormalize,
    no_mask,
    pad_to_length,
    padding_mask,
    sliding_window_mask,
    softmax_after_constant,
    softmax_after_neg_inf,
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


# --- the lesson page's helpers (formerly test_masks_extra.py) ---


T = 5


@pytest.fixture
def page_scores() -> torch.Tensor:
    """Seeded random (T, T) scores, as a scaled Q K^T would be."""
    return torch.randn(T, T, generator=torch.Generator().manual_seed(7))


@pytest.fixture
def X() -> torch.Tensor:
    """Seeded random (T, 4) embeddings."""
    return torch.randn(T, 4, generator=torch.Generator().manual_seed(3))


MASKS = {
    "none": ac.no_mask(T),
    "causal": ac.causal_mask(T),
    "padding": ac.padding_mask(T, [1, 4]),
    "sliding window": ac.sliding_window_mask(T, 2),
}


@pytest.mark.parametrize("kind", MASK_TYPES)
def test_build_mask_names_the_direct_builders(kind):
    assert torch.equal(mask_by_kind(kind, T, padded=[1, 4], window=2), MASKS[kind])


def test_build_mask_refuses_an_unknown_type():
    with pytest.raises(ValueError, match="Unknown mask type"):
        mask_by_kind("diagonal", T)


def test_build_mask_window_is_the_token_and_the_w_minus_1_before_it():
    expected = torch.tensor(
        [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [0, 1, 1, 1]], dtype=torch.bool
    )  # w = 3, by hand
    assert torch.equal(mask_by_kind("sliding window", 4, window=3), expected)


def test_the_003_constant():
    assert VERY_LARGE_NEGATIVE == -9e15


def test_block_query_row_blocks_one_row_and_leaves_the_input_alone():
    causal = ac.causal_mask(T)
    blocked = block_query_row(causal, 2)
    assert not blocked[2].any()
    assert torch.equal(blocked[[0, 1, 3, 4]], causal[[0, 1, 3, 4]])
    assert causal[2, 0]  # the original mask is unchanged
    assert ac.fully_masked_rows(blocked).tolist() == [False, False, True, False, False]


def test_key_padding_vector_is_true_for_padding_and_matches_nn_multihead_attention(X):
    pad = key_padding_vector(T, [1, 4])
    assert pad.tolist() == [False, True, False, False, True]
    d = X.shape[1]
    mha = torch.nn.MultiheadAttention(d, 1, bias=False, batch_first=True)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([torch.eye(d)] * 3))  # Q = K = V = X
        mha.out_proj.weight.copy_(torch.eye(d))
        expected, _ = mha(X[None], X[None], X[None], key_padding_mask=pad[None])
    ours = ac.self_attention(X, mask=ac.padding_mask(T, [1, 4]), scale=True).context
    assert torch.allclose(ours, expected[0], atol=1e-6)


def test_blocked_weight_by_hand():
    weights = torch.tensor([[0.5, 0.5], [0.25, 0.75]])
    assert blocked_weight(weights, ac.causal_mask(2)).tolist() == [0.5, 0.0]


def test_blocked_count():
    assert blocked_count(ac.causal_mask(4)) == 6
    assert blocked_count(ac.no_mask(4)) == 0
    assert blocked_count(ac.padding_mask(3, [0, 1, 2])) == 9


def test_softmax_after_neg_inf_is_torch_softmax_and_nan_on_a_fully_masked_row(page_scores):
    mask = block_query_row(ac.causal_mask(T), 3)
    weights = softmax_after_neg_inf(page_scores, mask)
    expected = F.softmax(page_scores.masked_fill(~mask, float("-inf")), dim=-1)
    rows = [0, 1, 2, 4]
    assert torch.allclose(weights[rows], expected[rows])
    assert torch.isnan(weights[3]).all()


@pytest.mark.parametrize("value", [-1e9, VERY_LARGE_NEGATIVE])
def test_a_constant_gives_a_uniform_fully_masked_row(page_scores, value):
    mask = block_query_row(ac.causal_mask(T), 3)
    weights = softmax_after_constant(page_scores, mask, value)
    assert torch.allclose(weights[3], torch.full((T,), 1 / T))
    assert weights[1, 2:].eq(0).all()  # blocked keys of a normal row are exactly 0 (exp underflows)


@pytest.mark.parametrize("kind", MASK_TYPES)
def test_every_method_agrees_where_a_row_may_attend(page_scores, kind):
    mask = MASKS[kind]
    methods = masking_methods(page_scores, mask)
    assert tuple(methods) == MASKING_METHODS
    for weights in methods.values():
        assert torch.allclose(weights, methods["lab"], atol=1e-6)
        assert weights[~mask].eq(0).all()
    differences = method_differences(methods, mask)
    assert differences["lab"] == 0.0
    assert max(differences.values()) < 1e-6


def test_the_lab_method_matches_scaled_dot_product_attention(X):
    mask = block_query_row(ac.sliding_window_mask(T, 2), 0)
    steps = ac.self_attention(X, mask=mask, scale=True)
    lab = masking_methods(steps.scaled_scores, mask)["lab"]
    expected = F.scaled_dot_product_attention(X, X, X, attn_mask=mask)
    assert torch.allclose(lab @ X, expected, atol=1e-6)
    assert lab[0].eq(0).all() and expected[0].eq(0).all()


def test_what_each_method_does_to_a_fully_masked_row(page_scores):
    mask = block_query_row(ac.causal_mask(T), 2)
    methods = masking_methods(page_scores, mask)
    assert torch.isnan(methods["neg_inf"][2]).all()  # 0 / 0
    assert torch.isnan(methods["multiply"][2]).all()  # 0 / 0 after zeroing everything
    assert torch.allclose(methods["minus_1e9"][2], torch.full((T,), 0.2))
    assert torch.allclose(methods["minus_9e15"][2], torch.full((T,), 0.2))
    assert methods["lab"][2].eq(0).all()
    assert not math.isnan(method_differences(methods, mask)["neg_inf"])  # the empty row is left out


def test_method_differences_with_no_row_that_may_attend(page_scores):
    mask = ac.padding_mask(T, range(T))
    assert set(method_differences(masking_methods(page_scores, mask), mask).values()) == {0.0}


# --- lesson 6's state in one call ---

WORDS = ("your", "journey", "starts", "with", "one")


@pytest.mark.parametrize("kind", MASK_TYPES)
@pytest.mark.parametrize(("pads", "enabled", "demo_row"), [(0, True, False), (2, True, True), (3, False, False)])
def test_masked_attention_is_the_masking_page_written_out(X, kind, pads, enabled, demo_row):
    """masked_attention = pad, mask by kind, block the query's row, switch off, self-attention, as lesson 6 did."""
    choice = MaskChoice(kind, pads, window=2, enabled=enabled, demo_row=demo_row)
    padded = pad_to_length(WORDS, X, T + pads)
    N = T + pads
    mask = mask_by_kind(kind, N, padded=padded.padded, window=2)
    if demo_row:
        mask = block_query_row(mask, 1)
    active = mask if enabled else ac.no_mask(N)
    steps = ac.self_attention(padded.X, mask=active, scale=True)

    masked = masked_attention(WORDS, X, choice, query_index=1)
    assert dataclasses.is_dataclass(masked) and type(masked).__dataclass_params__.frozen
    assert masked.padded.tokens == padded.tokens and torch.equal(masked.padded.X, padded.X)
    assert torch.equal(masked.mask, mask)
    assert torch.equal(masked.active, active)
    assert torch.equal(masked.steps.weights, steps.weights)
    assert torch.equal(masked.steps.context, steps.context)
    assert torch.equal(masked.steps.masked_scores, steps.masked_scores)
    assert torch.equal(masked.empty_rows, fully_masked_rows(active))
    assert bool(masked.empty_rows[1]) == (demo_row and enabled)
