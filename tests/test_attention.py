"""attention_core.attention: every step against hand values and PyTorch, the whole head against SDPA."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core import loops
from attention_core.attention import (
    MIN_TEMPERATURE,
    AttentionSteps,
    apply_mask,
    attention,
    attention_scores,
    column_softmax,
    context_vectors,
    contributions,
    dot_product_terms,
    naive_normalize,
    naive_softmax,
    project_qkv,
    row_entropy,
    scale_scores,
    self_attention,
    softmax,
)
from attention_core.masks import causal_mask, fully_masked_rows
from attention_core.reference import sdpa_reference

D_MODEL = 8
TOLERANCE = {torch.float64: 1e-10, torch.float32: 1e-5}
MASK_KINDS = ("none", "causal", "random", "random_with_empty_rows")


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Run on one torch thread: these tensors are tiny, and idle OpenMP threads spin (4x the CPU on a busy box)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def make_mask(kind: str, T: int, seed: int) -> torch.Tensor | None:
    """A (T, T) boolean mask (True = may attend) of the given kind, or None."""
    if kind == "none":
        return None
    if kind == "causal":
        return causal_mask(T)
    generator = torch.Generator().manual_seed(seed)
    mask = torch.rand(T, T, generator=generator) < 0.6
    if kind == "random_with_empty_rows":
        mask[0] = False
        mask[T // 2] = False
    return mask


def make_inputs(T: int, d_k: int, dtype: torch.dtype, seed: int) -> tuple[torch.Tensor, ...]:
    """X ~ N(0, 1) of shape (T, D_MODEL) and W_q, W_k, W_v ~ N(0, 1) / sqrt(D_MODEL) (unit-variance scale)."""
    generator = torch.Generator().manual_seed(seed)
    X = torch.randn(T, D_MODEL, generator=generator, dtype=torch.float64)
    W_q, W_k = (torch.randn(D_MODEL, d_k, generator=generator, dtype=torch.float64) / math.sqrt(D_MODEL) for _ in "qk")
    W_v = torch.randn(D_MODEL, d_k + 1, generator=generator, dtype=torch.float64) / math.sqrt(D_MODEL)
    return tuple(t.to(dtype) for t in (X, W_q, W_k, W_v))


@pytest.fixture
def small() -> dict[str, torch.Tensor]:
    """A 2-token example small enough to check by hand: X, W_q, W_k, W_v and their products."""
    X = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
    W_q = torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64)  # identity
    W_k = torch.tensor([[0.0, 1.0], [1.0, 0.0]], dtype=torch.float64)  # swaps the two dimensions
    W_v = torch.tensor([[2.0], [1.0]], dtype=torch.float64)  # (2, 1)
    return {"X": X, "W_q": W_q, "W_k": W_k, "W_v": W_v}


@pytest.fixture
def random_scores() -> torch.Tensor:
    """A seeded (5, 5) float64 score matrix with entries of order 1."""
    return torch.randn(5, 5, generator=torch.Generator().manual_seed(7), dtype=torch.float64)


# --- the whole head against PyTorch ---------------------------------------------------------------


@pytest.mark.parametrize("mask_kind", MASK_KINDS)
@pytest.mark.parametrize(
    ("scale", "temperature"),
    [(True, 1.0), (False, 1.0), (True, 0.5), (False, 2.5)],
    ids=["scaled", "unscaled", "scaled-t0.5", "unscaled-t2.5"],
)
@pytest.mark.parametrize("d_k", [1, 4, 16])
@pytest.mark.parametrize("T", [1, 2, 5, 17, 64])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
def test_self_attention_matches_sdpa(dtype, T, d_k, scale, temperature, mask_kind):
    X, W_q, W_k, W_v = make_inputs(T, d_k, dtype, seed=1000 * T + d_k)
    mask = make_mask(mask_kind, T, seed=T + d_k)
    steps = self_attention(X, W_q, W_k, W_v, mask=mask, scale=scale, temperature=temperature)
    tol = TOLERANCE[dtype]

    # 1. the project's reference helper
    ref_context = sdpa_reference(steps.Q, steps.K, steps.V, mask=mask, scale=scale, temperature=temperature)
    assert (steps.context - ref_context).abs().max().item() <= tol

    # 2. an independent direct call; with V = identity SDPA returns the attention weights themselves
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    factor = (1 / math.sqrt(d_k) if scale else 1.0) / temperature
    context = F.scaled_dot_product_attention(Q, K, V, attn_mask=mask, scale=factor)
    weights = F.scaled_dot_product_attention(Q, K, torch.eye(T, dtype=dtype), attn_mask=mask, scale=factor)
    assert (steps.context - context).abs().max().item() <= tol
    assert (steps.weights - weights).abs().max().item() <= tol
    assert (steps.scores - Q @ K.T).abs().max().item() <= tol * 10
    assert torch.isfinite(steps.weights).all() and torch.isfinite(steps.context).all()

    if mask is not None:
        empty = fully_masked_rows(mask)
        # fully masked rows: all-zero weights and context, as SDPA gives, never NaN
        assert torch.equal(steps.weights[empty], torch.zeros_like(steps.weights[empty]))
        assert torch.equal(steps.context[empty], torch.zeros_like(steps.context[empty]))
        assert (steps.weights[~mask] == 0).all()
        if mask_kind == "random_with_empty_rows":
            assert empty[0] and empty[T // 2]
        assert torch.allclose(steps.weights[~empty].sum(-1), torch.ones((~empty).sum().item(), dtype=dtype))
    else:
        assert torch.allclose(steps.weights.sum(-1), torch.ones(T, dtype=dtype))


def test_identity_weights_mean_q_k_v_are_x(small):
    steps = self_attention(small["X"], scale=False)
    assert torch.equal(steps.Q, small["X"]) and torch.equal(steps.K, small["X"]) and torch.equal(steps.V, small["X"])
    assert torch.equal(steps.scores, small["X"] @ small["X"].T)
    assert torch.equal(steps.scaled_scores, steps.scores)  # scale=False: no division by sqrt(d_k)


def test_scaled_scores_divide_by_sqrt_dk_and_temperature(random_scores):
    X = random_scores[:, :4]
    steps = self_attention(X, temperature=2.0)
    assert torch.allclose(steps.scaled_scores, (X @ X.T) / (math.sqrt(4) * 2.0), atol=1e-12)
    assert torch.equal(steps.masked_scores, steps.scaled_scores)  # no mask


def test_masked_scores_are_minus_inf_where_blocked(random_scores):
    mask = causal_mask(5)
    steps = self_attention(random_scores, mask=mask)
    assert torch.isneginf(steps.masked_scores[~mask]).all()
    assert torch.equal(steps.masked_scores[mask], steps.scaled_scores[mask])


def test_attention_steps_is_frozen(small):
    steps = self_attention(small["X"])
    assert isinstance(steps, AttentionSteps)
    with pytest.raises(dataclasses.FrozenInstanceError):
        steps.weights = torch.zeros(2, 2)  # type: ignore[misc]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_dtype_in_is_dtype_out(dtype):
    X, W_q, W_k, W_v = make_inputs(4, 3, dtype, seed=3)
    steps = self_attention(X, W_q, W_k, W_v, mask=causal_mask(4))
    for field in dataclasses.fields(steps):
        assert getattr(steps, field.name).dtype == dtype, field.name


@pytest.mark.parametrize("temperature", [0.0, -1.0, float("nan")])
def test_non_positive_temperature_raises(temperature, small):
    with pytest.raises(ValueError, match="temperature"):
        self_attention(small["X"], temperature=temperature)
    with pytest.raises(ValueError, match="temperature"):
        softmax(small["X"], temperature=temperature)


@pytest.mark.parametrize("temperature", [1e-45, 1e-4, 0.999 * MIN_TEMPERATURE])
def test_temperature_below_the_minimum_raises(temperature, small):
    """1e-45 used to give NaN (s / t overflows); below MIN_TEMPERATURE = 1e-3 is refused with a sentence."""
    assert MIN_TEMPERATURE == 1e-3
    with pytest.raises(ValueError, match=r"at least 0\.001"):
        softmax(small["X"], temperature=temperature)
    with pytest.raises(ValueError, match="temperature"):
        self_attention(small["X"], temperature=temperature)


def test_the_minimum_temperature_itself_works(random_scores):
    weights = softmax(random_scores, temperature=MIN_TEMPERATURE)
    assert torch.isfinite(weights).all()
    assert torch.allclose(weights, torch.softmax(random_scores / MIN_TEMPERATURE, dim=-1))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_softmax_of_a_row_with_nan_is_nan_as_in_torch(dtype):
    """A NaN score gives a NaN row (as torch.softmax does), not zeros that look like a fully masked row."""
    inf = float("inf")
    scores = torch.tensor(
        [[0.5, float("nan"), 1.0], [0.1, 0.2, 0.3], [-inf, -inf, -inf], [-inf, 2.0, -inf]], dtype=dtype
    )
    ours = softmax(scores)
    assert torch.isnan(ours[0]).all()
    assert torch.allclose(ours[:2], torch.softmax(scores[:2], dim=-1), equal_nan=True)
    assert torch.equal(ours[2], torch.zeros(3, dtype=dtype))  # fully masked: zeros, as SDPA gives
    assert torch.isnan(torch.softmax(scores[2], dim=-1)).all()  # where torch.softmax gives NaN
    assert torch.equal(ours[3], torch.tensor([0.0, 1.0, 0.0], dtype=dtype))


def test_self_attention_of_a_nan_input_is_nan_where_it_reaches():
    X = torch.tensor([[1.0, 0.0], [float("nan"), 1.0], [0.0, 1.0]])
    steps = self_attention(X, mask=causal_mask(3))
    assert not torch.isnan(steps.weights[0]).any()  # query 0 sees only key 0
    assert torch.isnan(steps.weights[1:]).all()  # every row whose scores hold the NaN


def test_attention_on_given_qkv_is_self_attention_after_project_qkv(small):
    Q, K, V = project_qkv(small["X"], small["W_q"], small["W_k"], small["W_v"])
    given_qkv = attention(Q, K, V, mask=causal_mask(Q.shape[0]))
    steps = self_attention(small["X"], small["W_q"], small["W_k"], small["W_v"], mask=causal_mask(Q.shape[0]))
    for field in dataclasses.fields(steps):
        assert torch.equal(getattr(given_qkv, field.name), getattr(steps, field.name)), field.name


def test_project_qkv_without_matrices_is_the_identity(small):
    Q, K, V = project_qkv(small["X"], None, None, None)
    assert Q is small["X"] and K is small["X"] and V is small["X"]


def test_batched_attention_unbinds_into_one_head_each():
    generator = torch.Generator().manual_seed(4)
    Q, K, V = (torch.randn(3, 5, 2, generator=generator, dtype=torch.float64) for _ in range(3))  # (h, T, d_k)
    batched = attention(Q, K, V, mask=causal_mask(5))
    heads = batched.unbind()
    assert len(heads) == 3
    for h, head in enumerate(heads):
        alone = attention(Q[h], K[h], V[h], mask=causal_mask(5))
        assert torch.allclose(head.weights, alone.weights, rtol=0, atol=1e-12)
        assert torch.allclose(head.context, alone.context, rtol=0, atol=1e-12)
    expected = F.scaled_dot_product_attention(Q, K, V, attn_mask=causal_mask(5))  # (h, T, d_k)
    assert torch.allclose(batched.context, expected, atol=1e-12)


def test_query_key_size_mismatch_raises(small):
    with pytest.raises(ValueError, match="must match"):
        self_attention(small["X"], small["W_q"], small["W_v"])


# --- each step ------------------------------------------------------------------------------------


def test_project_qkv_by_hand(small):
    Q, K, V = project_qkv(small["X"], small["W_q"], small["W_k"], small["W_v"])
    assert torch.equal(Q, small["X"])
    assert torch.equal(K, torch.tensor([[2.0, 1.0], [4.0, 3.0]], dtype=torch.float64))
    assert torch.equal(V, torch.tensor([[4.0], [10.0]], dtype=torch.float64))
    # nn.Linear computes x W^T, so our W is its weight transposed
    assert torch.allclose(V, F.linear(small["X"], small["W_v"].T))


def test_attention_scores_by_hand(small):
    Q = small["X"]
    K = torch.tensor([[2.0, 1.0], [4.0, 3.0]], dtype=torch.float64)
    expected = torch.tensor([[1 * 2 + 2 * 1, 1 * 4 + 2 * 3], [3 * 2 + 4 * 1, 3 * 4 + 4 * 3]], dtype=torch.float64)
    assert torch.equal(attention_scores(Q, K), expected)
    assert torch.allclose(attention_scores(Q, K), torch.einsum("id,jd->ij", Q, K))


def test_scale_scores():
    scores = torch.tensor([[4.0, -8.0]], dtype=torch.float64)
    assert torch.equal(scale_scores(scores, 4), torch.tensor([[2.0, -4.0]], dtype=torch.float64))
    assert torch.allclose(scale_scores(scores, 3), scores / 3**0.5)
    with pytest.raises(ValueError, match="d_k"):
        scale_scores(scores, 0)


def test_apply_mask(random_scores):
    assert apply_mask(random_scores, None) is random_scores
    mask = causal_mask(5)
    masked = apply_mask(random_scores, mask)
    assert torch.isneginf(masked[~mask]).all()
    assert torch.equal(masked[mask], random_scores[mask])
    with pytest.raises(ValueError, match="boolean"):
        apply_mask(random_scores, mask.to(torch.float64))
    with pytest.raises(ValueError, match="shape"):
        apply_mask(random_scores, causal_mask(4))


def test_softmax_matches_torch(random_scores):
    assert torch.allclose(softmax(random_scores), torch.softmax(random_scores, dim=-1), atol=1e-15)
    for t in (0.1, 0.5, 3.0):
        assert torch.allclose(softmax(random_scores, temperature=t), torch.softmax(random_scores / t, dim=-1))


def test_softmax_temperature_extremes(random_scores):
    cold = softmax(random_scores, temperature=1e-3)
    assert torch.equal(cold.argmax(-1), random_scores.argmax(-1))
    assert (cold.amax(-1) > 0.999).all()  # nearly one-hot
    hot = softmax(random_scores, temperature=1e6)
    assert torch.allclose(hot, torch.full_like(hot, 1 / 5), atol=1e-5)  # nearly uniform


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_softmax_of_huge_scores_has_no_nan_or_inf(dtype):
    scores = torch.tensor([[1e4, 1e4 - 1.0, 0.0], [-1e4, -1e4, -1e4]], dtype=dtype)
    weights = softmax(scores)
    assert torch.isfinite(weights).all()
    e = math.e
    expected = torch.tensor([[e / (1 + e), 1 / (1 + e), 0.0], [1 / 3, 1 / 3, 1 / 3]], dtype=dtype)
    assert torch.allclose(weights, expected, atol=1e-6)


def test_softmax_fully_masked_row_is_zero_not_nan():
    scores = torch.tensor([[float("-inf")] * 3, [0.0, float("-inf"), 0.0]], dtype=torch.float64)
    weights = softmax(scores)
    assert torch.equal(weights[0], torch.zeros(3, dtype=torch.float64))
    assert torch.equal(weights[1], torch.tensor([0.5, 0.0, 0.5], dtype=torch.float64))


def test_naive_softmax_agrees_for_small_scores_and_overflows_for_large(random_scores):
    assert torch.allclose(naive_softmax(random_scores), torch.softmax(random_scores, dim=-1))
    big = torch.tensor([[100.0, 1.0, 0.0]], dtype=torch.float32)  # exp(100) = inf in float32
    overflowed = naive_softmax(big)
    assert torch.isnan(overflowed[0, 0])  # inf / inf: that is its lesson
    assert torch.isfinite(softmax(big)).all()  # the max-subtracting softmax survives
    assert torch.isnan(naive_softmax(torch.tensor([[1e4, 0.0]], dtype=torch.float64))).any()


def test_naive_normalize_returns_exploding_values_as_is():
    scores = torch.tensor([[-0.3276, 1.0072, 0.5901, -0.0147, -0.0648, -1.4828]], dtype=torch.float64)
    weights = naive_normalize(scores)
    assert torch.equal(weights, scores / scores.sum())
    assert weights.max() > 1 and weights.min() < 0  # not a probability distribution
    assert torch.allclose(weights.sum(-1), torch.ones(1, dtype=torch.float64))  # yet it sums to 1
    near_zero = torch.tensor([[1.0, -1.0 + 1e-6]], dtype=torch.float64)
    exploded = naive_normalize(near_zero)
    assert exploded.abs().max() > 1e5  # row sum near 0: huge, returned unclipped
    assert torch.equal(exploded, near_zero / near_zero.sum(-1, keepdim=True))


def test_column_softmax_columns_sum_to_one(random_scores):
    weights = column_softmax(random_scores)
    assert torch.allclose(weights.sum(dim=0), torch.ones(5, dtype=torch.float64))
    assert torch.allclose(weights, torch.softmax(random_scores, dim=0))
    assert not torch.allclose(weights.sum(dim=1), torch.ones(5, dtype=torch.float64))  # rows do not


def test_context_vectors_by_hand():
    weights = torch.tensor([[0.25, 0.75], [1.0, 0.0]], dtype=torch.float64)
    V = torch.tensor([[4.0, 0.0], [0.0, 8.0]], dtype=torch.float64)
    assert torch.equal(context_vectors(weights, V), torch.tensor([[1.0, 6.0], [4.0, 0.0]], dtype=torch.float64))


def test_contributions_sum_to_context(random_scores):
    weights = torch.softmax(random_scores, dim=-1)
    V = random_scores[:, :3]
    context = context_vectors(weights, V)
    for i in range(5):
        parts = contributions(weights[i], V)
        assert parts.shape == (5, 3)
        assert torch.allclose(parts[2], weights[i, 2] * V[2])
        assert torch.allclose(parts.sum(dim=0), context[i], atol=1e-14)


def test_dot_product_terms_sum_to_scores(random_scores):
    Q, K = random_scores[:, :3], random_scores[:, 2:]
    scores = attention_scores(Q, K)
    for i in range(5):
        terms = dot_product_terms(Q[i], K)
        assert terms.shape == (5, 3)
        assert terms[1, 2] == Q[i, 2] * K[1, 2]
        assert torch.allclose(terms.sum(dim=-1), scores[i], atol=1e-14)


@pytest.mark.parametrize("T", [1, 2, 6, 64])
def test_row_entropy_uniform_and_one_hot(T):
    uniform = torch.full((3, T), 1 / T, dtype=torch.float64)
    assert torch.allclose(row_entropy(uniform), torch.full((3,), math.log(T), dtype=torch.float64))
    one_hot = torch.eye(T, dtype=torch.float64)
    assert torch.equal(row_entropy(one_hot), torch.zeros(T, dtype=torch.float64))


def test_row_entropy_matches_torch_categorical(random_scores):
    weights = torch.softmax(random_scores, dim=-1)
    expected = torch.distributions.Categorical(probs=weights).entropy()
    assert torch.allclose(row_entropy(weights), expected)
    assert torch.isfinite(row_entropy(torch.zeros(2, 4))).all()  # fully masked rows: 0 ln 0 = 0


# --- properties -----------------------------------------------------------------------------------

PROPERTY_SETTINGS = settings(max_examples=50, deadline=None, database=None)
finite = st.floats(min_value=-20, max_value=20, allow_nan=False, allow_infinity=False)


@st.composite
def inputs_and_mask(draw):
    """X (T, d) from bounded floats and a boolean mask (T, T), both as float64 tensors."""
    T = draw(st.integers(1, 7))
    d = draw(st.integers(1, 4))
    X = draw(st.lists(st.lists(finite, min_size=d, max_size=d), min_size=T, max_size=T))
    mask = draw(st.lists(st.lists(st.booleans(), min_size=T, max_size=T), min_size=T, max_size=T))
    return torch.tensor(X, dtype=torch.float64), torch.tensor(mask)


@PROPERTY_SETTINGS
@given(inputs_and_mask(), st.booleans(), st.floats(0.1, 10))
def test_property_rows_sum_to_one_and_masked_are_zero(data, scale, temperature):
    X, mask = data
    steps = self_attention(X, mask=mask, scale=scale, temperature=temperature)
    rows = ~fully_masked_rows(mask)
    assert torch.allclose(steps.weights[rows].sum(-1), torch.ones(int(rows.sum()), dtype=torch.float64))
    assert (steps.weights[~mask] == 0).all()  # exactly 0, not merely small
    assert (steps.weights[~rows] == 0).all()
    assert (steps.weights >= 0).all()


@PROPERTY_SETTINGS
@given(inputs_and_mask(), st.lists(st.floats(-1e3, 1e3), min_size=7, max_size=7))
def test_property_adding_a_constant_to_a_row_changes_nothing(data, constants):
    X, mask = data
    scores = apply_mask(X @ X.T, mask)
    shift = torch.tensor(constants[: X.shape[0]], dtype=torch.float64).unsqueeze(-1)  # (T, 1)
    assert torch.allclose(softmax(scores + shift), softmax(scores), atol=1e-9)


@PROPERTY_SETTINGS
@given(inputs_and_mask(), st.booleans(), st.floats(0.1, 10))
def test_property_loops_equal_vectorised(data, scale, temperature):
    X, mask = data
    steps = self_attention(X, mask=mask, scale=scale, temperature=temperature)
    weights, context = loops.self_attention(X.tolist(), mask=mask.tolist(), scale=scale, temperature=temperature)
    assert torch.allclose(steps.weights, torch.tensor(weights, dtype=torch.float64), atol=1e-10)
    assert torch.allclose(steps.context, torch.tensor(context, dtype=torch.float64), atol=1e-9)
