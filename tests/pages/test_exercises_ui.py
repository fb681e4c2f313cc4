"""The 'Check yourself' section (AppTest on a small script): right, wrong and malformed answers of each kind,
hint then solution, nothing given away before the learner commits, and the session's progress."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from attention_core.exercises import ExerciseInput, exercises_for, softmax_exercises
from tests.apptest_helpers import assert_clean, frames, open_page
from tests.learn_helpers import answer as answer_in
from tests.learn_helpers import page_exercises
from ui.widgets import inputs, progress
from ui.widgets.exercises import answer_key, place_name

LESSON = "app_pages/softmax.py"


def script() -> None:
    """Lesson 2's exercises on the default input, with the progress marker and table."""
    import streamlit as st

    from ui.widgets import inputs, progress
    from ui.widgets.exercises import exercises_section

    exercises_section("app_pages/softmax.py", inputs.default_input())
    st.sidebar.caption(progress.progress_marker())
    progress.progress_table()


@pytest.fixture
def at() -> AppTest:
    """The script after its first run."""
    return AppTest.from_function(script, default_timeout=60).run()


@pytest.fixture
def items():
    """The exercises the script shows (same input, same generator)."""
    lab = inputs.default_input()
    return {
        item.id.rsplit("-", 1)[0]: item
        for item in exercises_for("softmax", softmax_exercises, ExerciseInput(lab.labels, lab.X, lab.query_index))
    }


def texts(at) -> str:
    """Everything the page shows as text (markdown, alerts, captions, widget labels and options)."""
    parts = [e.value for kind in ("markdown", "success", "error", "warning", "info", "caption") for e in at.get(kind)]
    parts += [str(option) for radio in at.radio for option in radio.options]
    return "\n".join(str(part) for part in parts)


def answer(at, item, value):
    """Type or pick an answer in the item's form and press Check."""
    key = answer_key(LESSON, item)
    widget = at.radio(key=key) if item.is_choice else at.text_input(key=key)
    widget.set_value(value)
    return next(b for b in at.button if b.proto.form_id == f"exf:softmax:{place_name(item)}").click().run()


def test_the_section_lists_every_kind_and_gives_nothing_away(at, items):
    assert_clean(at)
    assert [h.value for h in at.subheader] == ["Check yourself"]
    assert {item.kind for item in items.values()} == {"numeric", "choice", "what-if"}
    shown = texts(at)
    for item in items.values():
        assert item.prompt in shown
        assert item.solution not in shown and item.hint not in shown
        assert "Answer:" not in shown
    assert not at.success and not at.error
    assert "Exercises: none answered yet" in [c.value for c in at.sidebar.caption]


def test_numeric_malformed_then_wrong_then_hint_then_solution(at, items):
    weight = items["weight"]
    for bad, reason in [("", "Type a number"), ("abc", "not a number"), ("nan", "NaN"), ("1e400", "too large")]:
        answer(at, weight, bad)
        assert_clean(at)
        assert any(reason in w.value for w in at.warning), bad
        record = at.session_state[progress.STATE_KEY]["softmax"][weight.id]
        assert record["tries"] == 0, "a malformed answer is not a try"
    answer(at, weight, str(float(weight.answer) + 0.3))
    assert any("Not quite" in e.value for e in at.error)
    assert any(weight.hint in i.value for i in at.info), "a first wrong answer gets the hint"
    assert weight.solution not in texts(at)
    assert any(b.label == "Show me the answer" for b in at.button)
    answer(at, weight, str(float(weight.answer) + 0.3))
    assert weight.solution in texts(at), "a second wrong answer shows the worked solution"
    answer(at, weight, f"{float(weight.answer):.3f}".replace(".", ","))
    assert any("comma" in s.value and s.value.startswith("Right") for s in at.success)
    record = at.session_state[progress.STATE_KEY]["softmax"][weight.id]
    assert record == {"tries": 3, "correct": True, "revealed": False}


def test_choice_no_pick_wrong_and_right(at, items):
    top = items["top-weight"]
    answer(at, top, None)
    assert any("Pick one" in w.value for w in at.warning)
    wrong = next(option for option in top.options if option != top.answer)
    answer(at, top, wrong)
    assert any("Not this one" in e.value for e in at.error)
    assert any(top.hint in i.value for i in at.info)
    answer(at, top, top.answer)
    assert any(s.value.startswith(f"Right: **{top.answer}**") for s in at.success)
    assert top.solution in texts(at)


def test_what_if_number_and_choice(at, items):
    hot, shift = items["temperature"], items["shift"]
    answer(at, hot, "-inf")
    assert any("too large" in w.value for w in at.warning)
    answer(at, hot, f"{float(hot.answer):.3f}")
    assert any(s.value.startswith("Right") for s in at.success)
    answer(at, shift, "all grow")
    assert any("Not this one" in e.value for e in at.error)
    at.button(key=f"exs:softmax:{shift.id}").click().run()  # every exercise has the button from the start
    assert shift.solution in texts(at), "Show solution reveals it at once"
    assert_clean(at)


def test_progress_counts_marker_table_and_reset(at, items):
    answer(at, items["weight"], f"{float(items['weight'].answer):.4f}")
    answer(at, items["top-weight"], next(o for o in items["top-weight"].options if o != items["top-weight"].answer))
    assert "Exercises: 1/2 correct" in [c.value for c in at.sidebar.caption]
    table = frames(at)[0]
    assert table.loc["2. Softmax", "answered"] == 2 and table.loc["2. Softmax", "correct"] == 1
    at.button(key="reset_progress").click().run()
    assert "Exercises: none answered yet" in [c.value for c in at.sidebar.caption]
    assert at.text_input(key=answer_key(LESSON, items["weight"])).value == ""


def test_another_query_keeps_the_answer_to_a_question_not_about_it():
    """Lesson 4 after two answers, then another query: the question about the query is new, in the same form
    (same widget key, so the browser updates it in place) with a blank answer; the other keeps its answer."""
    path = "app_pages/qkv_projections.py"
    at = open_page(path)
    shown = page_exercises(at, path)
    entry, count = shown["query-entry"], shown["parameters"]
    answer_in(at, path, entry, "0")
    answer_in(at, path, count, str(int(float(count.answer))))
    assert any(s.value.startswith("Right") for s in at.success)
    box = at.sidebar.selectbox(key="query")
    box.set_value(next(option for option in box.options if option != box.value)).run()
    assert_clean(at)
    now = page_exercises(at, path)
    assert now["parameters"] == count and now["query-entry"] != entry, "only the question about the query changed"
    assert at.text_input(key=answer_key(path, count)).value == str(int(float(count.answer)))
    assert at.text_input(key=answer_key(path, entry)).value == "", "a new question starts blank"
    assert now["query-entry"].prompt in texts(at) and entry.prompt not in texts(at)
    assert any(s.value.startswith("Right") for s in at.success), "the kept question's verdict stays"
