"""Lessons in steps (issue 24): every step of every stepped lesson opens from its link, stays short, and asks
only what it shows.

A lesson is stepped when its page hands its steps to ``ui.page.lesson_steps``. For each of its steps:
- ``step=N`` in the URL opens that step, with the step bar on it and no exception;
- the step holds at most MAX_ELEMENTS elements (the leaf elements of the main area, as AppTest sees them);
- the exercises it shows are answerable from what the step itself shows (their operands, ``Exercise.uses``, are
  among the step's numbers; that their answers are not, until answered, is ``test_answers_after``'s to check);
- every exercise the lesson asks is shown in exactly one step, so the whole lesson is still checked.
A step may ask again once its first questions are settled: each step is read round after round ("Show me the
answer" on what it asks, at most ``ROUNDS``), every round checked the same way.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1.element_tree import Block

from attention_core.exercises import Exercise
from tests.apptest_helpers import ROOT, assert_clean, open_page
from tests.pages.answered import ROUNDS
from tests.pages.test_exercises_on_screen import shown_numbers
from ui import registry
from ui.format import format_number
from ui.page import lesson_steps

MAX_ELEMENTS = 40


def stepped(lesson: registry.Lesson) -> bool:
    """Whether the lesson's page draws itself with lesson_steps."""
    return lesson_steps.__name__ + "(" in (ROOT / lesson.path).read_text(encoding="utf-8")


STEPPED = [lesson for lesson in registry.numbered() if stepped(lesson)]


def leaf_count(node) -> int:
    """The leaf elements under ``node`` (containers, columns and tabs are not counted, what they hold is)."""
    if isinstance(node, Block):
        return sum(leaf_count(child) for child in node.children.values())
    return 1


def shown_exercises(at, lesson: registry.Lesson) -> tuple[Exercise, ...]:
    key = f"_exercises_shown:{lesson.name}"
    return at.session_state[key] if key in at.session_state else ()  # noqa: SIM401 (AppTest state has no get)


def check_step_screen(at, lesson: registry.Lesson, step: int) -> tuple[Exercise, ...]:
    """The step's exercises read only the step's numbers; returns them."""
    items = shown_exercises(at, lesson)
    if not items:
        return ()
    numbers = shown_numbers(at)
    for item in items:
        for used in item.uses:
            assert format_number(used) in numbers, (lesson.name, step, item.id, "uses", format_number(used))
    return items


@pytest.mark.parametrize("lesson", STEPPED, ids=lambda lesson: lesson.name)
def test_every_step_opens_from_its_link_is_short_and_asks_what_it_shows(lesson):
    first = open_page(lesson.path, {"step": "1"})
    assert_clean(first)
    options = first.segmented_control(key=f"stepbar:{lesson.name}").options
    count = len(options)
    assert count >= 3, "a lesson in steps has several"
    names = [label.removeprefix("✓ ").split(". ", 1)[1] for label in options]
    for experiment in lesson.try_this:  # a 'Set it up' button opens the step that holds its widgets
        assert not experiment.step or experiment.step in names, (experiment.label, experiment.step, names)
    asked_in_steps: list[str] = []
    for step in range(1, count + 1):
        at = first if step == 1 else open_page(lesson.path, {"step": str(step)})
        assert_clean(at)
        assert at.segmented_control(key=f"stepbar:{lesson.name}").value == step
        assert at.query_params["step"] == str(step)
        asked_here: list[str] = []
        for _ in range(ROUNDS):  # a round's questions settled, the step may ask its next ones
            elements = leaf_count(at.main)
            assert elements <= MAX_ELEMENTS, (lesson.name, step, elements)
            new = [item for item in check_step_screen(at, lesson, step) if item.id not in asked_here]
            if not new:
                break
            asked_here += [item.id for item in new]
            for item in new:
                at.button(key=f"exs:{lesson.name}:{item.id}").click()
            at = at.run()
            assert_clean(at)
        asked_in_steps += asked_here
    every = open_page(lesson.path, {"view": "all"}).session_state[f"_exercises:{lesson.name}"]
    assert sorted(asked_in_steps) == sorted(item.id for item in every), "each exercise sits in exactly one step"
