"""The 15-minute path as one worked example: one input, one set of weights, every stop computed from the one before.

The input X is the learner's (T tokens x d_model). The weights are drawn once from one seed: W_q, W_k, W_v of
(d_model, h d_k) and W_o of (h d_k, d_model), with h = 2 heads of d_k = 2. Head 1 (the first d_k columns of each
matrix) is the head the path follows from Q, K, V to the context vectors; the heads stop adds head 2, the other
columns of the very same matrices, and W_o. Each stop also shows what goes wrong without its idea, on the same
numbers (``Story`` keeps those failures beside the steps).

Shape letters: T tokens, d_model embedding size, d_k query/key/value size of one head, h heads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from attention_core.attention import (
    attention,
    attention_scores,
    context_vectors,
    naive_normalize,
    scale_scores,
    softmax,
)
from attention_core.heads import merge_heads
from attention_core.masks import causal_mask
from attention_core.positions import inverse_permutation, permute_rows, reversal_permutation
from attention_core.projections import random_matrix
from attention_core.reference import max_abs_difference, sdpa_reference

SEED = (
    22  # the path's one seed: its weights are the same on every visit (chosen for clear weights on the default example)
)
HEADS = 2
D_K = 2  # each head's query, key and value size
SATURATION_D_KS = (2, 32, 128, 512, 2048)  # the d_k the saturation table compares
SHIFTED_SUM = 0.1  # the failure of dividing by the sum: the row shifted so that it sums to this


@dataclass(frozen=True)
class StoryWeights:
    """The path's one set of weights, stated once at its start."""

    W_q: torch.Tensor  # (d_model, h d_k): head 1 is columns 1-2, head 2 columns 3-4
    W_k: torch.Tensor  # (d_model, h d_k)
    W_v: torch.Tensor  # (d_model, h d_k)
    W_o: torch.Tensor  # (h d_k, d_model)


@dataclass(frozen=True)
class Saturation:
    """The query's largest weight as d_k grows, with and without dividing by √d_k (its scores' spread grown)."""

    d_ks: tuple[int, ...]
    unscaled: tuple[float, ...]  # largest weight of softmax(q·k) for each d_k
    scaled: tuple[float, ...]  # largest weight of softmax(q·k / √d_k)
    spread: tuple[float, ...]  # the standard deviation of the query's unscaled scores


@dataclass(frozen=True)
class Story:
    """Every number of the path's toy stops, in the order the stops show them."""

    X: torch.Tensor  # (T, d_model)
    weights_: StoryWeights
    query: int  # the query the stops follow (the sidebar's)
    Q: torch.Tensor  # (T, d_k)  head 1: X W_q[:, :d_k]
    K: torch.Tensor  # (T, d_k)
    V: torch.Tensor  # (T, d_k)
    plain_scores: torch.Tensor  # (T, T)  X Xᵀ: what Q = K = X would give
    scores: torch.Tensor  # (T, T)  Q Kᵀ
    scaled: torch.Tensor  # (T, T)  Q Kᵀ / √d_k
    saturation: Saturation
    exps: torch.Tensor  # (T,)  exp(s_j - max) of the query's scaled row
    attn: torch.Tensor  # (T, T)  softmax of each scaled row
    divided: torch.Tensor  # (T,)  the query's scaled row divided by its sum
    shift: float  # c: the constant that makes the query's row sum to SHIFTED_SUM
    shifted_divided: torch.Tensor  # (T,)  (row + c) divided by its sum
    shifted_softmax: torch.Tensor  # (T,)  softmax(row + c): the same as softmax(row)
    mask_query: int  # a query the causal mask changes (the sidebar's unless it is the last token)
    causal: torch.Tensor  # (T, T) True = may attend
    masked_attn: torch.Tensor  # (T, T)  softmax of the masked scaled scores
    context: torch.Tensor  # (T, d_k)  attn V
    head2_attn: torch.Tensor  # (T, T)  head 2's weights (columns 3-4 of the same W_q, W_k)
    head2_context: torch.Tensor  # (T, d_k)
    concat: torch.Tensor  # (T, h d_k)  [head 1 | head 2]
    output: torch.Tensor  # (T, d_model)  concat W_o
    order: torch.Tensor  # (T,)  the reversed sentence: new row r holds old token order[r]
    reordered_output: torch.Tensor  # (T, d_model)  the same block on the reversed sentence
    one_line: torch.Tensor  # (T, d_k)  torch's scaled_dot_product_attention on Q, K, V
    one_line_gap: float  # largest |one_line - context|

    @property
    def T(self) -> int:
        return int(self.X.shape[0])

    @property
    def qkv(self) -> torch.Tensor:
        """Q, K and V side by side: (T, 3 d_k)."""
        return torch.cat([self.Q, self.K, self.V], dim=-1)

    @property
    def d_model(self) -> int:
        return int(self.X.shape[1])


def story_weights(d_model: int, seed: int = SEED, dtype: torch.dtype = torch.float32) -> StoryWeights:
    """W_q, W_k, W_v (d_model, h d_k) and W_o (h d_k, d_model), drawn in that order from one seeded generator."""
    generator = torch.Generator().manual_seed(seed)
    W_q, W_k, W_v = (random_matrix(d_model, HEADS * D_K, generator, dtype) for _ in range(3))
    W_o = random_matrix(HEADS * D_K, d_model, generator, dtype)
    return StoryWeights(W_q, W_k, W_v, W_o)


def head_columns(W: torch.Tensor, head: int) -> torch.Tensor:
    """Head ``head``'s d_k columns of a projection (0-based head)."""
    return W[:, head * D_K : (head + 1) * D_K]  # (d_model, d_k)


def project(X: torch.Tensor, W: torch.Tensor, head: int = 0) -> torch.Tensor:
    """X W for one head's columns: Q, K or V of that head."""
    return X @ head_columns(W, head)  # (T, d_model) @ (d_model, d_k) -> (T, d_k)


def grown_scores(scores_row: torch.Tensor, d_k: int) -> torch.Tensor:
    """The row's scores with the spread they would have at ``d_k``: a score adds up d_k products, so its spread
    grows like √d_k (lesson 5 measures it); the path's d_k = 2 row times √(d_k / 2)."""
    return scores_row * math.sqrt(d_k / D_K)  # (T,)


def saturation(scores_row: torch.Tensor, d_ks: tuple[int, ...] = SATURATION_D_KS) -> Saturation:
    """How peaked the query's weights get as d_k grows, without and with dividing by √d_k."""
    rows = [grown_scores(scores_row, d_k) for d_k in d_ks]  # each (T,)
    return Saturation(
        d_ks=tuple(d_ks),
        unscaled=tuple(float(softmax(row).max()) for row in rows),
        scaled=tuple(float(softmax(scale_scores(row, d_k)).max()) for row, d_k in zip(rows, d_ks, strict=True)),
        spread=tuple(float(row.std(unbiased=False)) for row in rows),
    )


def shift_to_sum(row: torch.Tensor, total: float = SHIFTED_SUM) -> float:
    """The constant c with sum(row + c) = total."""
    return (total - float(row.sum())) / row.numel()


def mask_query_for(query: int, T: int) -> int:
    """A query whose row the causal mask changes: the sidebar's, unless it is the last token (then the one before)."""
    return query if query < T - 1 or T == 1 else T - 2


def block_output(X: torch.Tensor, w: StoryWeights) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Both heads, their concatenation and the output: (head 1 steps, head 2 steps, concat, output)."""
    heads = [attention(project(X, w.W_q, h), project(X, w.W_k, h), project(X, w.W_v, h)) for h in range(HEADS)]
    concat = merge_heads(torch.stack([steps.context for steps in heads]))  # (h, T, d_k) -> (T, h d_k)
    return heads[0], heads[1], concat, concat @ w.W_o  # (T, h d_k) @ (h d_k, d_model) -> (T, d_model)


def tell(X: torch.Tensor, query: int, seed: int = SEED) -> Story:
    """The whole toy part of the path on X, following ``query``."""
    T = X.shape[0]
    w = story_weights(X.shape[1], seed, X.dtype)
    Q, K, V = project(X, w.W_q), project(X, w.W_k), project(X, w.W_v)  # (T, d_k) each
    scores = attention_scores(Q, K)  # (T, d_k) @ (d_k, T) -> (T, T)
    scaled = scale_scores(scores, D_K)  # (T, T)
    attn = softmax(scaled)  # (T, T)
    row = scaled[query]  # (T,)
    shift = shift_to_sum(row)
    mask = causal_mask(T)  # (T, T)
    _, head2, concat, output = block_output(X, w)
    order = reversal_permutation(T)  # (T,)
    _, _, _, reordered = block_output(permute_rows(X, order), w)
    one_line = sdpa_reference(Q, K, V)  # (T, d_k)
    context = context_vectors(attn, V)  # (T, T) @ (T, d_k) -> (T, d_k)
    return Story(
        X=X,
        weights_=w,
        query=query,
        Q=Q,
        K=K,
        V=V,
        plain_scores=attention_scores(X, X),
        scores=scores,
        scaled=scaled,
        saturation=saturation(scores[query]),
        exps=torch.exp(row - row.max()),
        attn=attn,
        divided=naive_normalize(row.unsqueeze(0))[0],
        shift=shift,
        shifted_divided=naive_normalize((row + shift).unsqueeze(0))[0],
        shifted_softmax=softmax(row + shift),
        mask_query=mask_query_for(query, T),
        causal=mask,
        masked_attn=softmax(scaled.masked_fill(~mask, -math.inf)),
        context=context,
        head2_attn=head2.weights,
        head2_context=head2.context,
        concat=concat,
        output=output,
        order=order,
        reordered_output=reordered,
        one_line=one_line,
        one_line_gap=max_abs_difference(one_line, context),
    )


def self_scored_rows(scores: torch.Tensor) -> int:
    """How many tokens score highest with themselves (the diagonal is its row's largest)."""
    return int((scores.argmax(dim=-1) == torch.arange(scores.shape[0])).sum())


def asymmetry(scores: torch.Tensor) -> float:
    """The largest |s_ij - s_ji|: 0 for a symmetric score matrix."""
    return float((scores - scores.transpose(-2, -1)).abs().max())


def visible_share(weights_row: torch.Tensor, mask_row: torch.Tensor) -> torch.Tensor:
    """The unmasked weights of the keys a mask row allows, renormalized: what the masked softmax gives."""
    kept = weights_row * mask_row  # (T,)
    return kept / kept.sum()  # (T,)


def mask_split(labels, mask_row: torch.Tensor) -> tuple[list[str], list[str]]:
    """The labels a mask row keeps and those it blocks, in sentence order."""
    keep = mask_row.tolist()
    return [f"“{label}”" for label, ok in zip(labels, keep, strict=True) if ok], [
        f"“{label}”" for label, ok in zip(labels, keep, strict=True) if not ok
    ]


def reorder_back(reordered: torch.Tensor, order: torch.Tensor) -> torch.Tensor:
    """Rows of a reordered sentence's output put back in the sentence's order."""
    return permute_rows(reordered, inverse_permutation(order))  # (T, d_model)


# --- the real models' stops ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainedStop:
    """One head of all-MiniLM-L6-v2 on the learner's sentence: the query's row, as the model gives it and by hand."""

    pieces: tuple[str, ...]  # (T,) with [CLS] and [SEP]
    layer: int  # 0-based
    head: int  # 0-based
    query: int  # the query's piece
    row: torch.Tensor  # (T,) the model's weights of the query
    by_hand: torch.Tensor  # (T,) softmax(q K^T / √d_k) with the head's own W_q, W_k (the lab's functions)
    gap: float  # largest |row - by_hand|


def focused_head(attentions: torch.Tensor, query: int) -> tuple[int, int]:
    """(layer, head), 0-based: where the query puts the most weight on one word piece other than itself and the
    markers [CLS] and [SEP] (the first such head on a tie)."""
    T = attentions.shape[-1]
    rows = attentions[:, :, query, :].clone()  # (L, h, T)
    if T > 3:  # a sentence of one piece has only itself and the markers
        rows[..., 0] = rows[..., T - 1] = -1.0
        rows[..., query] = -1.0
    best = rows.amax(dim=-1)  # (L, h)
    flat = int(best.reshape(-1).argmax())
    return flat // attentions.shape[1], flat % attentions.shape[1]


def top_word_piece(row: torch.Tensor, query: int) -> int:
    """The piece other than the query and the markers that gets the most weight (the query itself if none)."""
    T = row.numel()
    if T <= 3:
        return query
    others = row.clone()
    others[0] = others[T - 1] = others[query] = -1.0
    return int(others.argmax())


@dataclass(frozen=True)
class NextStop:
    """SmolLM2's most likely next tokens after the learner's sentence, from the last position's context."""

    prompt: str
    pieces: tuple[str, ...]  # the most likely first
    probabilities: tuple[float, ...]
