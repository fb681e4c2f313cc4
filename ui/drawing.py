"""What a page draws, and the machinery that keeps a rerun cheap: tables, heatmaps, charts, code, downloads, notes.

ui.page re-exports the drawing functions here (``table``, ``frame_table``, ``heatmap``, ``matrix``, ``chart``,
``line_view``, ``show_code``, ``download_csv``, ``slot`` and the tutorial notes); widgets that draw (ui.widgets)
import them from here. Pages pass tensors and labels from attention_core. Two rules keep a rerun cheap:

- a chart's ``title`` is fixed text: it is part of the chart's spec, and the same spec lets the browser put
  new numbers into the drawn chart instead of drawing it anew. Text that changes with the input (the query,
  d_k, a temperature) goes in ``caption``, drawn as a caption above the chart;
- what only some inputs show goes in ``slot()``, so every element after it keeps its place.

The machinery:

- tables: ``show_table`` / ``show_frame``: an HTML table (ui.widgets.html_table) kept by ``table_key`` /
  ``frame_key`` (digests of what a table shows), or for a table too large for HTML a st.dataframe of its kept Arrow
  table;
- heatmaps: ``HeatmapStyle`` (everything of a heatmap but its labels and numbers), ``heatmap_template`` (built by
  Altair once per look and kind of heatmap from ``charts.heatmap``, the one heatmap builder), ``heatmap_spec`` (the
  template with the labels, titles and size filled in), ``heatmap_data`` / ``outline_data`` (the named Arrow
  datasets the spec reads);
- other charts: ``chart_spec`` (any ui.charts function, by name), ``line_view_template``, with the helpers of
  ui.charts that make a spec's datasets stable names and Arrow bytes.

A spec holds no number and no query: those travel in named datasets. The same spec with new datasets lets the
browser put the new data into the drawn chart instead of drawing the chart anew. What is built is kept in a
``runtime.cache.ProcessCache`` (its docstring says why a plain bounded dict and not st.cache_data).
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
from collections.abc import Callable, Sequence
from typing import LiteralString

import altair as alt
import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st
import torch
from streamlit.dataframe_util import convert_anything_to_arrow_bytes

from attention_core import i18n
from attention_core.i18n import N_, _
from attention_core.tables import long_frame, to_frame
from runtime import switches
from runtime.cache import MB, ProcessCache, fingerprint, process_cache
from ui import charts
from ui.format import HUGE, TINY, csv_text
from ui.widgets import a11y, cell_click, html_table


@process_cache(512, 8 * MB)
def source_of(function: Callable) -> str:
    """inspect.getsource, read once per function (it re-reads and re-parses the file every call)."""
    return inspect.getsource(function)


# Formulas, charts and tables wider than a phone scroll sideways instead of being cut off (page_style, drawn by
# lab.py); while one scrolls, ui.widgets.a11y makes it focusable, so a keyboard scrolls it too.
# The tables (ui.widgets.html_table, class lab-table): text, borders and header tints inherit or mix the theme's
# colours. The sticky header row and row labels are opaque, in the theme's own background (light-dark(): Streamlit
# sets the app's color-scheme to its theme; an older browser keeps the see-through tint). A table with more columns
# (or rows) beyond its edge shows a shadow at that edge, which its content hides once scrolled to the end (the covers
# move with it).
# Captions (main area and sidebar): Streamlit fades them to 60 % opacity, 3.9:1 on white, under the 4.5:1 that small
# text needs (WCAG 1.4.3); the lab's are opaque, darker on the light theme (6.6:1) and lighter on the dark one (9.5:1),
# as are a table's False cells. A primary button's white text is 2.9:1 on the dark theme's light blue
# (.streamlit/config.toml): there it is the dark background's colour (6.1:1). Code: Streamlit's token colours are
# 2.3-3.8:1 on the light theme's code background and some 2.4-4.3:1 on the dark one's; the lab's are 4.9:1 or more.
# On a phone the step bar (ui.page) is its label (the step's title) and one row that scrolls sideways (ui.widgets.a11y
# keeps the step picked in view); on a wider screen it is the steps in a few rows, its label hidden.
PAGE_CSS = """<style>
[data-testid="stMain"] .katex-display { overflow-x: auto; overflow-y: hidden; padding: 2px 0 6px; }
[data-testid="stMain"] [data-testid="stVegaLiteChart"] { overflow-x: auto; overflow-y: hidden; max-width: 100%; }
[data-testid="stMain"] :is(.katex-display, [data-testid="stVegaLiteChart"], .lab-table,
  [data-testid="stCode"] pre):focus-visible {
  outline: 2px solid #3b5bdb; outline-color: light-dark(#3b5bdb, #748ffc); outline-offset: 2px; }
[data-testid="stCaptionContainer"] { opacity: 1; color: light-dark(#5f5d5a, #bebcb9); }
[data-testid="stBaseButton-primary"] { color: light-dark(#ffffff, #171614); }
.stApp [data-testid="stCode"] :is(.token.keyword, .token.tag, .token.function, .token.class-name, .token.selector) {
  color: light-dark(#1565b8, #5aa2f0); }
.stApp [data-testid="stCode"] :is(.token.number, .token.regex) { color: light-dark(#08705f, #29b09d); }
.stApp [data-testid="stCode"] :is(.token.boolean, .token.constant, .token.symbol, .token.inserted) {
  color: light-dark(#117234, #21c354); }
.stApp [data-testid="stCode"] :is(.token.string, .token.char, .token.attr-value) {
  color: light-dark(#0a7a2f, #09ab3b); }
.stApp [data-testid="stCode"] :is(.token.operator, .token.entity, .token.decorator, .token.atrule) {
  color: light-dark(#a84b09, #ed6f13); }
.stApp [data-testid="stCode"] :is(.token.comment, .token.prolog, .token.doctype, .token.cdata, .token.punctuation) {
  color: light-dark(#5f6270, #9da1ae); }
.stApp [data-testid="stCode"] :is(.token.attr-name, .token.property, .token.variable) {
  color: light-dark(#006f90, #00a4d4); }
.stApp [data-testid="stCode"] :is(.token.important, .token.deleted) { color: light-dark(#c62828, #ff6b6b); }
.stApp [data-testid="stCode"] .token.url { color: light-dark(#6d3fc0, #a98ee0); }
.lab-table { overflow: auto; max-width: 100%; width: fit-content; margin: 0 0 0.75rem;
  border: 1px solid rgba(128, 128, 128, 0.3); border-radius: 0.5rem;
  --lab-bg: light-dark(#ffffff, #171614); --lab-shade: rgba(128, 128, 128, 0.7);
  background:
    linear-gradient(to left, var(--lab-bg) 40%, transparent) right / 32px 100% no-repeat local,
    linear-gradient(to top, var(--lab-bg) 40%, transparent) bottom / 100% 32px no-repeat local,
    radial-gradient(farthest-side at 100% 50%, var(--lab-shade), transparent) right / 18px 100% no-repeat scroll,
    radial-gradient(farthest-side at 50% 100%, var(--lab-shade), transparent) bottom / 100% 18px no-repeat scroll; }
.lab-table.stretch { width: auto; }
.lab-table table { border-collapse: separate; border-spacing: 0; font-size: 0.875rem; line-height: 1.4;
  font-variant-numeric: tabular-nums; color: inherit; margin: 0; }
.lab-table.stretch table { width: 100%; }
.lab-table th, .lab-table td { padding: 0.3rem 0.65rem; white-space: nowrap; border: none;
  border-bottom: 1px solid rgba(128, 128, 128, 0.18); }
.lab-table tbody tr:last-child > * { border-bottom: none; }
.lab-table td { text-align: left; }
.lab-table td[data-v]:not(.b0, .b1) { text-align: right; }
.lab-table td.b0 { color: light-dark(#6b6966, #a9a7a4); }
.lab-table thead th { position: sticky; top: 0; z-index: 1; font-weight: 600; text-align: right;
  background-color: rgba(128, 128, 128, 0.12);
  background-color: color-mix(in srgb, #808080 12%, light-dark(#ffffff, #171614)); }
.lab-table thead th.s { text-align: left; }
.lab-table tbody th { position: sticky; left: 0; font-weight: 400; text-align: left;
  background-color: rgba(128, 128, 128, 0.06);
  background-color: color-mix(in srgb, #808080 6%, light-dark(#ffffff, #171614));
  border-right: 1px solid rgba(128, 128, 128, 0.3); }
.lab-table thead th[data-i] { left: 0; z-index: 2; border-right: 1px solid rgba(128, 128, 128, 0.3); }
.lab-table th[title] { text-decoration: underline dotted; cursor: help; }
/* Focus shows where Streamlit draws no ring: page links, the main area, a chart toolbar (unseen unless hovered) */
[data-testid="stElementToolbar"]:focus-within { opacity: 1; }
:is([data-testid="stSidebarNavLink"], [data-testid="stPageLink-NavLink"], [data-testid="stBaseButton-elementToolbar"],
  [data-testid="stMain"]):focus-visible { outline: 2px solid #3b5bdb; outline-color: light-dark(#3b5bdb, #748ffc);
  outline-offset: 1px; }
[data-testid="stMain"]:focus-visible { outline-offset: -2px; }
@media (max-width: 640px) {
  [data-testid="stMain"] [class*="st-key-stepbar-"] [role="radiogroup"] { flex-wrap: nowrap !important;
    overflow-x: auto; scrollbar-width: none; }
  [data-testid="stMain"] [class*="st-key-stepbar-"] [role="radiogroup"] > button { flex: 0 0 auto; }
}
@media (min-width: 641px) {
  [data-testid="stMain"] [class*="st-key-stepbar-"] [data-testid="stWidgetLabel"] { display: none; }
}
.st-key-lab_warm_kinds { display: none !important; }  /* runtime.preload.element_kinds: drawn once, never shown */
.st-key-lab_a11y { display: none !important; }  /* ui.widgets.a11y: its script runs, nothing is shown */
</style>"""


def page_style() -> None:
    """The lab's few layout rules (sideways scrolling of wide formulas, charts and tables, the tables' look) and its
    page script (ui.widgets.a11y); once per run."""
    st.html(PAGE_CSS)
    a11y.mount()


# --- tables ----------------------------------------------------------------------------------------------------


def column_formats(frame: pd.DataFrame) -> list[str]:
    """printf format per column for very large tables: scientific where any cell needs it, else 4 decimals."""
    magnitude = np.abs(frame.to_numpy(dtype=float))
    scientific = (((magnitude > 0) & (magnitude < TINY)) | ((magnitude >= HUGE) & np.isfinite(magnitude))).any(axis=0)
    return ["%.4e" if column_is_scientific else "%.4f" for column_is_scientific in scientific]


def table_key(
    data: pd.DataFrame | torch.Tensor, rows: Sequence[str] | None, cols: Sequence[str] | None, alt_text: str | None
) -> str:
    """A digest of what a table shows: its numbers (with their types), its labels and its alt text.

    One short string, the key its HTML (or a large table's Arrow table) is kept under.
    """
    if isinstance(data, pd.DataFrame):
        values = data.to_numpy(dtype=np.float64)
        labels = (tuple(data.index), tuple(data.columns), data.index.name, data.columns.name)
        described = ("frame", values.shape, tuple(map(str, data.dtypes)), labels, alt_text)
    else:
        values = data.detach().to(torch.float64).numpy()  # (rows, cols)
        described = ("matrix", values.shape, tuple(rows), tuple(cols), alt_text)
    digest = hashlib.blake2b(repr(described).encode(), digest_size=20)
    digest.update(np.ascontiguousarray(values).tobytes())
    return digest.hexdigest()


MAX_HTML_CELLS = 64 * 64  # up to this, a table is HTML (ui.widgets.html_table), kept by its content; beyond, it is a
# st.dataframe, whose data grid draws only the rows in view (a long sentence's T x T table is megabytes of HTML)

# The HTML of the lessons' tables, kept by content: a rerun that shows the same numbers formats nothing again.
TABLE_HTML = ProcessCache(512, 24 * MB)

# The Arrow tables of the larger tables (with their column formats), kept by table_key within a byte budget: a
# rerun draws them without converting 128 x 128 cells again (docs/benchmarks.md: the reruns at 128 tokens after
# issue 25), and a long sentence's megabytes push out the oldest instead of adding up.
LARGE_TABLES = ProcessCache(64, 24 * MB)


def html_sized(frame_or_matrix: pd.DataFrame | torch.Tensor) -> bool:
    """True when a table is small enough to be drawn as HTML (MAX_HTML_CELLS)."""
    shape = frame_or_matrix.shape
    return int(np.prod(shape)) <= MAX_HTML_CELLS


def show_table(
    data: pd.DataFrame | torch.Tensor, rows: Sequence[str] | None, cols: Sequence[str] | None, alt_text: str | None
) -> None:
    """table(): an HTML table (ui.widgets.html_table) kept by content; a table too large for that is a st.dataframe
    drawn from its kept Arrow table and column formats (LARGE_TABLES, a byte budget), so memory stays bounded and
    a rerun does not convert it again."""
    key = table_key(data, rows, cols, alt_text)
    if not html_sized(data):
        table, config, height = LARGE_TABLES.get(key, lambda: large_table(data, rows, cols))
        st.dataframe(table, column_config=config, height=height, alt=alt_text)
        return
    if switches.off("html_tables"):  # a benchmark's switch (runtime/switches.py): Streamlit's own table
        st.table(as_frame(data, rows, cols), alt=alt_text)
        return
    st.html(TABLE_HTML.get(key, lambda: html_table.table_html(as_frame(data, rows, cols), alt=alt_text)))


def as_frame(data: pd.DataFrame | torch.Tensor, rows: Sequence[str] | None, cols: Sequence[str] | None) -> pd.DataFrame:
    """A table's DataFrame: the frame itself, or the matrix with its row and column labels."""
    return data if isinstance(data, pd.DataFrame) else to_frame(data, rows, cols)


def table_layout(frame: pd.DataFrame) -> tuple[dict, int | str]:
    """The column config of a large table drawn by st.dataframe (the index wide enough for its labels, one
    number format per column) and its height."""
    longest_label = max((len(str(label)) for label in frame.index), default=0)
    config = {"_index": st.column_config.Column(width=min(260, 24 + 8 * longest_label))}  # labels not cut off
    config |= {
        str(column): st.column_config.NumberColumn(str(column), format=fmt)
        for column, fmt in zip(frame.columns, column_formats(frame), strict=True)
    }
    return config, "auto" if len(frame) <= 16 else 420


def large_table(
    data: pd.DataFrame | torch.Tensor, rows: Sequence[str] | None, cols: Sequence[str] | None
) -> tuple[pa.Table, dict, int | str]:
    """A table beyond MAX_HTML_CELLS as st.dataframe draws it: its Arrow table (the index kept as the row
    labels), one format per column (per-cell formatting is too slow at this size) and its height."""
    frame = as_frame(data, rows, cols)
    config, height = table_layout(frame)
    return pa.Table.from_pandas(frame, preserve_index=True), config, height


def frame_key(frame: pd.DataFrame, options: dict) -> str:
    """A digest of a frame's fingerprint (its values, types and labels) and of its st.dataframe options."""
    return hashlib.blake2b(repr((fingerprint(frame), sorted(options.items()))).encode(), digest_size=20).hexdigest()


FRAME_OPTIONS = ("alt", "column_config", "hide_index", "width", "height")  # what frame_table's HTML honours


def show_frame(frame: pd.DataFrame, options: dict) -> None:
    """frame_table(): an HTML table kept by content and options; a frame too large for that, or asking for
    an option an HTML table does not have, is a st.dataframe."""
    if not html_sized(frame) or set(options) - set(FRAME_OPTIONS) or isinstance(frame.columns, pd.MultiIndex):
        st.dataframe(frame, **options)
        return
    if switches.off("html_tables"):  # a benchmark's switch: Streamlit's own table (no column labels or formats)
        st.table(frame, alt=options.get("alt"), hide_index=options.get("hide_index"))
        return
    st.html(TABLE_HTML.get(frame_key(frame, options), lambda: html_table.table_html(frame, **options)))


# --- heatmaps --------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class HeatmapStyle:
    """Everything of a heatmap's spec but its labels: the key its template is built and kept under."""

    kind: charts.Kind = "weights"
    title: str = ""
    row_title: str = "query"
    col_title: str = "key"
    colour_title: str = ""
    compact: bool = False
    panel_px: int = 230
    selectable: bool = False


def draw_heatmap(
    values: torch.Tensor,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    style: HeatmapStyle,
    domain: charts.Domain | None,
    highlight_row: str | None,
    key: str | None,
) -> dict | None:
    """heatmap()'s chart (a raster image beyond MAX_CHART_TOKENS tokens); returns the selection event of a
    selectable chart (None for the others and for an image)."""
    alt_text = charts.heatmap_name(style.title, len(row_labels), len(col_labels), style.row_title, style.col_title)
    if max(len(row_labels), len(col_labels)) > charts.MAX_CHART_TOKENS:
        frame = to_frame(values, row_labels, col_labels)
        image = charts.raster(frame.to_numpy(), kind=style.kind, domain=domain)
        summary = charts.heatmap_summary(long_frame(values, row_labels, col_labels), style.kind)
        st.image(image, caption=style.title, alt=f"{alt_text}. {summary}")
        if style.kind == "weights":
            text = _(
                "{count} tokens is too many for an interactive chart: this is a colour-mapped image of the same "
                "matrix (colours {scale}). Use the table for exact values.",
                count=len(row_labels),
                scale=charts.weights_legend(domain),
            )
        else:
            text = _(
                "{count} tokens is too many for an interactive chart: this is a colour-mapped image of the same "
                "matrix. Use the table for exact values.",
                count=len(row_labels),
            )
        st.caption(text)
        return None
    matrix = values.detach().to(torch.float64).numpy()  # (rows, cols)
    rows, cols, domain = tuple(row_labels), tuple(col_labels), domain and tuple(domain)
    language = i18n.current()  # the cells' and the summary's words (a mask's "may attend") are in the learner's
    cells = heatmap_data(
        matrix.tobytes(), matrix.shape, rows, cols, style.kind, domain, style.compact, style.panel_px, language
    )
    summary = summary_data(matrix.tobytes(), matrix.shape, rows, cols, style.kind, language)  # after the chart's name
    datasets = {charts.CELLS_DATA: cells, charts.OUTLINE_DATA: outline_data(highlight_row)}
    datasets[charts.SUMMARY_DATA] = summary
    # the kept spec of these labels and style; a benchmark's switch (runtime/switches.py): Altair builds it each run
    built = (
        altair_heatmap_spec(rows, cols, style)
        if switches.off("spec_cache")
        else heatmap_spec(rows, cols, style, language)
    )
    spec = {**built, "datasets": datasets}
    alt_text = None if style.compact else alt_text  # a compact panel: the spec's description names it
    if not style.selectable:
        st.vega_lite_chart(spec=spec, alt=alt_text, width="content")
        return None
    selection = {"on_select": "rerun", "selection_mode": charts.CELL_SELECTION}
    return st.vega_lite_chart(spec=spec, alt=alt_text, width="content", key=key, **selection)


@process_cache(256, 48 * MB)
def heatmap_data(
    values: bytes,
    shape: tuple[int, int],
    row_labels: tuple[str, ...],
    col_labels: tuple[str, ...],
    kind: charts.Kind,
    domain: charts.Domain | None,
    compact: bool,
    panel_px: int,
    language: str = i18n.SOURCE_LANGUAGE,
) -> bytes:
    """The cells ``charts.heatmap_cells`` makes of one matrix, as the Arrow bytes of the heatmap's dataset
    ``charts.CELLS_DATA`` (a mask's cells say "may attend" or "blocked" in ``language``, part of the key)."""
    matrix = torch.from_numpy(np.frombuffer(values, dtype=np.float64).reshape(shape).copy())  # (rows, cols)
    long = long_frame(matrix, row_labels, col_labels)
    with i18n.using(language):
        cells = charts.heatmap_cells(
            long, row_labels, col_labels, kind=kind, domain=domain, compact=compact, panel_px=panel_px
        )
    return charts.arrow_bytes(cells)


@process_cache(256, 4 * MB)
def summary_data(
    values: bytes,
    shape: tuple[int, int],
    row_labels: tuple[str, ...],
    col_labels: tuple[str, ...],
    kind: charts.Kind,
    language: str = i18n.SOURCE_LANGUAGE,
) -> bytes:
    """``charts.heatmap_summary`` of one matrix (its largest and smallest cells) as the Arrow bytes of the heatmap's
    dataset ``charts.SUMMARY_DATA``: numbers stay out of the spec, so new numbers still only swap the data. The
    sentence is in ``language`` (part of the key)."""
    matrix = torch.from_numpy(np.frombuffer(values, dtype=np.float64).reshape(shape).copy())  # (rows, cols)
    with i18n.using(language):
        summary = charts.heatmap_summary(long_frame(matrix, row_labels, col_labels), kind)
    return convert_anything_to_arrow_bytes(charts.summary_rows(summary))


@process_cache(256, 4 * MB)
def outline_data(highlight_row: str | None) -> bytes:
    """``charts.outline_rows`` as the Arrow bytes of the heatmap's dataset ``charts.OUTLINE_DATA``. The cells do
    not name the query, so another query sends the same cells and only these bytes change."""
    return convert_anything_to_arrow_bytes(charts.outline_rows(highlight_row))


@process_cache(128, 24 * MB)
def heatmap_spec(
    row_labels: tuple[str, ...],
    col_labels: tuple[str, ...],
    style: HeatmapStyle,
    language: str = i18n.SOURCE_LANGUAGE,
) -> dict:
    """The Vega-Lite spec of ``charts.heatmap`` for these labels and style, without its data: the kept
    ``heatmap_template`` of its look (``charts.heatmap_look``) and options with the labels, titles and size filled
    in, so Altair builds a heatmap once per look and kind of chart, not once per sentence length and title.

    The labels are in a heatmap's spec only as the axes' sort orders, the titles only as the chart's, the axes'
    and the legend's titles, and the size only as its width and height: the spec filled in is the spec Altair
    builds for them (tested), but for the name Altair gives a clickable layer's view (a hash of the chart), used
    only inside it. The spec holds no number and no query (those are columns of the data), so another matrix of
    the same tokens (another head, temperature or query) reuses it, and the browser, seeing the same spec, puts
    the new data into the drawn chart. The words of the template itself (a tooltip's "value", a mask's legend) are
    in ``language``, part of the key.
    """
    look = charts.heatmap_look(len(row_labels), len(col_labels), style.compact, style.panel_px)
    template, rows, cols = heatmap_template(look, style, len(row_labels), len(col_labels), language)
    size, _unused = charts.heatmap_layout(len(row_labels), len(col_labels), style.compact, style.panel_px)
    lists = {rows: list(row_labels), cols: list(col_labels), (COLOUR_TITLE,): charts.legend_lines(style.colour_title)}
    texts = {
        TITLE: style.title,
        ROW_TITLE: style.row_title,
        COL_TITLE: style.col_title,
        COLOUR_TITLE: style.colour_title,
    }
    spec = filled(template, lists, texts)
    return {**spec, "width": size * len(col_labels), "height": size * len(row_labels)}


# Stand-ins no title or token can hold (a control character): a template names these, heatmap_spec fills them in.
TITLE, ROW_TITLE, COL_TITLE, COLOUR_TITLE = "\x1ftitle", "\x1frow title", "\x1fcol title", "\x1fcolour title"


def template_style(style: HeatmapStyle) -> HeatmapStyle:
    """The style a template is built and kept under: stand-ins for its titles (an empty title stays empty, as
    Altair writes it) and no panel size (the look has what of it matters)."""
    stand_in = {"title": TITLE, "row_title": ROW_TITLE, "col_title": COL_TITLE, "colour_title": COLOUR_TITLE}
    return dataclasses.replace(
        style, panel_px=0, **{name: text if getattr(style, name) else "" for name, text in stand_in.items()}
    )


def stand_in_labels(axis: str, count: int) -> tuple[str, ...]:
    """Labels no token can have (a control character), one per row or column."""
    return tuple(f"\x1f{axis} {i}" for i in range(count))


def filled(node, lists: dict[tuple, list], texts: dict[str, str]):
    """A copy of a spec (dicts, lists, strings, numbers) with every list equal to a key of ``lists`` replaced by
    its value and every stand-in of ``texts`` replaced inside strings; the template it copies stays as it was."""
    if isinstance(node, dict):
        return {key: filled(value, lists, texts) for key, value in node.items()}
    if isinstance(node, list):
        whole = lists.get(tuple(node)) if node and all(isinstance(value, str) for value in node) else None
        return list(whole) if whole is not None else [filled(value, lists, texts) for value in node]
    if isinstance(node, str) and "\x1f" in node:
        for stand_in, text in texts.items():
            node = node.replace(stand_in, text)
    return node


HEATMAP_TEMPLATES = ProcessCache(64, 24 * MB)  # Altair's heatmap specs, by look and template style (heatmap_template)


def heatmap_template(
    look: tuple, style: HeatmapStyle, n_rows: int, n_cols: int, language: str = i18n.SOURCE_LANGUAGE
) -> tuple[dict, tuple, tuple]:
    """The spec Altair builds for a heatmap of this look and style with stand-in titles and labels, and those
    stand-in labels. Built once per look and ``template_style`` (kept in HEATMAP_TEMPLATES): the first size that
    asks for it builds it, and any other size of the same look gives the same spec but for what heatmap_spec
    fills in."""

    def build() -> tuple[dict, tuple, tuple]:
        rows, cols = stand_in_labels("row", n_rows), stand_in_labels("col", n_cols)
        stand_ins = dataclasses.replace(template_style(style), panel_px=style.panel_px)  # the panel sets the size
        with i18n.using(language):
            return altair_heatmap_spec(rows, cols, stand_ins), rows, cols

    return HEATMAP_TEMPLATES.get((look, template_style(style), language), build)


# What warm_heatmaps builds: every kind, plain and clickable, at the looks of a short sentence (values in the
# cells) and of 32 tokens (none); weights past 64 tokens (no axis labels); the grid panels of lessons 7 and 10
# (large and small panels, plain and clickable).
WARM_SIZES = (6, 32)
WARM_KINDS = ("weights", "scores", "values", "mask")


def warm_styles() -> list[tuple[int, HeatmapStyle]]:
    """(tokens, style) of every heatmap warm_heatmaps builds."""

    def style(kind: str, selectable: bool, **panel) -> HeatmapStyle:
        return HeatmapStyle(kind, "Warm-up", colour_title=kind, selectable=selectable, **panel)

    clicks = (False, True)
    found = [(n, style(kind, click)) for n in WARM_SIZES for kind in WARM_KINDS for click in clicks]
    found += [(70, style("weights", click)) for click in clicks]
    panels = [dict(compact=True, panel_px=px) for px in (110, 300)]
    return found + [(n, style("weights", click, **panel)) for n in WARM_SIZES for click in clicks for panel in panels]


def warm_heatmaps() -> int:
    """Build the heatmap templates the lessons ask for (runtime.warmup calls this as the server starts); the number
    built."""
    made = HEATMAP_TEMPLATES.made
    for n, style in warm_styles():
        labels = stand_in_labels("warm", n)
        heatmap_spec(labels, labels, style)
    return HEATMAP_TEMPLATES.made - made


def altair_heatmap_spec(row_labels: tuple[str, ...], col_labels: tuple[str, ...], style: HeatmapStyle) -> dict:
    """The Vega-Lite spec of ``charts.heatmap`` without its data, as Altair builds it (slow: tens of ms)."""
    T = (len(row_labels), len(col_labels))
    placeholder = charts.heatmap_cells(
        long_frame(torch.zeros(T), row_labels, col_labels), row_labels, col_labels, kind=style.kind,
        compact=style.compact, panel_px=style.panel_px,
    )  # fmt: skip
    chart = charts.heatmap(placeholder, row_labels, col_labels, **dataclasses.asdict(style))
    with alt.data_transformers.enable("default", max_rows=None):  # st.altair_chart has no row limit either
        # Not validated again here: every variant of charts.heatmap is validated against the Vega-Lite schema in
        # tests/test_charts.py (test_every_heatmap_variant_is_valid_vega_lite); validation is half the cost of a build.
        spec = chart.to_dict(validate=False)
    spec, _data = charts.split_data(spec)
    return {**spec, "data": {"name": charts.CELLS_DATA}}  # the cells: a dataset that draw_heatmap sends


# --- other charts ----------------------------------------------------------------------------------------------


@process_cache(32, 24 * MB)
def line_view_template(
    labels: tuple[str, ...], focus: str | None, language: str = i18n.SOURCE_LANGUAGE
) -> tuple[dict, str]:
    """The validated line-view spec for these tokens (built on uniform weights) and its rules' dataset name (its
    tooltips' words in ``language``, part of the key)."""
    T = len(labels)
    uniform = long_frame(torch.full((T, T), 1.0 / T), labels, labels)  # (T*T rows)
    with alt.data_transformers.enable("default", max_rows=None), i18n.using(language):  # not validated: chart_spec
        spec = charts.line_view(uniform, labels, focus=focus).to_dict(validate=False)
    pairs_name = next(name for name, rows in spec["datasets"].items() if rows and "x0" in rows[0])
    return arrow_datasets(spec), pairs_name


def line_view_spec(weights: torch.Tensor, labels: Sequence[str], title: str, focus: str | None) -> dict:
    """The kept line-view spec of these tokens with the rules of these weights and this title."""
    template, pairs_name = line_view_template(tuple(labels), focus, i18n.current())
    pairs = charts.line_view_pairs(long_frame(weights, labels, labels), focus)
    spec = {**template, "datasets": {**template["datasets"], pairs_name: convert_anything_to_arrow_bytes(pairs)}}
    return {**spec, "title": title, "description": title or _("Line view of attention weights")}


CHART_SPECS = ProcessCache(256, 48 * MB)


def cached_chart_spec(builder: Callable[..., alt.TopLevelMixin], args: tuple, kwargs: dict) -> dict:
    """``chart_spec`` of ``builder(*args, **kwargs)``, kept per builder and content of its arguments."""
    if switches.off("spec_cache"):  # a benchmark's switch (runtime/switches.py): built each run
        return chart_spec(builder.__name__, args, tuple(sorted(kwargs.items())))
    key = (builder.__name__, i18n.current(), fingerprint(args), fingerprint(kwargs))  # a chart's own words: language
    return CHART_SPECS.get(key, lambda: chart_spec(builder.__name__, args, tuple(sorted(kwargs.items()))))


def chart_spec(builder_name: str, args: tuple, kwargs: tuple) -> dict:
    """The Vega-Lite spec of one ui.charts function call, its datasets already Arrow bytes (Streamlit would convert
    the inline records to Arrow on every rerun) under stable names.

    Not validated against the Vega-Lite schema here: validation is about half of a build, which a step's first run
    waits for, and every chart every lesson draws is validated in tests/test_pages.py instead."""
    built = getattr(charts, builder_name)(*args, **dict(kwargs))
    with alt.data_transformers.enable("default", max_rows=None):
        spec = built.to_dict(validate=False)
    return arrow_datasets(stable_dataset_names(spec))


def stable_dataset_names(spec: dict) -> dict:
    """The spec with Altair's dataset names, hashes of the data ("data-3f2a…"), replaced by their order
    ("lab_data_0", …; not "data_0", a name Vega-Lite gives its own data sources, which would hide ours).
    New numbers then leave the spec's text as it was, and the browser puts the data into the drawn
    chart instead of drawing the chart anew."""
    names = {old: f"lab_data_{i}" for i, old in enumerate(spec.get("datasets", {}))}

    def renamed(node):
        if isinstance(node, dict):
            return {
                key: names.get(value, value) if key == "name" and isinstance(value, str) else renamed(value)
                for key, value in node.items()
            }
        if isinstance(node, list):
            return [renamed(value) for value in node]
        return node

    datasets = {names[old]: rows for old, rows in spec.get("datasets", {}).items()}
    body = renamed({key: value for key, value in spec.items() if key != "datasets"})
    return {**body, "datasets": datasets} if datasets else body


def arrow_datasets(spec: dict) -> dict:
    """The spec with every named dataset (a list of records) as the Arrow bytes Streamlit sends."""
    named = spec.get("datasets", {})
    datasets = {name: convert_anything_to_arrow_bytes(pd.DataFrame(rows)) for name, rows in named.items()}
    return {**spec, "datasets": datasets}


# --- the page API's drawing functions (ui.page re-exports them) ----------------------------------------------


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
    show_table(data, rows, cols, alt_text)


def frame_table(frame: pd.DataFrame, **options) -> None:
    """Any other DataFrame (text, flags, counts) as ``st.dataframe(frame, **options)``, drawn once per content
    and options and replayed after that, as table() does."""
    show_frame(frame, options)


def weights_domain(*matrices: torch.Tensor) -> charts.Domain:
    """The colour range of weight heatmaps: stretched to the values of all ``matrices`` (panels that share
    a scale pass them all), or fixed 0..1, as the sidebar's "Weights colour scale" says."""
    if st.session_state.get(charts.WEIGHTS_SCALE_KEY, "stretch") != "stretch" or not matrices:
        return charts.FIXED_WEIGHTS
    return charts.stretched_domain(np.concatenate([m.detach().double().reshape(-1).numpy() for m in matrices]))


def heatmap(
    values: torch.Tensor,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    kind: charts.Kind = "weights",
    title: LiteralString = "",
    row_title: str = N_("query"),
    col_title: str = N_("key"),
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
    row_title, col_title = _(row_title), _(col_title)  # the defaults, or a page's title in the learner's language
    colour_title = charts.colour_title(kind, domain)
    style = HeatmapStyle(kind, title, row_title, col_title, colour_title, compact, panel_px, bool(explain))
    event = draw_heatmap(values, row_labels, col_labels, style, domain, highlight_row, key)
    if explain is None:
        return None
    titles = {"title": title, "row_title": row_title, "col_title": col_title}
    cells = {"values": values, "kind": kind, **titles}  # the keyboard's grid of the same cells
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
    chart_tab, table_tab = st.tabs([_("Heatmap"), _("Table")])
    with chart_tab:
        heatmap(values, row_labels, col_labels, **heatmap_options)
    with table_tab:
        table(frame, alt_text=title)
    if download:
        label = _("Download {title} as CSV", title=title) if title else _("Download this matrix as CSV")
        download_csv(frame, download, label=label)
    return frame


def line_view(
    weights: torch.Tensor, labels: Sequence[str], *, title: LiteralString = "", focus: str | None = None
) -> None:
    """charts.line_view of a (T, T) weight matrix: its spec is built once per sentence and focus."""
    st.vega_lite_chart(spec=line_view_spec(weights, labels, title, focus), width="content", alt=None)


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
    spec = cached_chart_spec(builder, args, kwargs)
    text = alt_text or kwargs.get("title") or builder.__name__.replace("_", " ")
    described = "description" in spec  # Streamlit reads a spec's description as the chart's accessible name
    st.vega_lite_chart(spec=spec, width=st_width, alt=None if described else _("Chart: {name}", name=text))


def printed_beside_ours(comparison, row_labels: Sequence[str], col_labels: Sequence[str], tutorial: str) -> None:
    """A tutorial's printed matrix and the lab's own, side by side (a projections.Comparison)."""
    printed_column, ours_column = st.columns(2)
    with printed_column:
        name = _(comparison.name)  # the matrix's name (attention_core.projections marks it N_)
        st.markdown(_("**Printed by {tutorial}** ({name})", tutorial=tutorial, name=name))  # e.g. tutorial_name('002')
        table(
            comparison.printed,
            row_labels,
            col_labels,
            alt_text=_("{tutorial}'s printed {name}", tutorial=tutorial, name=name),
        )
    with ours_column:
        st.markdown(_("**Computed by the lab** ({name})", name=name))
        table(comparison.ours, row_labels, col_labels, alt_text=_("The lab's {name}", name=name))


def download_csv(frame: pd.DataFrame, filename: str, *, label: str = N_("Download as CSV")) -> None:
    """A CSV download of a table, with full precision and the token labels (built only when clicked). The file's
    column names are the table's as the page built it (the tokens, and headers in the learner's language)."""
    st.download_button(
        _(label),
        lambda: csv_text(frame).encode("utf-8"),  # no cell opens as a spreadsheet formula
        file_name=filename,
        mime="text/csv",
        icon=":material/download:",
        on_click="ignore",
    )


def show_code(*functions: Callable, title: str = N_("Show the code")) -> None:
    """The exact source of the core functions the page runs (inspect.getsource: never drifts).

    The code is drawn only while the expander is open (opening it reruns the page): a closed expander's code
    blocks are still sent and syntax-highlighted by the browser, 0.3-0.5 s of its main thread on every load of a
    whole lesson (docs/benchmarks.md, "Code drawn when opened")."""
    # the key keeps the title as the page wrote it (English for the default): a language switch keeps it open
    box = st.expander(_(title), icon=":material/code:", key=code_key(title, functions[0]), on_change="rerun")
    if box.open:
        with box:
            for function in functions:
                st.code(source_of(function), language="python")


def code_key(title: str, first: Callable) -> str:
    """The widget key of a "Show the code" expander: its title and the first function it shows, which stay the
    same when the input changes the functions after it (so an open expander stays open)."""
    return f"code {title} {first.__module__}.{first.__qualname__}"


def slot():
    """A container for what only some inputs show (a tutorial's printed row for its own query). It is on the
    page either way, so every element after it keeps its place and the browser updates it in place instead
    of replacing it (and drawing its charts and tables anew)."""
    return st.container()


# The five tutorials the lab teaches from, named by their example (a learner never sees their file numbers);
# key -> (name, what it teaches: translated where shown). The keys are the presets' internal ids.
TUTORIALS = {
    "000": (
        "How self attention works in Transformer",
        N_("scores by dot products, dividing by the sum vs softmax, a context vector by a loop, then the matrix form"),
    ),
    "001": (
        "I can't find the light switch",
        N_("the same three steps for the query “light”, then for all tokens with @"),
    ),
    "002": (
        "Your journey starts with one step",
        N_("trainable W_q, W_k, W_v: queries, keys, values, weights, context"),
    ),
    "003": ("scaled_dot_product", N_("Q, K and V given directly: Q Kᵀ / √d_k, masking, row sums and column sums")),
    "004": (
        "Self Attention is good",
        N_("numpy only: loops first, then matrices, on one-hot vectors and seeded random ones"),
    ),
}


def tutorial_name(tutorial: str, capital: bool = False) -> str:
    """'the “Your journey starts with one step” tutorial' for '002' (capital: 'The …' to start a sentence)."""
    name = TUTORIALS[tutorial][0]  # the example sentence: it stays English
    return _("The “{name}” tutorial", name=name) if capital else _("the “{name}” tutorial", name=name)


def printed_text(values) -> str:
    """Numbers as the tutorial printed them: every number with the most decimals any of them has (at least 4),
    as numpy and torch print a row: (0.41676423, 0.0258166) -> '0.41676423 0.02581660'."""
    numbers = [float(v) for v in (values.tolist() if hasattr(values, "tolist") else values)]
    decimals = max([4] + [len(repr(v).split(".")[1]) for v in numbers if "e" not in repr(v) and "." in repr(v)])
    return " ".join(f"{v:.{decimals}f}" for v in numbers)


def tutorial_note(tutorial: str, what: str, printed, comment: str = "") -> None:
    """One caption: 'The “…” tutorial prints <what> as 0.1390 0.2369 …: <comment>' (printed numbers as printed)."""
    shown = printed_text(printed) if not isinstance(printed, str) else printed
    tutorial_text = tutorial_name(tutorial, capital=True)
    if comment:
        st.caption(
            _(
                "{tutorial} prints {what} as {shown}: {comment}",
                tutorial=tutorial_text,
                what=what,
                shown=shown,
                comment=comment,
            )
        )
    else:
        st.caption(_("{tutorial} prints {what} as {shown}.", tutorial=tutorial_text, what=what, shown=shown))


def lesson_caption(description: str) -> None:
    """One line saying which input the numbers come from."""
    st.caption(_("Input: {description}. Change it in the sidebar.", description=description))
