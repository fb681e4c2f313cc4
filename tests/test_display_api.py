"""ui/page.py is the page API (issue 37): it holds no cache and defines only the lesson's title, steps and footer;
the drawing it re-exports and its machinery live in ui/drawing.py, one matrix API."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from runtime.cache import ProcessCache
from ui import charts, drawing, page
from ui.models import trained
from ui.widgets import cell_click, exercises

UI = Path(__file__).resolve().parents[1] / "ui"


def source(module) -> str:
    return Path(inspect.getsourcefile(module)).read_text(encoding="utf-8")


def test_the_page_api_is_short_and_holds_no_cache():
    text = source(page)
    assert len(text.splitlines()) <= 400
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(ast.parse(text))
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")])
    }
    assert not imported & {"functools", "threading", "runtime"}
    for cache in ("cache_data", "cache_resource", "lru_cache", "functools", "ProcessCache", "process_cache"):
        assert cache not in text


def test_the_page_api_offers_what_a_page_draws_with():
    for name in ("lesson_title", "lesson_steps", "whole_lesson", "go_to", "exercises_section", "table", "heatmap"):
        assert callable(getattr(page, name)), name
    for name in ("matrix", "chart", "show_code", "download_csv", "slot", "format_number", "learner_text", "weights_of"):
        assert callable(getattr(page, name)), name
    assert page.heatmap is drawing.heatmap and page.exercises_section is exercises.exercises_section


def test_heatmap_style_is_a_frozen_dataclass_and_the_key_of_the_kept_template(monkeypatch):
    _drawing = drawing
    style = _drawing.HeatmapStyle(kind="scores", title="Scores", colour_title="score")
    assert dataclasses.is_dataclass(style)
    with pytest.raises(dataclasses.FrozenInstanceError):
        style.title = "other"  # type: ignore[misc]
    templates = ProcessCache(16)
    monkeypatch.setattr(_drawing, "HEATMAP_TEMPLATES", templates)
    _drawing.heatmap_spec(("p", "q"), ("p", "q"), style)
    assert templates.made == 1
    _drawing.heatmap_spec(("r", "s"), ("r", "s"), dataclasses.replace(style))  # an equal style, other labels
    _drawing.heatmap_spec(("t", "u"), ("t", "u"), dataclasses.replace(style, title="Other"))  # titles are filled in
    assert templates.made == 1
    _drawing.heatmap_spec(("v", "w"), ("v", "w"), dataclasses.replace(style, kind="weights"))  # another kind
    assert templates.made == 2


def test_one_matrix_api():
    assert not hasattr(cell_click, "clickable_matrix") and not hasattr(cell_click, "clickable_heatmap")
    for function in (drawing.heatmap, drawing.matrix, drawing.chart):
        assert "caption" in inspect.signature(function).parameters
    heatmap = inspect.signature(drawing.heatmap).parameters
    assert {"explain", "key"} <= set(heatmap)
    assert next(iter(inspect.signature(drawing.matrix).parameters)) == "values"


def test_table_has_no_parameter_shadowing_altair():
    assert "alt" not in inspect.signature(drawing.table).parameters
    assert "alt_text" in inspect.signature(drawing.table).parameters


def clickable_matrix_app() -> None:
    """drawing.matrix with a clickable heatmap and a caption (for AppTest)."""
    import torch

    from ui import drawing
    from ui.widgets import cell_click

    weights = torch.tensor([[0.25, 0.75], [0.5, 0.5]])
    scores = torch.tensor([[0.0, 1.0986], [0.0, 0.0]])
    row = {"masked_scores": scores}
    steps = type("Steps", (), row)
    drawing.matrix(
        weights, ["a", "b"], ["a", "b"], title="w", key="w", explain=cell_click.weights_of(steps), caption="changing"
    )


def test_matrix_draws_the_caption_above_then_a_clickable_heatmap_that_explains_a_kept_cell():
    at = AppTest.from_function(clickable_matrix_app).run()
    assert not at.exception
    assert at.caption[0].value == "changing"
    assert any("Click any cell of w" in caption.value for caption in at.caption)
    at.session_state[cell_click.state_key("w")] = ("b", "a")
    at.run()
    assert not at.exception
    assert any("Weight of key “a”" in markdown.value for markdown in at.markdown)


def test_trained_shares_the_machinery_and_lost_its_rot():
    tree = ast.parse(source(trained))
    assigned = [
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        for element in node.targets
        for target in (element.elts if isinstance(element, ast.Tuple) else [element])
        if isinstance(target, ast.Name)
    ]
    assert assigned.count("HIGHLIGHT_DATA") == 1
    assert not hasattr(trained, "unavailable_reason")
    assert "convert_anything_to_arrow_bytes" not in source(trained)  # ui.charts makes the Arrow bytes


def test_the_grid_frame_uses_the_highlight_constant(monkeypatch):
    monkeypatch.setattr(charts, "HIGHLIGHT", "#123456")
    assert charts.grid_highlight(1, 1).to_dict()["mark"]["stroke"] == "#123456"


def test_the_grid_cells_are_placed_by_the_one_panel_origin(monkeypatch):
    """The browser's cell positions come from _panel_origin, the function the labels and frame use too."""
    import altair as alt
    import pandas as pd

    monkeypatch.setattr(charts, "_panel_origin", lambda layer, head: (head * 1000, layer * 2000))
    cells = pd.DataFrame({"layer": [1], "head": [1], "row_pos": [0], "col_pos": [0], "value": [1.0]})
    labels = pd.DataFrame({"layer": [1], "head": [1], "label": ["x"]})
    with alt.data_transformers.enable("default", max_rows=None):
        spec = charts.all_heads_grid(cells, labels, 1).to_dict()
    calculated = {
        transform["as"]: transform["calculate"]
        for layer in spec["layer"]
        for transform in layer.get("transform", [])
        if "calculate" in transform
    }
    assert calculated["x"].startswith("((datum.head * 1000)") and calculated["y"].startswith("((datum.layer * 2000)")


@pytest.mark.parametrize(
    "name",
    [
        "ui/page.py",
        "ui/drawing.py",
        "ui/models/trained.py",
        "ui/widgets/cell_click.py",
        "ui/widgets/html_table.py",
        "runtime/preload.py",
        "runtime/warmup.py",
        "runtime/cache.py",
    ],
)
def test_docstrings_keep_the_why_and_leave_the_figures_to_the_benchmarks(name):
    text = (UI.parent / name).read_text(encoding="utf-8")
    assert not re.search(r"\d+(\.\d+)? ?ms\b", text), "milliseconds belong in docs/benchmarks.md"
    assert "now only" not in text
