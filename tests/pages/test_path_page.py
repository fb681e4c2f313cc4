"""The 15-minute path (issue 36): one worked example whose stops compute from each other, a question before every
stop's result, no reference to a step it does not show, no idle control, and 15 minutes of reading and answering.

The stops are opened as a learner reaches them (step=N); "Show me the answer" stands for answering, and the
numbers a stop reveals are read back as DataFrames (tests/apptest_helpers.frames).
"""

from __future__ import annotations

import re

import pandas as pd
import pytest
import torch

from tests.apptest_helpers import assert_clean, charts, frames, lab_input, open_page, sentence_params
from tests.pages.test_answers_after import check_after, check_before, settle
from ui import registry
from ui.widgets import learning_checks, progress

PAGE = "app_pages/path.py"
LESSON = "path"
STOPS = (
    "Start",
    "Q, K, V",
    "Scores",
    "√d_k",
    "Softmax",
    "Mask",
    "Context",
    "Heads",
    "Word order",
    "One line",
    "Trained model",
    "Next token",
    "Finish",
)
ASKING = range(2, 13)  # stops 2-12 ask one question each; 1 and 13 hold the checks before and after
WORDS_PER_MINUTE = 200
MINUTES_PER_QUESTION = 20 / 60
TEXT_KINDS = ("markdown", "caption", "info", "success", "warning", "subheader", "header", "latex")
TYPED = sentence_params("the cat sat on the mat", embedding="random", seed=3)


def stop(number: int, params: dict[str, str] | None = None):
    return open_page(PAGE, {**(params or {}), "step": str(number)}, timeout=120)


def asked(at) -> tuple:
    key = f"_exercises_shown:{LESSON}"
    return at.session_state.get(key, ())


def show_answers(at):
    """Click "Show me the answer" for every question the stop asks (as a learner who does not answer would)."""
    for exercise in asked(at):
        at.button(key=f"exs:{LESSON}:{exercise.id}").click().run()
    assert_clean(at)
    return at


def numbers_of(frame: pd.DataFrame) -> set[str]:
    return {f"{float(v):.4f}" for v in frame.select_dtypes("number").to_numpy().reshape(-1).tolist()}


def test_the_path_is_a_page_of_its_own_in_steps():
    at = stop(1)
    assert_clean(at)
    bar = at.segmented_control(key=f"stepbar:{LESSON}")
    assert [option.split(". ", 1)[1] for option in bar.options] == list(STOPS)
    assert registry.BY_NAME[LESSON].number is None, "the path is not a lesson: the lessons are the deep dives"


@pytest.mark.parametrize("params", [{}, TYPED], ids=["default", "typed"])
@pytest.mark.parametrize("number", list(ASKING))
def test_every_stop_asks_one_question_before_its_result(number, params):
    at = stop(number, params)
    assert_clean(at)
    questions = asked(at)
    assert len(questions) == 1, [q.id for q in questions]
    before = len(frames(at)) + len(charts(at))
    show_answers(at)
    after = len(frames(at)) + len(charts(at))
    assert after > before, "the stop reveals its result once the question is settled"
    assert questions[0].solution in " ".join(m.value for m in at.markdown)


def revealed_frames(number: int, params: dict[str, str] | None = None) -> list[pd.DataFrame]:
    return frames(show_answers(stop(number, params)))


@pytest.mark.parametrize("params", [{}, TYPED], ids=["default", "typed"])
def test_the_v_of_the_qkv_stop_is_the_v_later_stops_blend(params):
    """Stop 2's V is the V of stop 7's table (the context stop), and stop 7's context row reaches stop 8's
    concatenation: one set of numbers from Q, K, V to the heads."""
    qkv = revealed_frames(2, params)
    V = next(frame for frame in qkv if list(frame.columns) == ["v1", "v2"])
    context_stop = stop(7, params)
    blend = next(frame for frame in frames(context_stop) if {"v1", "v2"} <= set(frame.columns))
    pd.testing.assert_frame_equal(blend[["v1", "v2"]], V, check_names=False)
    contexts = next(frame for frame in frames(show_answers(context_stop)) if list(frame.columns) == ["c1", "c2"])
    heads = stop(8, params)
    query = at_query(heads)
    concat = next(frame for frame in frames(heads) if "head 1: c1" in frame.columns)
    assert concat.loc[query, ["head 1: c1", "head 1: c2"]].tolist() == contexts.loc[query].tolist()
    scores = revealed_frames(3, params)
    Q = next(frame for frame in qkv if list(frame.columns) == ["q1", "q2"])
    QK = next(frame for frame in frames(stop(3, params)) if list(frame.columns) == ["q1", "q2", "k1", "k2"])
    assert QK[["q1", "q2"]].to_numpy().tolist() == Q.to_numpy().tolist(), "the scores stop scores stop 2's Q"
    assert scores, "the scores stop reveals its table"


def at_query(at) -> str:
    return str(lab_input(at).query_label)


def test_the_one_line_equals_the_step_by_step_context():
    one_line = revealed_frames(10)
    context = next(frame for frame in revealed_frames(7) if list(frame.columns) == ["c1", "c2"])
    sdpa = next(frame for frame in one_line if list(frame.columns) == ["c1", "c2"])
    assert torch.allclose(torch.tensor(sdpa.to_numpy()), torch.tensor(context.to_numpy()), atol=1e-6)


def test_the_mask_stop_follows_a_query_the_mask_changes():
    """On the default example and with the last token as the query, the masked row differs from the unmasked."""
    for params in ({}, sentence_params("the cat sat on the mat", query="mat")):
        at = stop(6, params)
        blocked = [m.value for m in at.markdown if m.value.startswith("The mask keeps")]
        assert blocked and "blocks nothing" not in blocked[0], blocked


def test_word_order_reveals_rows_that_only_move():
    revealed = revealed_frames(9)
    in_order, reversed_ = (frame for frame in revealed if list(frame.columns)[:1] == ["d1"])
    assert len(in_order) == len(reversed_)
    pd.testing.assert_frame_equal(in_order.sort_index(), reversed_.sort_index(), check_exact=False, atol=1e-6)


STOP_REFERENCE = re.compile(r"\bstops? (\d+)(?:\s*(?:-|to|and)\s*(\d+))?", re.IGNORECASE)
DANGLING = ("below", "see the step", "stage ")


def stop_text(at) -> str:
    return "\n".join(str(element.value) for kind in TEXT_KINDS for element in at.get(kind))


@pytest.mark.parametrize("number", range(1, len(STOPS) + 1))
def test_a_stop_refers_only_to_stops_of_the_path_and_has_no_idle_control(number):
    """Nothing dangling: "stop N" names a stop the path has, no "see ... below" or stage of another page, and the
    only controls are the question's form, the navigation and the checks' forms."""
    at = show_answers(stop(number))
    text = stop_text(at)
    for first, last in STOP_REFERENCE.findall(text):
        for n in (first, last):
            assert not n or 1 <= int(n) <= len(STOPS), (number, n)
    assert not any(word in text.lower() for word in DANGLING), text
    controls = [*at.slider, *at.selectbox, *at.select_slider, *at.number_input, *at.toggle]
    main_controls = [
        c
        for c in controls
        if not str(c.key or "").startswith(("whole_lesson",))
        and c.key not in {"example", "embedding", "seed", "d_model", "query", "sentence", "weights_scale", "lang"}
    ]
    assert not main_controls, [c.key for c in main_controls]


def words(at) -> int:
    """The words a learner reads on a stop: text, headings, table headers and labels (numbers count as words)."""
    count = len(re.findall(r"\S+", stop_text(at)))
    for frame in frames(at):
        count += len(frame.columns) + len(frame.index) + frame.size
    return count


def test_the_path_reads_and_answers_in_15_minutes(monkeypatch):
    """Words / 200 per minute with every result revealed, plus 20 s per question, over every stop; the checks before
    and after the path come on top (about 2 minutes each), so they are left out here."""
    monkeypatch.setattr(learning_checks, "pre_check", lambda: None)
    monkeypatch.setattr(learning_checks, "post_check", lambda: None)
    minutes = 0.0
    for number in range(1, len(STOPS) + 1):
        at = show_answers(stop(number))
        minutes += words(at) / WORDS_PER_MINUTE + len(asked(at)) * MINUTES_PER_QUESTION
    print(f"15-minute path: {minutes:.1f} minutes over {len(STOPS)} stops")
    assert minutes <= 15, minutes


def test_a_stop_answer_is_graded_and_kept_in_the_progress():
    at = stop(4)
    question = asked(at)[0]
    at.text_input(key=f"ex:{LESSON}:{question.id.rsplit('-', 1)[0]}").input(f"{float(question.answer):.3f}")
    next(button for button in at.button if button.label == "Check").click().run()
    assert_clean(at)
    entry = at.session_state[progress.STATE_KEY][LESSON][question.id]
    assert entry["correct"] and entry["tries"] == 1
    assert any(s.value.startswith("Right") for s in at.success)
    assert any(list(frame.columns) == list(lab_input(at).labels) for frame in frames(at)), (
        "the answer reveals the scaled row"
    )


def test_the_overview_opens_the_path_and_picks_it_up_where_the_learner_left():
    at = open_page("app_pages/overview.py")
    link = next(link for link in at.get("page_link") if link.proto.page == LESSON)
    assert link.proto.label == "Take the 15-minute path"
    at.session_state[progress.STEPS_KEY] = {LESSON: [1, 2, 3, 4]}
    at.run()
    link = next(link for link in at.get("page_link") if link.proto.page == LESSON)
    assert link.proto.label == "Continue the path at stop 4" and "step=4" in link.proto.query_string


@pytest.mark.parametrize("params", [{}, TYPED], ids=["default", "typed"])
@pytest.mark.parametrize("number", list(ASKING))
def test_a_stop_answer_is_not_on_the_stop_before_the_learner_answers(number, params):
    """Issue 36 item 8 on the path too (the rule and its checks are tests/pages/test_answers_after.py's): before the
    answer nothing gives it away and its operands are on the stop; after, the stop draws what answers it."""
    at = stop(number, params)
    assert_clean(at)
    items = list(asked(at))
    where = f"path stop {number}"
    check_before(at, at.main, registry.BY_NAME[LESSON], items, where)
    at = settle(at, registry.BY_NAME[LESSON], items)
    assert_clean(at)
    check_after(at.main, items, where)
