"""attention_core.reference: the PyTorch oracles agree with the core, and max_abs_difference handles NaN."""

from __future__ import annotations

import math

import pytest
import torch

from attention_core.attention import self_attention
from attention_core.heads import multi_head_attention
from attention_core.masks import causal_mask
from attention_core.reference import (
    agreement,
    check_multi_head,
    check_self_attention,
    max_abs_difference,
    mha_reference,
    sdpa_reference,
)

NAN = float("nan")


@pytest.fixture
def weights() -> tuple[torch.Tensor, ...]:
    """Seeded float64 X (5, 8) and W_q, W_k, W_v, W_o (8, 8) at unit-variance scale."""
    generator = torch.Generator().manual_seed(8)
    X = torch.randn(5, 8, generator=generator, dtype=torch.float64)
    Ws = (torch.randn(8, 8, generator=generator, dtype=torch.float64) / math.sqrt(8) for _ in range(4))
    return (X, *Ws)


@pytest.mark.parametrize(("scale", "temperature"), [(True, 1.0), (False, 1.0), (True, 0.7)])
@pytest.mark.parametrize("masked", [False, True])
def test_sdpa_reference_agrees_with_self_attention(weights, scale, temperature, masked):
    X, W_q, W_k, W_v, _ = weights
    mask = causal_mask(5) if masked else None
    steps = self_attention(X, W_q, W_k, W_v, mask=mask, scale=scale, temperature=temperature)
    context = sdpa_reference(steps.Q, steps.K, steps.V, mask=mask, scale=scale, temperature=temperature)
    assert context.shape == (5, 8)
    assert max_abs_difference(steps.context, context) < 1e-12
    assert check_self_attention(steps, mask=mask, scale=scale, temperature=temperature) < 1e-12
    # the check can fail: the wrong scale is detected
    assert check_self_attention(steps, mask=mask, scale=not scale, temperature=temperature) > 1e-6


def test_mha_reference_agrees_with_multi_head(weights):
    X, W_q, W_k, W_v, W_o = weights
    steps = multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads=2, mask=causal_mask(5))
    output, attn = mha_reference(X, W_q, W_k, W_v, W_o, num_heads=2, mask=causal_mask(5))
    assert output.shape == (5, 8) and attn.shape == (2, 5, 5)
    assert max_abs_difference(steps.output, output) < 1e-12
    assert max_abs_difference(steps.weights, attn) < 1e-12


def test_check_multi_head_skips_fully_masked_rows(weights):
    X, W_q, W_k, W_v, W_o = weights
    mask = causal_mask(5)
    mask[2] = False
    steps = multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads=4, mask=mask)
    result = check_multi_head(steps, X, W_q, W_k, W_v, W_o, num_heads=4, mask=mask)
    assert result["fully_masked_rows"] == 1
    assert result["weights"] < 1e-12 and result["output"] < 1e-12
    wrong = multi_head_attention(X, W_q, W_k, W_v, W_o.T, num_heads=4, mask=mask)  # W_o transposed by mistake
    assert check_multi_head(wrong, X, W_q, W_k, W_v, W_o, num_heads=4, mask=mask)["output"] > 1e-6


def test_max_abs_difference():
    a = torch.tensor([1.0, NAN, 3.0])
    assert max_abs_difference(a, torch.tensor([1.5, NAN, 2.0])) == 1.0  # shared NaN ignored
    assert max_abs_difference(a, a.clone()) == 0.0
    assert max_abs_difference(torch.zeros(0), torch.zeros(0)) == 0.0
    one_sided = max_abs_difference(a, torch.tensor([1.0, 2.0, 3.0]))
    assert not one_sided <= 1e-6  # a NaN on one side only never passes a tolerance check
    assert max_abs_difference(torch.tensor([1.0], dtype=torch.float32), torch.tensor([1.25])) == 0.25


def test_agreement_verdict_uses_a_relative_tolerance():
    """Issue 9 item 10: the same absolute gap is rounding next to large values and a difference next to small ones."""
    from attention_core.reference import TOLERANCE, agreement

    big = torch.tensor([1000.0, 2000.0])
    assert agreement(big + torch.tensor([1e-3, 0.0]), big).verdict == "equal up to float32 rounding"
    small = torch.tensor([1.0, 2.0])
    near = agreement(small + torch.tensor([1e-3, 0.0]), small)
    assert near.verdict == "different" and not near.close
    assert near.max_difference == pytest.approx(1e-3, rel=1e-3) and near.scale == 2.0
    assert agreement(small, small.clone()).verdict == "exactly equal"
    assert agreement(small + TOLERANCE[torch.float32], small).verdict == "equal up to float32 rounding"
    assert agreement(torch.tensor([1.3991]), torch.tensor([0.0])).verdict == "different"
    nan = torch.tensor([float("nan"), 1.0])
    assert agreement(nan, nan.clone()).exact and not agreement(nan, torch.ones(2)).close


def test_relative_difference_judges_the_gap_by_the_size_of_the_numbers() -> None:
    """Issue 9 item 10: a verdict depends on the gap relative to the values, not on a fixed absolute cut-off."""
    big = torch.tensor([1000.0, 2000.0])
    assert agreement(big + 0.001, big).relative_difference == pytest.approx(5e-7, rel=0.05)
    assert agreement(big + 0.001, big).close
    small = torch.tensor([0.001, 0.002])
    assert not agreement(small + 0.001, small).close  # the same absolute gap, now half the value
    assert agreement(torch.zeros(2), torch.zeros(2)).relative_difference == 0.0
    assert agreement(torch.ones(2), torch.zeros(2)).relative_difference == math.inf


def test_agreement_tolerance_catches_a_relative_bug_of_1e_5_and_passes_float32_rounding():
    """Issue 22 item 6c: weights x (1 + 1e-5) is different; float32 against float64 on 1024 tokens is not."""
    from attention_core import self_attention
    from attention_core.embeddings import random_embeddings
    from attention_core.reference import TOLERANCE, agreement

    X = random_embeddings([f"w{i}" for i in range(1024)], 16, 0)  # the largest typed sentence, d_model 16
    ours, exact = self_attention(X, scale=False), self_attention(X.double(), scale=False)
    for name in ("weights", "context"):
        assert agreement(getattr(ours, name), getattr(exact, name)).close, name
        assert not agreement(getattr(ours, name) * (1 + 1e-5), getattr(exact, name)).close, name
    assert agreement(exact.weights * (1 + 1e-5), exact.weights).verdict == "different"
    assert agreement(exact.weights + 1e-12, exact.weights).verdict == "equal up to float64 rounding"
    assert TOLERANCE[torch.float32] < 1e-5 / 2  # the bug stands at least twice above the tolerance


@pytest.mark.parametrize("d_model", [4, 16])
def test_no_false_alarm_at_the_largest_typed_sentence(d_model):
    """Issue 22 item 6c: on 1024 typed tokens (the maximum) every check the pages run reads equal in float32."""
    from attention_core import causal_mask, multi_head_attention, self_attention
    from attention_core.embeddings import random_embeddings
    from attention_core.projections import random_output_projection, random_projections
    from attention_core.reference import agreement, check_block, sdpa_agreement

    X = random_embeddings([f"w{i % 700}" for i in range(1024)], d_model, 3)  # (1024, d_model), repeated words too
    P, W_o = random_projections(d_model, d_model, 0), random_output_projection(d_model, 0)
    mask = causal_mask(1024)
    for scale, m in ((True, None), (False, None), (True, mask)):
        steps = self_attention(X, P.W_q, P.W_k, P.W_v, mask=m, scale=scale)
        assert sdpa_agreement(steps, mask=m, scale=scale).close
    plain, exact = self_attention(X, scale=False), self_attention(X.double(), scale=False)  # lesson 3 (loops: float64)
    assert (
        agreement(plain.context, exact.context.float()).close and agreement(plain.weights, exact.weights.float()).close
    )
    for heads in (1, 2, 4):
        block = multi_head_attention(X, P.W_q, P.W_k, P.W_v, W_o, num_heads=heads, mask=mask)
        check = check_block(block, X, P.W_q, P.W_k, P.W_v, W_o, mask=mask)
        assert all(a.close for a in (check.weights, check.output, check.contexts, *check.heads))


def test_no_false_alarm_on_hand_edits_near_100():
    """Issue 22 item 6c: hand edits (float64, up to ±100, scores near 1e5) read equal against PyTorch."""
    from attention_core import causal_mask, multi_head_attention, self_attention
    from attention_core.projections import random_output_projection, random_projections
    from attention_core.reference import check_block, sdpa_agreement

    generator = torch.Generator().manual_seed(0)
    X = 100 - torch.rand(16, 16, generator=generator, dtype=torch.float64) * 0.01  # edits near 100, 0.001 apart
    P = random_projections(16, 16, 0, torch.float64)
    W_o = random_output_projection(16, 0, torch.float64)
    for m in (None, causal_mask(16)):
        assert sdpa_agreement(self_attention(X, P.W_q, P.W_k, P.W_v, mask=m), mask=m, scale=True).close
        assert sdpa_agreement(self_attention(X, mask=m, scale=False), mask=m, scale=False).close
        block = multi_head_attention(X, P.W_q, P.W_k, P.W_v, W_o, num_heads=4, mask=m)
        check = check_block(block, X, P.W_q, P.W_k, P.W_v, W_o, mask=m)
        assert all(a.close for a in (check.weights, check.output, check.contexts, *check.heads))
