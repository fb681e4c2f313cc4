"""The checks around the 15-minute path and the review on the overview (AppTest): what they draw, what they store in
the learner's progress (the browser's payload), and when the review is offered."""

from __future__ import annotations

import datetime
import json

from streamlit.testing.v1 import AppTest

from attention_core import learning_checks as core
from tests.apptest_helpers import assert_clean, frames, open_page
from ui.widgets import learning_checks, progress

TODAY = datetime.date(2026, 11, 27)
YESTERDAY = TODAY - datetime.timedelta(days=1)


def pre_script() -> None:
    from ui.widgets import learning_checks  # AppTest runs this function's source alone

    learning_checks.pre_check()


def post_script() -> None:
    from ui.widgets import learning_checks

    learning_checks.post_check()


def review_script() -> None:
    from ui.widgets import learning_checks

    learning_checks.review_offer()


def finish_script() -> None:
    from ui.widgets import learning_checks

    learning_checks.note_path_finished()


def app(script, day: datetime.date = TODAY, checks: dict | None = None) -> AppTest:
    at = AppTest.from_function(script, default_timeout=60)
    at.session_state[learning_checks.TODAY_KEY] = day.isoformat()
    if checks is not None:
        at.session_state[progress.CHECKS_KEY] = checks
    return at.run()


def record(at: AppTest) -> dict:
    return at.session_state[progress.CHECKS_KEY]


def answer(at: AppTest, form: str, idea: str, exercise, value) -> None:
    """Type or pick ``value`` in the answer box of one question (None leaves it blank)."""
    key = learning_checks.answer_key(form, idea)
    if exercise.is_choice:
        at.radio(key=key).set_value(value)
    elif value is not None:
        at.text_input(key=key).input(str(value))


def wrong_answer(exercise):
    if exercise.is_choice:
        return next(option for option in exercise.options if option != exercise.answer)
    return f"{float(exercise.answer) + 1:.3f}"


def right_answer(exercise):
    return exercise.answer if exercise.is_choice else f"{float(exercise.answer):.3f}"


def submit(at: AppTest) -> AppTest:
    next(b for b in at.button if b.label == "Check my answers").click()
    return at.run()


def texts(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown] + [c.value for c in at.caption]


def with_checks(**part) -> dict:
    return progress.empty_checks() | part


def test_the_check_before_the_path_stores_right_wrong_and_blank_per_idea():
    at = app(pre_script)
    asked = learning_checks.questions("pre")
    assert [e.prompt for _, e in asked] == [e.prompt for e in core.pre_check(learning_checks.SEED)]
    assert not record(at)["pre"], "drawing the check stores nothing"
    plan = dict(zip(core.IDEAS, ("right", "wrong", "right", "skipped", "wrong"), strict=True))
    for idea, exercise in asked:
        value = {"right": right_answer, "wrong": wrong_answer}.get(plan[idea], lambda _: None)(exercise)
        answer(at, "pre", idea, exercise, value)
    at = submit(at)
    assert_clean(at)
    assert record(at)["pre"] == plan and record(at)["post"] == {} and record(at)["finished"] is None
    assert "**Your check before the path: 2 of 5 right.**" in texts(at)
    line = next(t for t in texts(at) if t.startswith("Scores"))
    assert "Softmax (scores to weights): wrong" in line and "Scaling by √d_k: skipped" in line
    assert not at.text_input and not at.radio, "the form is gone once answered"
    assert not any(str(e.answer) in line for _, e in asked if not e.is_choice), "no solution before the path"
    data = progress.parse_file(json.dumps({"version": 1, "lessons": {}, "visited": [], "checks": record(at)}))
    assert data["checks"]["pre"] == plan


def test_an_answer_that_is_not_a_number_is_named_and_nothing_is_stored():
    at = app(pre_script)
    idea, exercise = next((i, e) for i, e in learning_checks.questions("pre") if not e.is_choice)
    answer(at, "pre", idea, exercise, "two")
    at = submit(at)
    number = [i for i, _ in learning_checks.questions("pre")].index(idea) + 1
    assert [w.value for w in at.warning] == [
        f"Question {number}: 'two' is not a number: type digits such as 0.25 or -1.5."
    ]
    assert record(at)["pre"] == {} and at.text_input(key=learning_checks.answer_key("pre", idea)).value == "two"
    answer(at, "pre", idea, exercise, right_answer(exercise))
    at = submit(at)
    assert not at.warning and record(at)["pre"][idea] == "right"


def test_skipping_the_check_stores_skipped_for_every_idea():
    at = app(pre_script)
    at.button(key="lc:pre-skip").click().run()
    assert record(at)["pre"] == dict.fromkeys(core.IDEAS, "skipped")
    assert any("You skipped the check before the path" in t for t in texts(at))
    assert progress.parse_file(json.dumps({"version": 1, "lessons": {}, "visited": [], "checks": record(at)}))


def test_the_check_after_the_path_shows_before_and_after_per_idea_and_the_day_it_was_done():
    before = dict(dict.fromkeys(core.IDEAS, "wrong"), scores="right", masking="skipped")
    at = app(post_script, checks=with_checks(pre=before))
    asked = learning_checks.questions("post")
    assert [e.prompt for _, e in asked] == [e.prompt for e in core.post_check(learning_checks.SEED)]
    for n, (idea, exercise) in enumerate(asked):
        answer(at, "post", idea, exercise, wrong_answer(exercise) if n == 0 else right_answer(exercise))
    at = submit(at)
    assert_clean(at)
    after = dict(dict.fromkeys(core.IDEAS, "right"), scores="wrong")
    assert record(at)["post"] == after and record(at)["finished"] == TODAY.isoformat()
    (table,) = frames(at)
    assert list(table.columns) == ["before the path", "after the path"]
    assert list(table.index) == [core.IDEA_LABELS[idea] for idea in core.IDEAS]
    assert list(table["before the path"]) == [before[idea] for idea in core.IDEAS]
    assert list(table["after the path"]) == [after[idea] for idea in core.IDEAS]
    assert "**4 of 5 right, up from 1.**" in texts(at)
    answers = at.expander[0]
    assert answers.label == "The answers of the check after the path"
    assert all(core.IDEA_LABELS[idea] in answers.markdown[n].value for n, (idea, _) in enumerate(asked))


def test_skipping_the_check_after_the_path_still_marks_it_finished():
    at = app(post_script, checks=with_checks(pre=dict.fromkeys(core.IDEAS, "right")))
    at.button(key="lc:post-skip").click().run()
    assert record(at)["post"] == dict.fromkeys(core.IDEAS, "skipped") and record(at)["finished"] == TODAY.isoformat()
    assert list(frames(at)[0]["after the path"]) == ["skipped"] * 5
    assert "**0 of 5 right, down from 5.**" in texts(at)


def test_the_path_end_keeps_its_first_day():
    at = app(finish_script, day=YESTERDAY)
    assert record(at)["finished"] == YESTERDAY.isoformat()
    at.session_state[learning_checks.TODAY_KEY] = TODAY.isoformat()
    at.run()
    assert record(at)["finished"] == YESTERDAY.isoformat()


def welcome(at: AppTest) -> bool:
    return "**Welcome back: a 3-question review of what you did**" in texts(at)


def test_the_review_is_offered_a_day_after_the_path_and_not_on_the_day_itself():
    assert not welcome(app(review_script, checks=with_checks(finished=TODAY.isoformat())))
    assert not welcome(app(review_script)), "nothing finished: nothing offered"
    assert not app(review_script).markdown, "and nothing drawn"
    at = app(review_script, checks=with_checks(finished=YESTERDAY.isoformat()))
    assert welcome(at)
    asked = learning_checks.review_questions(TODAY)
    assert len(asked) == 3 and len(at.text_input) + len(at.radio) == 3
    checked = {e.prompt for which in ("pre", "post") for _, e in learning_checks.questions(which)}
    assert not {e.prompt for _, e in asked} & checked, "fresh numbers"


def test_answering_the_review_stores_it_with_today_and_it_waits_for_its_next_day():
    at = app(review_script, checks=with_checks(finished=YESTERDAY.isoformat()))
    asked = learning_checks.review_questions(TODAY)
    form = f"review-{TODAY.isoformat()}"
    for n, (idea, exercise) in enumerate(asked):
        answer(at, form, idea, exercise, right_answer(exercise) if n else None)  # the first left blank
    at = submit(at)
    assert_clean(at)
    first = asked[0][0]
    expected = {idea: idea != first for idea, _ in asked}
    assert record(at)["reviews"] == [{"date": TODAY.isoformat(), "ideas": expected}]
    assert not welcome(at) and not at.text_input and not at.radio
    assert "**Today's review: 2 of 3 right.**" in texts(at)
    due = TODAY + datetime.timedelta(days=3)
    assert f"The next review is offered on {due:%A} {due.day} {due:%B} (in 3 days)." in texts(at)
    assert any(t.startswith(f"1. {core.IDEA_LABELS[first]}: Not this time.") for t in texts(at))
    at.run()
    assert not welcome(at), "not offered again the same day"
    stored = json.loads(json.dumps(record(at)))
    for days, offered in ((1, False), (2, False), (3, True), (9, True)):
        later = app(review_script, day=TODAY + datetime.timedelta(days=days), checks=json.loads(json.dumps(stored)))
        assert welcome(later) is offered, days


def test_the_overview_offers_the_review_from_a_loaded_file_a_day_old():
    at = open_page()
    assert not welcome(at)
    at.session_state[learning_checks.TODAY_KEY] = TODAY.isoformat()
    checks = with_checks(pre=dict.fromkeys(core.IDEAS, "wrong"), post=dict.fromkeys(core.IDEAS, "right"))
    old = {"version": 1, "lessons": {}, "visited": [], "checks": checks | {"finished": YESTERDAY.isoformat()}}
    at.get("file_uploader")[0].set_value(("p.json", json.dumps(old).encode(), "application/json"))
    at.run()
    assert_clean(at)
    assert welcome(at)
    headings = [m.value for m in at.markdown]
    assert headings.index("**Welcome back: a 3-question review of what you did**") < next(
        n for n, text in enumerate(headings) if text.startswith("**The 15-minute path.**")
    ), "right after the introduction"
    today = json.loads(json.dumps(old))
    today["checks"]["finished"] = TODAY.isoformat()
    fresh = open_page()
    fresh.session_state[learning_checks.TODAY_KEY] = TODAY.isoformat()
    fresh.get("file_uploader")[0].set_value(("p.json", json.dumps(today).encode(), "application/json"))
    fresh.run()
    assert not welcome(fresh), "finished today: no review yet"


def test_the_payload_round_trips_and_forget_forgets_the_checks(monkeypatch):
    state: dict = {}
    monkeypatch.setattr(progress.st, "session_state", state)
    progress.note_check("pre", dict.fromkeys(core.IDEAS, "wrong"))
    progress.note_check("post", dict(dict.fromkeys(core.IDEAS, "right"), context="skipped"))
    progress.note_finished(YESTERDAY)
    progress.note_review(TODAY, {"scores": True, "softmax": False, "masking": True})
    data = progress.parse_file(progress.payload_text())
    assert data == progress.payload() and data["checks"] == state[progress.CHECKS_KEY]
    assert data["checks"]["reviews"] == [
        {"date": TODAY.isoformat(), "ideas": {"scores": True, "softmax": False, "masking": True}}
    ]
    progress.reset()
    assert "checks" not in progress.payload(), "an empty record is left out, as before the checks existed"
    progress.merge(data)
    assert progress.parse_file(progress.payload_text()) == data, "what was written loads back"
