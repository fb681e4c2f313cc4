"""Exercise progress for this browser session only: answered and correct per lesson, in st.session_state.

Nothing is stored on the server beyond the session: closing the tab forgets it.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ui import lessons

STATE_KEY = "_exercise_progress"  # {lesson name: {exercise id: {"tries": int, "correct": bool, "revealed": bool}}}


def _book() -> dict[str, dict[str, dict]]:
    return st.session_state.setdefault(STATE_KEY, {})


def record(lesson: str, exercise_id: str) -> dict:
    """The record of one exercise (created empty on first use): tries, correct, revealed."""
    return _book().setdefault(lesson, {}).setdefault(exercise_id, {"tries": 0, "correct": False, "revealed": False})


def note_try(lesson: str, exercise_id: str, correct: bool) -> dict:
    """Count one checked answer; a right answer stays right."""
    entry = record(lesson, exercise_id)
    entry["tries"] += 1
    entry["correct"] = entry["correct"] or correct
    return entry


def note_revealed(lesson: str, exercise_id: str) -> None:
    """The learner asked for the solution."""
    record(lesson, exercise_id)["revealed"] = True


def counts(lesson: str) -> tuple[int, int]:
    """(answered, correct) exercises of one lesson in this session."""
    entries = _book().get(lesson, {}).values()
    answered = sum(1 for entry in entries if entry["tries"] > 0 or entry["revealed"])
    return answered, sum(1 for entry in entries if entry["correct"])


def totals() -> tuple[int, int]:
    """(answered, correct) over every lesson."""
    pairs = [counts(path) for path in _book()]
    return sum(a for a, _ in pairs), sum(c for _, c in pairs)


def progress_marker() -> str:
    """Compact text for the sidebar: 'Exercises: 7/12 correct' (or an invitation when none answered)."""
    answered, correct = totals()
    if not answered:
        return "Exercises: none answered yet"
    return f"Exercises: {correct}/{answered} correct"


def progress_frame() -> pd.DataFrame:
    """One row per page with exercises: answered and correct in this session."""
    rows = []
    for lesson in lessons.LESSONS:
        answered, correct = counts(lesson.name)
        if lesson.number is not None or answered:
            rows.append({"lesson": lesson.label, "answered": answered, "correct": correct})
    return pd.DataFrame(rows).set_index("lesson")


def reset() -> None:
    """Forget every answer of this session (exercise answers and revealed solutions included)."""
    st.session_state.pop(STATE_KEY, None)
    for key in [key for key in st.session_state if str(key).startswith(("ex:", "exf:", "exv:", "exq:"))]:
        del st.session_state[key]


def progress_table() -> None:
    """The overview's table of answered / correct per lesson, with a reset button."""
    st.dataframe(progress_frame(), width="content", height="content")  # every lesson, no inner scrolling
    st.caption("Kept for this browser session only; nothing is stored on the server.")
    st.button("Reset progress", on_click=reset, icon=":material/restart_alt:", key="reset_progress")
