"""Multi-head attention, the minGPT way: project, split into h heads, attend per head, merge, W_o.

Shape letters: T tokens, d_model embedding size, h heads, d_k = d_model / h.
Head h uses columns h*d_k:(h+1)*d_k of W_q, W_k and W_v, as nn.MultiheadAttention does.
Also the pages' state in one call each: lesson 9's Block (pipeline_block) and lesson 7's MultiHeadLayer
(multi_head_layer), and lesson 7's helpers: seeded HeadParams, lifting small embeddings, shapes, counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
import torch

from attention_core.attention import AttentionSteps, attention, project_qkv
from attention_core.embeddings import check_seed
from attention_core.i18n import _
from attention_core.masks import block_query_row, causal_mask, no_mask
from attention_core.projections import random_matrix, random_output_projection, random_projections


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
        raise ValueError(_("There must be at least one head."))
    if d_model % num_heads:
        raise ValueError(
            _(
                "d_model = {d_model} cannot be split into {heads} equal heads: choose a number of heads that divides "
                "{d_model}.",
                d_model=d_model,
                heads=num_heads,
            )
        )
    return d_model // num_heads


# TEMP for pages; removed at merge: multi_head.py shows it, but multi_head_attention now uses split_heads.
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
    Q, K, V = project_qkv(X, W_q, W_k, W_v)  # (T, d_model) @ (d_model, d_model) -> (T, d_model) each
    q = split_heads(Q, num_heads)  # (T, d_model) -> (h, T, d_k)
    k = split_heads(K, num_heads)  # (T, d_model) -> (h, T, d_k)
    v = split_heads(V, num_heads)  # (T, d_model) -> (h, T, d_k)
    steps = attention(q, k, v, mask=mask, scale=scale)  # weights (h, T, T), context (h, T, d_k)
    concat = merge_heads(steps.context)  # (h, T, d_k) -> (T, d_model)
    output = concat @ W_o  # (T, d_model) @ (d_model, d_model) -> (T, d_model)
    return MultiHeadSteps(steps.unbind(), concat, output)


def parameter_count(d_model: int, *, in_bias: bool = False, out_bias: bool = False) -> int:
    """4 d_model^2 projection entries (W_q, W_k, W_v, W_o), plus 3 d_model input biases and d_model output biases."""
    return 4 * d_model * d_model + (3 * d_model if in_bias else 0) + (d_model if out_bias else 0)


# --- lesson 9 (pipeline page): the whole block for the sidebar's input ---

BLOCK_MASKS = ("none", "causal")


@dataclass(frozen=True)
class Block:
    """One attention block on X: its seeded weights, its mask and every intermediate (lesson 9 draws them all)."""

    params: dict[str, torch.Tensor]  # W_q, W_k, W_v, W_o: (d_model, d_model) each
    mask: torch.Tensor | None  # (T, T), True = may attend; None = no mask
    steps: MultiHeadSteps  # h heads of (T, d_k), their concat and the output (T, d_model)
    d_k: int

    @property
    def W_o(self) -> torch.Tensor:
        """The output projection, (d_model, d_model)."""
        return self.params["W_o"]

    @property
    def num_heads(self) -> int:
        return len(self.steps.heads)


def pipeline_block(X: torch.Tensor, num_heads: int, mask_kind: str, seed: int) -> Block:
    """output = concat_h(softmax(Q_h K_h^T / sqrt(d_k) + M) V_h) W_o, with W ~ N(0, 1/d_model) drawn from ``seed``."""
    if mask_kind not in BLOCK_MASKS:
        raise ValueError(f"Unknown mask {mask_kind!r}: choose one of {', '.join(BLOCK_MASKS)}.")
    T, d_model = X.shape
    d_k = head_size(d_model, num_heads)
    projections = random_projections(d_model, d_model, seed, X.dtype)  # 3 x (d_model, d_model)
    W_o = random_output_projection(d_model, seed, X.dtype)  # (d_model, d_model)
    params = {"W_q": projections.W_q, "W_k": projections.W_k, "W_v": projections.W_v, "W_o": W_o}
    mask = causal_mask(T) if mask_kind == "causal" else None  # (T, T) or None
    steps = multi_head_attention(
        X, projections.W_q, projections.W_k, projections.W_v, W_o, num_heads=num_heads, mask=mask
    )  # heads (T, d_k) each, output (T, d_model)
    return Block(params, mask, steps, d_k)


# --- lesson 7 (multi-head page): seeded params, lifting small embeddings, shapes, parameters ---

LIFT_WIDTHS = (8, 12, 16)  # widths the page can lift the sidebar's small embeddings to
MAX_HEADS = 8


@dataclass(frozen=True)
class HeadParams:
    """The four (d_model, d_model) projection matrices of one multi-head attention layer."""

    W_q: torch.Tensor  # (d_model, d_model); head h uses columns h*d_k:(h+1)*d_k
    W_k: torch.Tensor  # (d_model, d_model)
    W_v: torch.Tensor  # (d_model, d_model)
    W_o: torch.Tensor  # (d_model, d_model)


def random_head_params(d_model: int, seed: int, dtype: torch.dtype = torch.float32) -> HeadParams:
    """W_q, W_k, W_v, W_o ~ N(0, 1) / sqrt(d_model), drawn from seeded generators."""
    projections = random_projections(d_model, d_model, seed, dtype)  # 3 x (d_model, d_model)
    W_o = random_output_projection(d_model, seed, dtype)  # (d_model, d_model)
    return HeadParams(projections.W_q, projections.W_k, projections.W_v, W_o)


def lift_matrix(d_in: int, d_model: int, seed: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """W_in ~ N(0, 1) / sqrt(d_in), (d_in, d_model): maps small embeddings to a wider d_model."""
    generator = torch.Generator().manual_seed(check_seed(seed) ^ 0x11F7)
    return random_matrix(d_in, d_model, generator, dtype)  # (d_in, d_model)


def lift_embeddings(X: torch.Tensor, W_in: torch.Tensor) -> torch.Tensor:
    """X' = X W_in: the same tokens described by d_model numbers instead of d_in."""
    return X @ W_in  # (T, d_in) @ (d_in, d_model) -> (T, d_model)


def head_mask(T: int, causal: bool, blocked_row: int | None = None) -> torch.Tensor | None:
    """The mask every head shares: causal (j <= i) or none, with query row ``blocked_row`` all False if given."""
    mask = causal_mask(T) if causal else None  # (T, T) or None
    if blocked_row is None:
        return mask
    return block_query_row(no_mask(T) if mask is None else mask, blocked_row)  # (T, T)


@dataclass(frozen=True)
class MultiHeadLayer:
    """Lesson 7's layer: its input (X, or X W_in when lifted), the four W, the shared mask and every head's steps."""

    X: torch.Tensor  # (T, d_model): the layer's input
    W_in: torch.Tensor | None  # (d_in, d_model), None when X enters as it is
    params: HeadParams  # W_q, W_k, W_v, W_o: (d_model, d_model) each
    mask: torch.Tensor | None  # (T, T), True = may attend; None = no mask
    steps: MultiHeadSteps  # h heads of (T, d_k), their concat and the output (T, d_model)
    d_k: int

    @property
    def d_model(self) -> int:
        return int(self.X.shape[1])

    @property
    def head_names(self) -> list[str]:
        """'head 1', 'head 2', ...: how the page names the heads (1-based, as shown)."""
        return [f"head {h + 1}" for h in range(len(self.steps.heads))]


def multi_head_layer(
    X: torch.Tensor,
    num_heads: int,
    seed: int,
    *,
    width: int | None = None,
    causal: bool = False,
    blocked_row: int | None = None,
    dtype: torch.dtype = torch.float64,
) -> MultiHeadLayer:
    """MultiHead(X') = concat_h(softmax(Q_h K_h^T / sqrt(d_k) + M) V_h) W_o, X' = X W_in lifted to ``width`` or X."""
    X_in = X.to(dtype)  # (T, d_in)
    W_in = None if width is None else lift_matrix(X.shape[1], width, seed, dtype)  # (d_in, d_model)
    X_model = X_in if W_in is None else lift_embeddings(X_in, W_in)  # (T, d_in) @ (d_in, d_model) -> (T, d_model)
    d_k = head_size(X_model.shape[1], num_heads)
    params = random_head_params(X_model.shape[1], seed, dtype)  # 4 x (d_model, d_model)
    mask = head_mask(X_model.shape[0], causal, blocked_row)  # (T, T) or None
    steps = multi_head_attention(
        X_model, params.W_q, params.W_k, params.W_v, params.W_o, num_heads=num_heads, mask=mask
    )  # heads (T, d_k) each, output (T, d_model)
    return MultiHeadLayer(X_model, W_in, params, mask, steps, d_k)


def valid_head_counts(d_model: int, max_heads: int = MAX_HEADS) -> list[int]:
    """Every h in 1..max_heads that divides d_model, so each head gets d_k = d_model / h columns."""
    return [h for h in range(1, max_heads + 1) if d_model % h == 0]


def head_shapes(T: int, d_model: int, num_heads: int) -> list[tuple[str, tuple[int, ...]]]:
    """(step, shape) for every tensor of multi-head attention, from X (T, d_model) to the output."""
    h, d_k = num_heads, head_size(d_model, num_heads)
    return [
        ("X", (T, d_model)),
        ("Q = X W_q (also K, V)", (T, d_model)),
        ("split into heads", (h, T, d_k)),
        ("scores Q_h K_hᵀ / √d_k", (h, T, T)),
        ("weights = softmax(scores)", (h, T, T)),
        ("context_h = weights_h V_h", (h, T, d_k)),
        ("concat (heads side by side)", (T, d_model)),
        ("output = concat W_o", (T, d_model)),
    ]


def head_output_parts(steps: MultiHeadSteps, W_o: torch.Tensor) -> torch.Tensor:
    """part_h = context_h W_o[h*d_k:(h+1)*d_k, :]; summing the parts over heads gives concat W_o."""
    d_k = steps.heads[0].context.shape[-1]
    return torch.stack(
        [head.context @ W_o[h * d_k : (h + 1) * d_k] for h, head in enumerate(steps.heads)]
    )  # h x ((T, d_k) @ (d_k, d_model)) -> (h, T, d_model)


def parameter_counts(d_model: int) -> dict[str, int]:
    """4 d² projection entries, + d with a bias on the output only, + 4 d with all biases (none depend on h)."""
    return {
        "no biases": parameter_count(d_model),
        "output bias only": parameter_count(d_model, out_bias=True),
        "all biases": parameter_count(d_model, in_bias=True, out_bias=True),
    }


def head_column_labels(d_model: int, num_heads: int) -> list[str]:
    """'h1·1', 'h1·2', ..., 'h2·1', ...: column c of Q, K, V or concat belongs to head c // d_k + 1."""
    d_k = head_size(d_model, num_heads)
    return [f"h{c // d_k + 1}·{c % d_k + 1}" for c in range(d_model)]


FLOAT32_BYTES = 4


def split_cost(T: int, d_model: int, num_heads: int) -> dict[str, int]:
    """What h heads cost: parameters 4 d_model^2 and matmul FLOPs (same for every h), scores h T^2 (grows with h)."""
    d_k = head_size(d_model, num_heads)
    projections = 4 * 2 * T * d_model * d_model  # X W_q, X W_k, X W_v, concat W_o
    per_head = 2 * 2 * T * T * d_k  # Q_h K_h^T and weights_h V_h, 2 FLOPs per multiply-add
    return {
        "parameters": parameter_count(d_model),
        "matmul FLOPs": projections + num_heads * per_head,
        "scores (h T²)": num_heads * T * T,
    }


def attention_cost(lengths: Sequence[int], num_heads: int = 1) -> pd.DataFrame:
    """For each T: the T^2 scores of one head and their float32 bytes, and all h heads': O(T^2) memory."""
    rows = sorted(set(lengths))
    cells = [T * T for T in rows]
    return pd.DataFrame(
        {
            "T": rows,
            "cells T² per head": cells,
            "bytes per head (float32)": [FLOAT32_BYTES * c for c in cells],
            f"bytes, {num_heads} head{'s' if num_heads != 1 else ''}": [FLOAT32_BYTES * c * num_heads for c in cells],
        }
    )
