"""attention_core.heads: multi-head attention against torch.nn.MultiheadAttention and SDPA per head."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch
import torch.nn.functional as F

import attention_core as ac
from attention_core.heads import (
    LIFT_WIDTHS,
    MultiHeadSteps,
    head_column_labels,
    head_mask,
    head_output_parts,
    head_shapes,
    head_size,
    lift_embeddings,
    lift_matrix,
    merge_heads,
    multi_head_attention,
    multi_head_layer,
    parameter_count,
    parameter_counts,
    pipeline_block,
    random_head_params,
    split_heads,
    valid_head_counts,
)
from attention_core.masks import block_query_row, causal_mask, fully_masked_rows
from attention_core.projections import random_output_projection, random_projections
from attention_core.reference import (
    check_heads_with_sdpa,
    check_multi_head,
    mha_reference,
    torch_parameter_count,
)

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
        # project-then-split (minGPT) sums the same products as slicing W first; BLAS may round the last bit
        assert torch.allclose(head.Q, X @ W_q[:, columns], rtol=0, atol=1e-12)
        assert torch.allclose(head.K, X @ W_k[:, columns], rtol=0, atol=1e-12)
        assert torch.allclose(head.V, X @ W_v[:, columns], rtol=0, atol=1e-12)
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


# --- the lesson page's helpers (formerly test_heads_extra.py) ---


@pytest.fixture
def X() -> torch.Tensor:
    """The journey preset, (6, 3), lifted to d_model = 8 by a seeded W_in."""
    small = ac.PRESETS_BY_KEY["journey"].matrix()
    return lift_embeddings(small, lift_matrix(3, 8, seed=0))


def test_random_head_weights_are_seeded_and_reuse_the_projection_helpers():
    W = random_head_params(8, seed=5)
    again = random_head_params(8, seed=5)
    other = random_head_params(8, seed=6)
    projections = ac.random_projections(8, 8, 5)
    for name in ("W_q", "W_k", "W_v"):
        assert getattr(W, name).shape == (8, 8)
        assert torch.equal(getattr(W, name), getattr(again, name))
        assert torch.equal(getattr(W, name), getattr(projections, name))
        assert not torch.equal(getattr(W, name), getattr(other, name))
    assert torch.equal(W.W_o, ac.random_output_projection(8, 5))


@pytest.mark.parametrize("width", LIFT_WIDTHS)
def test_lift_is_a_seeded_matrix_product(width):
    small = ac.PRESETS_BY_KEY["light"].matrix()  # (6, 3)
    W_in = lift_matrix(3, width, seed=1)
    assert W_in.shape == (3, width)
    assert torch.equal(W_in, lift_matrix(3, width, seed=1))
    assert not torch.equal(W_in, lift_matrix(3, width, seed=2))
    lifted = lift_embeddings(small, W_in)
    assert lifted.shape == (6, width)
    assert torch.allclose(lifted, torch.einsum("ti,id->td", small, W_in))


def test_lift_weight_refuses_a_bad_seed():
    with pytest.raises(ValueError):
        lift_matrix(3, 8, seed=-1)


@pytest.mark.parametrize(
    ("d_model", "expected"), [(3, [1, 3]), (8, [1, 2, 4, 8]), (12, [1, 2, 3, 4, 6]), (16, [1, 2, 4, 8])]
)
def test_valid_head_counts(d_model, expected):
    assert valid_head_counts(d_model) == expected


def test_head_shapes_written_out():
    shapes = dict(head_shapes(6, 8, 2))
    assert shapes["X"] == (6, 8)
    assert shapes["split into heads"] == (2, 6, 4)
    assert shapes["weights = softmax(scores)"] == (2, 6, 6)
    assert shapes["context_h = weights_h V_h"] == (2, 6, 4)
    assert shapes["output = concat W_o"] == (6, 8)


def test_head_shapes_match_the_real_tensors(X):
    W = random_head_params(8, seed=0)
    steps = ac.multi_head_attention(X, W.W_q, W.W_k, W.W_v, W.W_o, num_heads=4)
    shapes = dict(head_shapes(6, 8, 4))
    assert shapes["split into heads"] == tuple(ac.split_heads(X @ W.W_q, 4).shape)
    assert shapes["weights = softmax(scores)"] == tuple(steps.weights.shape)
    assert shapes["concat (heads side by side)"] == tuple(steps.concat.shape)


def test_head_shapes_refuse_a_count_that_does_not_divide():
    with pytest.raises(ValueError, match="cannot be split"):
        head_shapes(6, 8, 3)


def test_head_column_labels():
    assert head_column_labels(8, 2) == ["h1·1", "h1·2", "h1·3", "h1·4", "h2·1", "h2·2", "h2·3", "h2·4"]
    assert head_column_labels(3, 3) == ["h1·1", "h2·1", "h3·1"]


@pytest.mark.parametrize("num_heads", [1, 2, 4, 8])
def test_head_output_parts_add_up_to_the_output_and_to_nn_multihead_attention(X, num_heads):
    W = random_head_params(8, seed=3)
    steps = ac.multi_head_attention(X, W.W_q, W.W_k, W.W_v, W.W_o, num_heads=num_heads, mask=ac.causal_mask(6))
    parts = head_output_parts(steps, W.W_o)
    assert parts.shape == (num_heads, 6, 8)
    assert torch.allclose(parts.sum(dim=0), steps.output, atol=1e-6)
    expected, _ = mha_reference(X, W.W_q, W.W_k, W.W_v, W.W_o, num_heads=num_heads, mask=ac.causal_mask(6))
    assert torch.allclose(parts.sum(dim=0), expected, atol=1e-5)


def test_parameter_counts_for_768():
    assert parameter_counts(768) == {
        "no biases": 2_359_296,
        "output bias only": 2_360_064,
        "all biases": 2_362_368,
    }


@pytest.mark.parametrize(("d_model", "num_heads"), [(8, 2), (768, 12)])
def test_parameter_counts_match_torch(d_model, num_heads):
    counts = parameter_counts(d_model)
    assert torch_parameter_count(d_model, num_heads, bias=False) == counts["no biases"]
    assert torch_parameter_count(d_model, num_heads, bias=True) == counts["all biases"]


def test_sdpa_check_covers_a_fully_masked_row_that_nn_multihead_attention_turns_into_nan(X):
    W = random_head_params(8, seed=0)
    mask = block_query_row(ac.causal_mask(6), 2)
    steps = ac.multi_head_attention(X, W.W_q, W.W_k, W.W_v, W.W_o, num_heads=2, mask=mask)
    per_head = check_heads_with_sdpa(steps, mask=mask)
    assert len(per_head) == 2 and max(per_head) < 1e-6
    assert steps.output[2].eq(0).all()
    output, _ = mha_reference(X, W.W_q, W.W_k, W.W_v, W.W_o, num_heads=2, mask=mask)
    assert torch.isnan(output[2]).all()
    check = check_multi_head(steps, X, W.W_q, W.W_k, W.W_v, W.W_o, num_heads=2, mask=mask)
    assert check["fully_masked_rows"] == 1
    assert check["output"] < 1e-5 and check["weights"] < 1e-5


def test_sdpa_check_detects_a_wrong_context(X):
    W = random_head_params(8, seed=0)
    steps = ac.multi_head_attention(X, W.W_q, W.W_k, W.W_v, W.W_o, num_heads=2)
    head = steps.heads[0]
    broken = type(head)(
        head.Q, head.K, head.V, head.scores, head.scaled_scores, head.masked_scores, head.weights, head.context + 0.01
    )
    wrong = type(steps)((broken, steps.heads[1]), steps.concat, steps.output)
    assert check_heads_with_sdpa(wrong, mask=None)[0] == pytest.approx(0.01, abs=1e-6)


# --- lesson 9's block and lesson 7's layer: one call each, the same numbers as the steps written out ---


def frozen(instance) -> bool:
    return dataclasses.is_dataclass(instance) and type(instance).__dataclass_params__.frozen


@pytest.mark.parametrize(("num_heads", "mask_kind", "seed"), [(1, "none", 0), (2, "causal", 3), (4, "none", 7)])
def test_pipeline_block_is_the_block_written_out(X, num_heads, mask_kind, seed):
    """pipeline_block = the seeded W_q, W_k, W_v, W_o, the mask and multi_head_attention, as lesson 9 wrote them."""
    T, d_model = X.shape
    projections = random_projections(d_model, d_model, seed, X.dtype)
    W_o = random_output_projection(d_model, seed, X.dtype)
    mask = causal_mask(T) if mask_kind == "causal" else None
    expected = multi_head_attention(
        X, projections.W_q, projections.W_k, projections.W_v, W_o, num_heads=num_heads, mask=mask
    )
    block = pipeline_block(X, num_heads, mask_kind, seed)
    assert frozen(block)
    assert block.d_k == d_model // num_heads and block.num_heads == num_heads
    assert list(block.params) == ["W_q", "W_k", "W_v", "W_o"]
    for W, want in zip(block.params.values(), (projections.W_q, projections.W_k, projections.W_v, W_o), strict=True):
        assert torch.equal(W, want)
    assert torch.equal(block.W_o, W_o)
    assert (block.mask is None) == (mask is None) and (mask is None or torch.equal(block.mask, mask))
    assert torch.equal(block.steps.output, expected.output)
    assert torch.equal(block.steps.weights, expected.weights)
    assert torch.equal(block.steps.concat, expected.concat)


def test_pipeline_block_refuses_an_unknown_mask_and_a_bad_head_count(X):
    with pytest.raises(ValueError, match="Unknown mask"):
        pipeline_block(X, 1, "padding", 0)
    with pytest.raises(ValueError, match="cannot be split"):
        pipeline_block(X, 5, "none", 0)


@pytest.mark.parametrize(
    ("width", "num_heads", "causal", "blocked_row"),
    [(None, 1, False, None), (8, 2, True, None), (12, 3, False, 2), (16, 4, True, 0)],
)
def test_multi_head_layer_is_the_layer_written_out(width, num_heads, causal, blocked_row):
    """multi_head_layer = X in float64 (lifted by W_in), seeded W, the shared mask and multi_head_attention."""
    small = ac.PRESETS_BY_KEY["journey"].matrix()  # (6, 3), float32
    d_in = small.shape[1]
    X_in = torch.tensor(tuple(small.reshape(-1).tolist()), dtype=torch.float64).reshape(-1, d_in)  # as lesson 7 did
    W_in = None if width is None else lift_matrix(d_in, width, 4, torch.float64)
    X_model = X_in if W_in is None else lift_embeddings(X_in, W_in)
    params = random_head_params(X_model.shape[1], 4, torch.float64)
    mask = causal_mask(6) if causal else None
    if blocked_row is not None:
        mask = block_query_row(ac.no_mask(6) if mask is None else mask, blocked_row)
    expected = multi_head_attention(
        X_model, params.W_q, params.W_k, params.W_v, params.W_o, num_heads=num_heads, mask=mask
    )
    layer = multi_head_layer(small, num_heads, 4, width=width, causal=causal, blocked_row=blocked_row)
    assert frozen(layer)
    assert torch.equal(layer.X, X_model) and layer.X.dtype == torch.float64
    assert (layer.W_in is None) == (W_in is None) and (W_in is None or torch.equal(layer.W_in, W_in))
    assert layer.d_model == X_model.shape[1] and layer.d_k == X_model.shape[1] // num_heads
    assert all(torch.equal(getattr(layer.params, n), getattr(params, n)) for n in ("W_q", "W_k", "W_v", "W_o"))
    assert (layer.mask is None) == (mask is None) and (mask is None or torch.equal(layer.mask, mask))
    assert torch.equal(layer.steps.weights, expected.weights)
    assert torch.equal(layer.steps.output, expected.output)
    assert layer.head_names == [f"head {h + 1}" for h in range(num_heads)]


def test_multi_head_layer_refuses_heads_that_do_not_divide_d_model():
    with pytest.raises(ValueError, match="cannot be split"):
        multi_head_layer(ac.PRESETS_BY_KEY["journey"].matrix(), 3, 0, width=8)


@pytest.mark.parametrize(("causal", "blocked_row"), [(False, None), (True, None), (False, 1), (True, 3)])
def test_head_mask_is_causal_or_none_with_one_row_blocked(causal, blocked_row):
    mask = head_mask(5, causal, blocked_row)
    if not causal and blocked_row is None:
        assert mask is None
        return
    expected = causal_mask(5) if causal else ac.no_mask(5)
    if blocked_row is not None:
        expected[blocked_row] = False
    assert torch.equal(mask, expected)
