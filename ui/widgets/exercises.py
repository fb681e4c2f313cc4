"""'Check yourself': a lesson's exercises generated from the current input, answered in forms.

Each exercise sits in its own st.form, so typing does not rerun the page. The answer and the
worked solution are only sent to the browser after the learner commits: a right answer, a second
wrong one, or "Show me the answer" (there from the start). A first wrong answer gets the hint.

Questions come before the numbers that answer them: ``exercises_section`` returns whether every question it asked
is settled, and a step draws its answering table or sentence only then::

    if exercises_section(__file__, lab, places=("score",)):
        worked_example(lab, scores)  # the table that holds the answer: revealed after the answer
"""

from __future__ import annotations

import streamlit as st

from attention_core import i18n
from attention_core.exercises import Exercise, ExerciseInput, check_answer, exercises_for, material_fingerprint
from attention_core.i18n import N_, _
from ui import registry
from ui.format import format_number, learner_text
from ui.widgets import progress

KIND_LABELS = {"numeric": N_("Compute"), "choice": N_("Choose"), "what-if": N_("What if?")}  # shown through _()


@st.cache_data(max_entries=64, show_spinner=False)
def cached_exercises(
    lesson: str,
    language: str,
    labels: tuple[str, ...],
    values: tuple[float, ...],
    shape: tuple[int, int],
    dtype: str,
    query_index: int,
    material_key: tuple = (),
    _material: object = None,
) -> tuple[Exercise, ...]:
    """The lesson's exercises for this input, generated once per input (plain arguments as the key).

    ``_material`` (what the page shows: not hashed, leading underscore) is determined by ``material_key``,
    which is part of the key. X keeps the page's precision (hand edits run in float64). ``language`` (the learner's,
    ``i18n.current()``) keys the text: the ids, answers and options are the same in every language.
    """
    import torch

    X = torch.tensor(values, dtype=getattr(torch, dtype)).reshape(shape)  # (T, d_model)
    generator = registry.lesson_for(lesson).exercises
    return exercises_for(lesson, generator, ExerciseInput(labels, X, query_index, _material, material_key))


def lesson_exercises(page: str, lab, *, material: object = None, material_key: tuple = ()):
    """The exercises of a lesson on the page's input (a LabInput) and what the page shows (its material).

    A material without a ``material_key`` is keyed by a fingerprint of its numbers.
    """
    X = lab.X.detach().to("cpu")
    if material is not None and not material_key:
        material_key = (material_fingerprint(material),)
    return cached_exercises(
        registry.lesson_for(page).name,
        i18n.current(),
        tuple(lab.labels),
        tuple(X.reshape(-1).tolist()),
        tuple(X.shape),
        str(X.dtype).removeprefix("torch."),
        int(lab.query_index),
        tuple(material_key),
        material,
    )


def answer_text(exercise: Exercise) -> str:
    """The right answer as shown after the learner commits."""
    if exercise.is_choice:  # a token label: the learner's text, drawn in Markdown
        return learner_text(exercise.option_text(exercise.answer))
    value = float(exercise.answer)
    if exercise.tolerance == 0 and value == int(value):  # an exact count, whole (11,520,000, never 1.152e+07)
        return f"{int(value):,}"
    return format_number(value)


def exercises_section(
    page: str,
    lab,
    *,
    material: object = None,
    material_key: tuple = (),
    made_from: str = N_("the input in the sidebar"),
    places: tuple[str, ...] | None = None,
    heading: str = N_("Check yourself"),
    note: bool = True,
) -> bool:
    """A 'Check yourself' section: the lesson's exercises with their forms, feedback and progress; returns whether
    every exercise it asked is settled (see ``settled``), so the step may now reveal what answers them.

    ``places`` (exercise names such as "weight") keeps the exercises a step tests, in the step that shows
    their numbers; None asks them all. Lessons 10-12 compute their own material (a forward pass, a training
    run, a generation source) and pass it with the plain values that determine it (``material_key``). The path
    names its section ``heading`` and leaves out the ``note`` under it (where the questions come from, the count).
    ``heading`` and ``made_from`` are shown through ``_()``: an English constant marked with N_, or text already
    translated.
    """
    lesson = registry.lesson_for(page).name
    exercises = lesson_exercises(lesson, lab, material=material, material_key=material_key)
    record_asked(lesson, places, exercises)
    asked = [(n, ex) for n, ex in enumerate(exercises, 1) if places is None or place_name(ex) in places]
    st.session_state[f"_exercises_shown:{lesson}"] = tuple(ex for _number, ex in asked)  # what this step shows
    if not asked:
        return True
    st.subheader(_(heading), anchor=False)
    caption = st.empty()  # filled after the forms, so it counts this run's answer too
    for number, exercise in asked:
        exercise_card(lesson, number, exercise)
    answered, correct = progress.counts(lesson)
    if note:
        caption.caption(
            _(
                "Predict first, then check. These questions are made from {made_from}: a new input gives new ones. "
                "This lesson so far: {correct} right of {answered} answered.",
                made_from=_(made_from),
                correct=correct,
                answered=answered,
            )
        )
    return all(settled(lesson, exercise) for _number, exercise in asked)


def settled(lesson: str, exercise: Exercise) -> bool:
    """Whether the learner is done with an exercise: answered right, asked to be shown, or wrong twice (the
    solution is then on screen). What answers it may be drawn from then on."""
    entry = progress.record(lesson, exercise.id)
    return entry["correct"] or entry["revealed"] or entry["tries"] >= 2


def asked_record(lesson: str) -> str:
    """The session key of what each exercises_section call of this run asked, by its places."""
    return f"_exercises_run:{lesson}"


def start_run(lesson: str) -> None:
    """Forget what the last run asked (the lesson's page calls this once per run, before its steps): a step that
    asks nothing leaves nothing asked."""
    for key in (asked_record(lesson), f"_exercises:{lesson}", f"_exercises_shown:{lesson}"):
        st.session_state.pop(key, None)


def record_asked(lesson: str, places: tuple[str, ...] | None, exercises: tuple[Exercise, ...]) -> None:
    """Keep what this call asks beside what the run's other calls asked, and ``_exercises:{lesson}``: all of it,
    each exercise once (tests read it).

    A lesson in steps calls exercises_section once per step that asks something, each with its own material (the
    generation lesson's toy head, then SmolLM2's cache): the lesson asks what every call asks. A call is known by
    its places, so a fragment's rerun replaces its own exercises instead of adding them twice.
    """
    record = dict(st.session_state.get(asked_record(lesson), {}))
    record[places] = exercises
    st.session_state[asked_record(lesson)] = record
    seen: dict[str, Exercise] = {}
    for items in record.values():
        for exercise in items:
            seen.setdefault(exercise.id, exercise)
    st.session_state[f"_exercises:{lesson}"] = tuple(seen.values())


def exercise_card(lesson: str, number: int, exercise: Exercise) -> None:
    """One exercise: the prompt, a form to answer it, then the verdict, the hint and the solution as earned."""
    with st.container(border=True):
        st.markdown(f"**{number}. {_(KIND_LABELS[exercise.kind])}** {exercise.prompt}")
        verdict = answer_form(lesson, exercise)
        entry = progress.record(lesson, exercise.id)
        if verdict is not None and verdict.status == "invalid":
            st.warning(learner_text(verdict.message), icon=":material/edit:")  # it may quote what was typed
        elif verdict is not None and verdict.status == "wrong":
            st.error(learner_text(verdict.message), icon=":material/close:")
        if entry["correct"]:
            answer = answer_text(exercise)
            right = (
                _("Right: **{answer}** (within ±{within}).", answer=answer, within=f"{exercise.tolerance:g}")
                if exercise.tolerance
                else _("Right: **{answer}**.", answer=answer)
            )
            note = f" {learner_text(verdict.note)}" if verdict is not None and verdict.note else ""
            st.success(f"{right}{note}", icon=":material/check:")
        elif entry["tries"] == 1 and not entry["revealed"]:
            st.info(_("Hint: {hint}", hint=exercise.hint), icon=":material/lightbulb:")
        if settled(lesson, exercise):
            solution(exercise)
        else:
            st.button(
                _("Show me the answer"),
                key=f"exs:{lesson}:{exercise.id}",
                on_click=progress.note_revealed,
                args=(lesson, exercise.id),
                icon=":material/visibility:",
            )


def place_name(exercise: Exercise) -> str:
    """The exercise's name in its lesson ('weight'), its id without the hash of the question."""
    return exercise.id.rsplit("-", 1)[0]


def answer_key(lesson: str, exercise: Exercise) -> str:
    """The answer widget's key (``lesson``: its name, path or ``__file__``). It names the exercise's place, not
    the question: when another query asks another question in the same place, the browser updates the form
    instead of replacing it."""
    return f"ex:{registry.lesson_for(lesson).name}:{place_name(exercise)}"


def blank_if_new(lesson: str, exercise: Exercise) -> None:
    """A new question in this place starts with a blank answer (the widget keeps its key)."""
    asked = f"exq:{lesson}:{place_name(exercise)}"
    if st.session_state.get(asked) != exercise.id:
        st.session_state[asked] = exercise.id
        st.session_state[answer_key(lesson, exercise)] = None if exercise.is_choice else ""


def answer_form(lesson: str, exercise: Exercise):
    """The answer widget in a form (no rerun while typing); the Check of this run, or None."""
    blank_if_new(lesson, exercise)
    with st.form(key=f"exf:{lesson}:{place_name(exercise)}", border=False):
        if exercise.is_choice:
            answer = st.radio(  # radio options are Markdown: a token label is the learner's text
                _("Your answer"),
                exercise.options,  # the English values (graded); each shown in the learner's language
                index=None,
                key=answer_key(lesson, exercise),
                format_func=lambda option: learner_text(exercise.option_text(option)),
            )
        else:
            answer = st.text_input(
                _("Your answer"),
                key=answer_key(lesson, exercise),
                placeholder=_("a number, e.g. 0.25"),
                max_chars=60,
                help=_(
                    "A dot or a comma as the decimal mark. Within ±{within} counts as right.",
                    within=f"{exercise.tolerance:g}",
                )
                if exercise.tolerance
                else _("A dot or a comma as the decimal mark. An exact whole number."),
            )
        submitted = st.form_submit_button(_("Check"), icon=":material/task_alt:")
    # The last answer checked stays on screen across reruns: kept as typed, its verdict written again each run (in
    # the learner's language of that run).
    last_key = f"exv:{lesson}:{exercise.id}"
    if not submitted:
        last = st.session_state.get(last_key)
        return None if last is None else check_answer(exercise, last[0])
    verdict = check_answer(exercise, answer)
    if verdict.status != "invalid":
        progress.note_try(lesson, exercise.id, verdict.status == "correct")
    st.session_state[last_key] = (answer,)
    return verdict


def solution(exercise: Exercise) -> None:
    """The worked solution with the real numbers."""
    st.markdown(_("**Answer: {answer}.** {solution}", answer=answer_text(exercise), solution=exercise.solution))
