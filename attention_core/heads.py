"""Multi-head attention: h heads of size d_k = d_model / h, concatenated and projected by W_o.

Shape letters: T tokens, d_model embedding size, h heads, d_k = d_model / h.
Head h uses columns h*d_k:(h+1)*d_k of W_q, W_k and W_v, as nn.MultiheadAttention does.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attention_core.attention import AttentionSteps, self_attention


@dataclass(frozen=True)
class MultiHeadSteps:
    """Every head's intermediates, their concatenation and the output projection."""

    heads: tuple[AttentionSteps, ...]  # h heads, each with (T, d_k) Q, K, V and (T, T) weights
    concat: torch.Tensor  # (T, d_model)
    output: torch.Tensor  # (T, d_model)  concat @ W_o

    @property
    def weights(self) -> torch.Tensor:
        """All heads' attention weights stacked: (h, T, T)."""
        return torch.stack([head.weights for head in self.heads])


def head_size(d_model: int, num_heads: int) -> int:
    """d_k = d_model / h, or a ValueError when h does not divide d_model."""
    if num_heads < 1:
        raise ValueError("There must be at least one head.")
    if d_model % num_heads:
        raise ValueError(
            f"d_model = {d_model} cannot be split into {num_heads} equal heads: "
            f"choose a number of heads that divides {d_model}."
        )
    return d_model // num_heads


def head_columns(W: torch.Tensor, head: int, d_k: int) -> torch.Tensor:
    """W[:, head*d_k:(head+1)*d_k]: the slice of a projection that belongs to one head."""
    return W[:, head * d_k : (head + 1) * d_k]  # (d_model, d_k)


def split_heads(M: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(T, d_model) -> (h, T, d_k): head h gets columns h*d_k:(h+1)*d_k."""
    T, d_model = M.shape
    d_k = head_size(d_model, num_heads)
    return M.reshape(T, num_heads, d_k).transpose(0, 1)  # (T, h, d_k) -> (h, T, d_k)


def merge_heads(M: torch.Tensor) -> torch.Tensor:
    """(h, T, d_k) -> (T, h * d_k): the heads side by side, the inverse of split_heads."""
    h, T, d_k = M.shape
    return M.transpose(0, 1).reshape(T, h * d_k)  # (T, h, d_k) -> (T, d_model)


def multi_head_attention(
    X: torch.Tensor,
    W_q: torch.Tensor,
    W_k: torch.Tensor,
    W_v: torch.Tensor,
    W_o: torch.Tensor,
    *,
    num_heads: int,
    mask: torch.Tensor | None = None,
    scale: bool = True,
) -> MultiHeadSteps:
    """output = concat_h(softmax(Q_h K_h^T / sqrt(d_k)) V_h) W_o, with Q_h = X W_q[:, h-th d_k columns]."""
    d_model = W_q.shape[1]
    d_k = head_size(d_model, num_heads)
    heads = tuple(
        self_attention(
            X,
            head_columns(W_q, h, d_k),
            head_columns(W_k, h, d_k),
            head_columns(W_v, h, d_k),
            mask=mask,
            scale=scale,
        )
        for h in range(num_heads)
    )
    concat = torch.cat([head.context for head in heads], dim=-1)  # h x (T, d_k) -> (T, d_model)
    output = concat @ W_o  # (T, d_model) @ (d_model, d_model) -> (T, d_model)
    return MultiHeadSteps(heads, concat, output)


def parameter_count(d_model: int, *, in_bias: bool = False, out_bias: bool = False) -> int:
    """4 d_model^2 weights (W_q, W_k, W_v, W_o), plus 3 d_model input biases and d_model output biases."""
    return 4 * d_model * d_model + (3 * d_model if in_bias else 0) + (d_model if out_bias else 0)
