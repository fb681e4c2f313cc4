"""Small Streamlit building blocks every page uses: tables, heatmaps, code, downloads.

Pages pass tensors and labels from attention_core; tables keep numbers and format each cell
with ui.format, and are drawn once per content (replayed from st.cache_data after that);
heatmaps and other Altair charts are built once per input (cached specs).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import threading
from collections.abc import Callable, Sequence

import altair as alt
import numpy as np
import pandas as pd
import pyarrow as pa
import streamlit as st
import torch
from streamlit.dataframe_util import convert_anything_to_arrow_bytes

from attention_core.tables import long_frame, to_frame
from ui import charts, lessons
from ui.format import HUGE, TINY, format_number


def plain_decimals(frame: pd.DataFrame) -> bool:
    """True when every cell reads at plain 4 decimals (finite, non-zero, not scientific): one column format fits."""
    values = frame.to_numpy(dtype=float)
    magnitude = np.abs(values)
    return bool(np.isfinite(values).all() and ((magnitude >= TINY) & (magnitude < HUGE)).all())


MAX_STYLED_CELLS = 64 * 64  # per-cell formatting (a pandas Styler) costs ~30 ms here; beyond, one format per column


def column_formats(frame: pd.DataFrame) -> list[str]:
    """printf format per column for very large tables: scientific where any cell needs it, else 4 decimals."""
    magnitude = np.abs(frame.to_numpy(dtype=float))
    scientific = (((magnitude > 0) & (magnitude < TINY)) | ((magnitude >= HUGE) & np.isfinite(magnitude))).any(axis=0)
    return ["%.4e" if column_is_scientific else "%.4f" for column_is_scientific in scientific]


def table(
    data: pd.DataFrame | torch.Tensor,
    rows: Sequence[str] | None = None,
    cols: Sequence[str] | None = None,
    *,
    alt: str | None = None,
) -> None:
    """A matrix (tensor with row and column labels, or a numeric DataFrame) as a table, one format per cell.

    The data stay numbers (sorting, copying and tests read numbers). Most tables of a page are the
    same from one rerun to the next, so each is drawn once per content: ``drawn_table`` is a
    st.cache_data function, and on a hit Streamlit replays the element it recorded instead of
    formatting and converting the table again (a 6 x 6 table with per-cell formats costs about
    9 ms to draw, its replay well under 1 ms).
    """
    drawn_table(key=table_key(data, rows, cols, alt), _data=data, _rows=rows, _cols=cols, _alt=alt)


def table_key(
    data: pd.DataFrame | torch.Tensor, rows: Sequence[str] | None, cols: Sequence[str] | None, alt: str | None
) -> str:
    """A digest of what a table shows: its numbers (with their types), its labels and its alt text.

    One short string, because st.cache_data hashes a tuple of labels item by item (about a
    millisecond per table here); arguments go by keyword, which spares it a signature lookup each.
    """
    if isinstance(data, pd.DataFrame):
        values = data.to_numpy(dtype=np.float64)
        labels = (tuple(data.index), tuple(data.columns), data.index.name, data.columns.name)
        described = ("frame", values.shape, tuple(map(str, data.dtypes)), labels, alt)
    else:
        values = data.detach().to(torch.float64).numpy()  # (rows, cols)
        described = ("matrix", values.shape, tuple(rows), tuple(cols), alt)
    digest = hashlib.blake2b(repr(described).encode(), digest_size=20)
    digest.update(np.ascontiguousarray(values).tobytes())
    return digest.hexdigest()


@st.cache_data(max_entries=512, show_spinner=False)
def drawn_table(
    *,
    key: str,
    _data: pd.DataFrame | torch.Tensor,
    _rows: Sequence[str] | None,
    _cols: Sequence[str] | None,
    _alt: str | None,
) -> None:
    """Draws the table ``key`` names (table_key of the underscored arguments, which are not hashed).

    When every cell reads at 4 decimals a column format draws them; otherwise a Styler formats each
    cell by itself (format_number: '0', '3.2100e-07', '1.0226e+36', '-∞' beside '0.2500').
    Beyond MAX_STYLED_CELLS (64 x 64) a Styler is too slow: each column gets one format instead.
    """
    frame = _data if isinstance(_data, pd.DataFrame) else to_frame(_data, _rows, _cols)
    longest_label = max((len(str(label)) for label in frame.index), default=0)
    config = {"_index": st.column_config.Column(width=min(260, 24 + 8 * longest_label))}  # labels not cut off
    height = "auto" if len(frame) <= 16 else 420
    if plain_decimals(frame) or frame.size > MAX_STYLED_CELLS:
        formats = column_formats(frame)
        config |= {
            str(column): st.column_config.NumberColumn(str(column), format=fmt)
            for column, fmt in zip(frame.columns, formats, strict=True)
        }
        st.dataframe(frame, column_config=config, height=height, alt=_alt)
    else:
        st.dataframe(frame.style.format(format_number), column_config=config, height=height, alt=_alt)


def frame_table(frame: pd.DataFrame, **options) -> None:
    """Any other DataFrame (text, flags, counts) as ``st.dataframe(frame, **options)``, drawn once per content
    and options and replayed after that, as table() does. The key is a digest of the frame's fingerprint
    (its values, types and labels) and of the options."""
    digest = hashlib.blake2b(repr((fingerprint(frame), sorted(options.items()))).encode(), digest_size=20)
    drawn_frame(key=digest.hexdigest(), _frame=frame, _options=options)


@st.cache_data(max_entries=256, show_spinner=False)
def drawn_frame(*, key: str, _frame: pd.DataFrame, _options: dict) -> None:
    """Draws the frame ``key`` names (frame_table's digest of the unhashed arguments)."""
    st.dataframe(_frame, **_options)


class Kept:
    """A bounded, thread-safe store of built things (chart specs) for the whole server process.

    Cheaper than st.cache_data for the many small items a page draws per rerun: no argument
    hashing by inspection and no pickled copy (the items are read-only: Streamlit copies a spec
    before it edits its top level, the only level it edits).
    """

    def __init__(self, size: int) -> None:
        self.size, self.items, self.lock = size, {}, threading.Lock()

    def get(self, key, make: Callable[[], object]):
        """The item kept under ``key``, made by ``make()`` the first time (the oldest goes when full)."""
        with self.lock:
            if key in self.items:
                return self.items[key]
        item = make()
        with self.lock:
            if len(self.items) >= self.size:
                del self.items[next(iter(self.items))]
            self.items[key] = item
        return item


def fingerprint(value) -> object:
    """A hashable stand-in for a cache key: frames, arrays and tensors by their content, containers item by item."""
    if isinstance(value, pd.DataFrame):
        content = pd.util.hash_pandas_object(value, index=True).to_numpy().tobytes()
        names = (tuple(value.index.names), tuple(value.columns.names))  # a set_index column's name is a header
        return ("frame", tuple(value.columns), tuple(map(str, value.dtypes)), names, content)
    if isinstance(value, torch.Tensor):
        value = value.detach().numpy()
    if isinstance(value, np.ndarray):
        return ("array", str(value.dtype), value.shape, value.tobytes())
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, *map(fingerprint, value))
    if isinstance(value, dict):
        return ("dict", *((key, fingerprint(item)) for key, item in sorted(value.items())))
    return value


WEIGHTS_SCALE_KEY = "weights_scale"  # the sidebar's choice (ui.inputs draws it); a view setting, not in the URL
WEIGHTS_SCALES = {"stretch": "stretch to data", "fixed": "fixed 0–1"}
# Formulas and charts wider than a phone scroll sideways instead of being cut off.
PAGE_CSS = """<style>
[data-testid="stMain"] .katex-display { overflow-x: auto; overflow-y: hidden; padding: 2px 0 6px; }
[data-testid="stMain"] [data-testid="stVegaLiteChart"] { overflow-x: auto; overflow-y: hidden; max-width: 100%; }
</style>"""


def page_style() -> None:
    """The lab's few layout rules (sideways scrolling of wide formulas and charts); once per run."""
    st.html(PAGE_CSS)


def stretch_weights() -> bool:
    """True when weight heatmaps stretch their colours to the weights shown (the default)."""
    return st.session_state.get(WEIGHTS_SCALE_KEY, "stretch") == "stretch"


def weights_domain(*matrices: torch.Tensor) -> charts.Domain:
    """The colour range of weight heatmaps: stretched to the values of all ``matrices`` (panels that share
    a scale pass them all), or fixed 0..1, as the sidebar's "Weights colour scale" says."""
    if not stretch_weights() or not matrices:
        return charts.FIXED_WEIGHTS
    return charts.stretched_domain(np.concatenate([m.detach().double().reshape(-1).numpy() for m in matrices]))


def heatmap(
    matrix: torch.Tensor,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    kind: charts.Kind = "weights",
    title: str = "",
    row_title: str = "query",
    col_title: str = "key",
    highlight_row: str | None = None,
    domain: charts.Domain | None = None,
    compact: bool = False,
    panel_px: int = 230,
    key: str | None = None,
) -> dict | None:
    """Draw a matrix as an Altair heatmap, or as a raster image beyond MAX_CHART_TOKENS tokens.

    Weights take ``domain`` if given (a grid of panels passes their common ``weights_domain``),
    else their own ``weights_domain``. ``highlight_row`` (the query's label) outlines that row;
    ``compact`` draws a grid panel of ``panel_px`` without axis titles or legend. With a ``key``
    a click selects a cell and the chart's selection event is returned (ui.cell_click reads it);
    a raster image returns None.
    """
    if kind == "weights" and domain is None:
        domain = weights_domain(matrix)
    alt_text = f"{title}: heatmap of {len(row_labels)} × {len(col_labels)} values ({row_title} × {col_title})"
    if max(len(row_labels), len(col_labels)) > charts.MAX_CHART_TOKENS:
        values = to_frame(matrix, row_labels, col_labels).to_numpy()
        st.image(charts.raster(values, kind=kind, domain=domain), caption=title, alt=alt_text)
        scale = f" (colours {charts.weights_legend(domain)})" if kind == "weights" else ""
        st.caption(
            f"{len(row_labels)} tokens is too many for an interactive chart: this is a colour-mapped "
            f"image of the same matrix{scale}. Use the table for exact values."
        )
        return None
    values = matrix.detach().to(torch.float64).numpy()  # (rows, cols)
    rows, cols, domain = tuple(row_labels), tuple(col_labels), domain and tuple(domain)
    data = heatmap_data(values.tobytes(), values.shape, rows, cols, kind, domain, compact, panel_px)
    colour_title = charts.colour_title(kind, domain)
    layout = (kind, title, row_title, col_title, colour_title, compact, panel_px, key is not None)
    datasets = {charts.CELLS_DATA: data, charts.OUTLINE_DATA: outline_data(highlight_row)}
    spec = {**heatmap_spec(rows, cols, *layout), "datasets": datasets}
    if compact:
        alt_text = None  # the spec's description names the panel
    if key is None:
        st.vega_lite_chart(spec=spec, alt=alt_text, width="content")
        return None
    return st.vega_lite_chart(
        spec=spec, alt=alt_text, width="content", on_select="rerun", selection_mode=charts.CELL_SELECTION, key=key
    )


# The heatmap caches are plain functools caches, not st.cache_data: a page draws up to a dozen
# heatmaps per rerun, and st.cache_data's argument hashing and pickled copies cost about a millisecond
# each. Their results are read-only: an Arrow table cannot change, and Streamlit copies a spec before
# it edits its top level (the only level it edits).
@functools.lru_cache(maxsize=256)
def heatmap_data(
    values: bytes,
    shape: tuple[int, int],
    row_labels: tuple[str, ...],
    col_labels: tuple[str, ...],
    kind: charts.Kind,
    domain: charts.Domain | None,
    compact: bool,
    panel_px: int,
) -> bytes:
    """The cells ``charts.heatmap_cells`` makes of one matrix, as the Arrow bytes of the heatmap's dataset
    ``charts.CELLS_DATA``."""
    matrix = torch.from_numpy(np.frombuffer(values, dtype=np.float64).reshape(shape).copy())  # (rows, cols)
    long = long_frame(matrix, row_labels, col_labels)
    cells = charts.heatmap_cells(
        long, row_labels, col_labels, kind=kind, domain=domain, compact=compact, panel_px=panel_px
    )
    return convert_anything_to_arrow_bytes(pa.Table.from_pandas(cells, preserve_index=False))


@functools.lru_cache(maxsize=256)
def outline_data(highlight_row: str | None) -> bytes:
    """``charts.outline_rows`` as the Arrow bytes of the heatmap's dataset ``charts.OUTLINE_DATA``. The cells do
    not name the query, so another query sends the same cells and only these bytes change."""
    return convert_anything_to_arrow_bytes(charts.outline_rows(highlight_row))


@functools.lru_cache(maxsize=128)
def heatmap_spec(row_labels: tuple[str, ...], col_labels: tuple[str, ...], *layout) -> dict:
    """``heatmap_template`` with these labels (layout: its other arguments, in order): Altair builds a
    heatmap once per size and options.

    The labels are in a heatmap's spec only as the axes' sort orders, so a spec built with
    stand-in labels and given these ones afterwards is the spec built with these ones (tested), but
    for the name Altair gives a clickable layer's view (a hash of the chart), used only inside it.
    Building one with Altair takes 60-300 ms; a new sentence of a length seen before, or another
    example, now only swaps the labels in.
    """
    rows, cols = stand_in_labels("row", len(row_labels)), stand_in_labels("col", len(col_labels))
    template = heatmap_template(rows, cols, *layout)
    return relabelled(template, dict(zip(rows, row_labels, strict=True)) | dict(zip(cols, col_labels, strict=True)))


def stand_in_labels(axis: str, count: int) -> tuple[str, ...]:
    """Labels no token can have (a control character), one per row or column."""
    return tuple(f"\x1f{axis} {i}" for i in range(count))


def relabelled(node, names: dict[str, str]):
    """A copy of a spec (dicts, lists, strings, numbers) in which every string that is a key of names is
    replaced by its value; nothing else changes, and the template it copies stays as it was."""
    if isinstance(node, dict):
        return {key: relabelled(value, names) for key, value in node.items()}
    if isinstance(node, list):
        return [relabelled(value, names) for value in node]
    if isinstance(node, str):
        return names.get(node, node)
    return node


@functools.lru_cache(maxsize=64)
def heatmap_template(
    row_labels: tuple[str, ...],
    col_labels: tuple[str, ...],
    kind: charts.Kind,
    title: str,
    row_title: str,
    col_title: str,
    colour_title: str,
    compact: bool = False,
    panel_px: int = 230,
    selectable: bool = False,
) -> dict:
    """The Vega-Lite spec of ``charts.heatmap_chart`` without its data, built by Altair.

    Cached per size and options under ``heatmap_spec`` (full size and compact grid panels). The spec holds no
    number and no query (those are columns of the data), so another matrix of the same tokens (another
    head, temperature or query) reuses it: the server skips building an Altair chart (tens of
    milliseconds) and the browser, seeing the same spec, only swaps the data in.
    """
    T = (len(row_labels), len(col_labels))
    placeholder = charts.heatmap_cells(
        long_frame(torch.zeros(T), row_labels, col_labels), row_labels, col_labels, kind=kind,
        compact=compact, panel_px=panel_px,
    )  # fmt: skip
    chart = charts.heatmap_chart(
        placeholder, row_labels, col_labels, kind=kind, title=title, row_title=row_title, col_title=col_title,
        colour_title=colour_title, compact=compact, panel_px=panel_px, selectable=selectable,
    )  # fmt: skip
    with alt.data_transformers.enable("default", max_rows=None):  # st.altair_chart has no row limit either
        # Not validated again here: every variant of charts.heatmap is validated against the Vega-Lite schema in
        # tests/test_charts.py (test_every_heatmap_variant_is_valid_vega_lite); validation was half the cost.
        spec = chart.to_dict(validate=False)
    spec, _ = split_data(spec)
    return {**spec, "data": {"name": charts.CELLS_DATA}}  # the cells: a dataset that heatmap() sends by name


def split_data(spec: dict) -> tuple[dict, pd.DataFrame]:
    """The spec's top-level data as a DataFrame (sent as Arrow) and every smaller layer's data inlined."""
    datasets = spec.pop("datasets")
    # a compact panel has no top-level data: Altair names the cells' data (the first layer's) in every layer
    main = spec.pop("data")["name"] if "data" in spec else spec["layer"][0]["data"]["name"]
    data = pd.DataFrame(datasets[main])
    for layer in spec.get("layer", []):
        name = layer.get("data", {}).get("name")
        if name == main:  # the cells: inherited from the top-level data
            del layer["data"]
        elif name in datasets:  # a small layer of its own: inline
            layer["data"] = {"values": datasets[name]}
        # any other name (charts.OUTLINE_DATA) is a dataset the caller sends with each chart
    return spec, data


def line_view(weights: torch.Tensor, labels: Sequence[str], *, title: str = "", focus: str | None = None) -> None:
    """charts.line_view of a (T, T) weight matrix. Its spec is built and validated once per sentence and
    focus; a new matrix (another head, another input's numbers) only swaps the rules' data in."""
    template, pairs_name = line_view_template(tuple(labels), focus)
    long = long_frame(weights, labels, labels)
    pairs = charts.line_view_pairs(long, focus)
    spec = {**template, "datasets": {**template["datasets"], pairs_name: convert_anything_to_arrow_bytes(pairs)}}
    spec["title"] = title
    spec["description"] = title or "Line view of attention weights"
    st.vega_lite_chart(spec=spec, width="content", alt=None)


@st.cache_data(max_entries=32, show_spinner=False)
def line_view_template(labels: tuple[str, ...], focus: str | None) -> tuple[dict, str]:
    """The validated line-view spec for these tokens (built on uniform weights) and its rules' dataset name."""
    T = len(labels)
    uniform = long_frame(torch.full((T, T), 1.0 / T), labels, labels)  # (T*T rows)
    with alt.data_transformers.enable("default", max_rows=None):
        spec = charts.line_view(uniform, labels, focus=focus).to_dict()
    pairs_name = next(name for name, rows in spec["datasets"].items() if rows and "x0" in rows[0])
    return arrow_datasets(spec), pairs_name


def chart(
    builder: Callable[..., alt.TopLevelMixin], *args, st_width="stretch", alt_text: str | None = None, **kwargs
) -> None:
    """Draw ``builder(*args, **kwargs)`` from ui.charts, building and validating its spec once per input.

    Constructing and validating an Altair chart costs 10-250 ms; the arguments (DataFrames,
    tuples, strings, numbers) are the cache key, so a rerun with the same data reuses the spec.
    """
    key = (builder.__name__, fingerprint(args), fingerprint(kwargs))
    spec = CHART_SPECS.get(key, lambda: chart_spec(builder.__name__, args, tuple(sorted(kwargs.items()))))
    text = alt_text or kwargs.get("title") or builder.__name__.replace("_", " ")
    described = "description" in spec  # Streamlit reads a spec's description as the chart's accessible name
    st.vega_lite_chart(spec=spec, width=st_width, alt=None if described else f"Chart: {text}")


CHART_SPECS = Kept(256)


def chart_spec(builder_name: str, args: tuple, kwargs: tuple) -> dict:
    """The validated Vega-Lite spec of one ui.charts function call, its datasets already Arrow bytes
    (Streamlit would convert the inline records to Arrow on every rerun) under stable names."""
    built = getattr(charts, builder_name)(*args, **dict(kwargs))
    with alt.data_transformers.enable("default", max_rows=None):
        spec = built.to_dict()
    return arrow_datasets(stable_dataset_names(spec))


def stable_dataset_names(spec: dict) -> dict:
    """The spec with Altair's dataset names, hashes of the data ("data-3f2a…"), replaced by their order
    ("lab_data_0", …; not "data_0", a name Vega-Lite gives its own data sources, which would hide ours).
    New numbers then leave the spec's text as it was, and the browser swaps the data into the drawn
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


def matrix(
    matrix: torch.Tensor,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    kind: charts.Kind = "weights",
    title: str = "",
    row_title: str = "query",
    col_title: str = "key",
    download: str | None = None,
    highlight_row: str | None = None,
) -> pd.DataFrame:
    """Heatmap and table of one matrix in two tabs (and a CSV download); returns the table's frame."""
    frame = to_frame(matrix, row_labels, col_labels)
    chart_tab, table_tab = st.tabs(["Heatmap", "Table"])
    with chart_tab:
        heatmap(
            matrix,
            row_labels,
            col_labels,
            kind=kind,
            title=title,
            row_title=row_title,
            col_title=col_title,
            highlight_row=highlight_row,
        )
    with table_tab:
        table(frame, alt=title)
    if download:
        download_csv(frame, download, label=f"Download {title or 'this matrix'} as CSV")
    return frame


def printed_beside_ours(comparison, row_labels: Sequence[str], col_labels: Sequence[str], tutorial: str) -> None:
    """A tutorial's printed matrix and the lab's own, side by side (a projections.Comparison)."""
    printed_column, ours_column = st.columns(2)
    with printed_column:
        st.markdown(f"**Printed by {tutorial}** ({comparison.name})")  # tutorial: its name, e.g. tutorial_name('002')
        table(comparison.printed, row_labels, col_labels, alt=f"{tutorial}'s printed {comparison.name}")
    with ours_column:
        st.markdown(f"**Computed by the lab** ({comparison.name})")
        table(comparison.ours, row_labels, col_labels, alt=f"The lab's {comparison.name}")


def download_csv(frame: pd.DataFrame, filename: str, *, label: str = "Download as CSV") -> None:
    """A CSV download of a table, with full precision and the token labels (built only when clicked)."""
    st.download_button(
        label,
        lambda: frame.to_csv().encode("utf-8"),
        file_name=filename,
        mime="text/csv",
        icon=":material/download:",
        on_click="ignore",
    )


def show_code(*functions: Callable, title: str = "Show the code") -> None:
    """The exact source of the core functions the page runs (inspect.getsource: never drifts)."""
    with st.expander(title, icon=":material/code:"):
        for function in functions:
            st.code(source_of(function), language="python")


@functools.cache
def source_of(function: Callable) -> str:
    """inspect.getsource, read once per function (it re-reads and re-parses the file every call)."""
    return inspect.getsource(function)


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
    return lesson
