"""runtime/preload.py: what the browser readies while the learner reads the first step; it names real modules."""

from __future__ import annotations

import re

import pytest
from altair.vegalite.v6.schema.core import Root

from runtime import preload


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
    monkeypatch.setattr(preload, "warm_up_fragment", preload.warm_up)  # a fragment runs only in a script run
    return calls


class _Sidebar:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def answered() -> None:
    """The browser has sent its stored progress (runtime.browser_store)."""
    preload.st.session_state[preload.browser_store.LOADED] = True


def ready() -> None:
    """The component said the modules are in (its state, as the browser sets it)."""
    preload.st.session_state[preload.COMPONENT_KEY] = {"ready": True}


def test_the_component_is_given_after_the_browsers_first_answer_until_it_is_ready(mounted, monkeypatch):
    monkeypatch.setattr(preload, "element_kinds", lambda link: None)
    answered()
    preload.mount()
    preload.mount()
    assert len(mounted) == 2 and all(call["height"] == 0 and call["key"] == preload.COMPONENT_KEY for call in mounted)
    assert mounted[0]["data"]["modules"] == list(preload.module_files())
    assert len(mounted[0]["data"]["specs"]) == 3
    assert mounted[0]["data"]["quiet_ms"] == preload.QUIET_MS and "on_ready_change" in mounted[0]
    ready()
    preload.mount()
    preload.mount()
    assert len(mounted) == 3, "drawn once more (the fragment's run that draws the element kinds), then never"


def test_while_the_server_still_warms_its_charts_the_browser_loads_modules_only(mounted, monkeypatch):
    """The server's first page does not build the warm specs itself (the warm-up builds them after that page)."""
    monkeypatch.setattr(preload, "element_kinds", lambda link: None)
    answered()
    preload.mount(specs_ready=False)  # lab.py: not warmup.charts_pending()
    assert mounted[0]["data"]["specs"] == [] and mounted[0]["data"]["modules"] == list(preload.module_files())


KINDS_SCRIPT = """
import streamlit as st
from runtime import preload
home = st.Page(lambda: None, title="Home", url_path="home", default=True)
st.navigation([home], position="hidden")
with st.sidebar:
    preload.element_kinds(link=home)
"""


def test_the_element_kinds_are_one_of_each_kind_in_a_hidden_sidebar_container():
    """runtime.preload.element_kinds: every kind a lesson's step draws for the first time at a Next, in the sidebar,
    under a key the page's style hides; each label says Warm-up, so no test or learner takes one for a lesson's own."""
    from streamlit.testing.v1 import AppTest

    from ui import drawing

    at = AppTest.from_string(KINDS_SCRIPT).run()
    assert not at.exception
    assert len(at.sidebar.children) == 1  # one container
    kinds = (
        "markdown",
        "caption",
        "latex",
        "info",
        "warning",
        "success",
        "error",
        "metric",
        "button",
        "expander",
        "code",
        "tabs",
        "text_input",
        "radio",
        "slider",
        "select_slider",
        "number_input",
        "toggle",
        "selectbox",
    )
    for kind in kinds:
        found = getattr(at.sidebar, kind)
        assert len(found) >= 1, kind
    labels = [widget.label for kind in ("button", "text_input", "radio", "slider", "number_input", "toggle")
              for widget in getattr(at.sidebar, kind)]  # fmt: skip
    assert labels and all(label.startswith("Warm-up") for label in labels)
    charts = at.sidebar.get("vega_lite_chart")
    assert len(charts) == 1  # a lab heatmap: Streamlit's chart element runs its code before the first step's chart
    assert "Warm-up heatmap" in charts[0].proto.spec
    assert f".st-key-{preload.KINDS_KEY} {{ display: none !important; }}" in drawing.PAGE_CSS


def test_the_warm_up_waits_for_the_browsers_first_answer_and_the_element_kinds_for_the_component(mounted, monkeypatch):
    """Not on the first run (the browser is drawing the first page, and its style may still be loading), not in a
    script test (no browser answers); the component after the browser sent its stored progress, and the element
    kinds once the component said it is ready (the first page is still by then), once."""
    drawn: list[object] = []
    monkeypatch.setattr(preload, "element_kinds", lambda link: drawn.append(link))
    preload.mount()
    assert drawn == [] and mounted == []
    answered()
    preload.mount()
    assert drawn == [] and len(mounted) == 1
    ready()
    preload.mount()
    preload.mount()
    assert drawn == [preload.registry.LESSONS[0].path] and len(mounted) == 2


def test_the_component_waits_for_a_still_page_before_it_imports_and_then_says_it_is_ready():
    """The order in the component's script: wait for a still main area, then the imports, then ready."""
    body = preload.JS[preload.JS.index("(async () => {") :]
    assert body.index("await quiet()") < body.index("await import(") < body.index('setStateValue("ready", true)')


def test_a_script_test_gets_no_element_kinds():
    """AppTest's runs never hear from a browser: the lab's sidebar holds no warm-up."""
    from tests.apptest_helpers import open_page

    at = open_page("app_pages/scores.py")
    at.run()
    texts = [element.value for element in at.sidebar.markdown] + [widget.label for widget in at.sidebar.button]
    assert not any("Warm-up" in str(text) for text in texts)
