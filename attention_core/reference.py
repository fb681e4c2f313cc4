"""Independent checks: the same attention computed by PyTorch's own implementations.

Shape letters: T tokens, d_model, h heads, d_k. Our masks use True = may attend;
nn.MultiheadAttention uses True = blocked, so its mask is inverted here.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from attention_core.attention import AttentionSteps
from attention_core.heads import MultiHeadSteps


def sdpa_reference(
    Q: torch.Tensor,
    K: torch.Tensor,
    V: torch.Tensor,
    *,
    mask: torch.Tensor | None = None,
    scale: bool = True,
    temperature: float = 1.0,
) -> torch.Tensor:
    """F.scaled_dot_product_attention(Q, K, V) with our mask and scale; returns context (T, d_v)."""
    factor = (1 / math.sqrt(Q.shape[-1]) if scale else 1.0) / temperature
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=mask, scale=factor)  # (T, d_v)


def mha_reference(
    X: torch.Tensor,
    W_q: torch.Tensor,
    W_k: torch.Tensor,
    W_v: torch.Tensor,
    W_o: torch.Tensor,
    *,
    num_heads: int,
    mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """nn.MultiheadAttention with our W_q, W_k, W_v, W_o (no biases): output (T, d_model), weights (h, T, T)."""
    d_model = W_q.shape[0]
    mha = torch.nn.MultiheadAttention(d_model, num_heads, bias=False, batch_first=True, dtype=X.dtype)
    with torch.no_grad():
        # torch computes x @ in_proj_weight.T, so its rows are our columns.
        mha.in_proj_weight.copy_(torch.cat([W_q.T, W_k.T, W_v.T], dim=0))  # (3 d_model, d_model)
        mha.out_proj.weight.copy_(W_o.T)  # (d_model, d_model)
        blocked = None if mask is None else ~mask  # True = blocked in nn.MultiheadAttention
        x = X.unsqueeze(0)  # (1, T, d_model)
        output, weights = mha(x, x, x, attn_mask=blocked, need_weights=True, average_attn_weights=False)
    return output[0], weights[0]  # (T, d_model), (h, T, T)


def max_abs_difference(a: torch.Tensor, b: torch.Tensor) -> float:
    """max |a - b| over all entries, ignoring entries where both are NaN."""
    both_nan = torch.isnan(a) & torch.isnan(b)
    diff = torch.where(both_nan, 0.0, (a.to(torch.float64) - b.to(torch.float64)).abs())
    return float(diff.max().item()) if diff.numel() else 0.0


def check_self_attention(
    steps: AttentionSteps, *, mask: torch.Tensor | None, scale: bool, temperature: float = 1.0
) -> float:
    """max |context - F.scaled_dot_product_attention(Q, K, V)| for one head."""
    expected = sdpa_reference(steps.Q, steps.K, steps.V, mask=mask, scale=scale, temperature=temperature)
    return max_abs_difference(steps.context, expected)


def check_multi_head(
    steps: MultiHeadSteps,
    X: torch.Tensor,
    W_q: torch.Tensor,
    W_k: torch.Tensor,
    W_v: torch.Tensor,
    W_o: torch.Tensor,
    *,
    num_heads: int,
    mask: torch.Tensor | None = None,
) -> dict[str, float]:
    """Differences from nn.MultiheadAttention for rows it can compute (it gives NaN on fully masked rows)."""
    output, weights = mha_reference(X, W_q, W_k, W_v, W_o, num_heads=num_heads, mask=mask)
    rows = torch.ones(X.shape[0], dtype=torch.bool) if mask is None else mask.any(dim=-1)  # (T,)
    return {
        "weights": max_abs_difference(steps.weights[:, rows], weights[:, rows]),
        "output": max_abs_difference(steps.output[rows], output[rows]),
        "fully_masked_rows": int((~rows).sum().item()),
    }


def check_heads_with_sdpa(steps: MultiHeadSteps, *, mask: torch.Tensor | None) -> list[float]:
    """max |context_h - F.scaled_dot_product_attention(Q_h, K_h, V_h)| per head, fully masked rows included."""
    return [check_self_attention(head, mask=mask, scale=True) for head in steps.heads]


def torch_parameter_count(d_model: int, num_heads: int, *, bias: bool) -> int:
    """sum of numel() over nn.MultiheadAttention(d_model, num_heads, bias=bias).parameters()."""
    module = torch.nn.MultiheadAttention(d_model, num_heads, bias=bias)
    return sum(p.numel() for p in module.parameters())


FLOAT32_RTOL = 1e-5  # float32 keeps about 7 significant digits (eps 1.2e-7); a few hundred roundings stay below this


def relative_difference(a: torch.Tensor, b: torch.Tensor) -> float:
    """max |a - b| / max |b|: the gap relative to the size of the numbers (0 when both are all zero)."""
    gap = max_abs_difference(a, b)
    size = float(b.detach().to(torch.float64).abs().max().item()) if b.numel() else 0.0
    return gap / size if size > 0 else (0.0 if gap == 0 else math.inf)


def same_up_to_float32(a: torch.Tensor, b: torch.Tensor, rtol: float = FLOAT32_RTOL) -> bool:
    """True when a and b differ by no more than float32 precision, relative to their size."""
    return relative_difference(a, b) <= rtol
