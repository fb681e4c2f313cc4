"""The classic attention bugs, each as one small function returning (wrong result, right result) on an input.

Shape letters: T tokens, d_model embedding size, d_k query/key size, h heads. A wrong result is
what the buggy code really computes (a tensor), or the error message it really raises (a string).
"""

from __future__ import annotations

import math

import torch

from attention_core.attention import apply_mask, attention_scores, column_softmax, naive_normalize, softmax
from attention_core.heads import multi_head_attention
from attention_core.masks import to_blocked
from attention_core.presets import SCALING_EXAMPLE

Outcome = tuple[torch.Tensor | str, torch.Tensor]


def softmax_wrong_axis(scores: torch.Tensor) -> Outcome:
    """softmax(dim=0) normalises each column (the “Self Attention is good” tutorial); softmax(dim=-1) normalises
    each query's row."""
    return column_softmax(scores), softmax(scores)  # (T, T), (T, T)


def divide_by_sum(scores: torch.Tensor) -> Outcome:
    """s_ij / sum_k s_ik gives negative or huge 'weights'; softmax gives non-negative rows summing to 1."""
    return naive_normalize(scores), softmax(scores)  # (T, T), (T, T)


def no_scaling(Q: torch.Tensor, K: torch.Tensor) -> Outcome:
    """softmax(Q Kᵀ) instead of softmax(Q Kᵀ / √d_k): too sharp weights when d_k is large."""
    scores = attention_scores(Q, K)  # (T, d_k) @ (d_k, T) -> (T, T)
    return softmax(scores), softmax(scores / math.sqrt(Q.shape[-1]))


def sqrt_d_model(Q_head: torch.Tensor, K_head: torch.Tensor, d_model: int) -> Outcome:
    """One head divides by √d_model instead of its own √d_k (d_k = d_model / h): too flat weights."""
    scores = attention_scores(Q_head, K_head)  # (T, d_k) @ (d_k, T) -> (T, T)
    return softmax(scores / math.sqrt(d_model)), softmax(scores / math.sqrt(Q_head.shape[-1]))


def mask_after_softmax(scores: torch.Tensor, mask: torch.Tensor) -> Outcome:
    """softmax first, then zero the blocked weights: rows no longer sum to 1. Mask the scores first."""
    wrong = softmax(scores) * mask.to(scores.dtype)  # (T, T)
    return wrong, softmax(apply_mask(scores, mask))


def inverted_mask(scores: torch.Tensor, mask: torch.Tensor) -> Outcome:
    """nn.MultiheadAttention's mask (True = blocked) passed where SDPA expects True = may attend."""
    blocked = to_blocked(mask)  # (T, T): True where nn.MultiheadAttention blocks
    return softmax(apply_mask(scores, blocked)), softmax(apply_mask(scores, mask))


def large_negative_in_half(scores: torch.Tensor, mask: torch.Tensor) -> Outcome:
    """masked_fill(-1e9) on float16 scores overflows (float16 stops at ±65504); use finfo(dtype).min or -inf.

    The right result is the exact one: softmax of the masked scores in float64, not the float16 fix's rounding.
    """
    half = scores.to(torch.float16)  # (T, T)
    try:
        wrong: torch.Tensor | str = torch.softmax(half.masked_fill(~mask, -1e9), dim=-1)
    except RuntimeError as error:
        wrong = f"RuntimeError: {error}"
    return wrong, softmax(apply_mask(scores.to(torch.float64), mask))  # (T, T) in float64


def finfo_min_in_half(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The fix still in float16: masked_fill(finfo(float16).min) on float16 scores, softmax in float32."""
    half = scores.to(torch.float16)  # (T, T)
    return torch.softmax(half.masked_fill(~mask, torch.finfo(torch.float16).min).float(), dim=-1)  # (T, T)


def keys_transposed(X: torch.Tensor, W_k: torch.Tensor) -> Outcome:
    """X W_kᵀ (section 2.2.4 of the “Your journey starts with one step” tutorial) instead of K = X W_k; only runs
    when W_k is square."""
    return X @ W_k.T, X @ W_k  # (T, d_model) @ (d_model, d_model) -> (T, d_model), twice


def printed_from_another_run() -> Outcome:
    """The “scaled_dot_product” tutorial prints row 3 of the weights from a run whose inputs are not shown;
    recomputing gives another row."""
    Q, K, _ = SCALING_EXAMPLE.tensors()  # (3, 2) each
    weights = softmax(attention_scores(Q, K) / math.sqrt(Q.shape[-1]))  # (3, 3)
    return torch.tensor(SCALING_EXAMPLE.printed["other_run_t3_weights"]), weights[2]


def forgotten_output_projection(
    X: torch.Tensor, W_q: torch.Tensor, W_k: torch.Tensor, W_v: torch.Tensor, W_o: torch.Tensor, num_heads: int
) -> Outcome:
    """Returning the concatenated heads instead of concat W_o: the heads are never mixed."""
    steps = multi_head_attention(X, W_q, W_k, W_v, W_o, num_heads=num_heads)
    return steps.concat, steps.output  # (T, d_model), (T, d_model)
