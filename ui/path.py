"""A path through the lessons: previous / next links, a 'Try this' box and a three-line summary per lesson.

The content is the lesson registry's (``ui.lessons``), so a page wires its footer with one call:
``path.lesson_footer(__file__)``. An experiment's button sets widget values in st.session_state from
a callback (before the widgets are drawn), so one click sets it up.
"""

from __future__ import annotations

import streamlit as st

from ui import inputs, lessons


def open_step_key(lesson: str) -> str:
    """The session key of the step a 'Set it up' button asks its lesson to open next (a step's name)."""
    return f"_open_step:{lesson}"


def apply(settings: tuple[tuple[str, object], ...], lesson: str = "", step: str = "") -> None:
    """Set the widget values of an experiment (runs as a button callback, before any widget is drawn); when the
    widgets live in one step of the lesson, open that step so the learner sees what changed."""
    if lesson and step:
        st.session_state[open_step_key(lesson)] = step
    for key, value in settings:
        st.session_state[key] = value
        if key == "example":
            inputs.on_example_change()  # a new example starts at its own embeddings and query


def lesson_footer(page: str, try_this: tuple[lessons.Experiment, ...] | None = None) -> None:
    """The end of a lesson: 'Try this' (one click each; a page may pass experiments measured on its input),
    'What you just learned', previous / next links, all from the lesson registry."""
    lesson = lessons.lesson_for(page)
    experiments = lesson.try_this if try_this is None else try_this
    if experiments:
        try_this_box(lesson.name, experiments)
    if lesson.learned:
        st.subheader("What you just learned", anchor="what-you-just-learned")
        st.markdown("\n".join(f"{n}. {line}" for n, line in enumerate(lesson.learned, 1)))
    previous_next(lesson.name)


def try_this_box(key: str, experiments: tuple[lessons.Experiment, ...]) -> None:
    """Two or three experiments, each with a button that sets it up (or a note to do it by hand)."""
    with st.container(border=True):
        st.markdown("**Try this**")
        for n, experiment in enumerate(experiments):
            left, right = st.columns([3, 1], vertical_alignment="center")
            left.markdown(f"**{experiment.label}.** {experiment.look_for}")
            if experiment.settings:
                right.button(
                    "Set it up",
                    key=f"try:{key}:{n}",
                    on_click=apply,
                    args=(experiment.settings, key, experiment.step),
                    icon=":material/science:",
                )
            else:
                right.caption("Do it in the sidebar.")


def previous_next(key: str) -> None:
    """Links to the previous and the next page of the registry."""
    previous, following = lessons.neighbours(key)
    left, right = st.columns(2)
    if previous is not None:
        left.page_link(previous.path, label=f"Previous: {previous.label}", icon=":material/arrow_back:")
    if following is not None:
        right.page_link(following.path, label=f"Next: {following.label}", icon=":material/arrow_forward:")
