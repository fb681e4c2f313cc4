"""ui/drawing.py and the machinery behind it (ui/drawing.py): one number format per cell, the kept chart specs."""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pandas as pd
import pytest
import torch
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df
from streamlit.testing.v1 import AppTest

from attention_core.tables import long_frame
from runtime.cache import ProcessCache, fingerprint
from tests.apptest_helpers import frames
from ui import charts, drawing


def table_app() -> None:
    """A page with one table of mixed magnitudes (for AppTest)."""
    import pandas as pd

    from ui import drawing

    frame = pd.DataFrame({"plain": [1.0, 0.25], "tiny": [3e-7, 0.5], "zero": [0.0, 1.0226e36]}, index=["a", "b"])
    drawing.table(frame, alt_text="mixed")


def shown_texts(body: str) -> list[list[str]]:
    """The cell texts of an HTML table, row by row (row headers left out)."""
    return [re.findall(r"<td[^>]*>([^<]*)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", body)[1:]]


def test_a_table_formats_each_cell_by_itself_and_keeps_numbers():
    at = AppTest.from_function(table_app).run()
    assert not at.exception
    (frame,) = frames(at)
    assert frame["tiny"].tolist() == [3e-7, 0.5]  # the exact numbers, as the tests read them
    assert list(frame.index) == ["a", "b"]
    assert shown_texts(at.html[-1].proto.body) == [["1.0000", "3.0000e-07", "0"], ["0.2500", "0.5000", "1.0226e+36"]]
    assert 'aria-label="mixed"' in at.html[-1].proto.body


def replayed_tables_app() -> None:
    """The same table in two columns, then another (for AppTest)."""
    import streamlit as st
    import torch

    from ui import drawing

    weights = torch.tensor([[0.5, 0.0], [3e-7, 1.0]], dtype=torch.float64)
    for column in st.columns(2):
        with column:
            drawing.table(weights, ["a", "b"], ["x", "y"], alt_text="weights")
    drawing.table(torch.tensor([[0.25, 0.75], [1.5, 2.5]]), ["a", "b"], ["x", "y"], alt_text="weights")


def test_a_table_is_formatted_once_per_content_and_drawn_where_it_is_called(monkeypatch):
    """A table's HTML is kept by its content (drawing.TABLE_HTML): the same numbers, labels and alt text are
    formatted once and drawn in the container of each call; a rerun formats nothing anew."""
    from ui.widgets import html_table

    made, table_html = [], html_table.table_html
    monkeypatch.setattr(
        html_table, "table_html", lambda frame, **kw: made.append(frame.shape) or table_html(frame, **kw)
    )
    monkeypatch.setattr(drawing, "TABLE_HTML", ProcessCache(16))
    at = AppTest.from_function(replayed_tables_app).run()
    assert not at.exception and len(made) == 2  # two contents: the repeated table was formatted once
    first, second = (frames(column)[0] for column in at.columns)
    assert first.to_numpy().tolist() == second.to_numpy().tolist() == [[0.5, 0.0], [3e-7, 1.0]]
    assert shown_texts(at.columns[1].html[0].proto.body) == [["0.5000", "0"], ["3.0000e-07", "1.0000"]]
    assert frames(at)[2].to_numpy().tolist() == [[0.25, 0.75], [1.5, 2.5]]
    at.run()
    assert len(made) == 2 and len(frames(at)) == 3


def frame_tables_app() -> None:
    """The same text-and-flags frame in two columns, then another (for AppTest)."""
    import pandas as pd
    import streamlit as st

    from ui import drawing

    frame = pd.DataFrame({"token": ["a", "b"], "may attend": [True, False]})
    for column in st.columns(2):
        with column:
            drawing.frame_table(frame, hide_index=True)
    drawing.frame_table(frame.assign(**{"may attend": [False, False]}), hide_index=True)


def test_any_frame_is_formatted_once_per_content_and_options_and_drawn_in_place(monkeypatch):
    from ui.widgets import html_table

    made, table_html = [], html_table.table_html
    monkeypatch.setattr(html_table, "table_html", lambda frame, **kw: made.append(1) or table_html(frame, **kw))
    monkeypatch.setattr(drawing, "TABLE_HTML", ProcessCache(16))
    at = AppTest.from_function(frame_tables_app).run()
    assert not at.exception and len(made) == 2
    shown = [frames(column)[0]["may attend"].tolist() for column in at.columns]
    assert shown == [[True, False], [True, False]]
    assert frames(at)[2]["may attend"].tolist() == [False, False]
    assert '<th scope="row">' not in at.html[-1].proto.body  # hide_index
    at.run()
    assert len(made) == 2 and len(frames(at)) == 3


def test_the_table_key_changes_with_any_number_label_type_or_alt_text():
    matrix, rows, cols = torch.tensor([[0.5, 0.0], [3e-7, 1.0]]), ["a", "b"], ["x", "y"]
    key = drawing.table_key(matrix, rows, cols, "w")
    nudged = matrix.clone()
    nudged[1, 0] += 1e-9
    others = [
        drawing.table_key(nudged, rows, cols, "w"),
        drawing.table_key(matrix, ["a", "c"], cols, "w"),
        drawing.table_key(matrix, rows, ["y", "x"], "w"),
        drawing.table_key(matrix, rows, cols, "v"),
        drawing.table_key(matrix.T, cols, rows, "w"),
    ]
    assert key == drawing.table_key(matrix.clone(), list(rows), list(cols), "w")
    assert len({key, *others}) == 6
    frame = pd.DataFrame({"n": [1, 2]}, index=["a", "b"])
    assert drawing.table_key(frame, None, None, None) != drawing.table_key(frame.astype(float), None, None, None)


def test_heatmap_spec_and_data_are_apart_and_in_sentence_order():
    labels = ("the (1)", "cat", "the (2)")
    values = np.array([[1.0, 0.0, 2e-7], [0.5, 0.25, 0.25], [0.1, 0.2, 0.7]])
    spec = drawing.heatmap_spec.__wrapped__(
        labels, labels, drawing.HeatmapStyle(title="w", colour_title="weight (fixed 0–1)")
    )
    cells = (values.tobytes(), values.shape, labels, labels)
    data = convert_arrow_bytes_to_pandas_df(drawing.heatmap_data.__wrapped__(*cells, "weights", None, False, 230))
    assert "datasets" not in spec and spec["data"] == {"name": charts.CELLS_DATA}  # the data travel by name
    assert list(data["row"][:3]) == ["the (1)"] * 3 and list(data["col"][:3]) == list(labels)
    assert list(data["short"][:3]) == ["1.0000", "0", "2.0000e-07"]  # the table's formatter, per cell
    x_orders = [
        layer["encoding"]["x"]["scale"]["domain"] for layer in spec["layer"] if "x" in layer.get("encoding", {})
    ]
    assert len(x_orders) == 2 and all(order == list(labels) for order in x_orders)  # the cells and their text
    assert spec["autosize"] == {"type": "pad", "contains": "content"}


LABEL_SETS = [
    (("Your", "journey", "starts", "with", "one", "step"), None),
    (("it's", 'say "hi"', "1", "null", "row", "col", "é", "the²"), None),
    (("[CLS]", "your", "##ney", "[SEP]"), ("a", "b", "c")),  # rows and columns of their own
    (("only",), None),
    (tuple(f"w{i}" for i in range(20)), None),  # smaller cells, a smaller font
    (tuple(f"w{i}" for i in range(40)), None),  # no values in the cells
    (tuple(f"w{i}" for i in range(70)), None),  # no axis labels
]
HEATMAP_STYLES = [
    drawing.HeatmapStyle("weights", "Attention weights", "query", "key", "weight", False, 230, False),
    drawing.HeatmapStyle("scores", "Scores", "query", "key", "score", False, 230, True),
    drawing.HeatmapStyle("values", "X", "token", "dimension", "value", False, 230, False),
    drawing.HeatmapStyle("mask", "Mask", "query", "key", "may attend", False, 230, False),
    drawing.HeatmapStyle("weights", "Head 3", "query", "key", "weight", True, 150, False),
    drawing.HeatmapStyle("weights", "Head 3", "query", "key", "weight (stretched)", True, 60, False),
    drawing.HeatmapStyle("weights", "", "", "", "weight (stretched)", False, 230, True),  # empty titles
]


def without_view_names(spec: dict) -> str:
    """The spec as text with Altair's view names (a hash of the chart it was built from) made alike."""
    return re.sub(r"view_[0-9a-f]+_", "view_", json.dumps(spec, sort_keys=True))


@pytest.mark.parametrize("rows, cols", LABEL_SETS)
@pytest.mark.parametrize("style", HEATMAP_STYLES)
def test_a_heatmap_spec_given_its_labels_is_the_spec_built_with_them(rows, cols, style):
    cols = cols or rows
    given = drawing.heatmap_spec(rows, cols, style)
    built = drawing.altair_heatmap_spec(rows, cols, style)  # Altair's own build with these labels and titles
    assert without_view_names(given) == without_view_names(built)
    if style.selectable:  # a clickable heatmap: its selection names the view it lives in
        names = [layer.get("name") for layer in given["layer"]]
        assert given["params"][0]["views"][0] in names  # the cells' layer, which takes the click


def test_a_new_sentence_of_another_length_and_another_title_reuse_the_built_heatmap():
    style = HEATMAP_STYLES[0]
    drawing.heatmap_spec(("a", "b", "c"), ("a", "b", "c"), style)
    built = drawing.HEATMAP_TEMPLATES.made
    spec = drawing.heatmap_spec(("x", "y", "z"), ("x", "y", "z"), style)
    drawing.heatmap_spec(tuple("abcdefghijklmnop"), tuple("abcdefghijklmnop"), dataclasses.replace(style, title="T"))
    assert drawing.HEATMAP_TEMPLATES.made == built  # no Altair chart built: every size up to 16 tokens looks alike
    assert ["x", "y", "z"] in [
        layer["encoding"]["y"]["scale"]["domain"] for layer in spec["layer"] if "y" in layer.get("encoding", {})
    ]
    assert "\x1f" not in str(spec)  # no stand-in left


def test_chart_spec_builds_any_chart_function_by_name_with_its_data_as_arrow():
    data = pd.DataFrame({"token": ["a", "b"], "value": [0.25, 0.75]})
    spec = drawing.chart_spec("bars", (data,), (("order", ("a", "b")), ("x", "token"), ("y", "value")))
    assert spec["mark"]["type"] == "bar" and spec["encoding"]["x"]["scale"]["domain"] == ["a", "b"]
    (arrow,) = spec["datasets"].values()
    assert convert_arrow_bytes_to_pandas_df(arrow)["value"].tolist() == [0.25, 0.75]


def test_fingerprint_tells_content_apart_and_keeps_equal_content_equal():
    frame = pd.DataFrame({"token": ["a", "b"], "value": [0.25, 0.75]})
    assert fingerprint((frame, 3, "x")) == fingerprint((frame.copy(), 3, "x"))
    changed = frame.assign(value=[0.25, 0.7500001])
    assert fingerprint(frame) != fingerprint(changed)
    assert fingerprint(torch.ones(2)) != fingerprint(torch.ones(3))
    assert fingerprint({"b": [1], "a": (2,)}) == fingerprint({"a": (2,), "b": [1]})


def test_kept_makes_each_item_once_and_drops_the_oldest():
    kept, made = ProcessCache(2), []

    def make(key):
        return lambda: made.append(key) or key.upper()

    assert [kept.get(k, make(k)) for k in ("a", "b", "a", "c", "a")] == ["A", "B", "A", "C", "A"]
    assert made == ["a", "b", "c", "a"]  # "a" was the oldest when "c" came


def test_raster_pixels_keep_large_matrices_about_a_thousand_pixels_wide():
    assert charts.raster_pixels(1024) == 1 and charts.raster_pixels(200) == 5
    image = charts.raster(torch.eye(300).numpy(), kind="weights")
    assert image.shape == (900, 900, 3) and image.dtype == np.uint8


def weights_app() -> None:
    """The sidebar's colour-scale switch and one weights heatmap with the query row outlined (for AppTest)."""
    import torch

    from ui import drawing
    from ui.widgets import inputs

    inputs.weights_scale_choice()
    weights = torch.tensor([[0.10, 0.15, 0.25], [0.2, 0.3, 0.5], [0.12, 0.18, 0.7]])
    drawing.heatmap(weights, ["a", "b", "c"], ["a", "b", "c"], title="w", highlight_row="b")


def colour_scale(at: AppTest) -> tuple[str, tuple[float, float], pd.DataFrame]:
    """The heatmap's legend title, its colour range (the low and high columns of its data) and its data."""
    import json

    chart = at.get("vega_lite_chart")[0].proto
    spec = json.loads(chart.spec)
    data = named_data(chart)[charts.CELLS_DATA]
    first, *rest = spec["layer"][1]["encoding"]["color"]["title"]  # the legend title's lines (after the summary)
    title = f"{first} ({rest[0]})" if rest else first
    return title, (data["low"].min(), data["high"].max()), data


def test_weights_stretch_to_the_data_by_default_and_switch_to_fixed():
    at = AppTest.from_function(weights_app).run()
    assert not at.exception
    title, domain, _ = colour_scale(at)
    assert domain == pytest.approx((0.10, 0.70)) and title == "weight (stretched)"
    at.sidebar.radio(key="weights_scale").set_value("fixed").run()
    title, domain, _ = colour_scale(at)
    assert domain == (0, 1) and title == "weight (fixed 0–1)"


def test_the_query_row_is_its_own_dataset_and_outlined():
    """The outline layer reads the named dataset charts.OUTLINE_DATA (the query's label); the cells do not
    name the query, so another query sends the same cells."""
    at = AppTest.from_function(weights_app).run()
    import json

    chart = at.get("vega_lite_chart")[0].proto
    spec = json.loads(chart.spec)
    assert spec["layer"][-1]["mark"]["stroke"] == charts.HIGHLIGHT  # the query row's outline
    assert spec["layer"][-1]["data"] == {"name": charts.OUTLINE_DATA}
    assert named_data(chart)[charts.OUTLINE_DATA]["row"].tolist() == ["b"]
    _, _, data = colour_scale(at)
    assert "outline" not in data and set(data["row"]) == {"a", "b", "c"}
    assert charts.stretched_domain(np.array([0.2, 0.4, 0.1, 0.3])) == (0.1, 0.4)


def test_very_large_tables_fall_back_to_one_format_per_column():
    frame = pd.DataFrame(np.full((70, 70), 0.5))
    frame.iloc[3, 2] = 1e-9
    formats = drawing.column_formats(frame)
    assert formats[2] == "%.4e" and formats[0] == "%.4f" and not drawing.html_sized(frame)


def line_view_app() -> None:
    """Two line views of one sentence with different weights (for AppTest)."""
    import torch

    from ui import drawing

    labels = ["a", "b", "c"]
    drawing.line_view(torch.eye(3), labels, title="identity")
    drawing.line_view(torch.full((3, 3), 1 / 3), labels, title="uniform", focus="b")


def test_line_view_reuses_its_spec_and_swaps_in_each_matrix():
    """The spec is built once per sentence; each chart still carries its own weights and title."""
    import json

    at = AppTest.from_function(line_view_app).run()
    assert not at.exception
    charts_drawn = list(at.get("vega_lite_chart"))
    assert [json.loads(chart.proto.spec)["title"] for chart in charts_drawn] == ["identity", "uniform"]

    def rules(chart) -> list[tuple[str, str, float]]:
        """The rules' dataset (Streamlit sends named datasets as Arrow beside the spec)."""
        frames = [convert_arrow_bytes_to_pandas_df(named.data.data) for named in chart.proto.datasets]
        rows = next(frame for frame in frames if "x0" in frame.columns)
        return sorted(zip(rows["row"], rows["col"], rows["value"].astype(float), strict=True))

    specs = charts_drawn
    identity = rules(specs[0])
    assert len(identity) == 9 and [v for r, c, v in identity if r == c] == [1.0, 1.0, 1.0]
    assert all(v == 0.0 for r, c, v in identity if r != c)
    assert rules(specs[1]) == [("b", col, pytest.approx(1 / 3)) for col in "abc"]  # focus: b's row only


def test_chart_specs_of_new_numbers_differ_only_in_their_data():
    """Dataset names are positions, not hashes of the numbers: the browser swaps the data in."""
    first = pd.DataFrame({"token": ["a", "b"], "value": [0.25, 0.75]})
    second = pd.DataFrame({"token": ["a", "b"], "value": [0.5, 0.5]})
    specs = [drawing.chart_spec("bars", (frame,), (("x", "token"), ("y", "value"))) for frame in (first, second)]
    bodies = [{key: value for key, value in spec.items() if key != "datasets"} for spec in specs]
    assert bodies[0] == bodies[1]
    assert list(specs[0]["datasets"]) == ["lab_data_0"]
    assert specs[0]["datasets"]["lab_data_0"] != specs[1]["datasets"]["lab_data_0"]
    values = convert_arrow_bytes_to_pandas_df(specs[1]["datasets"]["lab_data_0"])["value"].tolist()
    assert values == [0.5, 0.5]


def query_outline_app() -> None:
    """One weights heatmap whose outlined row is picked in the sidebar (for AppTest)."""
    import streamlit as st
    import torch

    from ui import drawing

    query = st.sidebar.radio("Query", ["a", "b", "c"], key="query")
    weights = torch.tensor([[0.10, 0.15, 0.75], [0.2, 0.3, 0.5], [0.12, 0.18, 0.7]])
    drawing.heatmap(weights, ["a", "b", "c"], ["a", "b", "c"], title="w", highlight_row=query)


def test_another_query_sends_the_same_cells_and_another_outline():
    """The browser replaces only the datasets whose bytes changed: another query must leave the cells' bytes
    as they were (the outline is the one dataset that changes) and the spec as it was."""
    at = AppTest.from_function(query_outline_app).run()
    before = at.get("vega_lite_chart")[0].proto
    at.sidebar.radio(key="query").set_value("c").run()
    after = at.get("vega_lite_chart")[0].proto
    assert after.spec == before.spec and not after.data.data, "two named datasets, no unnamed data"
    bytes_before, bytes_after = ({d.name: d.data.data for d in chart.datasets} for chart in (before, after))
    assert set(bytes_after) == {charts.CELLS_DATA, charts.OUTLINE_DATA, charts.SUMMARY_DATA}
    assert bytes_after[charts.CELLS_DATA] == bytes_before[charts.CELLS_DATA]
    assert bytes_after[charts.SUMMARY_DATA] == bytes_before[charts.SUMMARY_DATA], "the summary names no query"
    assert bytes_after[charts.OUTLINE_DATA] != bytes_before[charts.OUTLINE_DATA]
    assert named_data(after)[charts.OUTLINE_DATA]["row"].tolist() == ["c"]


def named_data(chart) -> dict[str, pd.DataFrame]:
    """A chart proto's named datasets as DataFrames, by name."""
    return {named.name: convert_arrow_bytes_to_pandas_df(named.data.data) for named in chart.datasets}


def test_a_frame_fingerprint_tells_apart_values_types_labels_and_index_names():
    frame = pd.DataFrame({"T": [64, 128], "ms": [0.5, 1.5]})
    variants = [
        frame,
        frame.assign(ms=[0.5, 1.25]),
        frame.astype({"T": float}),
        frame.rename(columns={"ms": "s"}),
        frame.set_index("T"),
        frame.set_index("T").rename_axis("tokens"),
        frame.set_axis(["a", "b"]),
    ]
    assert len({fingerprint(variant) for variant in variants}) == len(variants)
    assert fingerprint(frame.copy()) == fingerprint(frame)


def temperature_app() -> None:
    """One weights heatmap whose numbers follow a sidebar slider (for AppTest): the same labels, new numbers."""
    import streamlit as st
    import torch

    from ui import drawing

    t = st.sidebar.slider("t", 0.5, 2.0, 1.0, key="t")
    scores = torch.tensor([[1.0, 0.0, -2.0], [0.5, 2.0, 0.0], [0.0, 0.0, 3.0]])
    drawing.heatmap(torch.softmax(scores / t, dim=-1), ["a", "b", "c"], ["a", "b", "c"], title="w")


def test_the_heatmap_is_named_and_its_summary_travels_with_the_data_not_the_spec():
    """A screen reader hears the chart's name (its alt) and, inside the chart, the summary of its largest and
    smallest cells: a dataset of its own, so new numbers change the summary's bytes and leave the spec."""
    at = AppTest.from_function(temperature_app).run()
    before = at.get("vega_lite_chart")[0].proto
    at.sidebar.slider(key="t").set_value(2.0).run()
    after = at.get("vega_lite_chart")[0].proto
    assert after.spec == before.spec and after.alt == before.alt
    assert after.alt == charts.heatmap_name("w", 3, 3, "query", "key")
    scores = torch.tensor([[1.0, 0.0, -2.0], [0.5, 2.0, 0.0], [0.0, 0.0, 3.0]])
    for chart, t in ((before, 1.0), (after, 2.0)):
        weights = torch.softmax(scores / t, dim=-1).double()  # (3, 3)
        summary = named_data(chart)[charts.SUMMARY_DATA]["summary"].tolist()
        assert summary == [charts.heatmap_summary(long_frame(weights, ["a", "b", "c"], ["a", "b", "c"]))]
    assert named_data(before)[charts.SUMMARY_DATA].equals(named_data(after)[charts.SUMMARY_DATA]) is False
    layer = json.loads(after.spec)["layer"][0]
    assert layer["data"] == {"name": charts.SUMMARY_DATA} and layer["encoding"]["description"]["field"] == "summary"
