"""The checks around the 15-minute path, and the review offered on a later day: what the learner learned, measured.

- ``pre_check()``: five questions before the path (one per idea), one form, skippable; then right or wrong per
  idea, with no solutions (the path teaches them).
- ``post_check()``: the matched check after the path (the same ideas in the same forms, other numbers); then
  ``results()``: before and after per idea, a one-line summary, and the answers.
- ``note_path_finished()``: the path's last stop calls it; the first day is kept.
- ``review_offer()``: on the overview, a day or more after the path (then 3, 7, 14 and 30 days after the last
  review), three questions over the path's ideas with fresh numbers; afterwards the result and the next review's
  day. Otherwise it draws nothing.

Every result goes to the "checks" part of the learner's progress (``ui.widgets.progress``), which lives in the browser:
nothing is stored on the server. The questions are ``attention_core.learning_checks``'s, graded as the lessons'
exercises are (``check_answer``); every answer sits in a form, so typing does not rerun the page.
"""

from __future__ import annotations

import datetime

import pandas as pd
import streamlit as st

from attention_core import learning_checks as core
from attention_core.exercises import Exercise, check_answer
from attention_core.i18n import N_, _
from ui import drawing
from ui.format import learner_text
from ui.widgets import progress
from ui.widgets.exercises import answer_text

SEED = 17  # the checks' numbers: the same for everyone, so a reload or another browser asks the same questions
TODAY_KEY = "_learning_checks_today"  # tests only: an ISO date that stands in for today (no widget has this key)
PROBLEMS_KEY = "lc:problems"  # {form name: [(question number, why its answer could not be read)]}
RESULT_WORDS = {"right": N_("right"), "wrong": N_("wrong"), "skipped": N_("skipped")}  # shown through _()
TITLES = {"pre": N_("Before the path: five quick questions"), "post": N_("After the path: the matching check")}
WEEKDAYS = (N_("Monday"), N_("Tuesday"), N_("Wednesday"), N_("Thursday"), N_("Friday"), N_("Saturday"), N_("Sunday"))
MONTHS = (
    N_("January"), N_("February"), N_("March"), N_("April"), N_("May"), N_("June"),
    N_("July"), N_("August"), N_("September"), N_("October"), N_("November"), N_("December"),
)  # fmt: skip


def today() -> datetime.date:
    """Today on the server (tests put another day in TODAY_KEY)."""
    override = st.session_state.get(TODAY_KEY)
    return datetime.date.fromisoformat(override) if override else datetime.date.today()


def questions(which: str) -> tuple[tuple[str, Exercise], ...]:
    """(idea, question) of the check before ("pre") or after ("post") the path."""
    made = core.pre_check(SEED) if which == "pre" else core.post_check(SEED)
    return tuple(zip(core.IDEAS, made, strict=True))


def review_questions(day: datetime.date) -> tuple[tuple[str, Exercise], ...]:
    """The review of ``day``: the same three questions all day, other ones another day."""
    answered = [exercise.prompt for which in ("pre", "post") for _idea, exercise in questions(which)]
    return core.review(core.IDEAS, day.toordinal(), avoid=answered)  # the path teaches all five ideas


def answer_key(form: str, idea: str) -> str:
    return f"lc:{form}:{idea}"


# --- answering ------------------------------------------------------------------------------------------------


def answer_widget(form: str, number: int, idea: str, exercise: Exercise) -> None:
    """One question and its answer box (inside the caller's form)."""
    st.markdown(
        _("**{number}. {idea}.** {prompt}", number=number, idea=_(core.IDEA_LABELS[idea]), prompt=exercise.prompt)
    )
    label = _("Your answer to question {number}", number=number)
    if exercise.is_choice:
        st.radio(
            label,
            exercise.options,  # the English values (graded); each shown in the learner's language
            index=None,
            key=answer_key(form, idea),
            format_func=lambda option: learner_text(exercise.option_text(option)),
        )
    else:
        st.text_input(
            label,
            key=answer_key(form, idea),
            placeholder=_("a number, e.g. 0.25"),
            max_chars=60,
            help=_(
                "A dot or a comma as the decimal mark. Within ±{within} counts as right.",
                within=f"{exercise.tolerance:g}",
            ),
        )


def graded(form: str, asked: tuple[tuple[str, Exercise], ...]) -> tuple[dict[str, str], list[tuple[int, str]]]:
    """({idea: "right" | "wrong" | "skipped"}, [(number, why an answer could not be read)]): a blank is skipped."""
    results: dict[str, str] = {}
    problems = []
    for number, (idea, exercise) in enumerate(asked, 1):
        answer = st.session_state.get(answer_key(form, idea))
        if answer is None or not str(answer).strip():
            results[idea] = "skipped"
            continue
        verdict = check_answer(exercise, answer)
        if verdict.status == "invalid":
            problems.append((number, verdict.message))
        results[idea] = "right" if verdict.status == "correct" else "wrong"
    return results, problems


def submit_check(which: str) -> None:
    """The check's form was sent: store the result per idea (or say which answers could not be read)."""
    results, problems = graded(which, questions(which))
    st.session_state.setdefault(PROBLEMS_KEY, {})[which] = problems
    if problems:
        return
    progress.note_check(which, results)
    if which == "post":
        progress.note_finished(today())


def skip_check(which: str) -> None:
    progress.note_check(which, dict.fromkeys(core.IDEAS, "skipped"))
    if which == "post":
        progress.note_finished(today())


def show_problems(form: str) -> None:
    for number, message in st.session_state.get(PROBLEMS_KEY, {}).get(form, []):
        st.warning(
            _("Question {number}: {problem}", number=number, problem=learner_text(message)), icon=":material/edit:"
        )


def check_form(which: str) -> None:
    """The five questions of a check in one form, then the skip button."""
    with st.container(border=True):
        st.markdown(f"**{_(TITLES[which])}**")
        if which == "pre":
            st.caption(
                _(
                    "One question for each idea of the path, to see what you know now. The same check with other "
                    "numbers comes at the end, so you can see what you learned. Leave a question blank if you do not "
                    "know. Nothing leaves your browser."
                )
            )
        else:
            st.caption(
                _(
                    "The same five ideas as the check before the path, with other numbers. Leave a question blank if "
                    "you do not know."
                )
            )
        show_problems(which)
        with st.form(key=f"lc:{which}-form", border=False):
            for number, (idea, exercise) in enumerate(questions(which), 1):
                answer_widget(which, number, idea, exercise)
            st.form_submit_button(
                _("Check my answers"), icon=":material/task_alt:", on_click=submit_check, args=(which,)
            )
        st.button(_("Skip the check"), key=f"lc:{which}-skip", on_click=skip_check, args=(which,))


# --- the checks around the path -------------------------------------------------------------------------------


def per_idea_line(results: dict[str, str]) -> str:
    pairs = [
        _("{idea}: {result}", idea=_(core.IDEA_LABELS[idea]), result=_(RESULT_WORDS[results[idea]]))
        for idea in core.IDEAS
    ]
    # TRANSLATORS: what separates the ideas' results in a line ("Scores (dot products): right; Softmax …").
    return _("{results}.", results=_("; ").join(pairs))


def pre_check() -> None:
    """The check before the path, or its result once answered or skipped."""
    pre = progress.checks()["pre"]
    if not pre:
        check_form("pre")
        return
    with st.container(border=True):
        if all(result == "skipped" for result in pre.values()):
            st.markdown(_("You skipped the check before the path. The check at the end still shows what you know."))
            return
        st.markdown(
            _("**Your check before the path: {right} of {total} right.**", right=core.right_count(pre), total=len(pre))
        )
        st.markdown(per_idea_line(pre))
        st.caption(_("The path explains each idea. The check at the end asks them again with other numbers."))


def post_check() -> None:
    """The matched check after the path, then the results before and after."""
    if not progress.checks()["post"]:
        check_form("post")
        return
    results()


def results_frame(pre: dict[str, str], post: dict[str, str]) -> pd.DataFrame:
    """One row per idea: the result before and after the path ("not taken" where that check is missing), in the
    learner's language."""
    idea_column, before_column, after_column = _("idea"), _("before the path"), _("after the path")
    not_taken = _("not taken")
    rows = [
        {
            idea_column: _(core.IDEA_LABELS[idea]),
            before_column: _(RESULT_WORDS[pre[idea]]) if pre else not_taken,
            after_column: _(RESULT_WORDS[post[idea]]) if post else not_taken,
        }
        for idea in core.IDEAS
    ]
    return pd.DataFrame(rows).set_index(idea_column)


def results() -> None:
    """Before and after per idea, the summary line, and the answers of the check after the path."""
    record = progress.checks()
    pre, post = record["pre"], record["post"]
    with st.container(border=True):
        st.markdown(_("**Your result, idea by idea**"))
        drawing.frame_table(results_frame(pre, post), alt=_("Each idea's result before and after the path"))
        if post:
            st.markdown(f"**{core.summary(pre, post)}**")
            with st.expander(_("The answers of the check after the path")):
                for number, (idea, exercise) in enumerate(questions("post"), 1):
                    st.markdown(
                        _(
                            "**{number}. {idea}: {answer}.** {solution}",
                            number=number,
                            idea=_(core.IDEA_LABELS[idea]),
                            answer=answer_text(exercise),
                            solution=exercise.solution,
                        )
                    )
        st.caption(_("Come back tomorrow or later: the overview then offers a 3-question review, to help it stay."))


def note_path_finished() -> None:
    """The path's last stop: today is the day the path was finished (the first such day stays)."""
    progress.note_finished(today())


# --- the review on a later day --------------------------------------------------------------------------------


def review_dates() -> list[datetime.date]:
    return [datetime.date.fromisoformat(entry["date"]) for entry in progress.checks()["reviews"]]


def reviewed_on(day: datetime.date) -> dict[str, bool] | None:
    """The ideas of the review answered on ``day`` (the latest of that day), or None."""
    done = [entry["ideas"] for entry in progress.checks()["reviews"] if entry["date"] == day.isoformat()]
    return done[-1] if done else None


def submit_review(day_text: str) -> None:
    """The review's form was sent: right or not per idea (a blank is not right), stored with its day."""
    day = datetime.date.fromisoformat(day_text)
    form = f"review-{day_text}"
    results, problems = graded(form, review_questions(day))
    st.session_state.setdefault(PROBLEMS_KEY, {})[form] = problems
    if not problems:
        progress.note_review(day, {idea: result == "right" for idea, result in results.items()})


def day_text(day: datetime.date, today_: datetime.date) -> str:
    """'Saturday 29 November (in 3 days)', in the learner's language."""
    days = (day - today_).days
    weekday, month = _(WEEKDAYS[day.weekday()]), _(MONTHS[day.month - 1])
    if days == 1:
        return _("{weekday} {day} {month} (tomorrow)", weekday=weekday, day=day.day, month=month)
    return _("{weekday} {day} {month} (in {days} days)", weekday=weekday, day=day.day, month=month, days=days)


def review_offer() -> None:
    """The overview's review: offered once due, its result on the day it was answered; nothing otherwise."""
    record = progress.checks()
    if record["finished"] is None:
        return
    day = today()
    finished = datetime.date.fromisoformat(record["finished"])
    done = reviewed_on(day)
    if done is not None:
        review_result(day, done, core.next_review(finished, review_dates()))
    elif core.review_due(finished, review_dates(), day):
        review_form(day)


def review_form(day: datetime.date) -> None:
    form = f"review-{day.isoformat()}"
    with st.container(border=True):
        st.markdown(_("**Welcome back: a 3-question review of what you did**"))
        st.caption(
            _(
                "Recalling an idea a few days later helps it stay. Three questions from the 15-minute path, with new "
                "numbers."
            )
        )
        show_problems(form)
        with st.form(key=f"lc:{form}-form", border=False):
            for number, (idea, exercise) in enumerate(review_questions(day), 1):
                answer_widget(form, number, idea, exercise)
            st.form_submit_button(
                _("Check my answers"), icon=":material/task_alt:", on_click=submit_review, args=(day.isoformat(),)
            )


def review_result(day: datetime.date, done: dict[str, bool], due: datetime.date) -> None:
    with st.container(border=True):
        st.markdown(_("**Today's review: {right} of {total} right.**", right=core.right_count(done), total=len(done)))
        for number, (idea, exercise) in enumerate(review_questions(day), 1):
            if idea not in done:
                continue
            values = {
                "number": number,
                "idea": _(core.IDEA_LABELS[idea]),
                "answer": answer_text(exercise),
                "solution": exercise.solution,
            }
            st.markdown(
                _("{number}. {idea}: Right. The answer is **{answer}**: {solution}", **values)
                if done[idea]
                else _("{number}. {idea}: Not this time. The answer is **{answer}**: {solution}", **values)
            )
        st.caption(_("The next review is offered on {day}.", day=day_text(due, day)))
