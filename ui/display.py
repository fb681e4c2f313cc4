"""The page API: tables, heatmaps, charts, code, downloads and the notes every lesson page uses.

Pages pass tensors and labels from attention_core. Two rules keep a rerun cheap, and the API holds them:

- a chart's ``title`` is fixed text: it is part of the chart's spec, and the same spec lets the browser put
  new numbers into the drawn chart instead of drawing it anew. Text that changes with the input (the query,
  d_k, a temperature) goes in ``caption``, drawn as a caption above the chart;
- what only some inputs show goes in ``slot()``, so every element after it keeps its place.

The machinery behind (drawn tables replayed, specs kept per process) is ui._drawing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import LiteralString

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st
import torch

from attention_core.tables import to_frame
from ui import _drawing, cell_click, charts, lessons
from ui.format import csv_text
from ui.navigation import reserve_navigation


def table(
    data: pd.DataFrame | torch.Tensor,
    rows: Sequence[str] | None = None,
    cols: Sequence[str] | None = None,
    *,
    alt_text: str | None = None,
) -> None:
    """A matrix (tensor with row and column labels, or a numeric DataFrame) as a table, one format per cell.

    The data stay numbers (sorting, copying and tests read numbers). Each table is drawn once per content and
    replayed after that (most tables of a page are the same from one rerun to the next).
    """
    _drawing.show_table(data, rows, cols, alt_text)


def frame_table(frame: pd.DataFrame, **options) -> None:
    """Any other DataFrame (text, flags, counts) as ``st.dataframe(frame, **options)``, drawn once per content
    and options and replayed after that, as table() does."""
    _drawing.show_frame(frame, options)


WEIGHTS_SCALE_KEY = "weights_scale"  # the sidebar's choice (ui.inputs draws it); a view setting, not in the URL
WEIGHTS_SCALES = {"stretch": "stretch to data", "fixed": "fixed 0–1"}


page_style = _drawing.page_style  # the lab's few layout rules (wide formulas and charts scroll sideways)


def weights_domain(*matrices: torch.Tensor) -> charts.Domain:
    """The colour range of weight heatmaps: stretched to the values of all ``matrices`` (panels that share
    a scale pass them all), or fixed 0..1, as the sidebar's "Weights colour scale" says."""
    if st.session_state.get(WEIGHTS_SCALE_KEY, "stretch") != "stretch" or not matrices:
        return charts.FIXED_WEIGHTS
    return charts.stretched_domain(np.concatenate([m.detach().double().reshape(-1).numpy() for m in matrices]))


def heatmap(
    values: torch.Tensor,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    kind: charts.Kind = "weights",
    title: LiteralString = "",
    row_title: str = "query",
    col_title: str = "key",
    highlight_row: str | None = None,
    domain: charts.Domain | None = None,
    compact: bool = False,
    panel_px: int = 230,
    caption: str | None = None,
    key: str | None = None,
    explain: cell_click.Explain | None = None,
) -> tuple[int, int] | None:
    """Draw a matrix as an Altair heatmap, or as a raster image beyond MAX_CHART_TOKENS tokens.

    Weights take ``domain`` if given (a grid of panels passes their common ``weights_domain``), else their own.
    ``highlight_row`` (the query's label) outlines that row; ``compact`` draws a grid panel of ``panel_px``
    without axis titles or legend; ``caption`` (what changes with the input) goes above. With ``explain`` (a
    cell_click factory) and a ``key``, a click on a cell shows its arithmetic below the chart, and the clicked
    cell's (row, col) indices are returned.
    """
    if kind == "weights" and domain is None:
        domain = weights_domain(values)
    if caption:
        st.caption(caption)
    colour_title = charts.colour_title(kind, domain)
    style = _drawing.HeatmapStyle(kind, title, row_title, col_title, colour_title, compact, panel_px, bool(explain))
    event = _drawing.draw_heatmap(values, row_labels, col_labels, style, domain, highlight_row, key)
    if explain is None:
        return None
    cells = {"values": values, "kind": kind, "title": title, "row_title": row_title, "col_title": col_title}
    return cell_click.explained_cell(event, tuple(row_labels), tuple(col_labels), key=key, explain=explain, **cells)


def matrix(
    values: torch.Tensor,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    download: str | None = None,
    caption: str | None = None,
    **heatmap_options,
) -> pd.DataFrame:
    """``heatmap(values, ..., **heatmap_options)`` and its table in two tabs, a CSV download if ``download``
    names the file, ``caption`` above both; returns the table's frame."""
    title = heatmap_options.get("title", "")
    frame = to_frame(values, row_labels, col_labels)
    if caption:
        st.caption(caption)
    chart_tab, table_tab = st.tabs(["Heatmap", "Table"])
    with chart_tab:
        heatmap(values, row_labels, col_labels, **heatmap_options)
    with table_tab:
        table(frame, alt_text=title)
    if download:
        download_csv(frame, download, label=f"Download {title or 'this matrix'} as CSV")
    return frame


def line_view(
    weights: torch.Tensor, labels: Sequence[str], *, title: LiteralString = "", focus: str | None = None
) -> None:
    """charts.line_view of a (T, T) weight matrix: its spec is built once per sentence and focus."""
    st.vega_lite_chart(spec=_drawing.line_view_spec(weights, labels, title, focus), width="content", alt=None)


def chart(
    builder: Callable[..., alt.TopLevelMixin],
    *args,
    st_width="stretch",
    alt_text: str | None = None,
    caption: str | None = None,
    **kwargs,
) -> None:
    """Draw ``builder(*args, **kwargs)`` from ui.charts (its spec built and validated once per input), with
    ``caption`` above it. A fixed ``title=`` keeps the spec when only the data change."""
    if caption:
        st.caption(caption)
    spec = _drawing.kept_chart_spec(builder, args, kwargs)
    text = alt_text or kwargs.get("title") or builder.__name__.replace("_", " ")
    described = "description" in spec  # Streamlit reads a spec's description as the chart's accessible name
    st.vega_lite_chart(spec=spec, width=st_width, alt=None if described else f"Chart: {text}")


def printed_beside_ours(comparison, row_labels: Sequence[str], col_labels: Sequence[str], tutorial: str) -> None:
    """A tutorial's printed matrix and the lab's own, side by side (a projections.Comparison)."""
    printed_column, ours_column = st.columns(2)
    with printed_column:
        st.markdown(f"**Printed by {tutorial}** ({comparison.name})")  # tutorial: its name, e.g. tutorial_name('002')
        table(comparison.printed, row_labels, col_labels, alt_text=f"{tutorial}'s printed {comparison.name}")
    with ours_column:
        st.markdown(f"**Computed by the lab** ({comparison.name})")
        table(comparison.ours, row_labels, col_labels, alt_text=f"The lab's {comparison.name}")


def download_csv(frame: pd.DataFrame, filename: str, *, label: str = "Download as CSV") -> None:
    """A CSV download of a table, with full precision and the token labels (built only when clicked)."""
    st.download_button(
        label,
        lambda: csv_text(frame).encode("utf-8"),  # no cell opens as a spreadsheet formula
        file_name=filename,
        mime="text/csv",
        icon=":material/download:",
        on_click="ignore",
    )


def show_code(*functions: Callable, title: str = "Show the code") -> None:
    """The exact source of the core functions the page runs (inspect.getsource: never drifts)."""
    with st.expander(title, icon=":material/code:"):
        for function in functions:
            st.code(_drawing.source_of(function), language="python")


def slot():
    """A container for what only some inputs show (a tutorial's printed row for its own query). It is on the
    page either way, so every element after it keeps its place and the browser updates it in place instead
    of replacing it (and drawing its charts and tables anew)."""
    return st.container()


# The five tutorials the lab teaches from, named by their example (a learner never sees their file numbers);
# key -> (name, what it teaches). The keys are the presets' internal ids.
TUTORIALS = {
    "000": (
        "How self attention works in Transformer",
        "scores by dot products, dividing by the sum vs softmax, a context vector by a loop, then the matrix form",
    ),
    "001": ("I can't find the light switch", "the same three steps for the query “light”, then for all tokens with @"),
    "002": ("Your journey starts with one step", "trainable W_q, W_k, W_v: queries, keys, values, weights, context"),
    "003": ("scaled_dot_product", "Q, K and V given directly: Q Kᵀ / √d_k, masking, row sums and column sums"),
    "004": (
        "Self Attention is good",
        "numpy only: loops first, then matrices, on one-hot vectors and seeded random ones",
    ),
}


def tutorial_name(tutorial: str, capital: bool = False) -> str:
    """'the “Your journey starts with one step” tutorial' for '002' (capital: 'The …' to start a sentence)."""
    return f"{'The' if capital else 'the'} “{TUTORIALS[tutorial][0]}” tutorial"


def printed_text(values) -> str:
    """Numbers as the tutorial printed them: every number with the most decimals any of them has (at least 4),
    as numpy and torch print a row: (0.41676423, 0.0258166) -> '0.41676423 0.02581660'."""
    numbers = [float(v) for v in (values.tolist() if hasattr(values, "tolist") else values)]
    decimals = max([4] + [len(repr(v).split(".")[1]) for v in numbers if "e" not in repr(v) and "." in repr(v)])
    return " ".join(f"{v:.{decimals}f}" for v in numbers)


def tutorial_note(tutorial: str, what: str, printed, comment: str = "") -> None:
    """One caption: 'The “…” tutorial prints <what> as 0.1390 0.2369 …: <comment>' (printed numbers as printed)."""
    shown = printed_text(printed) if not isinstance(printed, str) else printed
    st.caption(
        f"{tutorial_name(tutorial, capital=True)} prints {what} as {shown}" + (f": {comment}" if comment else ".")
    )


def lesson_caption(description: str) -> None:
    """One line saying which input the numbers come from."""
    st.caption(f"Input: {description}. Change it in the sidebar.")


def lesson_title(path: str) -> lessons.Lesson:
    """The page's st.title from the lesson registry (pass ``__file__``); returns the registry entry."""
    lesson = lessons.lesson_for(path)
    st.title(lesson.label)
    reserve_navigation()  # a stepped lesson's step bar, right under the title, before the page's controls
    return lesson
