"""Attention masks: boolean (T, T) matrices where True means "query i may attend to key j".

Shape letters: T tokens. PyTorch's scaled_dot_product_attention uses this convention;
nn.MultiheadAttention uses the opposite one (True = blocked): see ``to_blocked``.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

LARGE_NEGATIVE = -1e9


def no_mask(T: int) -> torch.Tensor:
    """mask[i, j] = True for all i, j: every token sees every token."""
    return torch.ones(T, T, dtype=torch.bool)  # (T, T)


def causal_mask(T: int) -> torch.Tensor:
    """mask[i, j] = (j <= i): a token sees itself and the tokens before it."""
    return torch.tril(torch.ones(T, T, dtype=torch.bool))  # (T, T)


def padding_mask(T: int, padded: Iterable[int]) -> torch.Tensor:
    """mask[i, j] = (j is not padding): padding tokens are hidden as keys, like key_padding_mask."""
    keep = torch.ones(T, dtype=torch.bool)  # (T,)
    for j in padded:
        if not 0 <= j < T:
            raise ValueError(f"Padding position {j + 1} is outside the sentence of {T} tokens.")
        keep[j] = False
    return keep.unsqueeze(0).expand(T, T).clone()  # (1, T) -> (T, T)


def sliding_window_mask(T: int, window: int) -> torch.Tensor:
    """mask[i, j] = (i - window < j <= i): a token sees itself and the window - 1 tokens before it."""
    if window < 1:
        raise ValueError("The window must hold at least 1 token (the token itself).")
    i = torch.arange(T).unsqueeze(1)  # (T, 1)
    j = torch.arange(T).unsqueeze(0)  # (1, T)
    return (j <= i) & (j > i - window)  # (T, T)


def to_blocked(mask: torch.Tensor) -> torch.Tensor:
    """The other convention: True = blocked (nn.MultiheadAttention's attn_mask, key_padding_mask)."""
    return ~mask  # (T, T)


def fully_masked_rows(mask: torch.Tensor) -> torch.Tensor:
    """rows[i] = True where query i may attend to nothing at all."""
    return ~mask.any(dim=-1)  # (T,)


def mask_with_constant(scores: torch.Tensor, mask: torch.Tensor, value: float = LARGE_NEGATIVE) -> torch.Tensor:
    """masked[i, j] = scores[i, j] where allowed, else a large negative constant (-1e9, or 003's -9e15)."""
    return scores.masked_fill(~mask, value)  # (T, T)


def multiply_and_renormalize(weights: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """w'_ij = w_ij m_ij / sum_k w_ik m_ik: softmax first, then zero the blocked weights and rescale.

    A fully masked row divides 0 by 0 and gives NaN: that is the lesson.
    """
    kept = weights * mask.to(weights.dtype)  # (T, T)
    return kept / kept.sum(dim=-1, keepdim=True)  # (T, T)
