"""RoPE on the toy input of the positions lesson: each token's vector turned pair by pair by its position.

Shape letters: T tokens, d = d_model. The pairs follow ``attention_core.rope`` (rotate-half: pair i is dimensions
i and i + d/2 of the first 2 x floor(d/2)); with an odd d_model the last dimension has no partner and stays as it
is. Here q = k = X (the simplified attention of lesson 1), so the scores are RoPE(X) RoPE(X)^T.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attention_core.reference import Agreement, agreement
from attention_core.rope import DEFAULT_BASE, apply_rope, rope_angles

SHIFT = 10  # the relative-position check moves every position by this much


def paired_size(d: int) -> int:
    """How many dimensions RoPE turns: the largest even number <= d."""
    return d - d % 2


def rope_rows(X: torch.Tensor, offset: int = 0, base: float = DEFAULT_BASE) -> torch.Tensor:
    """Row t of X turned by (t + offset) x theta_i, pair by pair; an odd last dimension is kept: (T, d)."""
    T, d = X.shape
    paired = paired_size(d)
    if paired == 0:
        return X.clone()
    positions = torch.arange(offset, offset + T)
    turned = apply_rope(X[:, :paired], positions, base)  # (T, paired), in X's precision (hand edits: float64)
    return torch.cat([turned, X[:, paired:]], dim=1)  # (T, d)


@dataclass(frozen=True)
class ToyRope:
    """The toy input with RoPE: angles, the turned rows, scores without and with it, and the shift check."""

    angles: torch.Tensor  # (T, d/2) m x theta_i
    rotated: torch.Tensor  # (T, d) RoPE(X)
    plain_scores: torch.Tensor  # (T, T) X X^T
    rope_scores: torch.Tensor  # (T, T) RoPE(X) RoPE(X)^T
    shifted_scores: torch.Tensor  # (T, T) with every position moved by SHIFT
    shift: Agreement  # shifted against unshifted


def toy_rope(X: torch.Tensor, base: float = DEFAULT_BASE, shift: int = SHIFT) -> ToyRope:
    """RoPE on X at positions 0..T-1 and at shift..shift+T-1; the scores depend on m - n only, so both agree."""
    T, d = X.shape
    rotated = rope_rows(X, 0, base)  # (T, d)
    moved = rope_rows(X, shift, base)  # (T, d)
    rope_scores = rotated @ rotated.T  # (T, d) @ (d, T) -> (T, T)
    shifted_scores = moved @ moved.T  # (T, T)
    return ToyRope(
        angles=rope_angles(torch.arange(T), max(paired_size(d), 2), base, X.dtype)[:, : paired_size(d) // 2],
        rotated=rotated,
        plain_scores=X @ X.T,
        rope_scores=rope_scores,
        shifted_scores=shifted_scores,
        shift=agreement(shifted_scores, rope_scores),
    )
