"""'Check yourself': a lesson's exercises generated from the current input, answered in forms.

Each exercise sits in its own st.form, so typing does not rerun the page. The answer and the
worked solution are only sent to the browser after the learner commits: a right answer, a second
wrong one, or "Show solution". A first wrong answer gets the hint.
"""

from __future__ import annotations

import streamlit as st

from attention_core.exercises import (
    Exercise,
    ExerciseInput,
    check_answer,
    exercises_for,
    lesson_key,
    material_fingerprint,
)
from ui import progress
from ui.format import format_number

KIND_LABELS = {"numeric": "Compute", "choice": "Choose", "what-if": "What if?"}


@st.cache_data(max_entries=64, show_spinner=False)
def cached_exercises(
    path: str,
    labels: tuple[str, ...],
    values: tuple[float, ...],
    shape: tuple[int, int],
    query_index: int,
    seed: int,
    temperature: float,
    material_key: tuple = (),
    _material: object = None,
) -> tuple[Exercise, ...]:
    """The lesson's exercises for this input, generated once per input (plain arguments as the key).

    ``_material`` (a later lesson's own computation: not hashed, leading underscore) is determined by
    ``material_key``, which is part of the key.
    """
    import torch

    X = torch.tensor(values, dtype=torch.float32).reshape(shape)  # (T, d_model)
    return exercises_for(path, ExerciseInput(labels, X, query_index, seed, temperature, _material, material_key))


def lesson_exercises(
    lesson_path: str,
    lab,
    *,
    seed: int | None = None,
    temperature: float = 0.1,
    material: object = None,
    material_key: tuple = (),
):
    """The exercises of a lesson on the page's input (a LabInput) and what the page shows (its material).

    A material without a ``material_key`` is keyed by a fingerprint of its numbers.
    """
    X = lab.X.detach().to("cpu").float()
    if material is not None and not material_key:
        material_key = (material_fingerprint(material),)
    return cached_exercises(
        lesson_key(lesson_path),
        tuple(lab.labels),
        tuple(X.reshape(-1).tolist()),
        tuple(X.shape),
        int(lab.query_index),
        int(lab.seed if seed is None else seed),
        float(temperature),
        tuple(material_key),
        material,
    )


def answer_text(exercise: Exercise) -> str:
    """The right answer as shown after the learner commits."""
    if exercise.is_choice:
        return str(exercise.answer)
    value = float(exercise.answer)
    return f"{value:g}" if exercise.tolerance == 0 and value == int(value) else format_number(value)


def exercises_section(
    lesson_path: str,
    lab,
    *,
    seed: int | None = None,
    temperature: float = 0.1,
    material: object = None,
    material_key: tuple = (),
    made_from: str = "the input in the sidebar",
) -> None:
    """The lesson's 'Check yourself' section: every exercise with its form, feedback and progress.

    Lessons 10-12 compute their own material (a forward pass, a training run, a generation source)
    and pass it with the plain values that determine it (``material_key``).
    """
    path = lesson_key(lesson_path)
    exercises = lesson_exercises(
        path, lab, seed=seed, temperature=temperature, material=material, material_key=material_key
    )
    st.session_state[f"_exercises:{path}"] = exercises  # what this run asked (tests read it, as _lab_input)
    if not exercises:
        return
    st.subheader("Check yourself", anchor="check-yourself")
    caption = st.empty()  # filled after the forms, so it counts this run's answer too
    for number, exercise in enumerate(exercises, 1):
        exercise_card(path, number, exercise)
    answered, correct = progress.counts(path)
    caption.caption(
        f"Predict first, then check. These questions are made from {made_from}: a new input "
        f"gives new ones. This lesson so far: {correct} right of {answered} answered."
    )


def exercise_card(path: str, number: int, exercise: Exercise) -> None:
    """One exercise: the prompt, a form to answer it, then the verdict, the hint and the solution as earned."""
    with st.container(border=True):
        st.markdown(f"**{number}. {KIND_LABELS[exercise.kind]}** {exercise.prompt}")
        verdict = answer_form(path, exercise)
        entry = progress.record(path, exercise.id)
        if verdict is not None and verdict.status == "invalid":
            st.warning(verdict.message, icon=":material/edit:")
        elif verdict is not None and verdict.status == "wrong":
            st.error(verdict.message, icon=":material/close:")
        if entry["correct"]:
            within = f" (within ±{exercise.tolerance:g})" if exercise.tolerance else ""
            note = f" {verdict.note}" if verdict is not None and verdict.note else ""
            st.success(f"Right: **{answer_text(exercise)}**{within}.{note}", icon=":material/check:")
        elif entry["tries"] == 1 and not entry["revealed"]:
            st.info(f"Hint: {exercise.hint}", icon=":material/lightbulb:")
        if entry["correct"] or entry["revealed"] or entry["tries"] >= 2:
            solution(exercise)
        elif entry["tries"] >= 1:
            st.button(
                "Show solution",
                key=f"exs:{path}:{exercise.id}",
                on_click=progress.note_revealed,
                args=(path, exercise.id),
                icon=":material/visibility:",
            )


def place_name(exercise: Exercise) -> str:
    """The exercise's name in its lesson ('weight'), its id without the hash of the question."""
    return exercise.id.rsplit("-", 1)[0]


def answer_key(path: str, exercise: Exercise) -> str:
    """The answer widget's key. It names the exercise's place, not the question: when another query asks
    another question in the same place, the browser updates the form instead of replacing it."""
    return f"ex:{path}:{place_name(exercise)}"


def blank_if_new(path: str, exercise: Exercise) -> None:
    """A new question in this place starts with a blank answer (the widget keeps its key)."""
    asked = f"exq:{path}:{place_name(exercise)}"
    if st.session_state.get(asked) != exercise.id:
        st.session_state[asked] = exercise.id
        st.session_state[answer_key(path, exercise)] = None if exercise.is_choice else ""


def answer_form(path: str, exercise: Exercise):
    """The answer widget in a form (no rerun while typing); the Check of this run, or None."""
    blank_if_new(path, exercise)
    with st.form(key=f"exf:{path}:{place_name(exercise)}", border=False):
        if exercise.is_choice:
            answer = st.radio("Your answer", exercise.options, index=None, key=answer_key(path, exercise))
        else:
            answer = st.text_input(
                "Your answer",
                key=answer_key(path, exercise),
                placeholder="a number, e.g. 0.25",
                max_chars=60,
                help="A dot or a comma as the decimal mark."
                + (
                    f" Within ±{exercise.tolerance:g} counts as right."
                    if exercise.tolerance
                    else " An exact whole number."
                ),
            )
        submitted = st.form_submit_button("Check", icon=":material/task_alt:")
    last_key = f"exv:{path}:{exercise.id}"  # the last verdict stays on screen across reruns
    if not submitted:
        return st.session_state.get(last_key)
    verdict = check_answer(exercise, answer)
    if verdict.status != "invalid":
        progress.note_try(path, exercise.id, verdict.status == "correct")
    st.session_state[last_key] = verdict
    return verdict


def solution(exercise: Exercise) -> None:
    """The worked solution with the real numbers."""
    st.markdown(f"**Answer: {answer_text(exercise)}.** {exercise.solution}")
