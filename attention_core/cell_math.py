"""The arithmetic behind one cell of a matrix, with the real numbers, as data the UI renders and tests check.

Shape letters: T tokens, d_k query/key size, d_v value size. Each ``explain_*`` returns a frozen
dataclass whose ``result`` equals the core's matrix entry: a score of ``attention_scores`` (scaled
like ``scale_scores``), a weight of ``softmax``, a context entry of ``context_vectors``. The sums are
done in float64 so the terms shown add up to the result shown.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import torch

from attention_core.i18n import _
from attention_core.masks import causal_mask, sliding_window_mask


@dataclass(frozen=True)
class ScoreCell:
    """score[i, j] = (sum_d q_i,d k_j,d) / divisor, divisor = sqrt(d_k) * temperature (1 when unscaled)."""

    i: int
    j: int
    q: tuple[float, ...]  # (d_k,)
    k: tuple[float, ...]  # (d_k,)
    products: tuple[float, ...]  # (d_k,)  q_d * k_d
    dot: float  # sum of the products
    d_k: int | None  # None when the score is not scaled
    temperature: float
    divisor: float
    result: float


@dataclass(frozen=True)
class WeightCell:
    """weight[j] = exp(s_j - m) / sum_k exp(s_k - m), m the largest finite score of the row."""

    j: int
    row: tuple[float, ...]  # (T,)  the scores softmax sees (-inf where masked)
    row_max: float  # m (0 for a fully masked row)
    exps: tuple[float, ...]  # (T,)  exp(s_k - m), 0 where masked
    total: float  # sum of exps
    result: float


@dataclass(frozen=True)
class ContextCell:
    """context[i, d] = sum_j w_ij v_j,d."""

    i: int
    d: int
    weights: tuple[float, ...]  # (T,)  row i of the weights
    values: tuple[float, ...]  # (T,)  column d of V
    products: tuple[float, ...]  # (T,)
    result: float


@dataclass(frozen=True)
class ProjectionCell:
    """P[i, c] = sum_d x_i,d W[d, c]: one entry of Q = X W_q (or K, V)."""

    i: int
    c: int
    x: tuple[float, ...]  # (d_model,)  row i of X
    w: tuple[float, ...]  # (d_model,)  column c of W
    products: tuple[float, ...]  # (d_model,)
    result: float


@dataclass(frozen=True)
class MaskedCell:
    """Why score[i, j] is -inf (or that it is not): the mask rule that blocks key j for query i."""

    i: int
    j: int
    allowed: bool
    rule: str  # "causal", "padding", "sliding window", "custom" or "none"
    reason: str  # one sentence with positions counted from 1
    window: int | None = None


CellExplanation = ScoreCell | WeightCell | ContextCell | ProjectionCell | MaskedCell


def _vector(t: torch.Tensor) -> tuple[float, ...]:
    return tuple(float(v) for v in t.detach().to(torch.float64).reshape(-1).tolist())


def explain_score(
    Q: torch.Tensor, K: torch.Tensor, i: int, j: int, scale: bool | int = False, temperature: float = 1.0
) -> ScoreCell:
    """q_i . k_j term by term, then / sqrt(d_k) (scale=True uses d_k = Q's width, an int gives d_k)."""
    q, k = Q[i].to(torch.float64), K[j].to(torch.float64)  # (d_k,), (d_k,)
    products = q * k  # (d_k,)
    dot = float(products.sum())
    d_k = Q.shape[-1] if scale is True else (None if scale is False else int(scale))
    divisor = (math.sqrt(d_k) if d_k else 1.0) * temperature
    return ScoreCell(i, j, _vector(q), _vector(k), _vector(products), dot, d_k, temperature, divisor, dot / divisor)


def explain_weight(row: torch.Tensor | Sequence[float], j: int) -> WeightCell:
    """The softmax fraction of entry j of one row of (scaled, masked) scores, every exponential written out."""
    scores = torch.as_tensor(row, dtype=torch.float64).reshape(-1)  # (T,)
    finite = torch.isfinite(scores)  # (T,)
    m = float(scores[finite].max()) if bool(finite.any()) else 0.0
    exps = torch.where(finite, torch.exp(scores - m), 0.0)  # (T,)
    total = float(exps.sum())
    result = float(exps[j]) / total if total > 0 else 0.0
    return WeightCell(j, _vector(scores), m, _vector(exps), total, result)


def explain_weight_from_weights(weights_row: torch.Tensor | Sequence[float], j: int) -> WeightCell:
    """explain_weight for a row known only by its weights: its scores, up to a constant, are ln w (ln 0 = -inf)."""
    return explain_weight(torch.log(torch.as_tensor(weights_row, dtype=torch.float64).reshape(-1)), j)


def explain_context(weights: torch.Tensor, V: torch.Tensor, i: int, d: int) -> ContextCell:
    """sum_j w_ij v_j,d term by term."""
    w = weights[i].to(torch.float64)  # (T,)
    v = V[:, d].to(torch.float64)  # (T,)
    products = w * v  # (T,)
    return ContextCell(i, d, _vector(w), _vector(v), _vector(products), float(products.sum()))


def explain_projection(X: torch.Tensor, W: torch.Tensor, i: int, c: int) -> ProjectionCell:
    """x_i . W[:, c] term by term: entry (i, c) of X W."""
    x, w = X[i].to(torch.float64), W[:, c].to(torch.float64)  # (d_model,), (d_model,)
    products = x * w  # (d_model,)
    return ProjectionCell(i, c, _vector(x), _vector(w), _vector(products), float(products.sum()))


def explain_biased_projection(X: torch.Tensor, W: torch.Tensor, b: torch.Tensor, i: int, c: int) -> ProjectionCell:
    """Entry (i, c) of X W + b (a Linear layer) as [1, x_i] . [b_c, W[:, c]]: the bias is the first term."""
    x = torch.cat([torch.ones(1, dtype=X.dtype), X[i]]).to(torch.float64)  # (1 + d_model,)
    w = torch.cat([b[c : c + 1], W[:, c]]).to(torch.float64)  # (1 + d_model,)
    products = x * w  # (1 + d_model,)
    return ProjectionCell(i, c, _vector(x), _vector(w), _vector(products), float(products.sum()))


def mask_rule(mask: torch.Tensor) -> tuple[str, int | None]:
    """Which rule made this (T, T) mask: 'none', 'causal', 'padding', 'sliding window' (with its window) or 'custom'."""
    T = mask.shape[-1]
    if bool(mask.all()):
        return "none", None
    if torch.equal(mask, causal_mask(T)):
        return "causal", None
    if bool((mask == mask[0]).all()):
        return "padding", None
    for window in range(1, T):
        if torch.equal(mask, sliding_window_mask(T, window)):
            return "sliding window", window
    return "custom", None


def explain_masked(
    mask: torch.Tensor, i: int, j: int, rule: str | None = None, window: int | None = None
) -> MaskedCell:
    """Why query i may or may not attend to key j, in the words of the mask rule (inferred when not given)."""
    if rule is None:
        rule, window = mask_rule(mask)
    allowed = bool(mask[i, j])
    qi, kj = i + 1, j + 1
    if allowed:
        reason = _("The mask allows it (mask[{query}, {key}] is True): the score is kept.", query=qi, key=kj)
    elif rule == "causal":
        reason = _(
            "Causal mask: key {key} comes after query {query} ({key} > {query}), and a token may not look at the "
            "future. Its score becomes -∞, so exp(-∞) = 0 and its weight is exactly 0.",
            query=qi,
            key=kj,
        )
    elif rule == "padding":
        reason = _(
            "Padding mask: key {key} is padding, hidden from every query. Its score becomes -∞, so exp(-∞) = 0 and "
            "its weight is exactly 0.",
            key=kj,
        )
    elif rule == "sliding window" and window is not None and kj > qi:
        reason = _(
            "Sliding window of {window}: query {query} sees keys {first} to {query}; key {key} is after it. Its "
            "score becomes -∞, so exp(-∞) = 0 and its weight is exactly 0.",
            window=window,
            query=qi,
            first=max(1, qi - window + 1),
            key=kj,
        )
    elif rule == "sliding window" and window is not None:
        reason = _(
            "Sliding window of {window}: query {query} sees keys {first} to {query}; key {key} is too far back. Its "
            "score becomes -∞, so exp(-∞) = 0 and its weight is exactly 0.",
            window=window,
            query=qi,
            first=max(1, qi - window + 1),
            key=kj,
        )
    else:
        reason = _(
            "The mask blocks it (mask[{query}, {key}] is False). Its score becomes -∞, so exp(-∞) = 0 and its weight "
            "is exactly 0.",
            query=qi,
            key=kj,
        )
    return MaskedCell(i, j, allowed, rule, reason, window)


def selected_cell(event: object, param: str | None = None) -> tuple[str, str] | None:
    """(row, col) of the clicked cell from st.altair_chart / st.vega_lite_chart's selection event, or None.

    The event looks like {"selection": {"<param>": [{"row": "cat", "col": "sat"}]}}; an empty
    selection (a click outside the cells, a double-click) or anything malformed gives None.
    """
    try:
        selection = event["selection"]  # type: ignore[index]
        if not isinstance(selection, Mapping):
            return None
        names = [param] if param is not None else list(selection)
        for name in names:
            points = selection.get(name)
            if isinstance(points, Sequence) and not isinstance(points, str) and points:
                point = points[-1]
                if isinstance(point, Mapping) and "row" in point and "col" in point:
                    return str(point["row"]), str(point["col"])
    except (KeyError, TypeError, AttributeError, IndexError):
        return None
    return None


def cell_indices(cell: tuple[str, str] | None, rows: Sequence[str], cols: Sequence[str]) -> tuple[int, int] | None:
    """The (row, col) indices of a cell given by its labels, or None when a label is not in the matrix."""
    if cell is None:
        return None
    row, col = cell
    if row not in rows or col not in cols:
        return None
    return list(rows).index(row), list(cols).index(col)
