"""Every chart of the lab, as pure functions returning ``alt.Chart`` (or an RGB array for rasters).

Grouped by chart type: heatmaps (``heatmap``, with a ``compact`` panel form for grids, and
``raster`` images beyond 128 tokens), bars, lines, scatter, and the line view. Heatmaps draw
tokens in sentence order, a diverging scale centred on 0 for scores and viridis for weights:
fixed 0..1 by default, or stretched to a given ``domain`` (the legend says which). Cell text
and tooltips use ``ui.format.format_number``. Colours read on the light and the dark theme.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Literal

import altair as alt
import numpy as np
import pandas as pd
import pyarrow as pa
from streamlit.dataframe_util import convert_anything_to_arrow_bytes

from attention_core.i18n import N_, _
from attention_core.numbers import format_number  # the one number formatter (ui.format re-exports it)

Kind = Literal["weights", "scores", "mask", "values", "entropy"]  # entropy: 0 (focused) .. ln T (uniform)
Domain = tuple[float, float]

CELL_PX = 48  # fixed cell size up to FIXED_CELL_TOKENS: room for '-0.1234' at 10 px
FIXED_CELL_TOKENS = 16  # up to this, cells keep CELL_PX; then they shrink to fit FIT_PX
MAX_TEXT_TOKENS = 24  # above this, values move to the tooltip
MAX_CHART_TOKENS = 128  # above this, heatmaps become raster images
FIT_PX = 760  # the size a shrinking heatmap fits into
SEQUENTIAL_SCHEME = "viridis"  # perceptually uniform, colour-blind safe
DIVERGING_SCHEME = "blueorange"  # colour-blind safe, white-ish at the centre
NEUTRAL = "#868e96"  # a mid grey that reads on the light and the dark theme
HIGHLIGHT = "#e8590c"  # the query's row outline and hovered lines: orange reads on both themes
# A heatmap sent by ui.drawing has two named datasets: its cells and its outlined row (the query's label, or
# no row). Two, because Streamlit's frontend puts a chart's unnamed data into its named dataset when it has
# exactly one; named, so the browser compares each one's bytes and replaces only the one that changed.
CELLS_DATA = "heatmap_cells"
OUTLINE_DATA = "query_row"
# A third named dataset: what a screen reader hears after the heatmap's name (``heatmap_summary``), one row. Apart
# from the spec, which holds no number, so new numbers still only swap the data of the drawn chart.
SUMMARY_DATA = "heatmap_summary"
MASK_COLOURS = ("#3b5bdb", "#e9ecef")  # may attend, blocked
FIXED_WEIGHTS: Domain = (0.0, 1.0)
WEIGHTS_SCALE_KEY = "weights_scale"  # the sidebar's colour scale of weights (ui.widgets.inputs); not in the URL
WEIGHTS_SCALES = {"stretch": N_("stretch to data"), "fixed": N_("fixed 0–1")}  # shown through _()

# viridis and blue-white-orange anchor colours for rasters (same look as the Vega schemes)
_VIRIDIS = np.array(
    [
        [68, 1, 84],
        [72, 40, 120],
        [62, 73, 137],
        [49, 104, 142],
        [38, 130, 142],
        [31, 158, 137],
        [53, 183, 121],
        [110, 206, 88],
        [181, 222, 43],
        [253, 231, 37],
    ],
    dtype=float,
)
_BLUE_ORANGE = np.array(
    [[5, 48, 97], [67, 147, 195], [209, 229, 240], [247, 247, 247], [254, 224, 182], [244, 165, 92], [127, 59, 8]],
    dtype=float,
)


# --- heatmaps -------------------------------------------------------------------------------------


def cell_size(n: int) -> int:
    """Pixels per cell: fixed up to FIXED_CELL_TOKENS, then shrinking so the chart fits FIT_PX."""
    return CELL_PX if n <= FIXED_CELL_TOKENS else max(3, min(CELL_PX, FIT_PX // n))


def show_values(n_rows: int, n_cols: int) -> bool:
    """Values are printed inside the cells only while the cells are large enough to read them."""
    return max(n_rows, n_cols) <= MAX_TEXT_TOKENS


def stretched_domain(values) -> Domain:
    """The colour range of weights stretched to the finite values shown; 0..1 when they are all equal."""
    finite = np.asarray(values, dtype=float)
    finite = finite[np.isfinite(finite)]
    if finite.size == 0 or finite.max() - finite.min() < 1e-12:
        return FIXED_WEIGHTS
    return float(finite.min()), float(finite.max())


def range_text(domain: Domain) -> str:
    """'0.10–0.25' (2 decimals, or the full format when 2 decimals cannot tell the ends apart)."""
    low, high = (f"{v:.2f}" for v in domain)
    if low == high:
        low, high = (format_number(v) for v in domain)
    return f"{low}–{high}"


def weights_legend(domain: Domain) -> str:
    """'weight (fixed 0–1)' or 'weight (scale 0.10–0.25)': a caption naming the colour range of weights."""
    if tuple(domain) == FIXED_WEIGHTS:
        return _("weight (fixed 0–1)")
    return _("weight (scale {range})", range=range_text(domain))


def colour_title(kind: Kind, domain: Domain | None = None) -> str:
    """The legend title of a heatmap; numbers stay out of it (the legend's labels show the range), so a new
    matrix keeps the same spec and only its data change."""
    if kind == "weights":
        return _("weight (fixed 0–1)") if domain is None or tuple(domain) == FIXED_WEIGHTS else _("weight (stretched)")
    titles = {"scores": N_("score"), "mask": N_("mask"), "entropy": N_("entropy (nats)")}
    return _(titles.get(kind, N_("value")))


def _extent(values: pd.Series) -> float:
    finite = values.replace([np.inf, -np.inf], np.nan).abs()
    return float(finite.max()) if finite.notna().any() and finite.max() > 0 else 1.0


def colour_range(kind: Kind, values: pd.Series, domain: Domain | None) -> Domain:
    """The colour range: weights take ``domain`` (fixed 0..1 when None), scores and values a range
    symmetric around 0 (``domain`` or ± the largest magnitude), so 0 sits in the middle."""
    if kind == "weights":
        return tuple(domain) if domain else FIXED_WEIGHTS
    if kind == "entropy":  # sequential from 0: the page passes (0, ln T)
        return tuple(domain) if domain else (0.0, _extent(values))
    if domain:
        extent = max(abs(v) for v in domain)
        return -extent, extent
    extent = _extent(values)
    return -extent, extent


def ink(kind: Kind, cells: pd.DataFrame, low: float, high: float) -> np.ndarray:
    """Each cell's text colour: light on dark cells, dark on light cells (relative to the colour range)."""
    if kind == "mask":
        return np.where(cells["value"] > 0, "white", "black")
    value = cells["value"].to_numpy(dtype=float)
    weights_dark = value < low + 0.55 * (high - low)  # viridis is dark at its low end
    dark = weights_dark if kind in ("weights", "entropy") else np.abs(value) > 0.6 * max(abs(low), abs(high))
    return np.where(np.isnan(value), NEUTRAL, np.where(dark, "white", "black"))  # a blocked cell: grey reads on both


def _ink_colour() -> alt.Fill:
    """The cell text's colour: the data's ink column (see ``ink``) is the colour itself, so no scale and no
    condition (the browser evaluates a condition per cell, in Streamlit's slow expression interpreter). A fill,
    not a color: the layers share the color scale, and the cells' scale is a colour scheme."""
    return alt.Fill("ink:N", scale=None)


def in_order(order: Sequence[str]) -> dict:
    """An axis's tokens in this order, as a fixed scale domain.

    Not ``sort=[...]``: for a sort array Vega-Lite adds a field computed per datum as a chain of one comparison
    per token (``datum.col === "a" ? 0 : datum.col === "b" ? 1 : ...``), which the browser evaluates for every
    cell in Streamlit's expression interpreter (about 65,000 comparisons at 32 tokens). A domain costs nothing
    per datum and gives the same order."""
    return {"sort": None, "scale": alt.Scale(domain=list(order))}


def heatmap_layout(n_rows: int, n_cols: int, compact: bool = False, panel_px: int = 230) -> tuple[int, bool]:
    """Pixels per cell and whether the values are printed inside the cells."""
    n = max(n_rows, n_cols, 1)
    size = max(3, min(CELL_PX, panel_px // n)) if compact else cell_size(n)
    return size, show_values(n_rows, n_cols) and size >= 30


def axis_labels_shown(n_rows: int, n_cols: int, compact: bool = False) -> bool:
    """Whether the axes name the tokens (a panel of a grid only while its cells are large enough)."""
    return max(n_rows, n_cols, 1) <= (MAX_TEXT_TOKENS if compact else MAX_CHART_TOKENS // 2)


def heatmap_look(n_rows: int, n_cols: int, compact: bool = False, panel_px: int = 230) -> tuple:
    """What of a heatmap's spec its size decides, besides its width, height and labels: whether the cells print
    their values and in which font size, whether cells and outline are drawn thin, and whether the axes are
    labelled. Heatmaps of the same look and options differ only in those (ui.drawing builds one spec per look)."""
    size, with_text = heatmap_layout(n_rows, n_cols, compact, panel_px)
    return with_text, _font(size) if with_text else None, size > 6, axis_labels_shown(n_rows, n_cols, compact)


def heatmap_cells(
    data: pd.DataFrame,
    row_order: Sequence[str],
    col_order: Sequence[str],
    *,
    kind: Kind = "weights",
    domain: Domain | None = None,
    compact: bool = False,
    panel_px: int = 230,
) -> pd.DataFrame:
    """What a heatmap draws, one row per cell: row, col, value, the exact value for the tooltip, the cell
    text, its ink and the colour range (low, high). The query's outline is a dataset of its own
    (``outline_rows``).

    Everything that depends on the numbers is here, in the data, so the chart's spec (``heatmap``)
    depends only on the labels and the options: a new matrix only swaps the data, and the browser redraws
    without rebuilding the chart. Another query leaves these cells as they were.
    """
    _size, with_text = heatmap_layout(len(row_order), len(col_order), compact, panel_px)
    cells = cell_labels(data, kind=kind, with_text=with_text)
    low, high = colour_range(kind, cells["value"], domain)
    if kind == "mask":
        cells["allowed"] = np.where(cells["value"] > 0, *mask_words())
    cells["value"] = cells["value"].replace([np.inf, -np.inf], np.nan)  # -inf cells drawn empty, labelled
    if kind != "mask":
        cells["value"] = cells["value"].clip(low, high)  # colours saturate past the range (texts stay exact)
    if with_text:
        cells["ink"] = ink(kind, cells, low, high)
    cells["low"], cells["high"] = low, high
    return cells


def mask_words() -> tuple[str, str]:
    """What a mask's cell says in the legend and the data: ('may attend', 'blocked'), in the learner's language."""
    return _("may attend"), _("blocked")


def heatmap_name(title: str, n_rows: int, n_cols: int, row_title: str = N_("query"), col_title: str = N_("key")) -> str:
    """A heatmap's accessible name: 'Attention weights: heatmap of 6 query rows × 6 key columns'."""
    return _(
        "{title}: heatmap of {n_rows} {row_title} rows × {n_cols} {col_title} columns",
        title=title or _("Heatmap"),
        n_rows=n_rows,
        row_title=_(row_title),
        n_cols=n_cols,
        col_title=_(col_title),
    )


def cell_name(row: object, col: object, between: str = " → ") -> str:
    """One cell as a screen reader hears it: '“cat” → “sat”' (the row's token, then the column's)."""
    return f"“{row}”{between}“{col}”"


def heatmap_summary(data: pd.DataFrame, kind: Kind = "weights", between: str = " → ") -> str:
    """What a heatmap's cells say in one sentence, for a screen reader after the chart's name: the largest and the
    smallest cell of ``data`` (columns row, col, value: the numbers the chart draws, before the colours saturate),
    'Largest: “cat” → “sat” 0.4100; smallest: “the” → “mat” 0.0200.'; masked (−∞) cells are counted apart, and a
    mask says how many cells may attend."""
    values = data["value"].to_numpy(dtype=float)
    if kind == "mask":
        allowed = int((values > 0).sum())
        return _(
            "{allowed} of {total} cells may attend, {blocked} blocked.",
            allowed=allowed,
            total=values.size,
            blocked=values.size - allowed,
        )
    finite = np.isfinite(values)
    parts = []
    if finite.any():
        top = int(np.flatnonzero(finite)[np.argmax(values[finite])])
        low = int(np.flatnonzero(finite)[np.argmin(values[finite])])
        rows, cols = data["row"].to_numpy(), data["col"].to_numpy()
        parts.append(
            _(
                "Largest: {largest} {largest_value}; smallest: {smallest} {smallest_value}.",
                largest=cell_name(rows[top], cols[top], between),
                largest_value=format_number(values[top]),
                smallest=cell_name(rows[low], cols[low], between),
                smallest_value=format_number(values[low]),
            )
        )
    masked = int(np.isneginf(values).sum())
    if masked:
        parts.append(_("{masked} of {total} cells masked (−∞).", masked=masked, total=values.size))
    return " ".join(parts) if parts else _("No finite values.")


def summary_rows(summary: str) -> pd.DataFrame:
    """``heatmap_summary`` as the heatmap's dataset ``SUMMARY_DATA``: one row, one column."""
    return pd.DataFrame({"summary": [summary]})


def outline_rows(highlight_row: str | None) -> pd.DataFrame:
    """The heatmap's outlined row (the query's label), or no row: the dataset ``OUTLINE_DATA``. Apart from
    the cells, so another query changes these few bytes and the browser redraws the outline alone."""
    return pd.DataFrame({"row": pd.Series([] if highlight_row is None else [highlight_row], dtype=object)})


def cell_labels(data: pd.DataFrame, *, kind: Kind, with_text: bool) -> pd.DataFrame:
    """The columns a heatmap draws: row, col, value, the exact value for the tooltip and the cell text.

    Only what the chart uses is kept (fewer bytes to the browser). A mask reads yes/no, not 1/0.
    """
    cells = data[["row", "col", "value"]].copy()
    if kind == "mask":
        allowed = cells["value"] > 0
        cells["exact"] = np.where(allowed, _("may attend (True)"), _("blocked (False)"))
        if with_text:
            cells["short"] = np.where(allowed, "✓", "✗")
        return cells
    cells["exact"] = [format_number(v) for v in cells["value"]]
    if with_text:
        cells["short"] = cells["exact"]  # one formatter for tables, tooltips and cell text
    return cells


def _font(size: int) -> int:
    return 10 if size >= 44 else 8


def _colour(kind: Kind, title: str, legend: bool) -> alt.Color:
    if kind == "mask":
        scale = alt.Scale(domain=list(mask_words()), range=list(MASK_COLOURS))
        return alt.Color("allowed:N", scale=scale, title=title, legend=alt.Undefined if legend else None)
    if kind in ("weights", "entropy"):
        scale = alt.Scale(scheme=SEQUENTIAL_SCHEME, clamp=True)
    else:
        scale = alt.Scale(scheme=DIVERGING_SCHEME, clamp=True)  # the range is symmetric: 0 sits in the middle
    return alt.Color("value:Q", scale=scale, title=legend_lines(title), legend=alt.Undefined if legend else None)


def legend_lines(title: str) -> list[str]:
    """A colour legend's title on lines: 'weight (stretched)' on two, so a heatmap in a half-width column keeps its
    legend title whole (a Chinese title's full-width bracket as well: '权重（拉伸）')."""
    if title.endswith("）") and "（" in title:
        return title.removesuffix("）").split("（")
    return title.removesuffix(")").split(" (")


def _colour_range_layer(data: pd.DataFrame, colour: alt.Color) -> alt.Chart:
    """An invisible rect at each end of the data's colour range (columns low and high), drawn below the
    cells (it covers the plot and must not catch the pointer); ``colour`` is the cells' colour encoding.

    The layers share one colour scale, whose domain spans every layer's values: with this layer it
    is exactly low..high (the cells lie inside it), and the spec holds no number.
    """
    return (
        alt.Chart(data)
        .transform_aggregate(low="min(low)", high="max(high)")
        .transform_fold(["low", "high"], as_=["end", "value"])
        .transform_filter(alt.expr.isValid(alt.datum.value))  # before the data arrive, no range
        .mark_rect(opacity=0, aria=False)
        .encode(color=colour)
    )


def _row_outline(row_order: Sequence[str], size: int) -> alt.Chart:
    """An outline across the whole heatmap around the row of the dataset ``OUTLINE_DATA``; none if it is empty.
    Not read out (aria off): the caption names the query."""
    return (
        alt.Chart(alt.NamedData(name=OUTLINE_DATA))
        .mark_rect(fillOpacity=0, stroke=HIGHLIGHT, strokeWidth=3 if size > 6 else 2, aria=False)
        .encode(y=alt.Y("row:N", **in_order(row_order)))
    )


def _summary_layer() -> alt.Chart:
    """The dataset ``SUMMARY_DATA`` as one invisible text mark that a screen reader reads first inside the chart
    (its aria-label is the summary): the spec holds no number, the summary travels with the data."""
    return alt.Chart(alt.NamedData(name=SUMMARY_DATA)).mark_text(opacity=0, text="").encode(description="summary:N")


# What a screen reader hears of each cell: '“cat” → “sat”: 0.4100' (the cell's exact text, not the colour's
# saturated value). Vega-Lite would otherwise read every encoding of the cell, the raw float among them.
CELL_DESCRIPTION = "'“' + datum.row + '” → “' + datum.col + '”: ' + datum.exact"


CELL_SELECTION = "cell"  # the Vega-Lite selection parameter of a clickable heatmap


def _cell_selection() -> alt.Parameter:
    """The click that selects one cell (a double click clears it)."""
    return alt.selection_point(name=CELL_SELECTION, fields=["row", "col"], on="click", clear="dblclick", toggle=False)


def _selected_cell_outline(base: alt.Chart) -> alt.Chart:
    """An outline around the selected cell (none while nothing is selected): one rect, on top of the cells."""
    return base.mark_rect(fill="transparent", stroke=HIGHLIGHT, strokeWidth=3, aria=False).transform_filter(
        {"param": CELL_SELECTION, "empty": False}
    )


def heatmap(
    cells: pd.DataFrame,
    row_order: Sequence[str],
    col_order: Sequence[str],
    *,
    kind: Kind = "weights",
    title: str = "",
    row_title: str = "query",
    col_title: str = "key",
    colour_title: str = "weight (fixed 0–1)",
    compact: bool = False,
    panel_px: int = 230,
    selectable: bool = False,
) -> alt.LayerChart:
    """The heatmap of ``heatmap_cells``: its spec depends on the labels and options, never on the numbers.

    Layers: the colour range (invisible), the coloured cells, their text (while it fits), the
    query row's outline, and with ``selectable`` a clickable layer.
    """
    n_rows, n_cols = len(row_order), len(col_order)
    size, with_text = heatmap_layout(n_rows, n_cols, compact, panel_px)
    axis_labels = axis_labels_shown(n_rows, n_cols, compact)
    label_limits = (60, 70) if compact else (120, 140)
    base = alt.Chart(cells, title=title).encode(
        x=alt.X(
            "col:N",
            **in_order(col_order),
            title=None if compact else col_title,
            axis=alt.Axis(
                labelAngle=-45,
                orient="top",
                labels=axis_labels,
                labelLimit=label_limits[0],
                labelOverlap=False,
                ticks=not compact,
            ),
        ),
        y=alt.Y(
            "row:N",
            **in_order(row_order),
            title=None if compact else row_title,
            axis=alt.Axis(labels=axis_labels, labelLimit=label_limits[1], labelOverlap=False, ticks=not compact),
        ),
    )
    tooltip = [
        alt.Tooltip("row:N", title=row_title),
        alt.Tooltip("col:N", title=col_title),
        alt.Tooltip("exact:N", title=_("value")),
    ]
    colour = _colour(kind, colour_title, legend=not compact)
    # The cells themselves take the click: a clickable heatmap draws each cell once, not once more as a
    # transparent layer on top (1,024 rects fewer at 32 tokens); the selected cell's outline is one rect.
    pointer = {"cursor": "pointer"} if selectable else {}  # a hand where a click explains the cell
    described = {"description": alt.expr(CELL_DESCRIPTION)}
    cell_marks = base.mark_rect(stroke="white", strokeWidth=0.5 if size > 6 else 0, **pointer, **described)
    cell_layer = cell_marks.encode(color=colour, tooltip=tooltip)
    if selectable:
        cell_layer = cell_layer.add_params(_cell_selection())
    chart = _summary_layer()  # first: a screen reader reads it before the cells
    if kind != "mask":
        chart = chart + _colour_range_layer(cells, colour)
    chart = chart + cell_layer
    if with_text:
        font = _font(size)
        long_text = alt.expr.length(alt.datum.short) > 7  # '3.2100e-07' gets a smaller font to stay in its cell
        text = base.mark_text(aria=False).encode(  # the cells read their own value
            tooltip=tooltip,
            text="short:N",
            fill=_ink_colour(),
            size=alt.when(long_text).then(alt.value(font - 2)).otherwise(alt.value(font)),
        )
        chart = chart + text
    chart = chart + _row_outline(row_order, size)
    if selectable:
        chart = chart + _selected_cell_outline(base)
    # "pad" keeps the cells at their size: Streamlit would otherwise squeeze axes and legend into it
    properties = {
        "width": size * n_cols,
        "height": size * n_rows,
        "autosize": alt.AutoSizeParams(type="pad", contains="padding" if compact else "content"),
    }
    if compact:
        properties["description"] = (
            _("Attention weights of {title}", title=title) if title else _("Attention weights of one head")
        )
    return chart.properties(**properties)


def head_grid(num_heads: int, width_px: int = 760, per_row: int = 4) -> tuple[list[list[int]], int]:
    """Rows of head indices (at most per_row each) and the panel size that fits width_px with axis labels."""
    columns = min(num_heads, per_row)
    rows = [list(range(start, min(start + columns, num_heads))) for start in range(0, num_heads, columns)]
    return rows, max(60, width_px // columns - 80)


def _lookup_table(anchors: np.ndarray, levels: int = 256) -> np.ndarray:
    """``levels`` colours evenly spaced along the anchor colours: (levels, 3) uint8."""
    positions = np.linspace(0.0, 1.0, len(anchors))
    t = np.linspace(0.0, 1.0, levels)
    return np.stack([np.interp(t, positions, anchors[:, c]) for c in range(3)], axis=-1).round().astype(np.uint8)


_MASK_ANCHORS = np.array([[233, 236, 239], [59, 91, 219]], dtype=float)


def raster_pixels(n: int) -> int:
    """Pixels per cell of a raster heatmap: about 1,024 pixels across, at least 1 per cell."""
    return max(1, 1024 // max(n, 1))


def raster(
    values: np.ndarray, *, kind: Kind = "weights", pixels: int | None = None, domain: Domain | None = None
) -> np.ndarray:
    """A large matrix as an RGB image (rows, cols, 3), same colour scales as ``heatmap``; NaN/-inf grey."""
    values = np.asarray(values, dtype=float)
    bad = ~np.isfinite(values)
    if kind in ("weights", "mask"):
        low, high = domain if kind == "weights" and domain else FIXED_WEIGHTS
        t = np.clip((np.nan_to_num(values, nan=low, posinf=high, neginf=low) - low) / (high - low), 0.0, 1.0)
        lut = _lookup_table(_VIRIDIS if kind == "weights" else _MASK_ANCHORS)
    else:
        finite = np.abs(values[~bad])
        extent = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
        t = (np.clip(np.nan_to_num(values, nan=0.0, posinf=extent, neginf=-extent), -extent, extent) / extent + 1) / 2
        lut = _lookup_table(_BLUE_ORANGE)
    image = lut[np.rint(t * (len(lut) - 1)).astype(np.intp)]  # (rows, cols, 3)
    image[bad] = (160, 160, 160)
    scale = pixels or raster_pixels(max(values.shape))
    return image.repeat(scale, axis=0).repeat(scale, axis=1)


# --- bars -----------------------------------------------------------------------------------------


TITLE_LINE_CHARS = 32  # a longer title wraps onto lines, so a phone-wide chart shows all of it


def _title(text: str) -> alt.TitleParams:
    """A chart title that is never cut: no length limit, wrapped to short lines, left-aligned."""
    lines = textwrap.wrap(text, TITLE_LINE_CHARS) or [""]
    return alt.TitleParams(lines if len(lines) > 1 else text, limit=0, anchor="start", frame="bounds")


def bars(
    data: pd.DataFrame,
    *,
    x: str,
    y: str,
    order: Sequence[str] | None = None,
    title: str = "",
    color: str | None = None,
    y_title: str | None = None,
) -> alt.Chart:
    """Simple bars of y per x category, in the given order (tokens keep sentence order)."""
    encoding = {
        "x": alt.X(
            f"{x}:N",
            **(in_order(order) if order is not None else {"sort": None}),
            title=x,
            axis=alt.Axis(labelAngle=-45, labelLimit=120),
        ),
        "y": alt.Y(f"{y}:Q", title=y_title or y, axis=alt.Axis(titleLimit=240)),
        "tooltip": [f"{x}:N", alt.Tooltip(f"{y}:Q", format=".4f")],
    }
    if color:
        encoding["color"] = alt.Color(f"{color}:N", title=color)
        encoding["xOffset"] = alt.XOffset(f"{color}:N")
    return (
        alt.Chart(data, title=_title(title))
        .mark_bar()
        .encode(**encoding)
        .properties(height=260, description=title, padding={"top": 8, "left": 8, "right": 16, "bottom": 8})
    )


def stacked_contributions(data: pd.DataFrame, token_order: Sequence[str], *, title: str = "") -> alt.Chart:
    """Stacked bars: per dimension, each token's weight x value; the bar total is the context vector."""
    return (
        alt.Chart(data, title=title)
        .mark_bar()
        .encode(
            x=alt.X("dimension:N", title=_("dimension"), sort=None),
            y=alt.Y("contribution:Q", title=_("weight × value"), stack="zero"),
            color=alt.Color("token:N", scale=alt.Scale(domain=list(token_order), scheme="tableau10"), title=_("token")),
            order=alt.Order("token_pos:Q"),
            tooltip=[
                alt.Tooltip("token:N", title=_("token")),
                alt.Tooltip("dimension:N", title=_("dimension")),
                alt.Tooltip("weight:Q", title=_("weight"), format=".4f"),
                alt.Tooltip("value:Q", title=_("value"), format=".4f"),
                alt.Tooltip("contribution:Q", title=_("contribution"), format=".4f"),
            ],
        )
        .properties(height=280, description=title or _("Stacked contributions to a context vector"))
    )


def contributions_with_totals(
    data: pd.DataFrame, totals: pd.DataFrame, token_order: Sequence[str], *, title: str = ""
) -> alt.LayerChart:
    """stacked_contributions plus a tick and label at each dimension's total (the context vector).

    ``totals`` has columns dimension, total. Negative parts stack below zero, so the tick (the signed
    sum) is what to read as the context value, not the top of the bar.
    """
    stacked = stacked_contributions(data, token_order, title=title)
    base = alt.Chart(totals).encode(x=alt.X("dimension:N", sort=None), y=alt.Y("total:Q"))
    ticks = base.mark_tick(color=NEUTRAL, thickness=4, size=64).encode(
        tooltip=[
            alt.Tooltip("dimension:N", title=_("dimension")),
            alt.Tooltip("total:Q", title=_("context value"), format=".4f"),
        ]
    )
    labels = base.mark_text(dx=36, align="left", fontSize=12, fontWeight="bold", color=NEUTRAL).encode(
        text=alt.Text("total:Q", format=".4f")
    )
    return (stacked + ticks + labels).properties(height=300)


# --- lines ----------------------------------------------------------------------------------------


def lines(
    data: pd.DataFrame,
    *,
    x: str,
    y: str,
    color: str | None = None,
    title: str = "",
    x_title: str | None = None,
    y_title: str | None = None,
    log_y: bool = False,
) -> alt.Chart:
    """Line chart with points: y against a numeric x, one line per colour group."""
    encoding = {
        "x": alt.X(f"{x}:Q", title=x_title or x),
        "y": alt.Y(f"{y}:Q", title=y_title or y, scale=alt.Scale(type="log") if log_y else alt.Undefined),
        "tooltip": [alt.Tooltip(f"{x}:Q"), alt.Tooltip(f"{y}:Q", format=".4f")],
    }
    if color:
        encoding["color"] = alt.Color(f"{color}:N", title=color)
        encoding["tooltip"].append(f"{color}:N")
    return (
        alt.Chart(data, title=title).mark_line(point=True).encode(**encoding).properties(height=280, description=title)
    )


SERIES_COLOURS = ("#e45756", "#4c78a8")  # first series red-ish, second blue (colour-blind distinguishable)


def log_x_lines(
    data: pd.DataFrame,
    *,
    x: str,
    y: str,
    color: str = "series",
    title: str = "",
    x_title: str | None = None,
    y_title: str | None = None,
    log_y: bool = False,
    marker: float | None = None,
    marker_label: str = "",
    series_order: Sequence[str] | None = None,
    legend: bool = True,
    width: int = 460,
) -> alt.Chart | alt.LayerChart:
    """Lines with points over a log2 x axis (d_k = 1, 2, 4, ...), one line per series, optional x marker rule."""
    order = list(series_order) if series_order is not None else sorted(data[color].unique())
    colours = list(SERIES_COLOURS)[: len(order)] if len(order) <= 2 else alt.Undefined
    colour_scale = alt.Scale(domain=order, range=colours)
    encoding = {
        "x": alt.X(f"{x}:Q", title=x_title or x, scale=alt.Scale(type="log", base=2), axis=alt.Axis(format="d")),
        "y": alt.Y(f"{y}:Q", title=y_title or y, scale=alt.Scale(type="log") if log_y else alt.Undefined),
        "color": alt.Color(
            f"{color}:N",
            title=None,
            scale=colour_scale,
            # below the plot, never over the data; autosize "pad" grows the chart instead of squeezing the plot
            legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=400) if legend else None,
        ),
        "tooltip": [
            alt.Tooltip(f"{x}:Q", title=x_title or x),
            alt.Tooltip(f"{y}:Q", format=".4f", title=y_title or y),
            alt.Tooltip(f"{color}:N", title=color),
        ],
    }
    chart = alt.Chart(data).mark_line(point=True).encode(**encoding)
    if marker is not None:
        rule_data = pd.DataFrame({x: [marker], "label": [marker_label or f"{x} = {marker:g}"]})
        rule = alt.Chart(rule_data).mark_rule(strokeDash=[4, 3], color="grey").encode(x=f"{x}:Q")
        text = (
            alt.Chart(rule_data)
            .mark_text(align="left", dx=4, dy=2, color="grey", baseline="top")
            .encode(x=f"{x}:Q", y=alt.value(0), text="label:N")
        )
        chart = chart + rule + text
    return chart.properties(
        title=title,
        height=240,
        width=width,
        description=title,
        autosize=alt.AutoSizeParams(type="pad", contains="padding"),
    )


# --- scatter --------------------------------------------------------------------------------------

# A point closer than this share of the plot's extent to a labelled point is named in its tooltip only.
LABEL_GAP = 0.06
# The label layout's model of the plot: the drawing area (px; the page is at least this wide), the text size
# and the marker radius. A label is placed where its box covers no marker and no other label.
SCATTER_PX = (440.0, 380.0)
LABEL_FONT = 11
CHAR_PX = 0.62 * LABEL_FONT  # the width of an average character of the sans-serif font
POINT_RADIUS_PX = 6.0
LABEL_OFFSET_PX = 7.0
SCATTER_PAD = 0.1  # the domain reaches this share of the data's extent beyond it on every side


def scatter_domain(values: pd.Series) -> list[float]:
    """[low, high] of an axis: the data's range padded by SCATTER_PAD on each side (never empty)."""
    low, high = float(values.min()), float(values.max())
    pad = max(high - low, 1e-9) * SCATTER_PAD
    return [low - pad, high + pad]


def label_box(px: float, py: float, text: str) -> tuple[float, float, float, float]:
    """(left, top, right, bottom) in px of a left-aligned, vertically centred label anchored at (px, py)."""
    return px, py - LABEL_FONT / 2 - 1, px + CHAR_PX * len(text), py + LABEL_FONT / 2 + 1


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def spaced_labels(data: pd.DataFrame) -> pd.DataFrame:
    """The labels that fit: for each point (inputs first) the first of right, left, above or below whose box
    covers no marker and no label already placed; a point with no free place is named in its tooltip only.
    Columns label, kind, x, y (the point) and lx, ly (the label's left-centre anchor, in data units)."""
    width, height = SCATTER_PX
    (x0, x1), (y0, y1) = scatter_domain(data["x"]), scatter_domain(data["y"])
    to_px = [
        ((x - x0) / (x1 - x0) * width, (1 - (y - y0) / (y1 - y0)) * height)
        for x, y in zip(data["x"], data["y"], strict=True)
    ]
    r = POINT_RADIUS_PX
    boxes = [(px - r, py - r, px + r, py + r) for px, py in to_px]  # every marker
    rows = []
    order = sorted(range(len(data)), key=lambda i: data["kind"].iloc[i] != "input")
    for i in order:
        text = str(data["label"].iloc[i])
        px, py = to_px[i]
        length, gap = CHAR_PX * len(text), LABEL_OFFSET_PX
        for ax, ay in (
            (px + gap, py),
            (px - gap - length, py),
            (px - length / 2, py - gap - 6),
            (px - length / 2, py + gap + 6),
        ):
            box = label_box(ax, ay, text)
            inside = box[0] >= 0 and box[2] <= width and box[1] >= 0 and box[3] <= height
            if inside and not any(_overlap(box, other) for other in boxes):
                boxes.append(box)
                rows.append(
                    {
                        **data.iloc[i][["label", "kind", "x", "y"]].to_dict(),
                        "lx": x0 + ax / width * (x1 - x0),
                        "ly": y0 + (1 - ay / height) * (y1 - y0),
                    }
                )
                break
    return pd.DataFrame(rows, columns=["label", "kind", "x", "y", "lx", "ly"])


def scatter_2d(
    data: pd.DataFrame, *, title: str = "", x_title: str = N_("dim 1"), y_title: str = N_("dim 2")
) -> alt.LayerChart:
    """Points with columns x, y, label, kind ('input' / 'context'); arrows drawn as rules from input to context.

    Each label sits beside its point where it covers no other point or label; one with no free place is
    left out (the point's tooltip still names it).
    """
    x_scale = alt.Scale(domain=scatter_domain(data["x"]), zero=False, nice=False)
    y_scale = alt.Scale(domain=scatter_domain(data["y"]), zero=False, nice=False)
    x_title, y_title = _(x_title), _(y_title)
    tooltip = [
        alt.Tooltip("label:N", title=_("label")),
        alt.Tooltip("kind:N", title=_("vector")),
        alt.Tooltip("x:Q", title=x_title, format=".4f"),
        alt.Tooltip("y:Q", title=y_title, format=".4f"),
    ]
    encoding = {"x": alt.X("x:Q", title=x_title, scale=x_scale), "y": alt.Y("y:Q", title=y_title, scale=y_scale)}
    # the data say 'input' / 'context' (the arrows pair them); the legend says it in the learner's language
    shown_kind = f"datum.label == 'input' ? {_('input')!r} : datum.label == 'context' ? {_('context')!r} : datum.label"
    kinds = alt.Legend(labelExpr=shown_kind)
    shapes = alt.Shape("kind:N", legend=kinds)
    points = (
        alt.Chart(data)
        .mark_point(filled=True, size=90)
        .encode(**encoding, tooltip=tooltip, color=alt.Color("kind:N", title=_("vector"), legend=kinds), shape=shapes)
    )
    labels = (
        alt.Chart(spaced_labels(data))
        .mark_text(align="left", baseline="middle", fontSize=LABEL_FONT, color=NEUTRAL)
        .encode(x=alt.X("lx:Q", scale=x_scale), y=alt.Y("ly:Q", scale=y_scale), text="label:N", tooltip=tooltip)
    )
    inputs = data[data["kind"] == "input"][["label", "x", "y"]]
    contexts = data[data["kind"] == "context"][["label", "x", "y"]].rename(columns={"x": "x2", "y": "y2"})
    pairs = inputs.merge(contexts, on="label")
    arrows = (
        alt.Chart(pairs)
        .mark_rule(strokeDash=[4, 3], color=NEUTRAL)
        .encode(x=alt.X("x:Q", scale=x_scale), y=alt.Y("y:Q", scale=y_scale), x2="x2:Q", y2="y2:Q")
    )
    return (arrows + points + labels).properties(title=title, height=SCATTER_PX[1], description=title)


# --- line view ------------------------------------------------------------------------------------

MAX_LINE_TOKENS = 64  # above this, the line view draws only the focus query's lines (T² lines is too many)


def _token_column(
    tokens: pd.DataFrame, field: str, x: float, hover, font: int, x_scale, y_scale, tooltip: str
) -> alt.Chart:
    """One column of token labels of the line view (queries at x = 0, keys at x = 1) that reacts to hover."""
    left_side = x == 0.0
    return (
        alt.Chart(tokens)
        .mark_text(align="right" if left_side else "left", dx=-8 if left_side else 8, fontSize=font, cursor="pointer")
        .encode(
            x=alt.datum(x, scale=x_scale),
            y=alt.Y("pos:Q", scale=y_scale, axis=None),
            text=f"{field}:N",
            size=alt.when(hover, empty=False).then(alt.value(font + 3)).otherwise(alt.value(font)),
            color=alt.when(hover, empty=False).then(alt.value(HIGHLIGHT)).otherwise(alt.value(NEUTRAL)),
            tooltip=[alt.Tooltip(f"{field}:N", title=tooltip)],
        )
        .add_params(hover)
    )


def line_view_pairs(data: pd.DataFrame, focus: str | None = None) -> pd.DataFrame:
    """The line view's rules: one per (query, key) of the long frame (only ``focus``'s row if given)."""
    pairs = (data if focus is None else data[data["row"] == focus]).assign(x0=0.0, x1=1.0)
    return pairs.assign(exact=[format_number(v) for v in pairs["value"]])


def line_view(
    data: pd.DataFrame, tokens: Sequence[str], *, title: str = "", focus: str | None = None
) -> alt.LayerChart:
    """'Who attends to whom' as BertViz draws it: queries left, keys right, line opacity and width = weight.

    ``data`` is the long frame of a (T, T) weight matrix (row = query, col = key, row_pos,
    col_pos, value). Hovering a query token (left) keeps only its lines bright; hovering a
    key token (right) keeps only the lines into it. ``focus`` (a query label) draws that
    query's lines only, for long sentences.
    """
    T = len(tokens)
    hover_query = alt.selection_point(fields=["row"], on="pointerover", clear="pointerout", empty=True, nearest=False)
    hover_key = alt.selection_point(fields=["col"], on="pointerover", clear="pointerout", empty=True, nearest=False)
    pairs = line_view_pairs(data, focus)
    x_scale = alt.Scale(domain=[-0.45, 1.45])
    y_scale = alt.Scale(domain=[T - 0.5, -0.5])
    bright = hover_query & hover_key
    weight_tooltip = [
        alt.Tooltip("row:N", title=_("query")),
        alt.Tooltip("col:N", title=_("key")),
        alt.Tooltip("exact:N", title=_("weight")),
    ]
    lines = alt.Chart(pairs).encode(  # one rule per (query, key): from the query's row to the key's row
        x=alt.X("x0:Q", axis=None, scale=x_scale),
        x2="x1:Q",
        y=alt.Y("row_pos:Q", axis=None, scale=y_scale),
        y2="col_pos:Q",
        strokeWidth=alt.StrokeWidth("value:Q", legend=None, scale=alt.Scale(domain=[0, 1], range=[1, 5])),
        tooltip=weight_tooltip,
    )
    links = lines.mark_rule(color="#3b5bdb", strokeCap="round").encode(
        opacity=alt.when(bright)
        .then(alt.Opacity("value:Q", legend=None, scale=alt.Scale(domain=[0, 1], range=[0.04, 1])))
        .otherwise(alt.value(0.02)),
    )

    def highlight(selection: alt.Parameter) -> alt.Chart:
        """The hovered token's lines again in orange, opacity by weight from 0.15 (readable when weights are flat);
        not read out (aria off): they repeat lines already read, and empty, Vega names their group nothing."""
        return (
            lines.transform_filter({"param": selection.name, "empty": False})
            .mark_rule(color=HIGHLIGHT, strokeCap="round", aria=False)
            .encode(opacity=alt.Opacity("value:Q", legend=None, scale=alt.Scale(domain=[0, 1], range=[0.15, 1])))
        )

    queries = pd.DataFrame({"row": list(tokens), "pos": range(T)})
    keys = pd.DataFrame({"col": list(tokens), "pos": range(T)})
    font = 12 if T <= 32 else 9
    left = _token_column(queries, "row", 0.0, hover_query, font, x_scale, y_scale, _("query (hover: its lines)"))
    right = _token_column(keys, "col", 1.0, hover_key, font, x_scale, y_scale, _("key (hover: lines into it)"))
    height = max(200, min(36, 900 // max(T, 1)) * T)
    layers = alt.layer(links, highlight(hover_query), highlight(hover_key), left, right)
    return layers.resolve_scale(opacity="independent").properties(
        title=title, width=460, height=height, description=title or _("Line view of attention weights")
    )


# --- training and generation ---


def log_log_lines(
    data: pd.DataFrame, *, x: str, y: str, color: str, title: str = "", x_title: str = "", y_title: str = ""
) -> alt.Chart:
    """Lines with points over log x and log y axes (growth like T² is a straight line of slope 2)."""
    return (
        alt.Chart(data, title=title)
        .mark_line(point=True)
        .encode(
            x=alt.X(f"{x}:Q", title=x_title or x, scale=alt.Scale(type="log", base=2), axis=alt.Axis(format="d")),
            y=alt.Y(f"{y}:Q", title=y_title or y, scale=alt.Scale(type="log")),
            # below the plot, no fill: no line runs through it, and the theme colours it (a white box read white
            # on white in the dark theme)
            color=alt.Color(f"{color}:N", title=None, legend=alt.Legend(orient="bottom", direction="vertical")),
            tooltip=[alt.Tooltip(f"{x}:Q", title=x_title or x), alt.Tooltip(f"{y}:Q", format=".3e"), f"{color}:N"],
        )
        .properties(height=220, description=title, autosize=alt.AutoSizeParams(type="fit-x", contains="padding"))
    )


def online_blocks(data: pd.DataFrame, *, title: str = "") -> alt.Chart:
    """One row's scores as bars coloured by block (columns key, score, block), -inf keys left empty."""
    return (
        alt.Chart(data, title=title)
        .mark_bar()
        .encode(
            x=alt.X("key:N", **in_order(data["key"]), title=_("key"), axis=alt.Axis(labelAngle=0, labelLimit=80)),
            y=alt.Y("score:Q", title=_("score")),
            color=alt.Color("block:N", title=_("block")),
            tooltip=[
                alt.Tooltip("key:N", title=_("key")),
                alt.Tooltip("score:Q", title=_("score"), format=".4f"),
                alt.Tooltip("block:N", title=_("block")),
            ],
        )
        .properties(height=240, description=title)
    )


# --- trained model ---
GRID_PANEL_PX = 52  # one head's panel in the all-heads grid: 12 heads fit the page's main column (about 740 px)
GRID_GAP_PX = 6
GRID_LABEL_PX = 16  # room above each panel for the head's label


def head_grid_layout(num_layers: int, num_heads: int) -> tuple[int, int]:
    """Width and height in pixels of the layers x heads grid, with the layer/head captions."""
    width = 56 + num_heads * (GRID_PANEL_PX + GRID_GAP_PX)
    height = 22 + num_layers * (GRID_PANEL_PX + GRID_LABEL_PX + GRID_GAP_PX)
    return width, height


def _panel_origin(layer, head):
    """Top-left pixel of each (1-based) layer/head panel: of Series of numbers, or of Vega expressions
    (``alt.datum.layer``), for the browser to compute; the one place this pixel math is written."""
    x = 56 + (head - 1) * (GRID_PANEL_PX + GRID_GAP_PX)
    y = 22 + (layer - 1) * (GRID_PANEL_PX + GRID_LABEL_PX + GRID_GAP_PX) + GRID_LABEL_PX
    return x, y


def all_heads_grid(cells: pd.DataFrame, labels: pd.DataFrame, T: int, *, pick: str = "head_pick") -> alt.LayerChart:
    """Every head of every layer as one small heatmap (one 0..1 scale), its label above it; click picks a head.

    ``cells``: layer, head (1-based), row_pos, col_pos, value for every head's (T, T) weights (the top-level
    data: only these five columns go to the browser; the pixel positions are computed there).
    ``labels``: layer, head, label. ``grid_highlight`` draws the frame of the chosen head on top.
    """
    width, height = head_grid_layout(int(labels["layer"].max()), int(labels["head"].max()))
    cell = GRID_PANEL_PX / T
    px, py = _panel_origin(labels["layer"], labels["head"])
    cell_x, cell_y = _panel_origin(alt.datum.layer, alt.datum.head)  # each cell's panel, computed in the browser
    panels = labels.assign(x=px, y=py, x2=px + GRID_PANEL_PX, y2=py + GRID_PANEL_PX, tx=px + GRID_PANEL_PX / 2)
    x_scale, y_scale = _grid_scales(width, height)
    x = alt.X("x:Q", axis=None, scale=x_scale)
    y = alt.Y("y:Q", axis=None, scale=y_scale)
    picked = alt.selection_point(name=pick, fields=["layer", "head"], on="click", clear=False)
    heat = (
        alt.Chart()
        .transform_calculate(x=cell_x + alt.datum.col_pos * cell, y=cell_y + alt.datum.row_pos * cell)
        .transform_calculate(x2=f"datum.x + {cell}", y2=f"datum.y + {cell}")
        .mark_rect()
        .encode(
            x=x,
            x2="x2:Q",
            y=y,
            y2="y2:Q",
            color=alt.Color("value:Q", scale=alt.Scale(scheme=SEQUENTIAL_SCHEME, domain=[0, 1]), legend=None),
            tooltip=[
                alt.Tooltip("layer:O", title=_("layer")),
                alt.Tooltip("head:O", title=_("head")),
                alt.Tooltip("value:Q", title=_("weight"), format=".4f"),
            ],
        )
    )
    frames = (
        alt.Chart(panels)
        .mark_rect(fillOpacity=0, strokeWidth=3, cursor="pointer")
        .encode(
            x=x,
            x2="x2:Q",
            y=y,
            y2="y2:Q",
            stroke=alt.value("transparent"),
            tooltip=[
                alt.Tooltip("layer:O", title=_("layer")),
                alt.Tooltip("head:O", title=_("head")),
                alt.Tooltip("label:N", title=_("label")),
            ],
        )
        .add_params(picked)
    )
    names = (
        alt.Chart(panels)
        .mark_text(fontSize=9, baseline="bottom", dy=-2, color=NEUTRAL)
        .encode(x=alt.X("tx:Q", axis=None, scale=x_scale), y=y, text="label:N")
    )
    heads = pd.DataFrame({"head": range(1, int(labels["head"].max()) + 1)})
    heads = heads.assign(
        tx=_panel_origin(heads["head"] * 0 + 1, heads["head"])[0] + GRID_PANEL_PX / 2,
        y=10.0,
        caption=[_("head {n}", n=n) for n in heads["head"]],
    )
    layers = pd.DataFrame({"layer": range(1, int(labels["layer"].max()) + 1)})
    layers = layers.assign(
        tx=24.0,
        y=_panel_origin(layers["layer"], layers["layer"] * 0 + 1)[1] + GRID_PANEL_PX / 2,
        caption=[_("layer {n}", n=n) for n in layers["layer"]],
    )

    def captions(frame: pd.DataFrame) -> alt.Chart:
        return (
            alt.Chart(frame)
            .mark_text(fontSize=11, fontWeight="bold", color=NEUTRAL)
            .encode(x=alt.X("tx:Q", axis=None, scale=x_scale), y=y, text="caption:N")
        )

    head_names, layer_names = captions(heads), captions(layers)
    return alt.layer(heat, frames, names, head_names, layer_names, data=cells).properties(
        width=width,
        height=height,
        description=_("Attention weights of all 72 heads: 6 layers (rows) by 12 heads (columns); click a head"),
    )


def _grid_scales(width: int, height: int) -> tuple[alt.Scale, alt.Scale]:
    """Pixel scales of the all-heads grid (y grows downwards)."""
    return (
        alt.Scale(domain=[0, width], nice=False, zero=False),
        alt.Scale(domain=[0, height], nice=False, zero=False, reverse=True),
    )


def grid_highlight_frame(layer: int, head: int) -> pd.DataFrame:
    """Where ``grid_highlight`` draws the frame around one head: one row x, y, x2, y2 in grid pixels."""
    x, y = _panel_origin(pd.Series([layer]), pd.Series([head]))
    return pd.DataFrame({"x": x, "y": y, "x2": x + GRID_PANEL_PX, "y2": y + GRID_PANEL_PX})


def grid_highlight(layer: int, head: int, num_layers: int = 6, num_heads: int = 12) -> alt.Chart:
    """An orange frame around one head of ``all_heads_grid`` (a layer of its own, so the grid's spec is reused)."""
    x_scale, y_scale = _grid_scales(*head_grid_layout(num_layers, num_heads))
    return (
        alt.Chart(grid_highlight_frame(layer, head))
        .mark_rect(fillOpacity=0, stroke=HIGHLIGHT, strokeWidth=3)
        .encode(
            x=alt.X("x:Q", axis=None, scale=x_scale),
            x2="x2:Q",
            y=alt.Y("y:Q", axis=None, scale=y_scale),
            y2="y2:Q",
        )
    )


def head_mosaic(attentions: np.ndarray, pixels: int = 2) -> np.ndarray:
    """Every head's (T, T) weights as one RGB image: layers down, heads across, a white gap between panels."""
    num_layers, num_heads, T, _T = attentions.shape
    tile = T * pixels
    gap = max(2, tile // 12)
    image = np.full((num_layers * (tile + gap) - gap, num_heads * (tile + gap) - gap, 3), 255, dtype=np.uint8)
    for layer in range(num_layers):
        for head in range(num_heads):
            top, left = layer * (tile + gap), head * (tile + gap)
            image[top : top + tile, left : left + tile] = raster(attentions[layer, head], pixels=pixels)
    return image


# --- specs as named datasets ----------------------------------------------------------------------------------


def split_data(spec: dict) -> tuple[dict, pd.DataFrame]:
    """The spec's top-level data as a DataFrame (sent as Arrow) and every smaller layer's data inlined."""
    datasets = spec.pop("datasets")
    # a compact panel has no top-level data: Altair names the cells' data (the first layer's) in every layer
    # (the first layer whose data is among the datasets: the summary's layer reads SUMMARY_DATA)
    main = (
        spec.pop("data")["name"]
        if "data" in spec
        else next(layer["data"]["name"] for layer in spec["layer"] if layer.get("data", {}).get("name") in datasets)
    )
    data = pd.DataFrame(datasets[main])
    for layer in spec.get("layer", []):
        name = layer.get("data", {}).get("name")
        if name == main:  # the cells: inherited from the top-level data
            del layer["data"]
        elif name in datasets:  # a small layer of its own: inline
            layer["data"] = {"values": datasets[name]}
        # any other name (charts.OUTLINE_DATA) is a dataset the caller sends with each chart
    return spec, data


def named_layer(chart: alt.Chart, name: str) -> dict:
    """A one-layer chart's spec to add to another's layers, reading the named dataset ``name`` (sent beside the
    spec) instead of its own data: the same layer for every value of that dataset."""
    spec = chart.to_dict(validate=False)
    spec.pop("datasets")
    for key in ("$schema", "config"):
        spec.pop(key, None)
    return {**spec, "data": {"name": name}}


def arrow_bytes(frame: pd.DataFrame) -> bytes:
    """A frame as the Arrow bytes Streamlit sends for a named dataset (converted once, not per rerun)."""
    return convert_anything_to_arrow_bytes(pa.Table.from_pandas(frame, preserve_index=False))
