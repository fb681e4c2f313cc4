"""Independent checks: the same attention computed by PyTorch's own implementations.

Shape letters: T tokens, d_model, h heads, d_k. Our masks use True = may attend;
nn.MultiheadAttention uses True = blocked, so its mask is inverted here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from attention_core.attention import AttentionSteps
from attention_core.heads import MultiHeadSteps
from attention_core.i18n import N_, _


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
    need_weights: bool = True,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """nn.MultiheadAttention with our W_q, W_k, W_v, W_o (no biases): output (T, d_model), weights (h, T, T).

    With need_weights=True (its default) a fully masked row comes out NaN (0/0 in its own softmax); with
    need_weights=False it runs scaled_dot_product_attention, which gives 0 there, and weights is None.
    """
    d_model = W_q.shape[0]
    mha = torch.nn.MultiheadAttention(d_model, num_heads, bias=False, batch_first=True, dtype=X.dtype)
    with torch.no_grad():
        # torch computes x @ in_proj_weight.T, so its rows are our columns.
        mha.in_proj_weight.copy_(torch.cat([W_q.T, W_k.T, W_v.T], dim=0))  # (3 d_model, d_model)
        mha.out_proj.weight.copy_(W_o.T)  # (d_model, d_model)
        blocked = None if mask is None else ~mask  # True = blocked in nn.MultiheadAttention
        x = X.unsqueeze(0)  # (1, T, d_model)
        output, weights = mha(x, x, x, attn_mask=blocked, need_weights=need_weights, average_attn_weights=False)
    return output[0], None if weights is None else weights[0]  # (T, d_model), (h, T, T)


def max_abs_difference(a: torch.Tensor, b: torch.Tensor) -> float:
    """max |a - b| over all entries, ignoring entries where both are NaN."""
    both_nan = torch.isnan(a) & torch.isnan(b)
    diff = torch.where(both_nan, 0.0, (a.to(torch.float64) - b.to(torch.float64)).abs())
    return float(diff.max().item()) if diff.numel() else 0.0


def check_self_attention(
    steps: AttentionSteps, *, mask: torch.Tensor | None, scale: bool, temperature: float = 1.0
) -> float:
    """max |context - F.scaled_dot_product_attention(Q, K, V)| for one head."""
    return sdpa_agreement(steps, mask=mask, scale=scale, temperature=temperature).max_difference


def sdpa_agreement(
    steps: AttentionSteps, *, mask: torch.Tensor | None, scale: bool, temperature: float = 1.0
) -> Agreement:
    """The context against F.scaled_dot_product_attention(Q, K, V) on the same Q, K, V, cell by cell."""
    expected = sdpa_reference(steps.Q, steps.K, steps.V, mask=mask, scale=scale, temperature=temperature)
    return agreement(steps.context, expected)


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


# Agreement tolerance, relative to the size of the values: |a - b| <= TOLERANCE[dtype] * max |b| in every cell.
# Measured, not assumed (float32 against float64 and against PyTorch's own kernels, on the presets and on
# random sentences of T = 6, 100 and 1024 tokens, d_model 2, 4 and 16, d_k 2, 8 and 16, with and without the
# causal mask): the largest float32 gap was 2.1e-6 x max |b| (lesson 3's context at T = 1024), most were below
# 5e-7. 4e-6 sits about twice above it and 2.5 times below a 1e-5 relative bug (weights x (1 + 1e-5) moves the
# largest cell by 1e-5 x max |b|), which must read "different". A per-cell relative test cannot be used: a cell
# near 0 that comes out of a cancelling sum carries the absolute error of its row, not of itself. float64
# (hand-edited inputs, scores up to about 1e5) keeps gaps below 1e-10 x max |b|.
TOLERANCE = {torch.float32: 4e-6, torch.float64: 1e-9}


def tolerance_for(*tensors: torch.Tensor) -> float:
    """The agreement tolerance of the least precise of the tensors (float32 unless all are float64)."""
    return TOLERANCE[torch.float64 if all(t.dtype == torch.float64 for t in tensors) else torch.float32]


def compared_text(comparison) -> str:
    """What an ``independent.Comparison`` compared, in the learner's language: its template (marked N_ where it is
    made) with its values, else its name. Done when shown, so a cached check stays in English."""
    if comparison.template:
        return _(comparison.template, **dict(comparison.values))
    return _(comparison.compared)


def tolerance_text(tolerance: float = TOLERANCE[torch.float32]) -> str:
    """The agreement test in words, for a page: '|ours − reference| ≤ 4e-06 × the largest |reference| ...'."""
    return _("|ours − reference| ≤ {tolerance} × the largest |reference| in every cell", tolerance=f"{tolerance:g}")


@dataclass(frozen=True)
class Agreement:
    """How two tensors compare cell by cell: the largest gap, the largest |b|, and the verdict."""

    max_difference: float  # max |a - b| (cells NaN in both ignored)
    scale: float  # max |b|: a gap means little or much only next to the size of the values
    close: bool  # every cell within tolerance * scale
    exact: bool  # every cell bit for bit equal
    tolerance: float = TOLERANCE[torch.float32]  # the relative tolerance the comparison used
    precision: str = "float32"  # the precision whose rounding a gap within tolerance is

    @property
    def relative_difference(self) -> float:
        """max |a - b| / max |b|: the gap next to the size of the numbers (0 when both are all zero)."""
        if self.scale > 0:
            return self.max_difference / self.scale
        return 0.0 if self.max_difference == 0 else math.inf

    @property
    def verdict(self) -> str:
        """'exactly equal', 'equal up to float32 rounding' (or float64) or 'different', by the tolerance."""
        if self.exact:  # English values (compared in code), marked for the page that shows them with _()
            return N_("exactly equal")
        if self.close:
            return (
                N_("equal up to float64 rounding")
                if self.precision == "float64"
                else N_("equal up to float32 rounding")
            )
        return N_("different")


def agreement(a: torch.Tensor, b: torch.Tensor, *, tolerance: float | None = None) -> Agreement:
    """Agreement of a with b: close when |a - b| <= tolerance * max |b| in every cell (NaN = NaN, inf = inf)."""
    tolerance = tolerance_for(a, b) if tolerance is None else tolerance
    precision = "float64" if tolerance_for(a, b) == TOLERANCE[torch.float64] else "float32"
    a64, b64 = a.detach().to(torch.float64), b.detach().to(torch.float64)
    same = (a64 == b64) | (torch.isnan(a64) & torch.isnan(b64))  # equal infinities count as equal
    exact = bool(same.all())
    finite = b64[torch.isfinite(b64)]
    scale = float(finite.abs().max().item()) if finite.numel() else 0.0
    gaps = torch.where(same, 0.0, (a64 - b64).abs())  # NaN or inf where only one side is NaN or inf
    close = bool((gaps <= tolerance * scale).all())
    return Agreement(max_abs_difference(a64, b64), scale, close, exact, tolerance, precision)


@dataclass(frozen=True)
class BlockCheck:
    """A multi-head block against PyTorch: nn.MultiheadAttention on the rows it can compute, SDPA per head."""

    weights: Agreement  # every head's weights vs nn.MultiheadAttention (rows with an allowed key)
    output: Agreement  # the output vs nn.MultiheadAttention (rows with an allowed key)
    contexts: Agreement  # every head's context vs F.scaled_dot_product_attention (all rows)
    heads: tuple[Agreement, ...]  # each head's context vs F.scaled_dot_product_attention
    fully_masked_rows: int  # rows left out of the nn.MultiheadAttention comparison


def check_block(
    steps: MultiHeadSteps,
    X: torch.Tensor,
    W_q: torch.Tensor,
    W_k: torch.Tensor,
    W_v: torch.Tensor,
    W_o: torch.Tensor,
    *,
    mask: torch.Tensor | None = None,
) -> BlockCheck:
    """The block compared with nn.MultiheadAttention (need_weights=True) and, head by head, with SDPA."""
    output, weights = mha_reference(X, W_q, W_k, W_v, W_o, num_heads=len(steps.heads), mask=mask)
    rows = torch.ones(X.shape[0], dtype=torch.bool) if mask is None else mask.any(dim=-1)  # (T,)
    sdpa = [sdpa_reference(head.Q, head.K, head.V, mask=mask, scale=True) for head in steps.heads]  # h x (T, d_k)
    contexts = torch.stack([head.context for head in steps.heads])  # (h, T, d_k)
    return BlockCheck(
        weights=agreement(steps.weights[:, rows], weights[:, rows]),
        output=agreement(steps.output[rows], output[rows]),
        contexts=agreement(contexts, torch.stack(sdpa)),
        heads=tuple(agreement(head.context, ref) for head, ref in zip(steps.heads, sdpa, strict=True)),
        fully_masked_rows=int((~rows).sum().item()),
    )
