"""attention_core.loops: the loop-by-loop teaching code agrees with torch."""

from __future__ import annotations

import math

import pytest
import torch

from attention_core import loops
from attention_core.attention import self_attention
from attention_core.masks import causal_mask


@pytest.fixture
def matrices() -> tuple[torch.Tensor, torch.Tensor]:
    """Seeded float64 A (4, 3) and B (3, 5)."""
    generator = torch.Generator().manual_seed(12)
    return (
        torch.randn(4, 3, generator=generator, dtype=torch.float64),
        torch.randn(3, 5, generator=generator, dtype=torch.float64),
    )


def test_dot(matrices):
    A, _ = matrices
    assert loops.dot([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]) == 32.0
    assert loops.dot(A[0].tolist(), A[1].tolist()) == pytest.approx(torch.dot(A[0], A[1]).item(), abs=1e-14)
    with pytest.raises(ValueError):
        loops.dot([1.0, 2.0], [1.0])  # strict zip: lengths must match


def test_matmul(matrices):
    A, B = matrices
    product = loops.matmul(A.tolist(), B.tolist())
    assert len(product) == 4 and len(product[0]) == 5
    assert torch.allclose(torch.tensor(product, dtype=torch.float64), A @ B, atol=1e-14)
    assert loops.matmul([[1.0, 2.0]], [[3.0], [4.0]]) == [[11.0]]


def test_attention_scores(matrices):
    A, _ = matrices
    scores = loops.attention_scores(A.tolist(), A.tolist())
    assert torch.allclose(torch.tensor(scores, dtype=torch.float64), A @ A.T, atol=1e-14)


def test_softmax_row_matches_torch():
    row = [1.0, -2.0, 0.5, 3.0]
    expected = torch.softmax(torch.tensor(row, dtype=torch.float64), dim=-1)
    assert torch.allclose(torch.tensor(loops.softmax_row(row), dtype=torch.float64), expected)


def test_softmax_row_with_minus_inf():
    row = [1.0, -math.inf, 2.0, -math.inf]
    weights = loops.softmax_row(row)
    expected = torch.softmax(torch.tensor(row, dtype=torch.float64), dim=-1)
    assert torch.allclose(torch.tensor(weights, dtype=torch.float64), expected)
    assert weights[1] == 0.0 and weights[3] == 0.0
    assert loops.softmax_row([-math.inf, -math.inf]) == [0.0, 0.0]  # fully masked: zeros, like SDPA


def test_softmax_row_of_huge_scores():
    weights = loops.softmax_row([1e4, 1e4, 0.0])
    assert weights == pytest.approx([0.5, 0.5, 0.0])


def test_context_vector(matrices):
    A, _ = matrices
    w = [0.1, 0.2, 0.3, 0.4]
    expected = torch.tensor(w, dtype=torch.float64) @ A
    assert torch.allclose(torch.tensor(loops.context_vector(w, A.tolist()), dtype=torch.float64), expected)


@pytest.mark.parametrize("masked", [False, True])
def test_self_attention_with_projections(matrices, masked):
    A, B = matrices
    X, W = A.tolist(), B[:, :3].tolist()  # X (4, 3), W (3, 3)
    mask = causal_mask(4) if masked else None
    weights, context = loops.self_attention(X, W, W, W, mask=None if mask is None else mask.tolist())
    steps = self_attention(A, B[:, :3], B[:, :3], B[:, :3], mask=mask)
    assert torch.allclose(torch.tensor(weights, dtype=torch.float64), steps.weights, atol=1e-14)
    assert torch.allclose(torch.tensor(context, dtype=torch.float64), steps.context, atol=1e-14)
