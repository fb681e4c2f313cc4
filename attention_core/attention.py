"""Scaled dot-product self-attention, one small function per step, and the pitfalls beside them.

Shape letters: T tokens, d_model embedding size, d_k query/key size, d_v value size, h heads.
``self_attention(X, W_q, W_k, W_v)`` = ``project_qkv`` then ``attention(Q, K, V)``; ``attention``
also takes batched (h, T, d_k) inputs. A boolean (T, T) mask has True = "may attend", as in
PyTorch's scaled_dot_product_attention. Order: scores -> scale -> / temperature -> mask -> softmax.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import torch

from attention_core.i18n import _

MIN_TEMPERATURE = 1e-3  # colder is an argmax in all but name; near 1e-45, s / t overflows to inf and gives NaN


@dataclass(frozen=True)
class AttentionSteps:
    """Every intermediate of one attention head, in the order they are computed."""

    Q: torch.Tensor  # (T, d_k)
    K: torch.Tensor  # (T, d_k)
    V: torch.Tensor  # (T, d_v)
    scores: torch.Tensor  # (T, T)  Q K^T
    scaled_scores: torch.Tensor  # (T, T)  Q K^T / (sqrt(d_k) * temperature)
    masked_scores: torch.Tensor  # (T, T)  -inf where the mask forbids
    weights: torch.Tensor  # (T, T)  softmax over each row
    context: torch.Tensor  # (T, d_v)  weights @ V

    def unbind(self) -> tuple[AttentionSteps, ...]:
        """Batched steps (every field with a leading h) -> one AttentionSteps per head."""
        fields = dataclasses.astuple(self)  # each (h, ...)
        return tuple(AttentionSteps(*(field[i] for field in fields)) for i in range(self.Q.shape[0]))


def project_qkv(
    X: torch.Tensor, W_q: torch.Tensor | None, W_k: torch.Tensor | None, W_v: torch.Tensor | None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Q = X W_q, K = X W_k, V = X W_v; a missing matrix is the identity (Q = K = V = X)."""
    Q = X if W_q is None else X @ W_q  # (T, d_model) @ (d_model, d_k) -> (T, d_k)
    K = X if W_k is None else X @ W_k  # (T, d_model) @ (d_model, d_k) -> (T, d_k)
    V = X if W_v is None else X @ W_v  # (T, d_model) @ (d_model, d_v) -> (T, d_v)
    return Q, K, V


def dot_product_terms(q: torch.Tensor, K: torch.Tensor) -> torch.Tensor:
    """terms[j, d] = q_d * k_{j,d}; summing over d gives the score q . k_j."""
    return K * q  # (T, d_k) * (d_k,) -> (T, d_k)


def attention_scores(Q: torch.Tensor, K: torch.Tensor) -> torch.Tensor:
    """scores = Q K^T, so scores[i, j] = q_i . k_j."""
    return Q @ K.transpose(-2, -1)  # (T, d_k) @ (d_k, T) -> (T, T)


def scale_scores(scores: torch.Tensor, d_k: int) -> torch.Tensor:
    """scaled = scores / sqrt(d_k)."""
    if d_k < 1:
        raise ValueError("d_k must be at least 1.")
    return scores / math.sqrt(d_k)  # (T, T)


def apply_mask(scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """masked[i, j] = scores[i, j] where mask[i, j] is True, else -inf."""
    if mask is None:
        return scores
    if mask.dtype != torch.bool:
        raise ValueError("The mask must be boolean: True = may attend, False = blocked.")
    if mask.shape[-2:] != scores.shape[-2:]:
        raise ValueError(f"The mask has shape {tuple(mask.shape)} but the scores have {tuple(scores.shape)}.")
    return scores.masked_fill(~mask, float("-inf"))  # (T, T)


def check_temperature(temperature: float) -> float:
    """The temperature itself, or a ValueError below MIN_TEMPERATURE (1e-3)."""
    if not temperature >= MIN_TEMPERATURE:
        raise ValueError(_("The temperature must be at least {minimum}.", minimum=f"{MIN_TEMPERATURE:g}"))
    return temperature


def softmax(scores: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """weights[i, j] = exp(s_ij / t - m_i) / sum_k exp(s_ik / t - m_i), m_i the row max.

    Subtracting the row maximum keeps exp from overflowing (scores of 1e4 work).
    A row that is all -inf (fully masked) gives all zeros, as PyTorch's
    scaled_dot_product_attention does, instead of NaN. A row holding a NaN score
    gives NaN, as torch.softmax does. The temperature t must be at least
    MIN_TEMPERATURE = 1e-3 (ValueError otherwise).
    """
    z = scores / check_temperature(temperature)  # (T, T)
    row_max = z.amax(dim=-1, keepdim=True)  # (T, 1), NaN if the row holds a NaN
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    exps = torch.exp(z - row_max)  # (T, T), every entry in [0, 1] (NaN stays NaN)
    row_sum = exps.sum(dim=-1, keepdim=True)  # (T, 1), 0 only for a fully masked row
    fully_masked = row_sum == 0  # (T, 1); False for a NaN sum, so NaN propagates
    return torch.where(fully_masked, 0.0, exps / torch.where(fully_masked, 1.0, row_sum))  # (T, T)


def naive_softmax(scores: torch.Tensor) -> torch.Tensor:
    """exp(s_ij) / sum_k exp(s_ik) without subtracting the max: overflows to inf/NaN for large scores."""
    exps = torch.exp(scores)  # (T, T), inf once a score passes ~88 in float32
    return exps / exps.sum(dim=-1, keepdim=True)


def naive_normalize(scores: torch.Tensor) -> torch.Tensor:
    """s_ij / sum_k s_ik: the tutorials' first attempt; negative or huge where the row sum is near 0."""
    return scores / scores.sum(dim=-1, keepdim=True)  # (T, T)


def column_softmax(scores: torch.Tensor) -> torch.Tensor:
    """The wrong-axis pitfall: softmax down each column (dim=0), so columns, not rows, sum to 1."""
    return softmax(scores.transpose(-2, -1)).transpose(-2, -1)  # (T, T)


def context_vectors(weights: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    """context = weights V, so context_i = sum_j weights[i, j] v_j."""
    return weights @ V  # (T, T) @ (T, d_v) -> (T, d_v)


def contributions(weights_row: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    """parts[j] = weights[i, j] * v_j; summing over j gives context_i."""
    return weights_row.unsqueeze(-1) * V  # (T, 1) * (T, d_v) -> (T, d_v)


def row_entropy(weights: torch.Tensor) -> torch.Tensor:
    """H_i = -sum_j w_ij ln w_ij (in nats; 0 ln 0 = 0): ln T for uniform rows, 0 for one-hot rows."""
    logs = torch.where(weights > 0, torch.log(torch.where(weights > 0, weights, 1.0)), 0.0)
    return -(weights * logs).sum(dim=-1)  # (T,)


def uniform_entropy(T: int) -> float:
    """ln T: the largest possible row entropy (in nats), reached when every weight is 1/T."""
    if T < 1:
        raise ValueError("A row needs at least one token.")
    return math.log(T)


def attention(
    Q: torch.Tensor,
    K: torch.Tensor,
    V: torch.Tensor,
    *,
    mask: torch.Tensor | None = None,
    scale: bool = True,
    temperature: float = 1.0,
) -> AttentionSteps:
    """softmax(mask(Q K^T / (sqrt(d_k) t))) V, every step kept; Q, K, V may carry a leading h (heads)."""
    check_temperature(temperature)
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Queries have {Q.shape[-1]} dimensions but keys have {K.shape[-1]}: they must match.")
    scores = attention_scores(Q, K)  # (T, d_k) @ (d_k, T) -> (T, T)
    scaled = scale_scores(scores, Q.shape[-1]) if scale else scores  # (T, T)
    scaled = scaled / temperature  # (T, T)
    masked = apply_mask(scaled, mask)  # (T, T), -inf where blocked
    weights = softmax(masked)  # (T, T), each row sums to 1 (0 if fully masked)
    context = context_vectors(weights, V)  # (T, T) @ (T, d_v) -> (T, d_v)
    return AttentionSteps(Q, K, V, scores, scaled, masked, weights, context)


def self_attention(
    X: torch.Tensor,
    W_q: torch.Tensor | None = None,
    W_k: torch.Tensor | None = None,
    W_v: torch.Tensor | None = None,
    *,
    mask: torch.Tensor | None = None,
    scale: bool = True,
    temperature: float = 1.0,
) -> AttentionSteps:
    """softmax(mask(Q K^T / (sqrt(d_k) t))) V with Q, K, V = X W_q, X W_k, X W_v.

    A missing projection matrix means the identity (the simplified attention of the
    first tutorials, where Q = K = V = X). ``scale=False`` skips the division by
    sqrt(d_k), as the simplified attention of the tutorials does.
    """
    Q, K, V = project_qkv(X, W_q, W_k, W_v)  # (T, d_k), (T, d_k), (T, d_v)
    return attention(Q, K, V, mask=mask, scale=scale, temperature=temperature)
