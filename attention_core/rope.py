"""Rotary position embedding (RoPE): q and k rotated pair by pair by an angle proportional to the position.

Shape letters: T tokens, d the size of a query or key vector (even), d/2 pairs. Pair i rotates by the angle
position x theta_i, theta_i = base^(-2i/d): the first pairs turn fast, the last ones slowly.

Pairing: the "rotate half" convention of Hugging Face's Llama (and of SmolLM2 here): pair i is dimensions
(i, i + d/2), not the neighbours (2i, 2i + 1) of the RoPE paper. Both are the same rotation of a permuted
vector; llama.cpp's GGUF files store q and k rows permuted for the neighbour pairing, and
``attention_core.smollm2`` un-permutes them, so the model and these functions use the rotate-half pairing.

Why it encodes relative position: a rotation by angle a then a dot product with a vector rotated by b
gives the same number as rotating only by a - b, so q_m . k_n depends on m - n alone (``relative_scores``).
"""

from __future__ import annotations

import torch

DEFAULT_BASE = 10_000.0  # the RoPE paper's base; SmolLM2 uses 100,000 (its GGUF says so)


def rope_frequencies(d: int, base: float = DEFAULT_BASE, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """theta_i = base^(-2i/d) for the d/2 pairs (radians per position step), as Hugging Face computes it (in
    float32; a float64 input gets float64 angles, so its rotation rounds no more than its numbers)."""
    if d < 2 or d % 2:
        raise ValueError("RoPE needs an even vector size d of at least 2.")
    exponents = torch.arange(0, d, 2, dtype=torch.int64).to(dtype) / d  # (d/2,)
    return 1.0 / (base**exponents)  # (d/2,)


def rope_angles(
    positions: torch.Tensor, d: int, base: float = DEFAULT_BASE, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """angles[t, i] = positions[t] x theta_i: how far pair i of the vector at positions[t] is turned."""
    theta = rope_frequencies(d, base, dtype)  # (d/2,)
    return positions.to(dtype)[:, None] * theta[None, :]  # (T, 1) * (1, d/2) -> (T, d/2)


def pair_halves(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The two members of every pair in the rotate-half pairing: x[..., :d/2] and x[..., d/2:]."""
    half = x.shape[-1] // 2
    return x[..., :half], x[..., half:]  # (..., d/2), (..., d/2)


def rotate_pairs(x: torch.Tensor, angles: torch.Tensor) -> torch.Tensor:
    """Each pair (x_i, x_{i+d/2}) turned by angles[..., i]: (a cos - b sin, a sin + b cos).

    x is (..., T, d) and angles (T, d/2) (from ``rope_angles``); the result has x's shape. This is
    Hugging Face's ``x * cos + rotate_half(x) * sin`` with cos and sin of the angles repeated twice.
    """
    if x.shape[-1] != 2 * angles.shape[-1]:
        raise ValueError(f"x has {x.shape[-1]} dimensions but the angles are for {2 * angles.shape[-1]}.")
    cos = torch.cat([angles.cos(), angles.cos()], dim=-1)  # (T, d)
    sin = torch.cat([angles.sin(), angles.sin()], dim=-1)  # (T, d)
    a, b = pair_halves(x)  # (..., T, d/2) each
    rotated_half = torch.cat([-b, a], dim=-1)  # (..., T, d): Hugging Face's rotate_half(x)
    return x * cos + rotated_half * sin  # (..., T, d)


def apply_rope(x: torch.Tensor, positions: torch.Tensor, base: float = DEFAULT_BASE) -> torch.Tensor:
    """x (..., T, d) with the vector at positions[t] rotated by its angles: rotate_pairs(x, rope_angles(...))."""
    dtype = torch.float64 if x.dtype == torch.float64 else torch.float32
    return rotate_pairs(x, rope_angles(positions, x.shape[-1], base, dtype))  # (..., T, d)


def pair_norms(x: torch.Tensor) -> torch.Tensor:
    """The length of every pair, sqrt(x_i^2 + x_{i+d/2}^2): a rotation leaves each one unchanged."""
    a, b = pair_halves(x)
    return torch.sqrt(a * a + b * b)  # (..., d/2)


def pair_angles(x: torch.Tensor) -> torch.Tensor:
    """The direction of every pair, atan2(x_{i+d/2}, x_i), in radians: a rotation adds its angle."""
    a, b = pair_halves(x)
    return torch.atan2(b, a)  # (..., d/2)


def relative_scores(q: torch.Tensor, k: torch.Tensor, m: int, n: int, base: float = DEFAULT_BASE) -> float:
    """q rotated to position m dotted with k rotated to position n: depends on m - n only."""
    q_m = apply_rope(q[None, :], torch.tensor([m]), base)[0]  # (d,)
    k_n = apply_rope(k[None, :], torch.tensor([n]), base)[0]  # (d,)
    return float(q_m @ k_n)
