"""attention_core.projections: seeded weight matrices at unit-variance scale, and recovering W by least squares."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from attention_core.projections import (
    MAX_D_K,
    Projections,
    random_output_weight,
    random_projections,
    random_weight,
    recover_weight,
)


@pytest.fixture
def synthetic() -> tuple[torch.Tensor, torch.Tensor]:
    """X (10, 4) and a known W (4, 3), both float64 and seeded."""
    generator = torch.Generator().manual_seed(2024)
    X = torch.randn(10, 4, generator=generator, dtype=torch.float64)
    W = torch.randn(4, 3, generator=generator, dtype=torch.float64)
    return X, W


def test_random_projections_are_seeded():
    first = random_projections(6, 4, seed=9)
    again = random_projections(6, 4, seed=9)
    other = random_projections(6, 4, seed=10)
    assert isinstance(first, Projections)
    for name in ("W_q", "W_k", "W_v"):
        W = getattr(first, name)
        assert W.shape == (6, 4) and W.dtype == torch.float32
        assert torch.equal(W, getattr(again, name))
        assert not torch.equal(W, getattr(other, name))
    assert not torch.equal(first.W_q, first.W_k) and not torch.equal(first.W_k, first.W_v)
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.W_q = first.W_k  # type: ignore[misc]


def test_random_projections_float64_are_the_same_numbers():
    W64 = random_projections(5, 3, seed=1, dtype=torch.float64)
    assert W64.W_q.dtype == torch.float64
    assert torch.allclose(W64.W_q.to(torch.float32), random_projections(5, 3, seed=1).W_q)


def test_unit_variance_scale():
    d_model = 64
    W = random_projections(d_model, MAX_D_K, seed=0, dtype=torch.float64)
    entries = torch.cat([W.W_q, W.W_k, W.W_v]).flatten()  # 12,288 entries ~ N(0, 1 / d_model)
    assert abs(entries.std().item() * math.sqrt(d_model) - 1) < 0.05
    X = torch.randn(2000, d_model, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    assert abs((X @ W.W_q).var().item() - 1) < 0.2  # X W keeps unit variance
    generator = torch.Generator().manual_seed(3)
    assert abs(random_weight(400, 400, generator).std().item() * 20 - 1) < 0.02


@pytest.mark.parametrize("d_k", [0, MAX_D_K + 1])
def test_bad_d_k_raises(d_k):
    with pytest.raises(ValueError, match="d_k must be between 1 and"):
        random_projections(4, d_k, seed=0)


@pytest.mark.parametrize("seed", [-1, 1.5, True])
def test_bad_seed_raises(seed):
    with pytest.raises(ValueError, match="seed"):
        random_projections(4, 2, seed=seed)
    with pytest.raises(ValueError, match="seed"):
        random_output_weight(4, seed=seed)


def test_random_output_weight():
    W_o = random_output_weight(8, seed=5)
    assert W_o.shape == (8, 8) and W_o.dtype == torch.float32
    assert torch.equal(W_o, random_output_weight(8, seed=5))
    assert not torch.equal(W_o, random_output_weight(8, seed=6))
    assert not torch.equal(W_o, random_projections(8, 8, seed=5).W_q)  # its own generator
    assert random_output_weight(8, seed=5, dtype=torch.float64).dtype == torch.float64


def test_recover_weight_is_exact_on_synthetic_data(synthetic):
    X, W = synthetic
    recovered, residual = recover_weight(X, X @ W)
    assert recovered.shape == (4, 3) and recovered.dtype == torch.float64
    assert torch.allclose(recovered, W, atol=1e-10)
    assert residual < 1e-10


def test_recover_weight_reports_the_residual(synthetic):
    X, W = synthetic
    noise = torch.zeros(10, 3, dtype=torch.float64)
    noise[0, 0] = 1.0  # one projected value no W can explain
    recovered, residual = recover_weight(X, X @ W + noise)
    assert 0.1 < residual <= 1.0
    assert residual == pytest.approx((X @ recovered - (X @ W + noise)).abs().max().item())


def test_recover_weight_keeps_the_input_dtype(synthetic):
    X, W = synthetic
    recovered, residual = recover_weight(X.to(torch.float32), (X @ W).to(torch.float32))
    assert recovered.dtype == torch.float32
    assert torch.allclose(recovered.to(torch.float64), W, atol=1e-4)
    assert residual < 1e-5
