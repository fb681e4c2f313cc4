"""drawing.heatmap with explain, in AppTest: a kept cell's arithmetic, every explanation kind, the raster picker,
and the keyboard's grid beside each chart (ui.widgets.keyboard_grid): its cells, the cell it opens, a click it must
not undo.
What the grid does in a browser (keys, focus, the ring, the live region) is tests/e2e/test_keyboard.py's."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

import attention_core as ac
from tests.apptest_helpers import assert_clean
from ui.format import format_number
from ui.widgets import keyboard_grid


def small() -> None:
    """Four clickable heatmaps of the default input with a causal mask."""
    import attention_core as ac
    from ui import drawing
    from ui.widgets import cell_click, inputs

    lab = inputs.default_input()
    mask = ac.causal_mask(lab.T)
    params = ac.random_projections(lab.d_model, lab.d_model, 0)
    steps = ac.self_attention(lab.X, params.W_q, params.W_k, params.W_v, mask=mask)
    dims = [f"d{i + 1}" for i in range(lab.d_model)]
    drawing.heatmap(
        steps.Q,
        lab.labels,
        dims,
        kind="values",
        key="q",
        explain=cell_click.projection_of(lab.X, params.W_q),
        col_title="entry",
    )
    drawing.heatmap(
        steps.masked_scores,
        lab.labels,
        lab.labels,
        kind="scores",
        key="m",
        explain=cell_click.masked_scores_of(steps, mask),
    )
    drawing.heatmap(steps.weights, lab.labels, lab.labels, key="w", explain=cell_click.weights_of(steps))


def big() -> None:
    """140 tokens: a raster image and row / column pickers instead of clicks."""
    import attention_core as ac
    from ui import drawing
    from ui.widgets import cell_click

    tokens = [f"w{i}" for i in range(140)]
    labels = ac.token_labels(tokens)
    steps = ac.self_attention(ac.random_embeddings(tokens, 4, 0))
    drawing.heatmap(steps.weights, labels, labels, key="big", explain=cell_click.weights_of(steps))


def markdown(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_before_a_click_each_chart_invites_one_and_the_specs_are_selectable():
    at = AppTest.from_function(small, default_timeout=60).run()
    assert_clean(at)
    assert sum("Click any cell" in c.value for c in at.caption) == 3
    assert len(at.get("vega_lite_chart")) == 3


def test_kept_cells_show_their_arithmetic_with_the_cores_numbers():
    at = AppTest.from_function(small, default_timeout=60).run()
    at.session_state["_cell:q"] = ("starts", "d2")
    at.session_state["_cell:m"] = ("journey", "one")  # blocked by the causal mask
    at.session_state["_cell:w"] = ("starts", "journey")
    at.run()
    assert_clean(at)
    X = ac.DEFAULT_PRESET.matrix()
    params = ac.random_projections(3, 3, 0)
    steps = ac.self_attention(X, params.W_q, params.W_k, params.W_v, mask=ac.causal_mask(6))
    text = markdown(at)
    assert f"**{format_number(float(steps.Q[2, 1]))}**" in text
    assert "Causal mask: key 5 comes after query 2" in text
    assert f"**{format_number(float(steps.weights[2, 1]))}**" in text
    at.session_state["_cell:w"] = ("nobody", "journey")  # a cell of an older input: back to the invitation
    at.run()
    assert sum("Click any cell" in c.value for c in at.caption) == 1


def test_a_long_input_uses_pickers_under_a_raster_image():
    at = AppTest.from_function(big, default_timeout=60).run()
    assert_clean(at)
    assert at.get("image") and not at.get("vega_lite_chart")
    at.selectbox(key="big:row").set_value("w5")
    at.selectbox(key="big:col").set_value("w9")
    at.run()
    tokens = [f"w{i}" for i in range(140)]
    weights = ac.self_attention(ac.random_embeddings(tokens, 4, 0)).weights
    assert f"**{format_number(float(weights[5, 9]))}**" in markdown(at)


def grids(at) -> dict[str, dict]:
    """The keyboard grids of the last run by their heatmap's key: the data each sends, its grid's JSON read."""
    found = {}
    for element in at.get("bidi_component"):
        if element.proto.component_name != "attention_lab_cell_grid":
            continue
        data = json.loads(element.proto.json)
        if data["grid"]:
            data["grid"]["values"] = data["grid"]["values"].split(keyboard_grid.SEPARATOR)
        found[data["chart"] if data["grid"] else data["live"].removesuffix("_arithmetic")] = data
    return found


def test_each_clickable_heatmap_has_a_keyboard_grid_of_its_cells():
    at = AppTest.from_function(small, default_timeout=60).run()
    assert_clean(at)
    lab_labels = list(ac.token_labels(ac.DEFAULT_PRESET.tokens))
    X = ac.DEFAULT_PRESET.matrix()
    params = ac.random_projections(3, 3, 0)
    steps = ac.self_attention(X, params.W_q, params.W_k, params.W_v, mask=ac.causal_mask(6))
    found = grids(at)
    assert sorted(found) == ["m", "q", "w"]
    for key, matrix, cols, titles in (
        ("q", steps.Q, ["d1", "d2", "d3"], ("query", "entry")),
        ("m", steps.masked_scores, lab_labels, ("query", "key")),
        ("w", steps.weights, lab_labels, ("query", "key")),
    ):
        data = found[key]
        grid = data["grid"]
        assert (grid["rows"], grid["cols"]) == (lab_labels, cols)
        assert (grid["rowTitle"], grid["colTitle"]) == titles
        assert grid["values"] == [format_number(v) for v in matrix.reshape(-1).tolist()], key
        assert data["live"] == f"{key}_arithmetic" and data["opened"] is None and data["stale"] is False
    assert "-∞" in found["m"]["grid"]["values"], "a blocked score reads as the chart's tooltip writes it"

    at.session_state["_cell:w"] = ("starts", "journey")
    at.run()
    assert grids(at)["w"]["opened"] == [2, 1], "the grid's cursor starts on the cell whose arithmetic is shown"


def test_a_raster_heatmap_keeps_its_pickers_and_marks_only_the_live_region():
    at = AppTest.from_function(big, default_timeout=60).run()
    assert_clean(at)
    assert grids(at)["big"] == {"grid": None, "opened": None, "live": "big_arithmetic"}


def explained() -> None:
    """One heatmap's explained cell under a chart event the test sets (a click as the chart reports it, kept by
    the chart on every rerun until another click or a double click)."""
    import streamlit as st

    import attention_core as ac
    from ui.widgets import cell_click, inputs

    lab = inputs.default_input()
    steps = ac.self_attention(lab.X)
    event = st.session_state.get("event", {"selection": {"cell": []}})
    cell_click.explained_cell(
        event, lab.labels, lab.labels, key="w", explain=cell_click.weights_of(steps), values=steps.weights
    )


def clicked(row: str, col: str) -> dict:
    return {"selection": {"cell": [{"row": row, "col": col}]}}


def heading(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("**Weight of key"))


def test_a_click_the_chart_still_reports_does_not_undo_the_keyboards_cell():
    at = AppTest.from_function(explained, default_timeout=60)
    at.session_state["event"] = clicked("starts", "journey")
    at.run()
    assert "“journey”" in heading(at)
    at.session_state["_cell:w"] = ("starts", "one")  # Enter on (starts, one): keyboard_grid's callback keeps it
    at.run()  # the chart still reports its click on (starts, journey)
    assert "“one”" in heading(at)
    assert grids(at)["w"]["stale"] is True, "the chart's outline is on another cell: the script clears it"
    at.run()  # any other rerun
    assert "“one”" in heading(at)
    at.session_state["event"] = {"selection": {"cell": []}}  # the outline cleared (a double click)
    at.run()
    assert "“one”" in heading(at) and grids(at)["w"]["stale"] is False
    at.session_state["event"] = clicked("starts", "journey")  # a click on the first cell again opens it
    at.run()
    assert "“journey”" in heading(at)
    assert_clean(at)


@pytest.mark.parametrize(
    ("sent", "cell"),
    [
        *[([2, 1], (2, 1)), ([0, 0], (0, 0)), ([5, 2], (5, 2)), ([6, 0], None), ([0, 3], None), ([-1, 0], None)],
        *[(["2", 1], None), ([True, 0], None), ([2.0, 1], None), ([2], None), ([1, 2, 3], None), (None, None)],
    ],
)
def test_the_grid_opens_only_a_cell_of_the_matrix(sent, cell):
    assert keyboard_grid.opened_cell(sent, 6, 3) == cell
