"""Tests of the masking-lesson additions to attention_core.masks: masks by name, the masking methods compared."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

import attention_core as ac
from attention_core.masks import (
    MASK_TYPES,
    MASKING_METHODS,
    VERY_LARGE_NEGATIVE,
    block_query_row,
    blocked_count,
    blocked_weight,
    build_mask,
    key_padding_vector,
    masking_methods,
    method_differences,
    row_exponentials,
    softmax_after_constant,
    softmax_after_neg_inf,
)

T = 5


@pytest.fixture
def scores() -> torch.Tensor:
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
    assert torch.equal(build_mask(kind, T, padded=[1, 4], window=2), MASKS[kind])


def test_build_mask_refuses_an_unknown_type():
    with pytest.raises(ValueError, match="Unknown mask type"):
        build_mask("diagonal", T)


def test_build_mask_window_is_the_token_and_the_w_minus_1_before_it():
    expected = torch.tensor(
        [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [0, 1, 1, 1]], dtype=torch.bool
    )  # w = 3, by hand
    assert torch.equal(build_mask("sliding window", 4, window=3), expected)


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


def test_softmax_after_neg_inf_is_torch_softmax_and_nan_on_a_fully_masked_row(scores):
    mask = block_query_row(ac.causal_mask(T), 3)
    weights = softmax_after_neg_inf(scores, mask)
    expected = F.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    rows = [0, 1, 2, 4]
    assert torch.allclose(weights[rows], expected[rows])
    assert torch.isnan(weights[3]).all()


@pytest.mark.parametrize("value", [-1e9, VERY_LARGE_NEGATIVE])
def test_a_constant_gives_a_uniform_fully_masked_row(scores, value):
    mask = block_query_row(ac.causal_mask(T), 3)
    weights = softmax_after_constant(scores, mask, value)
    assert torch.allclose(weights[3], torch.full((T,), 1 / T))
    assert weights[1, 2:].eq(0).all()  # blocked keys of a normal row are exactly 0 (exp underflows)


@pytest.mark.parametrize("kind", MASK_TYPES)
def test_every_method_agrees_where_a_row_may_attend(scores, kind):
    mask = MASKS[kind]
    methods = masking_methods(scores, mask)
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


def test_what_each_method_does_to_a_fully_masked_row(scores):
    mask = block_query_row(ac.causal_mask(T), 2)
    methods = masking_methods(scores, mask)
    assert torch.isnan(methods["neg_inf"][2]).all()  # 0 / 0
    assert torch.isnan(methods["multiply"][2]).all()  # 0 / 0 after zeroing everything
    assert torch.allclose(methods["minus_1e9"][2], torch.full((T,), 0.2))
    assert torch.allclose(methods["minus_9e15"][2], torch.full((T,), 0.2))
    assert methods["lab"][2].eq(0).all()
    assert not math.isnan(method_differences(methods, mask)["neg_inf"])  # the empty row is left out


def test_method_differences_with_no_row_that_may_attend(scores):
    mask = ac.padding_mask(T, range(T))
    assert set(method_differences(masking_methods(scores, mask), mask).values()) == {0.0}


def test_row_exponentials_by_hand():
    row = torch.tensor([1.0, float("-inf"), 0.0])
    m, exps, total = row_exponentials(row)
    assert m == 1.0
    assert torch.allclose(exps, torch.tensor([1.0, 0.0, math.exp(-1)]))
    assert total == pytest.approx(1 + math.exp(-1))
    assert torch.allclose(exps / total, ac.softmax(row))


def test_row_exponentials_of_a_fully_masked_row():
    m, exps, total = row_exponentials(torch.full((3,), float("-inf")))
    assert m == 0.0 and total == 0.0
    assert exps.eq(0).all()
