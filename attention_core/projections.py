"""Weight matrices: seeded random W_q, W_k, W_v, W_o, and recovering a W from printed numbers.

Shape letters: T tokens, d_model input size, d_k projection size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from attention_core.embeddings import check_seed

MAX_D_K = 64


@dataclass(frozen=True)
class Projections:
    """The three projection matrices of one attention head."""

    W_q: torch.Tensor  # (d_model, d_k)
    W_k: torch.Tensor  # (d_model, d_k)
    W_v: torch.Tensor  # (d_model, d_v)


def random_weight(
    d_in: int, d_out: int, generator: torch.Generator, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """W ~ N(0, 1) / sqrt(d_in), so X W keeps unit variance; (d_in, d_out)."""
    W = torch.randn(d_in, d_out, generator=generator, dtype=torch.float64) / math.sqrt(d_in)  # (d_in, d_out)
    return W.to(dtype)


def random_projections(d_model: int, d_k: int, seed: int, dtype: torch.dtype = torch.float32) -> Projections:
    """W_q, W_k, W_v drawn in that order from one seeded generator; each (d_model, d_k)."""
    if not 1 <= d_k <= MAX_D_K:
        raise ValueError(f"d_k must be between 1 and {MAX_D_K}.")
    generator = torch.Generator().manual_seed(check_seed(seed))
    W_q, W_k, W_v = (random_weight(d_model, d_k, generator, dtype) for _ in range(3))
    return Projections(W_q, W_k, W_v)


def random_output_weight(d_model: int, seed: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """W_o for multi-head attention, from its own seeded generator; (d_model, d_model)."""
    generator = torch.Generator().manual_seed(check_seed(seed) ^ 0x5EED)
    return random_weight(d_model, d_model, generator, dtype)


def recover_weight(X: torch.Tensor, projected: torch.Tensor) -> tuple[torch.Tensor, float]:
    """W = argmin ||X W - P||: the least-squares weight that maps X to a printed projection P.

    Returns W (d_model, d_k) and the largest absolute residual max|X W - P|.
    """
    X64, P64 = X.to(torch.float64), projected.to(torch.float64)
    W = torch.linalg.lstsq(X64, P64).solution  # (d_model, d_k)
    residual = (X64 @ W - P64).abs().max().item()  # (T, d_k) -> scalar
    return W.to(X.dtype), residual
