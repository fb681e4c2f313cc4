"""Click any cell of a heatmap for its arithmetic with the real numbers, right below the chart.

``clickable_heatmap`` draws the heatmap with an Altair point selection on (row, col), reruns on a
click, keeps the clicked cell in st.session_state (so it survives reruns of the page) and renders
``explain(row_index, col_index)`` (an ``attention_core.cell_math`` result) below. Beyond
``charts.MAX_CHART_TOKENS`` tokens the heatmap is a raster image and two pickers choose the cell.
The ``*_of`` helpers build the ``explain`` callback for the usual matrices of ``AttentionSteps``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import altair as alt
import numpy as np
import streamlit as st
import torch

from attention_core import cell_math
from attention_core.cell_math import CellExplanation, ContextCell, MaskedCell, ProjectionCell, ScoreCell, WeightCell
from attention_core.tables import long_frame, to_frame
from ui import charts
from ui.format import format_number, products_sum_text

PARAM = "cell"  # the Vega-Lite selection parameter's name
SELECTED_STROKE = "#e8590c"  # an orange outline that reads on viridis and on blue-orange
MAX_TERMS = 12  # terms written out before "…"

Explain = Callable[[int, int], CellExplanation]


def state_key(key: str) -> str:
    """Where the clicked cell (row label, col label) of the chart ``key`` is kept."""
    return f"_cell:{key}"


@st.cache_data(max_entries=64, show_spinner=False)
def clickable_spec(
    values: bytes,
    shape: tuple[int, int],
    rows: tuple[str, ...],
    cols: tuple[str, ...],
    kind: charts.Kind,
    title: str,
    row_title: str,
    col_title: str,
) -> dict:
    """The Vega-Lite spec of ``charts.heatmap`` plus a clickable top layer, built and validated once per matrix.

    The top layer is a transparent rect per cell that carries the point selection, the tooltip and
    the orange outline of the selected cell, so a click on a cell's text selects the cell too.
    """
    matrix = torch.from_numpy(np.frombuffer(values, dtype=np.float64).reshape(shape).copy())  # (rows, cols)
    long = long_frame(matrix, rows, cols)
    heat = charts.heatmap(long, rows, cols, kind=kind, title=title, row_title=row_title, col_title=col_title)
    selection = alt.selection_point(name=PARAM, fields=["row", "col"], on="click", clear="dblclick", toggle=False)
    cells = charts.cell_labels(long, kind=kind, with_text=False)[["row", "col", "exact"]]
    first = heat.layer[0] if isinstance(heat, alt.LayerChart) else heat
    overlay = (
        alt.Chart(cells)
        .mark_rect(fill="transparent", strokeWidth=3, cursor="pointer")
        .encode(
            x=first.encoding.x,  # the heatmap's own axes, so the layers share them
            y=first.encoding.y,
            stroke=alt.when(selection, empty=False).then(alt.value(SELECTED_STROKE)).otherwise(alt.value(None)),
            tooltip=[
                alt.Tooltip("row:N", title=row_title),
                alt.Tooltip("col:N", title=col_title),
                alt.Tooltip("exact:N", title="value"),
            ],
        )
        .add_params(selection)
    )
    if isinstance(heat, alt.LayerChart):
        heat.layer = [*heat.layer, overlay]
        chart = heat
    else:
        outer = {name: getattr(heat, name) for name in ("width", "height", "autosize")}
        heat.width = heat.height = heat.autosize = alt.Undefined
        chart = alt.layer(heat, overlay, **outer)
    with alt.data_transformers.enable("default", max_rows=None):
        return chart.to_dict()


def clickable_heatmap(
    matrix: torch.Tensor,
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    kind: charts.Kind = "weights",
    title: str = "",
    key: str,
    explain: Explain,
    row_title: str = "query",
    col_title: str = "key",
) -> tuple[int, int] | None:
    """A heatmap whose cells explain themselves when clicked; returns the (row, col) indices shown, or None."""
    rows, cols = tuple(rows), tuple(cols)
    if max(len(rows), len(cols)) > charts.MAX_CHART_TOKENS:
        values = to_frame(matrix, rows, cols).to_numpy()  # (rows, cols)
        st.image(charts.raster(values, kind=kind), caption=title, alt=f"{title}: {len(rows)} × {len(cols)} heatmap")
        cell = picked_cell(rows, cols, key=key, row_title=row_title, col_title=col_title)
    else:
        values = to_frame(matrix, rows, cols).to_numpy()  # (rows, cols) float64
        spec = clickable_spec(values.tobytes(), values.shape, rows, cols, kind, title, row_title, col_title)
        event = st.vega_lite_chart(
            spec=spec, on_select="rerun", selection_mode=PARAM, key=key, width="content", alt=None
        )
        clicked = cell_math.selected_cell(event, PARAM)
        if clicked is not None:
            st.session_state[state_key(key)] = clicked
        cell = st.session_state.get(state_key(key))
    indices = cell_math.cell_indices(cell, rows, cols)
    with st.container(border=True, key=f"{key}_arithmetic"):
        if indices is None:
            st.caption(
                f"Click any cell of {title or 'the heatmap'} to see its arithmetic with the real numbers "
                "(double-click clears the outline)."
            )
            return None
        render(explain(*indices), rows, cols, row_title=row_title, col_title=col_title)
    return indices


def picked_cell(rows, cols, *, key: str, row_title: str, col_title: str) -> tuple[str, str]:
    """The row/column pickers that replace clicking on a raster image; returns (row label, col label)."""
    left, right = st.columns(2)
    row = left.selectbox(f"Cell: {row_title}", rows, key=f"{key}:row")
    col = right.selectbox(f"Cell: {col_title}", cols, key=f"{key}:col")
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


def _q(label: str) -> str:
    return f"“{label}”"


def render_score(cell: ScoreCell, rows: Sequence[str], cols: Sequence[str]) -> None:
    st.markdown(
        f"**Score of query {_q(rows[cell.i])} with key {_q(cols[cell.j])}**: "
        f"q · k = {products_sum_text(cell.q, cell.k, cell.dot, limit=MAX_TERMS)}"
    )
    if cell.divisor != 1.0:
        parts = []
        if cell.d_k:
            parts.append(f"√d_k = √{cell.d_k}")
        if cell.temperature != 1.0:
            parts.append(f"temperature {format_number(cell.temperature)}")
        st.markdown(
            f"Divided by {' × '.join(parts)} = {format_number(cell.divisor)}: "
            f"{format_number(cell.dot)} / {format_number(cell.divisor)} = **{format_number(cell.result)}**"
        )


def render_weight(cell: WeightCell, cols: Sequence[str]) -> None:
    terms = [
        f"e^({format_number(s)} − {format_number(cell.row_max)}) = {format_number(e)}"
        if s != float("-inf")
        else "e^(−∞) = 0"
        for s, e in zip(cell.row, cell.exps, strict=True)
    ]
    shown = " + ".join(f"{format_number(e)}" for e in cell.exps[:MAX_TERMS])
    more = f" + … ({len(cell.exps) - MAX_TERMS} more)" if len(cell.exps) > MAX_TERMS else ""
    st.markdown(
        f"**Weight of key {_q(cols[cell.j])}**: softmax of the row, "
        f"e^(s_j − m) / Σ_k e^(s_k − m) with m = the row's largest score = {format_number(cell.row_max)}."
    )
    st.markdown(
        f"Key {_q(cols[cell.j])}: {terms[cell.j]}. Sum over the row: {shown}{more} = {format_number(cell.total)}."
    )
    if cell.total > 0:
        st.markdown(
            f"Weight = {format_number(cell.exps[cell.j])} / {format_number(cell.total)} = "
            f"**{format_number(cell.result)}**"
        )
    else:
        st.markdown("Every key of this row is masked: the row is all zeros (**0**), as PyTorch's SDPA gives.")


def render_context(cell: ContextCell, rows: Sequence[str], cols: Sequence[str]) -> None:
    st.markdown(
        f"**Entry {_q(cols[cell.d])} of the context vector of {_q(rows[cell.i])}**: Σ_j w_ij v_j = "
        f"{products_sum_text(cell.weights, cell.values, cell.result, limit=MAX_TERMS)}"
    )
    st.caption("Each term is (weight of key j) × (entry of key j's value vector).")


def render_projection(cell: ProjectionCell, rows: Sequence[str], cols: Sequence[str]) -> None:
    st.markdown(
        f"**Entry {_q(cols[cell.c])} of {_q(rows[cell.i])}**: x · (column {cell.c + 1} of W) = "
        f"{products_sum_text(cell.x, cell.w, cell.result, limit=MAX_TERMS)}"
    )


def render_masked(cell: MaskedCell, rows: Sequence[str], cols: Sequence[str]) -> None:
    verdict = "kept" if cell.allowed else "blocked: −∞"
    st.markdown(f"**Query {_q(rows[cell.i])}, key {_q(cols[cell.j])}** ({verdict}). {cell.reason}")


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


def context_of(steps) -> Explain:
    """explain for steps.context: the weighted sum of the values."""
    return lambda i, d: cell_math.explain_context(steps.weights, steps.V, i, d)
