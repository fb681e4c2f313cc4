"""Click any cell of a heatmap for its arithmetic with the real numbers, right below the chart.

``page.heatmap(..., key=..., explain=...)`` (and ``page.matrix``) draws the heatmap with an Altair point
selection on (row, col) that reruns on a click; ``explained_cell`` keeps the clicked cell in st.session_state
(so it survives reruns of the page) and renders ``explain(row_index, col_index)`` (an
``attention_core.cell_math`` result) below. Beyond ``charts.MAX_CHART_TOKENS`` tokens the heatmap is a raster
image and two pickers choose the cell. The keyboard reaches the same arithmetic: ``ui.widgets.keyboard_grid`` mounts a
focusable grid of the cells beside each chart (arrow keys move, Enter keeps the cell as a click does), and makes the
arithmetic's container a polite live region, so it is read out when it opens. The ``*_of`` helpers build the
``explain`` callback for the usual matrices of ``AttentionSteps``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import streamlit as st
import torch

from attention_core import cell_math
from attention_core.cell_math import CellExplanation, ContextCell, MaskedCell, ProjectionCell, ScoreCell, WeightCell
from attention_core.i18n import N_, _
from ui import charts
from ui.format import MAX_TERMS, exp_text, format_number, products_sum_text, quotient_text, sum_text, written_sum
from ui.widgets import keyboard_grid

Explain = Callable[[int, int], CellExplanation]


def state_key(key: str) -> str:
    """Where the clicked cell (row label, col label) of the chart ``key`` is kept."""
    return f"_cell:{key}"


def seen_key(key: str) -> str:
    """Where the chart ``key``'s last selection event is kept: the chart sends its selection on every rerun, and
    only a new one (a click) replaces the kept cell, which the keyboard may have changed since."""
    return f"_cell_seen:{key}"


def keep(key: str, rows: Sequence[str], cols: Sequence[str], row: int, col: int) -> None:
    """Keep the cell (row, col) of the chart ``key`` as a click does (the keyboard grid's Enter, a callback)."""
    st.session_state[state_key(key)] = (rows[row], cols[col])


def explained_cell(
    event: dict | None,
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    key: str,
    explain: Explain,
    values: torch.Tensor | None = None,
    kind: str = "weights",
    title: str = "",
    row_title: str = N_("query"),
    col_title: str = N_("key"),
) -> tuple[int, int] | None:
    """Below a heatmap drawn with ``key``: the keyboard's grid of its cells (``values``, a ``kind`` of heatmap),
    then the clicked (or kept) cell's arithmetic; returns its (row, col) indices.

    ``event`` is the chart's selection event, or None for a raster image (pickers choose the cell then).
    """
    clicked = None
    row_title, col_title = _(row_title), _(col_title)  # the defaults, or a page's titles, in the learner's language
    if event is None:  # a raster image: pickers instead of clicks
        cell = picked_cell(rows, cols, key=key, row_title=row_title, col_title=col_title)
    else:
        clicked = cell_math.selected_cell(event, charts.CELL_SELECTION)
        if clicked is not None and clicked != st.session_state.get(seen_key(key)):
            st.session_state[state_key(key)] = clicked
        st.session_state[seen_key(key)] = clicked
        cell = st.session_state.get(state_key(key))
    indices = cell_math.cell_indices(cell, rows, cols)
    live = f"{key}_arithmetic"
    if event is None or values is None:
        keyboard_grid.live_region(key, live)
    else:
        on_open = functools.partial(keep, key, tuple(rows), tuple(cols))
        titles = (title, row_title, col_title)
        stale = clicked is not None and clicked != cell  # the chart outlines a cell the keyboard has left
        keyboard_grid.cell_grid(
            key, values, rows, cols, kind=kind, titles=titles, opened=indices, live=live, stale=stale, on_open=on_open
        )
    with st.container(border=True, key=live):
        if indices is None:
            if title:
                hint = _(
                    "Click any cell of {title} to see its arithmetic with the real numbers (double-click clears the "
                    "outline), or Tab to its cells and use the arrow keys and Enter.",
                    title=title,
                )
            else:
                hint = _(
                    "Click any cell of the heatmap to see its arithmetic with the real numbers (double-click clears "
                    "the outline), or Tab to its cells and use the arrow keys and Enter."
                )
            st.caption(hint)
            return None
        render(explain(*indices), rows, cols, row_title=row_title, col_title=col_title)
    return indices


def picked_cell(rows, cols, *, key: str, row_title: str, col_title: str) -> tuple[str, str]:
    """The row/column pickers that replace clicking on a raster image; returns (row label, col label)."""
    left, right = st.columns(2)
    row = left.selectbox(_("Cell: {title}", title=row_title), rows, key=f"{key}:row")
    col = right.selectbox(_("Cell: {title}", title=col_title), cols, key=f"{key}:col")
    return str(row), str(col)


# --- rendering each kind of explanation -----------------------------------------------------------


def render(result: CellExplanation, rows: Sequence[str], cols: Sequence[str], **titles: str) -> None:
    """The arithmetic of one cell as markdown with the real numbers (4 decimals)."""
    if isinstance(result, ScoreCell):
        render_score(result, rows, cols)
    elif isinstance(result, WeightCell):
        render_weight(result, cols)
    elif isinstance(result, ContextCell):
        render_context(result, rows, cols)
    elif isinstance(result, ProjectionCell):
        render_projection(result, rows, cols)
    elif isinstance(result, MaskedCell):
        render_masked(result, rows, cols)


def render_score(cell: ScoreCell, rows: Sequence[str], cols: Sequence[str]) -> None:
    st.markdown(
        _(
            "**Score of query “{query}” with key “{key}”**: q · k = {sum}",
            query=rows[cell.i],
            key=cols[cell.j],
            sum=products_sum_text(cell.q, cell.k, cell.dot, limit=MAX_TERMS),
        )
    )
    if cell.divisor != 1.0:
        parts = []
        if cell.d_k:
            parts.append(f"√d_k = √{cell.d_k}")
        if cell.temperature != 1.0:
            parts.append(_("temperature {t}", t=format_number(cell.temperature)))
        st.markdown(
            _(
                "Divided by {divisor_text} = {divisor}: {quotient}",
                divisor_text=" × ".join(parts),
                divisor=format_number(cell.divisor),
                quotient=quotient_text(cell.dot, cell.divisor, cell.result),
            )
        )


def render_weight(cell: WeightCell, cols: Sequence[str]) -> None:
    key = cols[cell.j]
    st.markdown(
        _(
            "**Weight of key “{key}”**: softmax of the row, e^(s_j − m) / Σ_k e^(s_k − m) with m = the row's largest "
            "score = {row_max}.",
            key=key,
            row_max=format_number(cell.row_max),
        )
    )
    st.markdown(
        _(
            "Key “{key}”: {exp}. Sum over the row: {sum}.",
            key=key,
            exp=exp_text(cell.row[cell.j], cell.row_max, cell.exps[cell.j]),
            sum=sum_text(cell.exps, cell.total, limit=MAX_TERMS, bold=False),
        )
    )
    if cell.total > 0:
        quotient = quotient_text(cell.exps[cell.j], written_sum(cell.exps, MAX_TERMS), cell.result)
        st.markdown(_("Weight = {quotient}", quotient=quotient))
    else:
        st.markdown(_("Every key of this row is masked: the row is all zeros (**0**), as PyTorch's SDPA gives."))


def render_context(cell: ContextCell, rows: Sequence[str], cols: Sequence[str]) -> None:
    st.markdown(
        _(
            "**Entry “{entry}” of the context vector of “{query}”**: Σ_j w_ij v_j = {sum}",
            entry=cols[cell.d],
            query=rows[cell.i],
            sum=products_sum_text(cell.weights, cell.values, cell.result, limit=MAX_TERMS),
        )
    )
    st.caption(_("Each term is (weight of key j) × (entry of key j's value vector)."))


def render_projection(cell: ProjectionCell, rows: Sequence[str], cols: Sequence[str]) -> None:
    st.markdown(
        _(
            "**Entry “{entry}” of “{token}”**: x · (column {column} of W) = {sum}",
            entry=cols[cell.c],
            token=rows[cell.i],
            column=cell.c + 1,
            sum=products_sum_text(cell.x, cell.w, cell.result, limit=MAX_TERMS),
        )
    )


def render_masked(cell: MaskedCell, rows: Sequence[str], cols: Sequence[str]) -> None:
    values = {"query": rows[cell.i], "key": cols[cell.j], "reason": cell.reason}
    if cell.allowed:
        st.markdown(_("**Query “{query}”, key “{key}”** (kept). {reason}", **values))
    else:
        st.markdown(_("**Query “{query}”, key “{key}”** (blocked: −∞). {reason}", **values))


# --- explain callbacks for AttentionSteps matrices ----------------------------------------------


def scores_of(steps, *, scaled: bool = False, temperature: float = 1.0) -> Explain:
    """explain for steps.scores (scaled=False) or steps.scaled_scores (scaled=True, with the temperature)."""
    return lambda i, j: cell_math.explain_score(
        steps.Q, steps.K, i, j, scale=scaled, temperature=temperature if scaled else 1.0
    )


def masked_scores_of(steps, mask: torch.Tensor | None, *, temperature: float = 1.0) -> Explain:
    """explain for steps.masked_scores: why a blocked cell is −∞, else its scaled score."""
    scaled = scores_of(steps, scaled=True, temperature=temperature)
    if mask is None:
        return scaled
    return lambda i, j: cell_math.explain_masked(mask, i, j) if not bool(mask[i, j]) else scaled(i, j)


def weights_of(steps) -> Explain:
    """explain for steps.weights: the softmax fraction of the masked, scaled row."""
    return lambda i, j: cell_math.explain_weight(steps.masked_scores[i], j)


def projection_of(X: torch.Tensor, W: torch.Tensor) -> Explain:
    """explain for X W (Q, K or V): the dot product of a token's row with a column of W."""
    return lambda i, c: cell_math.explain_projection(X, W, i, c)


def output_options(steps, W_o: torch.Tensor) -> dict:
    """page.matrix options for a multi-head block's output (concat W_o): an entry is a concatenated row · a
    column of W_o (its explain), the caption that says so, and the output's kind and column title."""
    return {
        "kind": "values",
        "col_title": _("dimension"),
        "explain": projection_of(steps.concat, W_o),
        "caption": _("Click a cell: an output entry is the token's concatenated row (x below) · a column of W_o."),
    }


def context_of(steps) -> Explain:
    """explain for steps.context: the weighted sum of the values."""
    return lambda i, d: cell_math.explain_context(steps.weights, steps.V, i, d)
