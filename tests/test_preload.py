"""ui/preload.py: what the browser readies while the learner reads the first step, and that it names real modules."""

from __future__ import annotations

import re

import pytest
from altair.vegalite.v6.schema.core import Root

from ui import preload


def test_every_module_the_lab_preloads_is_in_this_streamlit():
    """A Streamlit upgrade that renames a lazy module fails here instead of quietly losing the warm-up."""
    files = preload.module_files()
    assert [file.split(".")[0] for file in files] == list(preload.MODULES)
    assert all((preload.static_js_folder() / file).is_file() for file in files)


def test_the_bundle_the_component_looks_for_is_the_one_streamlit_serves():
    """The component finds Streamlit's bundle by its file name; index.html must load it that way."""
    index = (preload.static_js_folder().parents[1] / "index.html").read_text()
    bundle = re.search(r'<script type="module"[^>]*src="\./static/js/(index\.[^/"]+\.js)"', index)
    assert bundle and (preload.static_js_folder() / bundle.group(1)).is_file()
    assert r"\/static\/js\/index\.[^/]+\.js$" in preload.JS


def test_vega_is_warmed_once_its_modules_are_in_and_before_the_rest():
    data = preload.payload()
    files = data["modules"]
    assert data["vega_loader"] == files[data["vega_after"] - 2]  # the loader, Vega-Embed, then the interpreter
    assert [file.split(".")[0] for file in files[: data["vega_after"] + 1]] == list(preload.MODULES[:4])


def test_the_warm_charts_are_a_lab_heatmap_bars_and_lines_with_their_data_inline():
    spec, bars, lines = preload.payload()["specs"]
    for chart in (bars, lines):
        Root.from_dict(chart, validate=True)
        assert all(rows for rows in chart["datasets"].values())
    assert bars["mark"]["type"] == "bar" and lines["mark"]["type"] == "line"
    Root.from_dict(spec, validate=True)  # valid Vega-Lite (raises otherwise)
    assert spec["datasets"] and all(rows for rows in spec["datasets"].values())  # nothing to fetch or insert
    marks = [layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"] for layer in spec["layer"]]
    assert {"rect", "text"} <= set(marks)  # the cells and their numbers, as the lessons draw them
    assert [param["name"] for param in spec["params"]] == ["cell"]  # a click selects a cell, as in the lessons


@pytest.fixture
def mounted(monkeypatch) -> list[dict]:
    calls: list[dict] = []
    monkeypatch.setattr(preload.st, "session_state", {})
    monkeypatch.setattr(preload, "_component", lambda **kwargs: calls.append(kwargs))
    monkeypatch.setattr(preload.st, "sidebar", _Sidebar())
    return calls


class _Sidebar:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_the_component_is_given_on_a_sessions_first_run_only(mounted):
    preload.mount()
    preload.mount()
    assert len(mounted) == 1 and mounted[0]["height"] == 0
    assert mounted[0]["data"]["modules"] == list(preload.module_files())
    assert len(mounted[0]["data"]["specs"]) == 3


def test_while_the_server_still_warms_its_charts_the_browser_loads_modules_only(mounted, monkeypatch):
    """The server's first page does not build the warm specs itself (the warm-up builds them after that page)."""
    monkeypatch.setattr(preload.warmup, "charts_pending", lambda: True)
    preload.mount()
    assert mounted[0]["data"]["specs"] == [] and mounted[0]["data"]["modules"] == list(preload.module_files())
