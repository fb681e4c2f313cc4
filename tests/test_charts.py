"""ui.charts: the Vega-Lite specs the heatmaps and other charts produce (via chart.to_dict(), which validates)."""

from __future__ import annotations

import json
import re

import altair as alt
import numpy as np
import pandas as pd
import pytest
import torch

from attention_core.tables import long_frame, token_labels
from ui import charts


def full_heatmap(data, row_order, col_order, *, kind="weights", domain=None, highlight_row=None, **options):
    """charts.heatmap on the cells of a long frame, with the query row's outline and the summary as its datasets: the
    chart that ui.drawing assembles from the same pieces (the cells, the spec, the outline, the summary)."""
    look = {key: options[key] for key in ("compact", "panel_px") if key in options}
    cells = charts.heatmap_cells(data, row_order, col_order, kind=kind, domain=domain, **look)
    chart = charts.heatmap(
        cells, row_order, col_order, kind=kind, colour_title=charts.colour_title(kind, domain), **options
    )
    summary = charts.summary_rows(charts.heatmap_summary(data, kind))
    named = {charts.OUTLINE_DATA: charts.outline_rows(highlight_row), charts.SUMMARY_DATA: summary}
    return chart.properties(datasets={name: rows.to_dict("records") for name, rows in named.items()})


def heatmap_spec(matrix: torch.Tensor, tokens: list[str], **kwargs) -> dict:
    """The validated Vega-Lite dict of charts.heatmap for a (T, T) matrix labelled by tokens.

    Streamlit sends chart data separately, without Altair's 5,000-row limit; to_dict() applies it,
    so it is lifted here for the 128-token case (16,384 cells).
    """
    labels = token_labels(tokens)
    chart = full_heatmap(long_frame(matrix, labels, labels), labels, labels, **kwargs)
    with alt.data_transformers.enable("default", max_rows=None):
        return chart.to_dict()


def layers(spec: dict) -> list[dict]:
    """The layers of a spec (a single-view spec is one layer)."""
    return spec.get("layer", [spec])


def drawn(spec: dict) -> list[dict]:
    """The layers a heatmap draws: all but the first, its invisible summary for screen readers (charts.SUMMARY_DATA)."""
    summary, *rest = layers(spec)
    assert summary["data"] == {"name": charts.SUMMARY_DATA}
    return rest


def dataset_of(spec: dict, layer: dict) -> list[dict]:
    """The inline dataset one layer draws."""
    return spec["datasets"][layer["data"]["name"]]


def dataset(spec: dict) -> list[dict]:
    """The one inline dataset of a spec (a heatmap's cells: not its outlined row, charts.OUTLINE_DATA, nor its
    summary, charts.SUMMARY_DATA)."""
    own = (charts.OUTLINE_DATA, charts.SUMMARY_DATA)
    (values,) = [rows for name, rows in spec["datasets"].items() if name not in own]
    return values


@pytest.fixture
def sentence() -> list[str]:
    """A sentence in non-alphabetical order with 'the' twice."""
    return ["the", "zebra", "ate", "the", "mango"]


@pytest.fixture
def weights() -> torch.Tensor:
    """Seeded (5, 5) attention weights: rows sum to 1."""
    return torch.softmax(torch.randn(5, 5, generator=torch.Generator().manual_seed(0)), dim=-1)


def test_heatmap_keeps_sentence_order_on_both_axes(sentence, weights):
    spec = heatmap_spec(weights, sentence)
    labels = token_labels(sentence)
    assert labels == ["the (1)", "zebra", "ate", "the (2)", "mango"]
    for layer in drawn(spec)[1:3]:  # the cells and their text
        assert axis_order(layer["encoding"]["x"]) == labels
        assert axis_order(layer["encoding"]["y"]) == labels
        assert layer["encoding"]["x"]["field"] == "col" and layer["encoding"]["y"]["field"] == "row"
    assert axis_order(layers(spec)[-1]["encoding"]["y"]) == labels  # the query row's outline


def axis_order(channel: dict) -> list[str]:
    """A nominal axis's order: its scale's fixed domain, with no sort (a sort array costs an expression per datum
    in the browser: charts.in_order)."""
    assert channel["sort"] is None
    return channel["scale"]["domain"]


def cells_layer(spec: dict) -> dict:
    """The layer that draws the coloured cells (below it: the invisible colour range)."""
    return next(layer for layer in layers(spec) if "x" in layer.get("encoding", {}) and "color" in layer["encoding"])


def colour_range(spec: dict) -> tuple[float, float]:
    """The colour scale's domain as the browser computes it: the cells' values and the range layer's
    low and high (the layers share one scale, whose domain is the union of their values)."""
    rows = dataset(spec)
    values = [r["value"] for r in rows if r["value"] is not None]
    return min(values + [r["low"] for r in rows]), max(values + [r["high"] for r in rows])


def test_weights_use_a_sequential_scale_from_0_to_1(sentence, weights):
    spec = heatmap_spec(weights, sentence, kind="weights")
    colour = cells_layer(spec)["encoding"]["color"]
    assert colour["scale"]["scheme"] == charts.SEQUENTIAL_SCHEME
    assert "domain" not in colour["scale"] and "domainMid" not in colour["scale"]  # the data carry the range
    assert colour_range(spec) == (0, 1)
    colour_layer = drawn(spec)[0]
    assert colour_layer["mark"] == {"type": "rect", "opacity": 0, "aria": False}
    assert colour_layer["encoding"]["color"] == colour


def test_scores_use_a_diverging_scale_centred_on_0(sentence):
    scores = torch.tensor([[1.0, -3.0, 0.5, 2.0, 0.0]] * 5)
    spec = heatmap_spec(scores, sentence, kind="scores")
    colour = cells_layer(spec)["encoding"]["color"]
    assert colour["scale"]["scheme"] == charts.DIVERGING_SCHEME
    assert colour_range(spec) == (-3.0, 3.0)  # symmetric, so 0 sits in the middle
    assert colour["title"] == ["score"]


def test_scores_with_minus_inf_still_make_a_valid_chart(sentence):
    scores = torch.zeros(5, 5).masked_fill(~torch.tril(torch.ones(5, 5, dtype=torch.bool)), float("-inf"))
    scores[0, 0] = 2.0
    spec = heatmap_spec(scores, sentence, kind="scores")
    assert colour_range(spec) == (-2.0, 2.0)
    position = {label: i for i, label in enumerate(token_labels(sentence))}
    masked = [r for r in dataset(spec) if position[r["row"]] < position[r["col"]]]
    assert len(masked) == 10 and all(r["value"] is None and r["exact"] == "-∞" for r in masked)


def test_tooltips_show_query_key_and_value(sentence, weights):
    for layer in drawn(heatmap_spec(weights, sentence))[1:3]:  # the cells and their text
        tooltip = layer["encoding"]["tooltip"]
        assert [t["title"] for t in tooltip] == ["query", "key", "value"]
        assert [t["field"] for t in tooltip] == ["row", "col", "exact"]
    rows = dataset(heatmap_spec(weights, sentence))
    assert rows[1]["exact"] == f"{weights[0, 1].item():.4f}"  # exact value, 4 decimals
    assert all(row["short"] == row["exact"] for row in rows)  # cell text: the same formatter, per cell


def test_weights_can_stretch_their_colours_to_the_data(sentence):
    flat = torch.tensor([[0.10, 0.15, 0.20, 0.25, 0.30]] * 5) / 1.0
    domain = charts.stretched_domain(flat.numpy())
    assert domain == pytest.approx((0.10, 0.30))
    spec = heatmap_spec(flat, sentence, domain=domain)
    assert colour_range(spec) == pytest.approx((0.10, 0.30))
    assert cells_layer(spec)["encoding"]["color"]["title"] == ["weight", "stretched"]  # two lines: fits a column
    assert charts.weights_legend(domain) == "weight (scale 0.10–0.30)"  # the captions name the range
    fixed = cells_layer(heatmap_spec(flat, sentence))["encoding"]["color"]
    assert fixed["title"] == ["weight", "fixed 0–1"]
    assert charts.stretched_domain([0.2, 0.2]) == (0.0, 1.0)  # nothing to stretch
    assert charts.range_text((0.16663, 0.16671)) == "0.1666–0.1667"


def test_the_query_row_is_outlined(sentence, weights):
    spec = heatmap_spec(weights, sentence, highlight_row="ate")
    outline = layers(spec)[-1]
    assert outline["mark"]["type"] == "rect" and outline["mark"]["fillOpacity"] == 0
    assert outline["mark"]["stroke"] == charts.HIGHLIGHT
    assert outline["data"] == {"name": charts.OUTLINE_DATA} and "transform" not in outline
    assert spec["datasets"][charts.OUTLINE_DATA] == [{"row": "ate"}]  # a dataset of its own: the query's row
    assert axis_order(outline["encoding"]["y"]) == token_labels(sentence) and "x" not in outline["encoding"]
    assert heatmap_spec(weights, sentence)["datasets"][charts.OUTLINE_DATA] == []  # no outline by default
    assert dataset(spec) == dataset(heatmap_spec(weights, sentence)), "the cells do not name the query"


def test_the_spec_holds_no_number_and_no_query(sentence, weights):
    """Another matrix, colour range or query changes only the data: the browser keeps the chart and swaps them."""
    labels = token_labels(sentence)

    def spec_and_data(matrix, **kwargs):
        spec = heatmap_spec(matrix, sentence, **kwargs)
        return {key: value for key, value in spec.items() if key != "datasets"}, dataset(spec)

    first = spec_and_data(weights, highlight_row=labels[0], domain=(0.1, 0.5))
    second = spec_and_data(weights.T.contiguous(), highlight_row=labels[2], domain=(0.2, 0.6))
    assert first[1] != second[1]
    unnamed = [re.sub(r'"data-[0-9a-f]+"', '""', json.dumps(spec)) for spec, _ in (first, second)]  # Altair's hashes
    assert unnamed[0] == unnamed[1]


def test_compact_heatmap_for_a_grid_shares_a_given_domain(sentence, weights):
    labels = token_labels(sentence)
    chart = full_heatmap(long_frame(weights, labels, labels), labels, labels, compact=True, domain=(0.1, 0.4))
    spec = chart.to_dict()
    rect = cells_layer(spec)
    assert rect["encoding"]["color"]["legend"] is None and colour_range(spec) == (0.1, 0.4)
    assert rect["encoding"]["x"]["title"] is None and rect["encoding"]["y"]["title"] is None
    assert spec["width"] <= 230 and spec["description"].startswith("Attention weights")


@pytest.mark.parametrize("T", [1, 5, 16, 24])
def test_small_heatmaps_have_text_and_cells_that_fit_it(T):
    spec = heatmap_spec(torch.full((T, T), 1 / T), [f"w{i}" for i in range(T)])
    marks = [layer["mark"]["type"] for layer in drawn(spec)]
    assert marks == ["rect", "rect", "text", "rect"]  # colour range, cells, text, outline
    assert drawn(spec)[2]["encoding"]["text"]["field"] == "short"
    assert spec["width"] == spec["height"] == charts.cell_size(T) * T
    assert charts.cell_size(T) >= 30 and spec["width"] <= max(charts.FIT_PX, charts.CELL_PX * 16)


@pytest.mark.parametrize("T", [25, 40, 128])
def test_large_heatmaps_drop_text_and_shrink_cells(T):
    spec = heatmap_spec(torch.full((T, T), 1 / T), [f"w{i}" for i in range(T)])
    assert [layer["mark"]["type"] for layer in drawn(spec)] == ["rect", "rect", "rect"]  # no text layer
    size = spec["width"] // T
    assert size == charts.cell_size(T) == max(3, charts.FIT_PX // T) < charts.CELL_PX
    assert spec["width"] <= charts.FIT_PX and spec["height"] == spec["width"]


def test_cell_size_and_show_values():
    assert charts.cell_size(1) == charts.cell_size(16) == charts.CELL_PX
    assert charts.cell_size(24) < charts.CELL_PX and charts.cell_size(1000) == 3
    assert charts.show_values(24, 3) and not charts.show_values(3, 25)


def test_mask_heatmap(sentence):
    mask = torch.tril(torch.ones(5, 5))
    spec = heatmap_spec(mask, sentence, kind="mask")
    colour = cells_layer(spec)["encoding"]["color"]
    assert colour["field"] == "allowed"
    assert colour["scale"]["domain"] == ["may attend", "blocked"]
    assert colour["scale"]["range"] == list(charts.MASK_COLOURS)
    allowed = {(r["row"], r["col"]): r["allowed"] for r in dataset(spec)}
    assert allowed[("the (2)", "zebra")] == "may attend" and allowed[("zebra", "the (2)")] == "blocked"


def test_heatmap_of_a_rectangular_matrix(sentence):
    labels = token_labels(sentence)
    frame = long_frame(torch.ones(5, 3), labels, ["d1", "d2", "d3"])
    spec = full_heatmap(frame, labels, ["d1", "d2", "d3"], kind="values", col_title="dimension").to_dict()
    assert spec["width"] == 3 * charts.CELL_PX and spec["height"] == 5 * charts.CELL_PX
    assert axis_order(cells_layer(spec)["encoding"]["x"]) == ["d1", "d2", "d3"]
    assert cells_layer(spec)["encoding"]["x"]["title"] == "dimension"


# --- raster ---------------------------------------------------------------------------------------


def test_raster_shape_dtype_and_weight_colours():
    image = charts.raster(np.array([[0.0, 1.0], [0.5, np.nan]]), kind="weights", pixels=3)
    assert image.shape == (6, 6, 3) and image.dtype == np.uint8
    assert tuple(image[0, 0]) == (68, 1, 84)  # viridis at 0
    assert tuple(image[0, 3]) == (253, 231, 37)  # viridis at 1
    assert tuple(image[3, 3]) == (160, 160, 160)  # NaN drawn grey
    assert (image[:3, :3] == image[0, 0]).all()  # each value fills a pixels x pixels block


def test_raster_scores_are_diverging_around_0():
    image = charts.raster(np.array([[-2.0, 0.0, 2.0, -np.inf]]), kind="scores", pixels=1)
    assert image.shape == (1, 4, 3)
    assert tuple(image[0, 0]) == (5, 48, 97)  # most negative: dark blue
    assert np.abs(image[0, 1].astype(int) - 247).max() <= 2  # 0: the white-ish centre
    assert tuple(image[0, 2]) == (127, 59, 8)  # most positive: dark orange
    assert tuple(image[0, 3]) == (160, 160, 160)  # -inf (masked) drawn grey


def test_raster_mask_and_all_nan():
    mask = charts.raster(np.array([[1.0, 0.0]]), kind="mask", pixels=1)
    assert tuple(mask[0, 0]) == (59, 91, 219) and tuple(mask[0, 1]) == (233, 236, 239)
    empty = charts.raster(np.full((2, 2), np.nan), kind="scores", pixels=1)
    assert (empty == 160).all()


# --- the other charts -----------------------------------------------------------------------------


def test_stacked_contributions(sentence):
    data = pd.DataFrame(
        {
            "token": ["the (1)", "zebra"] * 2,
            "token_pos": [0, 1] * 2,
            "dimension": ["d1", "d1", "d2", "d2"],
            "weight": [0.25, 0.75] * 2,
            "value": [1.0, -2.0, 3.0, 4.0],
            "contribution": [0.25, -1.5, 0.75, 3.0],
        }
    )
    spec = charts.stacked_contributions(data, ["the (1)", "zebra"], title="context of 'the'").to_dict()
    assert spec["mark"]["type"] == "bar"
    assert spec["encoding"]["y"]["stack"] == "zero"
    assert spec["encoding"]["color"]["scale"]["domain"] == ["the (1)", "zebra"]
    assert {t["field"] for t in spec["encoding"]["tooltip"]} >= {"token", "weight", "value", "contribution"}
    assert spec["title"] == "context of 'the'"


def test_bars_keep_order_and_optional_colour():
    data = pd.DataFrame({"token": ["b", "a", "b", "a"], "weight": [0.4, 0.6, 0.7, 0.3], "row of": ["x", "x", "y", "y"]})
    spec = charts.bars(data, x="token", y="weight", order=["b", "a"], title="t").to_dict()
    assert spec["mark"]["type"] == "bar" and axis_order(spec["encoding"]["x"]) == ["b", "a"]
    assert "color" not in spec["encoding"]
    grouped = charts.bars(data, x="token", y="weight", order=["b", "a"], color="row of", y_title="w").to_dict()
    assert grouped["encoding"]["color"]["field"] == "row of"
    assert grouped["encoding"]["xOffset"]["field"] == "row of"
    assert grouped["encoding"]["y"]["title"] == "w"


def test_lines_linear_and_log():
    data = pd.DataFrame({"d_k": [1, 2, 4, 1, 2, 4], "var": [1.0, 2.0, 4.0, 1.0, 1.0, 1.0], "s": list("aaabbb")})
    spec = charts.lines(data, x="d_k", y="var", color="s").to_dict()
    assert spec["mark"] == {"type": "line", "point": True}
    assert spec["encoding"]["color"]["field"] == "s"
    assert "scale" not in spec["encoding"]["y"]
    log = charts.lines(data, x="d_k", y="var", log_y=True).to_dict()
    assert log["encoding"]["y"]["scale"] == {"type": "log"}


def test_scatter_2d_draws_arrows_from_input_to_context():
    data = pd.DataFrame(
        {
            "label": ["a", "b", "a", "b"],
            "kind": ["input", "input", "context", "context"],
            "x": [0.0, 1.0, 0.5, 0.6],
            "y": [1.0, 0.0, 0.4, 0.5],
        }
    )
    spec = charts.scatter_2d(data, title="inputs and context").to_dict()
    arrows, points, labels = spec["layer"]
    assert arrows["mark"]["type"] == "rule" and points["mark"]["type"] == "point"
    assert labels["mark"]["type"] == "text"
    assert {"x2", "y2"} <= set(arrows["encoding"])
    arrow_rows = spec["datasets"][arrows["data"]["name"]]
    assert {(r["label"], r["x"], r["x2"]) for r in arrow_rows} == {("a", 0.0, 0.5), ("b", 1.0, 0.6)}


def test_line_view(sentence, weights):
    labels = token_labels(sentence)
    frame = long_frame(weights, labels, labels)
    spec = charts.line_view(frame, labels, title="lines").to_dict()
    rules = [layer for layer in spec["layer"] if layer["mark"]["type"] == "rule"]
    texts = [layer for layer in spec["layer"] if layer["mark"]["type"] == "text"]
    assert rules and len(texts) >= 2  # lines, then the query tokens (left) and key tokens (right)
    links = rules[0]
    assert links["encoding"]["y"]["field"] == "row_pos" and links["encoding"]["y2"]["field"] == "col_pos"
    assert len(spec["datasets"][links["data"]["name"]]) == 25  # one line per (query, key)
    token_columns = [[row.get("row", row.get("col")) for row in spec["datasets"][t["data"]["name"]]] for t in texts]
    assert token_columns[0] == labels and token_columns[-1] == labels  # both sides in sentence order
    assert spec.get("params") or any("params" in layer for layer in spec["layer"])  # the hover selections
    assert spec["title"] == "lines"


def test_line_view_with_a_focus_query_draws_its_lines_only(sentence, weights):
    labels = token_labels(sentence)
    spec = charts.line_view(long_frame(weights, labels, labels), labels, focus="ate").to_dict()
    links = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "rule")
    rows = spec["datasets"][links["data"]["name"]]
    assert len(rows) == 5 and {row["row"] for row in rows} == {"ate"}


def test_raster_weights_can_stretch_to_a_domain():
    image = charts.raster(np.array([[0.1, 0.3]]), kind="weights", pixels=1, domain=(0.1, 0.3))
    assert tuple(image[0, 0]) == (68, 1, 84) and tuple(image[0, 1]) == (253, 231, 37)


def test_bar_titles_are_never_cut():
    data = pd.DataFrame({"query": ["a", "b"], "weight on blocked keys": [0.2, 0.0]})
    title = "Attention on blocked keys without the mask"
    spec = charts.bars(data, x="query", y="weight on blocked keys", title=title).to_dict()
    assert spec["title"]["text"] == ["Attention on blocked keys", "without the mask"]  # wraps on a phone
    assert spec["title"]["limit"] == 0
    short = charts.bars(data, x="query", y="weight on blocked keys", title="Leak").to_dict()
    assert short["title"]["text"] == "Leak"


def test_log_x_lines_legend_sits_below_the_plot():
    data = pd.DataFrame({"d_k": [1, 2, 1, 2], "v": [1.0, 2.0, 1.0, 1.0], "series": ["q·k", "q·k", "scaled", "scaled"]})
    spec = charts.log_x_lines(data, x="d_k", y="v", title="variance").to_dict()
    legend = spec["encoding"]["color"]["legend"]
    assert legend["orient"] == "bottom" and "fillColor" not in legend  # outside the data, no white box on dark
    assert spec["autosize"] == {"type": "pad", "contains": "padding"}  # grows instead of squeezing the plot


def test_scatter_labels_do_not_overlap():
    data = pd.DataFrame(
        {
            "label": ["a", "b", "c", "a", "b", "c"],
            "kind": ["input"] * 3 + ["context"] * 3,
            "x": [0.0, 1.0, 1.01, 0.5, 0.5, 0.2],
            "y": [0.0, 1.0, 1.0, 0.5, 0.505, 0.9],
        }
    )
    shown = charts.spaced_labels(data)
    assert {"lx", "ly"} <= set(shown.columns) and len(shown) >= 3  # the inputs' labels find a place
    labels = charts.scatter_2d(data).to_dict()["layer"][2]
    assert labels["mark"]["type"] == "text" and {"label", "kind"} <= {t["field"] for t in labels["encoding"]["tooltip"]}


def _layer_rows(spec: dict, layer: dict) -> list[dict]:
    return spec["datasets"][layer["data"]["name"]]


def _label_overlaps(spec: dict, width: float = 440.0, height: float = 380.0) -> list[str]:
    """Labels whose text box (11 px font, 0.6 em a character) covers another point's marker or another label,
    read from a scatter_2d spec: the text layer's position fields, its dx/dy/align, and the axes' domains."""
    _, points_layer, labels_layer = spec["layer"]
    points, labels = _layer_rows(spec, points_layer), _layer_rows(spec, labels_layer)

    def domain(axis: str) -> list[float]:
        scale = points_layer["encoding"][axis].get("scale", {})
        if "domain" in scale:
            return scale["domain"]
        values = [row[axis] for row in points]
        return [min(0.0, *values), max(0.0, *values)]  # Vega-Lite's default: the range with zero in it

    (x0, x1), (y0, y1) = domain("x"), domain("y")

    def px(x: float, y: float) -> tuple[float, float]:
        return (x - x0) / (x1 - x0) * width, (1 - (y - y0) / (y1 - y0)) * height

    mark, encoding = labels_layer["mark"], labels_layer["encoding"]
    x_field, y_field = encoding["x"]["field"], encoding["y"]["field"]
    boxes = []
    for row in labels:
        ax, ay = px(row[x_field], row[y_field])
        ax, ay = ax + mark.get("dx", 0), ay + mark.get("dy", 0)
        text_px = 0.6 * 11 * len(row["label"])
        left = {"left": ax, "right": ax - text_px}.get(mark.get("align", "center"), ax - text_px / 2)
        top = {"middle": ay - 5.5, "top": ay}.get(mark.get("baseline", "alphabetic"), ay - 9)
        boxes.append((row, (left, top, left + text_px, top + 11)))
    found = []
    for i, (row, box) in enumerate(boxes):
        for point in points:
            if point["label"] == row["label"] and point["kind"] == row["kind"]:
                continue  # its own point
            cx, cy = px(point["x"], point["y"])
            if box[0] < cx + 4 and cx - 4 < box[2] and box[1] < cy + 4 and cy - 4 < box[3]:
                found.append(f"{row['label']} ({row['kind']}) covers {point['label']} ({point['kind']})")
        for other, other_box in boxes[i + 1 :]:
            if box[0] < other_box[2] and other_box[0] < box[2] and box[1] < other_box[3] and other_box[1] < box[3]:
                found.append(f"{row['label']} ({row['kind']}) and {other['label']} ({other['kind']}) overlap")
    return found


@pytest.mark.parametrize("preset", ["transformer", "light", "journey", "one-hot", "numpy-seed-4"])
def test_context_picture_labels_cover_no_point_and_no_label(preset):
    """Issue 22 part 7: lesson 3's 2-D picture, where the context vectors crowd together near the middle."""
    import attention_core as ac
    from attention_core.geometry import project_2d, scatter_frame
    from attention_core.presets import PRESETS_BY_KEY

    X = PRESETS_BY_KEY[preset].matrix()
    picture = project_2d(X, ac.self_attention(X, scale=False).context, "pca")
    data = scatter_frame(picture, ac.token_labels(PRESETS_BY_KEY[preset].tokens))
    with alt.data_transformers.enable("default", max_rows=None):
        spec = charts.scatter_2d(data, title="Inputs and their context vectors").to_dict()
    assert not _label_overlaps(spec)
    assert len(_layer_rows(spec, spec["layer"][2])) >= len(data) // 2  # most points keep their name on screen


@pytest.mark.parametrize("kind", ["weights", "scores", "mask", "values"])
@pytest.mark.parametrize("compact", [False, True])
@pytest.mark.parametrize("selectable", [False, True])
@pytest.mark.parametrize("highlight", [None, "sat"])
def test_every_heatmap_variant_is_valid_vega_lite(kind, compact, selectable, highlight):
    """ui.drawing.heatmap_template skips Altair's validation at run time; this is where every variant is validated."""
    tokens = ["the", "cat", "sat", "on", "the", "mat"]
    matrix = torch.rand(6, 6, generator=torch.Generator().manual_seed(0)) * (2 if kind != "mask" else 1)
    if kind == "scores":
        matrix[0, 1] = float("-inf")  # a blocked cell
    if kind == "mask":
        matrix = (matrix > 0.5).float()
    domain = (0.1, 0.4) if kind == "weights" else None
    spec = heatmap_spec(
        matrix, tokens, kind=kind, compact=compact, selectable=selectable, highlight_row=highlight, domain=domain
    )  # validate=True: raises on an invalid spec
    assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")


def _fills(node) -> list:
    """Every fill colour set anywhere in a chart spec (legend fillColor, mark fill, view fill)."""
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("fill", "fillColor") and isinstance(value, str):
                found.append(value)
            found.extend(_fills(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_fills(value))
    return found


def test_log_log_lines_leave_their_legend_to_the_theme():
    """Issue 22 part 7: a white legend box (fillColor white) is unreadable in the dark theme (white on white)."""
    data = pd.DataFrame({"T": [16, 32, 16, 32], "ms": [0.1, 0.4, 0.1, 0.3], "series": ["a", "a", "b", "b"]})
    spec = charts.log_log_lines(data, x="T", y="ms", color="series").to_dict()
    assert not [fill for fill in _fills(spec) if fill.lower() in ("white", "#fff", "#ffffff", "black", "#000")]
    assert "fillColor" not in spec["encoding"]["color"]["legend"]  # the theme's background shows through


@pytest.mark.parametrize("tokens", [5, 32])
def test_a_clickable_heatmap_draws_each_cell_once_and_the_cells_take_the_click(sentence, tokens):
    """The coloured cells carry the click, the tooltip and each cell's description; the selected cell's outline is
    one rect filtered by the selection (no transparent rect per cell on top, no expression per cell)."""
    words = (sentence * 7)[:tokens]
    spec = heatmap_spec(torch.rand(tokens, tokens), words, selectable=True)
    cells, outline = cells_layer(spec), layers(spec)[-1]
    assert spec["params"][0]["name"] == charts.CELL_SELECTION and spec["params"][0]["views"] == [cells["name"]]
    assert cells["mark"]["cursor"] == "pointer" and cells["mark"].get("aria", True)
    assert [tip["title"] for tip in cells["encoding"]["tooltip"]] == ["query", "key", "value"]
    assert outline["transform"] == [{"filter": {"param": charts.CELL_SELECTION, "empty": False}}]
    assert outline["mark"]["aria"] is False and "tooltip" not in outline["encoding"]
    rects = [layer for layer in layers(spec) if layer["mark"]["type"] == "rect" and "transform" not in layer]
    assert len(rects) == 2  # the cells and the query row's outline (one rect)
    plain = cells_layer(heatmap_spec(torch.rand(tokens, tokens), words))
    assert "cursor" not in plain["mark"] and [tip["field"] for tip in plain["encoding"]["tooltip"]] == [
        "row", "col", "exact"
    ]  # fmt: skip


# --- what a screen reader hears --------------------------------------------------------------------


def test_the_summary_names_the_largest_and_smallest_cells(sentence, weights):
    labels = token_labels(sentence)
    summary = charts.heatmap_summary(long_frame(weights, labels, labels))
    top, low = int(weights.argmax()), int(weights.argmin())  # row-major: row i * T + column j
    T = len(labels)
    largest = f"“{labels[top // T]}” → “{labels[top % T]}” {charts.format_number(float(weights.flatten()[top]))}"
    smallest = f"“{labels[low // T]}” → “{labels[low % T]}” {charts.format_number(float(weights.flatten()[low]))}"
    assert summary == f"Largest: {largest}; smallest: {smallest}."


def test_the_summary_counts_masked_cells_apart_and_a_mask_counts_what_may_attend(sentence):
    labels = token_labels(sentence)
    scores = torch.arange(25, dtype=torch.float64).reshape(5, 5)  # (5, 5): the largest unmasked is row 5, col 5
    masked = scores.masked_fill(~torch.tril(torch.ones(5, 5, dtype=torch.bool)), float("-inf"))
    summary = charts.heatmap_summary(long_frame(masked, labels, labels), "scores")
    assert summary.startswith(f"Largest: “{labels[4]}” → “{labels[4]}” {charts.format_number(24.0)}; smallest: ")
    assert f"“{labels[0]}” → “{labels[0]}” {charts.format_number(0.0)}" in summary  # -inf is not the smallest
    assert summary.endswith("10 of 25 cells masked (−∞).")
    mask = charts.heatmap_summary(long_frame(torch.tril(torch.ones(5, 5)), labels, labels), "mask")
    assert mask == "15 of 25 cells may attend, 10 blocked."


def test_a_heatmap_reads_its_summary_first_then_each_cell_once(sentence, weights):
    """Inside the chart: the summary (an invisible text mark named by SUMMARY_DATA), then one description per cell;
    the colour range, the cells' text and the outlines are not read (aria off)."""
    spec = heatmap_spec(weights, sentence, highlight_row=token_labels(sentence)[0], selectable=True)
    summary, *rest = layers(spec)
    assert summary["data"] == {"name": charts.SUMMARY_DATA} and summary["mark"]["opacity"] == 0
    assert summary["encoding"] == {"description": {"field": "summary", "type": "nominal"}}
    labels = token_labels(sentence)
    assert spec["datasets"][charts.SUMMARY_DATA] == [
        {"summary": charts.heatmap_summary(long_frame(weights, labels, labels))}
    ]
    read = [layer for layer in rest if layer["mark"].get("aria") is not False]
    assert read == [cells_layer(spec)] and read[0]["mark"]["description"] == {"expr": charts.CELL_DESCRIPTION}


def test_the_name_says_what_the_rows_and_columns_are():
    assert charts.heatmap_name("Attention weights", 6, 4, "query", "key") == (
        "Attention weights: heatmap of 6 query rows × 4 key columns"
    )
