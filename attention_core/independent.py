"""An independent reference for the real models' heads: code that shares nothing with the lab's own arithmetic.

Shape letters: T tokens, d_model, h query heads, h_kv key/value heads (h_kv = h without grouped-query
attention), d_k the size of one head.

Lessons 10 and 11 recompute a head by hand with the lab's functions (attention_core.attention, rope.py). To
check those numbers, this module recomputes the same heads from the same raw inputs with none of them: it
imports only torch (and the standard library), nothing of the lab. The inputs (a layer's input X or a, its
weight matrices and biases, the positions) come from the lab's loaders; every step being checked is recomputed
here, in float64:

    Q, K, V = X W_q^T + b_q, X W_k^T + b_k, X W_v^T + b_v     the projections, split into heads
    Q, K = RoPE(Q), RoPE(K)                                   (Llama only) pairs as complex numbers, times e^(i m theta)
    context = scaled_dot_product_attention(Q, K, V)           PyTorch's own: scale 1/sqrt(d_k), mask, softmax, @ V
    weights = scaled_dot_product_attention(Q, K, I)           the identity as values: weights @ I = the weights

``torch.nn.functional.scaled_dot_product_attention`` chooses the scale (its default 1/sqrt(d_k)), builds the
causal mask (``is_causal=True``) and shares each key/value head between its query heads (``enable_gqa=True``).
RoPE is the rotation of Hugging Face's Llama ("rotate half": dimension i paired with i + d_k/2), written as a
complex multiplication with ``torch.polar`` instead of the lab's cos/sin sums. Its angles follow the model's
definition, theta_i = base^(-2i/d_k) and m theta_i in float32 (as Hugging Face's LlamaRotaryEmbedding computes
them); the rotation itself is done in float64.

``compare`` then sets the lab's numbers beside the reference's: the largest difference, and the verdict
against an allowed difference the caller states.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

REFERENCE = "torch.nn.functional.scaled_dot_product_attention"  # the reference function, as the pages name it


@dataclass(frozen=True)
class ReferenceAttention:
    """One layer's heads recomputed independently (float64), with how large each query row's numbers can be."""

    weights: torch.Tensor  # (h, T, T): rows sum to 1, 0 where the mask forbids
    contexts: torch.Tensor  # (h, T, d_k): weights @ V
    score_bounds: torch.Tensor  # (h, T): |q| x the largest |k| of the keys the row sees, / sqrt(d_k)
    value_bounds: torch.Tensor  # (h, T): the largest |v| entry of the values the row averages


def heads_of(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(T, num_heads * d_k) -> (num_heads, T, d_k): head j is columns j*d_k .. (j+1)*d_k - 1."""
    T, width = x.shape
    return x.reshape(T, num_heads, width // num_heads).permute(1, 0, 2)  # (T, n, d_k) -> (n, T, d_k)


def projected_heads(X: torch.Tensor, W: torch.Tensor, b: torch.Tensor | None, num_heads: int) -> torch.Tensor:
    """X W^T (+ b) in float64, W as published (out, in), split into heads: (num_heads, T, d_k)."""
    Y = F.linear(X.double(), W.double(), None if b is None else b.double())  # (T, in) @ (in, out) -> (T, out)
    return heads_of(Y, num_heads)  # (num_heads, T, d_k)


def rope_angles_float32(positions: torch.Tensor, d_k: int, base: float) -> torch.Tensor:
    """m theta_i with theta_i = base^(-2i/d_k), in float32 as the model defines them: (T, d_k / 2)."""
    theta = 1.0 / (base ** (torch.arange(0, d_k, 2, dtype=torch.float32) / d_k))  # (d_k / 2,)
    return torch.outer(positions.to(torch.float32), theta)  # (T,) outer (d_k / 2,) -> (T, d_k / 2)


def rope_complex(x: torch.Tensor, positions: torch.Tensor, base: float) -> torch.Tensor:
    """RoPE as a complex rotation: z_i = x_i + i x_(i + d_k/2) times e^(i m theta_i), then back to real pairs.

    x is (n, T, d_k) float64; the result has its shape."""
    half = x.shape[-1] // 2
    z = torch.complex(x[..., :half], x[..., half:])  # (n, T, d_k / 2) complex128
    angles = rope_angles_float32(positions, x.shape[-1], base).double()  # (T, d_k / 2)
    turned = z * torch.polar(torch.ones_like(angles), angles)  # (n, T, d_k / 2) * (T, d_k / 2)
    return torch.cat([turned.real, turned.imag], dim=-1)  # (n, T, d_k)


def visible_keys(T: int, causal: bool) -> torch.Tensor:
    """(T, T) booleans: True where query t may look at key s (s <= t when causal; everywhere otherwise)."""
    every = torch.ones(T, T, dtype=torch.bool)
    return every.tril() if causal else every


def row_bounds(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, causal: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """For every query row (h, T): |q| x the largest |k| it sees / sqrt(d_k), the largest score q . k / sqrt(d_k)
    could reach; and the largest |v| entry of the values it averages. K and V may have fewer heads (grouped)."""
    group = Q.shape[0] // K.shape[0]
    key_norms = K.norm(dim=-1).repeat_interleave(group, dim=0)  # (h, T)
    value_sizes = V.abs().amax(dim=-1).repeat_interleave(group, dim=0)  # (h, T)
    seen = visible_keys(Q.shape[1], causal)  # (T, T)
    largest_key = torch.where(seen, key_norms[:, None, :], 0.0).amax(dim=-1)  # (h, T, T) -> (h, T)
    largest_value = torch.where(seen, value_sizes[:, None, :], 0.0).amax(dim=-1)  # (h, T)
    return Q.norm(dim=-1) * largest_key / Q.shape[-1] ** 0.5, largest_value  # (h, T), (h, T)


def sdpa_attention(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, *, causal: bool = False) -> ReferenceAttention:
    """Weights and contexts by PyTorch's scaled_dot_product_attention (grouped-query when K has fewer heads).

    The weights are the same call with the identity matrix as the values: each row of weights @ I is that row."""
    T = K.shape[-2]
    gqa = Q.shape[0] != K.shape[0]
    contexts = F.scaled_dot_product_attention(Q, K, V, is_causal=causal, enable_gqa=gqa)  # (h, T, d_k)
    identity = torch.eye(T, dtype=V.dtype).expand(K.shape[0], T, T)  # (h_kv, T, T)
    weights = F.scaled_dot_product_attention(Q, K, identity, is_causal=causal, enable_gqa=gqa)  # (h, T, T)
    return ReferenceAttention(weights, contexts, *row_bounds(Q, K, V, causal))


def bert_layer(
    X: torch.Tensor,
    W_q: torch.Tensor,
    b_q: torch.Tensor,
    W_k: torch.Tensor,
    b_k: torch.Tensor,
    W_v: torch.Tensor,
    b_v: torch.Tensor,
    num_heads: int,
) -> ReferenceAttention:
    """A BERT layer's self-attention heads from X entering the layer (T, d_model) and its Linear weights (out, in)
    and biases (out,): every piece may attend to every piece."""
    Q = projected_heads(X, W_q, b_q, num_heads)  # (h, T, d_k)
    K = projected_heads(X, W_k, b_k, num_heads)  # (h, T, d_k)
    V = projected_heads(X, W_v, b_v, num_heads)  # (h, T, d_k)
    return sdpa_attention(Q, K, V)


def llama_layer(
    a: torch.Tensor,
    W_q: torch.Tensor,
    W_k: torch.Tensor,
    W_v: torch.Tensor,
    num_heads: int,
    num_kv_heads: int,
    positions: torch.Tensor,
    base: float,
) -> ReferenceAttention:
    """A Llama layer's attention heads from its normed input a (T, d_model) and W_q, W_k, W_v (out, in; no bias;
    q and k rows in the rotate-half order), at the positions, RoPE's base: causal, grouped-query."""
    Q = rope_complex(projected_heads(a, W_q, None, num_heads), positions, base)  # (h, T, d_k)
    K = rope_complex(projected_heads(a, W_k, None, num_kv_heads), positions, base)  # (h_kv, T, d_k)
    V = projected_heads(a, W_v, None, num_kv_heads)  # (h_kv, T, d_k): RoPE leaves the values alone
    return sdpa_attention(Q, K, V, causal=True)


# --- the lab's numbers beside the reference's -------------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """The lab's numbers against the reference's: the largest difference, the largest the check allows, the verdict."""

    compared: str  # what was compared, in English (the template filled in with ``values``)
    max_difference: float  # max |lab - reference| over every number compared (NaN if the lab's has a NaN)
    allowed: float  # the largest difference taken for float32 rounding
    exact: bool  # every number the same as the reference's
    template: str = ""  # ``compared`` before its values went in (marked N_ by the caller), empty without values
    values: tuple[tuple[str, object], ...] = ()  # the template's named values

    @property
    def close(self) -> bool:
        """Every number within the allowed difference of the reference's."""
        return self.max_difference <= self.allowed

    @property
    def verdict(self) -> str:
        """'exactly equal', 'equal up to float32 rounding' or 'different'."""
        if self.exact:  # English values (compared in code; reference.Agreement marks them N_), shown with _()
            return "exactly equal"
        return "equal up to float32 rounding" if self.close else "different"


def compare(compared: str, ours: torch.Tensor, reference: torch.Tensor, allowed: float, **values: object) -> Comparison:
    """The lab's tensor against the reference's, number by number (the same shape). ``compared`` names it in
    English, a template (marked N_) when ``values`` fill its named placeholders."""
    gaps = (ours.double() - reference.double()).abs()  # NaN where ours is NaN
    named = compared.format(**values) if values else compared
    template, pairs = (compared, tuple(values.items())) if values else ("", ())
    return Comparison(named, float(gaps.max()), float(allowed), bool((gaps == 0).all()), template, pairs)


def largest(x: torch.Tensor) -> float:
    """max |x|: the size of the numbers a tolerance is relative to."""
    return float(x.abs().max())
