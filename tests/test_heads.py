"""attention_core.heads: multi-head attention against torch.nn.MultiheadAttention and SDPA per head."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from attention_core.heads import (
    MultiHeadSteps,
    head_size,
    merge_heads,
    multi_head_attention,
    parameter_count,
    split_heads,
)
from attention_core.masks import causal_mask, fully_masked_rows
from attention_core.reference import mha_reference

D_MODEL = 12  # divisible by 1, 2, 3, 4 and 6
TOLERANCE = {torch.float64: 1e-10, torch.float32: 1e-5}


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Run on one torch thread: these tensors are tiny, and idle OpenMP threads spin (4x the CPU on a busy box)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def largest_difference(a: torch.Tensor, b: torch.Tensor) -> float:
    """max |a - b| (0 for empty tensors, NaN if either side has a NaN so that comparisons fail)."""
    assert a.shape == b.shape
    return (a - b).abs().max().item() if a.numel() else 0.0


def make_weights(T: int, dtype: torch.dtype, seed: int) -> tuple[torch.Tensor, ...]:
    """X ~ N(0, 1) (T, D_MODEL) and W_q, W_k, W_v, W_o ~ N(0, 1) / sqrt(D_MODEL), each (D_MODEL, D_MODEL)."""
    generator = torch.Generator().manual_seed(seed)
    X = torch.randn(T, D_MODEL, generator=generator, dtype=torch.float64)
    Ws = [torch.randn(D_MODEL, D_MODEL, generator=generator, dtype=torch.float64) / math.sqrt(D_MODEL) for _ in "qkvo"]
    return tuple(t.to(dtype) for t in (X, *Ws))


def make_mask(kind: str, T: int, seed: int) -> torch.Tensor | None:
    """None, causal, random, or random with rows 0 and T // 2 fully masked (True = may attend)."""
    if kind == "none":
        return None
    if kind == "causal":
        return causal_mask(T)
    mask = torch.rand(T, T, generator=torch.Generator().manual_seed(seed)) < 0.6
    if kind == "random_with_empty_rows":
        mask[0] = False
        mask[T // 2] = False
    else:
        mask |= torch.eye(T, dtype=torch.bool)  # every row keeps itself: nn.MultiheadAttention can compute all
    return mask


def torch_mha(X, W_q, W_k, W_v, W_o, num_heads, mask):
    """An nn.MultiheadAttention built here (bias off, weights copied in): output (T, d), weights (h, T, T)."""
    d_model = X.shape[-1]
    mha = torch.nn.MultiheadAttention(d_model, num_heads, bias=False, batch_first=True, dtype=X.dtype)
    with torch.no_grad():
        mha.in_proj_weight[:d_model] = W_q.T  # torch computes x @ weight.T
        mha.in_proj_weight[d_model : 2 * d_model] = W_k.T
        mha.in_proj_weight[2 * d_model :] = W_v.T
        mha.out_proj.weight[:] = W_o.T
        attn_mask = None if mask is None else ~mask  # nn.MultiheadAttention: True = blocked
        out, weights = mha(X[None], X[None], X[None], attn_mask=attn_mask, average_attn_weights=False)
    return out[0], weights[0]


def sdpa_heads(X, W_q, W_k, W_v, W_o, num_heads, mask):
    """Multi-head attention by F.scaled_dot_product_attention on (h, T, d_k): zeros, not NaN, on fully masked rows."""
    T, d_model = X.shape
    d_k = d_model // num_heads
    Q, K, V = ((X @ W).reshape(T, num_heads, d_k).transpose(0, 1) for W in (W_q, W_k, W_v))  # (h, T, d_k)
    context = F.scaled_dot_product_attention(Q, K, V, attn_mask=mask)  # (h, T, d_k)
    eye = torch.eye(T, dtype=X.dtype).expand(num_heads, T, T)
    weights = F.scaled_dot_product_attention(Q, K, eye, attn_mask=mask)  # (h, T, T)
    return context.transpose(0, 1).reshape(T, d_model) @ W_o, weights


@pytest.mark.parametrize("mask_kind", ["none", "causal", "random", "random_with_empty_rows"])
@pytest.mark.parametrize("T", [1, 2, 7, 64])
@pytest.mark.parametrize("num_heads", [1, 2, 3, 4, 6])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
def test_multi_head_matches_torch(dtype, num_heads, T, mask_kind):
    X, W_q, W_k, W_v, W_o = make_weights(T, dtype, seed=100 * num_heads + T)
    mask = make_mask(mask_kind, T, seed=T)
    steps = multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads=num_heads, mask=mask)
    tol = TOLERANCE[dtype]
    rows = torch.ones(T, dtype=torch.bool) if mask is None else ~fully_masked_rows(mask)

    for output, weights in (
        mha_reference(X, W_q, W_k, W_v, W_o, num_heads=num_heads, mask=mask),
        torch_mha(X, W_q, W_k, W_v, W_o, num_heads, mask),
    ):
        assert output.shape == (T, D_MODEL) and weights.shape == (num_heads, T, T)
        assert largest_difference(steps.output[rows], output[rows]) <= tol
        assert largest_difference(steps.weights[:, rows], weights[:, rows]) <= tol
        if not rows.all():
            assert torch.isnan(output[~rows]).all()  # why fully masked rows are compared with SDPA instead

    output, weights = sdpa_heads(X, W_q, W_k, W_v, W_o, num_heads, mask)
    assert largest_difference(steps.output, output) <= tol
    assert largest_difference(steps.weights, weights) <= tol
    assert torch.isfinite(steps.output).all()
    assert torch.equal(steps.output[~rows], torch.zeros_like(steps.output[~rows]))


@pytest.fixture
def twelve() -> tuple[torch.Tensor, ...]:
    """Seeded float64 X (5, 12) and W_q, W_k, W_v, W_o (12, 12)."""
    return make_weights(5, torch.float64, seed=11)


def test_head_h_uses_columns_h_dk_to_h_plus_1_dk(twelve):
    X, W_q, W_k, W_v, W_o = twelve
    steps = multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads=3)
    assert isinstance(steps, MultiHeadSteps) and len(steps.heads) == 3
    d_k = 4
    for h, head in enumerate(steps.heads):
        columns = slice(h * d_k, (h + 1) * d_k)
        assert torch.equal(head.Q, X @ W_q[:, columns])
        assert torch.equal(head.K, X @ W_k[:, columns])
        assert torch.equal(head.V, X @ W_v[:, columns])
        assert torch.equal(steps.concat[:, columns], head.context)
    assert torch.allclose(steps.output, steps.concat @ W_o)
    assert steps.weights.shape == (3, 5, 5)


def test_unscaled_heads_skip_sqrt_dk(twelve):
    X, W_q, W_k, W_v, W_o = twelve
    steps = multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads=2, scale=False)
    assert torch.equal(steps.heads[0].scaled_scores, steps.heads[0].scores)
    scaled = multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads=2)
    assert torch.allclose(scaled.heads[0].scaled_scores, scaled.heads[0].scores / math.sqrt(6))


@pytest.mark.parametrize("num_heads", [1, 2, 3, 4, 6, 12])
def test_split_merge_round_trip(num_heads):
    M = torch.arange(5 * 12, dtype=torch.float64).reshape(5, 12)
    split = split_heads(M, num_heads)
    d_k = 12 // num_heads
    assert split.shape == (num_heads, 5, d_k)
    for h in range(num_heads):
        assert torch.equal(split[h], M[:, h * d_k : (h + 1) * d_k])
    merged = merge_heads(split)
    assert merged.shape == (5, 12)
    assert torch.equal(merged, M)


@pytest.mark.parametrize(("d_model", "num_heads"), [(12, 5), (12, 7), (8, 3), (768, 7)])
def test_heads_that_do_not_divide_d_model_raise(d_model, num_heads, twelve):
    message = rf"d_model = {d_model} cannot be split into {num_heads} equal heads"
    with pytest.raises(ValueError, match=message):
        head_size(d_model, num_heads)
    with pytest.raises(ValueError, match="divides"):
        split_heads(torch.zeros(2, d_model), num_heads)
    if d_model == 12:
        X, W_q, W_k, W_v, W_o = twelve
        with pytest.raises(ValueError, match="cannot be split"):
            multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads=num_heads)


def test_zero_heads_raise():
    with pytest.raises(ValueError, match="at least one head"):
        head_size(12, 0)
    assert head_size(12, 4) == 3


def test_parameter_count_for_d_model_768():
    assert parameter_count(768) == 2_359_296
    assert parameter_count(768, out_bias=True) == 2_360_064
    assert parameter_count(768, in_bias=True, out_bias=True) == 2_362_368


@pytest.mark.parametrize("d_model", [4, 12, 768])
def test_parameter_count_matches_nn_multihead_attention(d_model):
    no_bias = torch.nn.MultiheadAttention(d_model, 4, bias=False)
    with_bias = torch.nn.MultiheadAttention(d_model, 4, bias=True)
    named = dict(with_bias.named_parameters())
    assert parameter_count(d_model) == sum(p.numel() for p in no_bias.parameters())
    assert parameter_count(d_model, in_bias=True, out_bias=True) == sum(p.numel() for p in with_bias.parameters())
    out_bias_only = sum(p.numel() for name, p in named.items() if name != "in_proj_bias")
    assert parameter_count(d_model, out_bias=True) == out_bias_only
