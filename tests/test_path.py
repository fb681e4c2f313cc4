"""The lesson path: every lesson has its experiments and summary, and each experiment's one click sets it up."""

from __future__ import annotations

import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

from attention_core.presets import PRESETS_BY_KEY
from ui import registry
from ui.widgets import inputs

ROOT = Path(__file__).resolve().parents[1]
SIDEBAR_KEYS = {"example"}


def test_every_numbered_lesson_has_two_or_three_experiments_and_three_lines():
    for lesson in registry.numbered():
        assert 2 <= len(lesson.try_this) <= 3
        assert len(lesson.learned) == 3 and all(lesson.learned)


def test_every_setting_names_a_widget_of_its_page_or_the_sidebar():
    """Guards against drift when pages are rewritten: each key must still be a string literal of the page
    (key="...", or the key argument of a shared widget such as inputs.seed_input(label, "qkv_seed"))."""
    for lesson_path in registry.numbered():
        page = lesson_path.path
        source = (ROOT / page).read_text()
        page_keys = set(re.findall(r'"([A-Za-z0-9_]+)"', source))
        for experiment in lesson_path.try_this:
            for key, value in experiment.settings:
                assert key in SIDEBAR_KEYS | page_keys, f"{page}: no widget with key {key!r}"
                if key == "example":
                    assert value in PRESETS_BY_KEY


def script() -> None:
    """The 'Try this' box of lesson 2 and the values its buttons set."""
    import streamlit as st

    from ui import page, registry  # AppTest runs this function's source alone

    page.try_this_box("softmax", registry.lesson_for("softmax").try_this)
    st.caption(f"temperature={st.session_state.get('softmax_temperature')}")
    st.caption(f"example={st.session_state.get('example')} embedding={st.session_state.get('embedding')}")


def test_one_click_sets_up_an_experiment():
    at = AppTest.from_function(script, default_timeout=60).run()
    assert "temperature=None" in [c.value for c in at.caption]
    at.button(key="try:softmax:0").click().run()
    assert "temperature=0.1" in [c.value for c in at.caption]
    at.session_state["query"] = "cat"
    at.button(key="try:softmax:2").click().run()
    assert "example=transformer embedding=printed" in [c.value for c in at.caption]
    expected = inputs.default_query_label("transformer", inputs.DEFAULT_SENTENCE)
    assert at.session_state["query"] == expected != "cat", "a new example starts at its own query"
    assert not at.exception
