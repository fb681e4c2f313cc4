"""An exercise's answer is not on its step before the learner answers (issue 36, item 8).

"Answerable from the screen" must not become "copyable from the screen": a step asks its questions, then draws
the table or sentence that answers them once they are settled (``ui.widgets.exercises.settled``: answered right, wrong
twice, or "Show me the answer"). The operands stay on screen.

Every lesson with exercises, on the default example and on a typed sentence with random embeddings:

1. The whole lesson (``view=all``) is opened with each step drawn in a container of its own (the test wraps the
   steps ``ui.page.lesson_steps`` is given; nothing else changes), so each exercise is found in its step by its
   prompt, and every exercise sits in exactly one step. In every step that asks something, before any answer:
   - none of the numbers that give an exercise away (``Exercise.given_away_by``: its ``reveals``, else a numeric
     answer) is on the step, at the lab's 4 decimals, nor at the 3 decimals the question asks for where the step
     prints a number at 3 decimals;
   - every operand (``Exercise.uses``) is on the step, and no solution is;
   - grading cannot be passed by guessing any number the step shows (``check_not_guessable``).
   An exact count (tolerance 0) is looked for as the whole number it is written as ('36', '11,520,000').
   Then every "Show me the answer" is clicked: after each question the step draws what answers it (its ``reveals``,
   else a computed answer or count; a what-if's number is a hypothetical, its solution's), outside the exercise cards
   so that a solution's own text does not count as the step revealing it; and each solution is shown.
2. Every step is opened alone (``step=N``, the learner's view; it may ask what the whole view asks in another
   step) and, where it asks something, checked the same way, before and after "Show me the answer".
3. A step may ask again once its first questions are settled (a second round: the first answer's table holds the
   next question's operands). Both views settle round after round (at most ``ROUNDS``, as ``tests.pages.answered``
   does) and check each newly asked exercise before it is settled and after, the same way (the solutions of the
   rounds before stay on the step).

No coincidence is excused: a number that legitimately stands on a step while it gives an exercise away (a
symmetric matrix's other half, a weight of a row that the question does not ask about but prints the same) is a
question to rephrase, not an exception of this test.
"""

from __future__ import annotations

import re

import pytest
import streamlit as st
from streamlit.testing.v1.element_tree import Block

import ui.page
from attention_core.exercises import Exercise
from tests.apptest_helpers import assert_clean, frames, open_page, sentence_params
from tests.pages.answered import ROUNDS
from tests.pages.test_exercises_on_screen import check_not_guessable, element_numbers, leaves
from ui import registry
from ui.format import format_number
from ui.widgets.exercises import KIND_LABELS, answer_text

# Lessons whose answers are still being moved after their questions: delete a lesson's name when it is done.
PENDING: dict[str, str] = {}

INPUTS = {
    "default": {},
    "typed": sentence_params("the chef who ran the kitchen tasted the soup", d_model=6, seed=4, query="kitchen"),
}
STEP_BOX = "answers-after-step-"  # the key of the container each step is drawn in (view=all)
CARD = re.compile(r"^\*\*\d+\. (" + "|".join(re.escape(label) for label in KIND_LABELS.values()) + r")\*\* ")
THREE_DECIMALS = re.compile(r"(?<![\d.])−?-?\d+\.\d{3}(?![\d])")
WHOLE = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d]|[.,]\d)|(?<![\d.,])\d+(?![\d]|[.,]\d)")  # 36, 11,520,000
TEXT_KINDS = ("markdown", "caption", "latex", "info", "success", "warning", "error", "code", "metric")


def cases():
    for lesson in registry.numbered():
        if lesson.exercises is None:
            continue
        pending = PENDING.get(lesson.name)
        marks = [pytest.mark.xfail(reason=pending, strict=False)] if pending else []
        for name, params in INPUTS.items():
            yield pytest.param(lesson, params, id=f"{lesson.name}-{name}", marks=marks)


@pytest.fixture
def boxed_steps(monkeypatch):
    """Each step of a lesson drawn in a keyed container of its own, so the whole view can be read step by step."""
    original = ui.page.lesson_steps

    def lesson_steps(page, steps):
        def boxed(number, draw):
            def run():
                with st.container(key=f"{STEP_BOX}{number}"):
                    draw()

            return run

        return original(page, {name: boxed(n, draw) for n, (name, draw) in enumerate(steps.items(), 1)})

    monkeypatch.setattr(ui.page, "lesson_steps", lesson_steps)  # pages import it on every run


# --- reading a step -------------------------------------------------------------------------------------------


def step_boxes(at) -> dict[int, object]:
    """The containers the steps were drawn in, by step number."""
    boxes = {}
    for child in at.main.children.values():
        block_id = getattr(child, "_block_id", "")
        if STEP_BOX in block_id:
            boxes[int(block_id.rsplit(STEP_BOX, 1)[1])] = child
    return boxes


def is_card(node) -> bool:
    """An exercise's card: a container whose first element is the question ('**1. Compute** …')."""
    first = next(iter(getattr(node, "children", {}).values()), None)
    return getattr(first, "type", None) == "markdown" and bool(CARD.match(str(first.value)))


def prompts_in(node) -> list[str]:
    return [str(leaf.value) for leaf in leaves(node) if leaf.type == "markdown" and CARD.match(str(leaf.value))]


def asks(node, exercise: Exercise) -> bool:
    return any(text.endswith(exercise.prompt) for text in prompts_in(node))


def numbers_on(node) -> set[str]:
    found: set[str] = set()
    for leaf in leaves(node):
        found |= element_numbers(leaf)
    return found


def three_decimal_numbers(node) -> set[str]:
    """Numbers the step prints at exactly 3 decimals (the precision a question asks for)."""
    found: set[str] = set()
    for leaf in leaves(node):
        if leaf.type in TEXT_KINDS:
            found.update(text.replace("−", "-") for text in THREE_DECIMALS.findall(str(leaf.value)))
    return found


def whole_numbers(elements) -> set[str]:
    """The whole numbers written in the elements' text and table cells ('36', '11,520,000'): where a count shows."""
    found: set[str] = set()
    for leaf in elements:
        if leaf.type in TEXT_KINDS:
            found.update(WHOLE.findall(str(leaf.value)))
        for frame in frames(leaf):
            for value in frame.to_numpy().reshape(-1).tolist():
                if isinstance(value, int) and not isinstance(value, bool):
                    found.add(f"{value:,}")
                elif isinstance(value, str):
                    found.update(WHOLE.findall(value))
    return found


def is_count(item: Exercise) -> bool:
    """An exact count (tolerance 0): written as a whole number, not at 4 decimals."""
    return not item.is_choice and item.tolerance == 0


def after_question(node, exercise: Exercise) -> list:
    """The elements the step draws after the exercise's card, outside every exercise card."""
    elements: list[tuple[object, object]] = []  # (the card it is in or None, leaf), in page order

    def visit(child, card) -> None:
        if isinstance(child, Block):
            for grandchild in child.children.values():
                visit(grandchild, child if is_card(child) else card)
        else:
            elements.append((card, child))

    visit(node, None)
    own = [i for i, (card, _) in enumerate(elements) if card is not None and asks(card, exercise)]
    assert own, (exercise.id, "its card is on the step")
    return [leaf for card, leaf in elements[max(own) + 1 :] if card is None]


def solution_text(exercise: Exercise) -> str:
    return f"**Answer: {answer_text(exercise)}.** {exercise.solution}"


def solutions_in(node) -> set[str]:
    return {str(leaf.value) for leaf in leaves(node) if leaf.type == "markdown"}


# --- the checks -----------------------------------------------------------------------------------------------


def check_before(
    at, node, lesson: registry.Lesson, items: list[Exercise], where: str, earlier: tuple[Exercise, ...] = ()
) -> None:
    """Before any answer: nothing gives an exercise away, its operands are there, no solution, no guessing
    (``earlier``: exercises of the rounds before, settled: their solutions may stay on the step)."""
    numbers, at_3, whole = numbers_on(node), three_decimal_numbers(node), whole_numbers(leaves(node))
    shown_text = solutions_in(node) - {solution_text(item) for item in earlier}
    for item in items:
        if is_count(item):
            assert answer_text(item) not in whole, (where, item.id, "count given away", answer_text(item))
        for value in item.given_away_by:
            assert format_number(value) not in numbers, (where, item.id, "given away", format_number(value))
            assert f"{value:.3f}" not in at_3, (where, item.id, "given away at 3 decimals", f"{value:.3f}")
        for used in item.uses:
            assert format_number(used) in numbers, (where, item.id, "operand missing", format_number(used))
        assert not any(text.startswith("**Answer:") for text in shown_text), (where, "a solution before answering")
    check_not_guessable(at, lesson.path, len(at.session_state["_lab_input"].labels), items=items, node=node)


def settle(at, lesson: registry.Lesson, items: list[Exercise]):
    """Click "Show me the answer" on every exercise (one run)."""
    for item in items:
        at.button(key=f"exs:{lesson.name}:{item.id}").click()
    return at.run()


def revealed_by_the_step(item: Exercise) -> tuple[float, ...]:
    """What the step itself must draw once the exercise is settled: its ``reveals``, else a computed answer (a what-if
    is a hypothetical: its number is its solution's)."""
    if item.reveals:
        return item.reveals
    return () if item.is_choice or item.kind == "what-if" else (float(item.answer),)


def check_after(node, items: list[Exercise], where: str) -> None:
    """Once settled: after each question the step (outside the exercise cards, so a solution's own text does not
    count) draws what answers it, and each solution is shown."""
    shown_text = solutions_in(node)
    for item in items:
        after = after_question(node, item)
        if is_count(item) and item.kind != "what-if":
            assert answer_text(item) in whole_numbers(after), (where, item.id, "count not revealed", answer_text(item))
        else:
            revealed = set().union(*(element_numbers(leaf) for leaf in after))
            for value in revealed_by_the_step(item):
                assert format_number(value) in revealed, (where, item.id, "not revealed", format_number(value))
        assert solution_text(item) in shown_text, (where, item.id, "no solution")


def newly_asked(at, lesson: registry.Lesson, settled: list[Exercise]) -> list[Exercise]:
    """The lesson's exercises whose card the page shows and that are not settled yet: a round (the first, or one
    that settling the round before opened)."""
    done = {item.id for item in settled}
    key = f"_exercises:{lesson.name}"
    every = at.session_state.get(key, ())  # a step that asks nothing records nothing
    return [item for item in every if item.id not in done and asks(at.main, item)]


@pytest.mark.parametrize(("lesson", "params"), list(cases()))
def test_answers_come_after_their_questions(lesson, params, boxed_steps):
    whole = open_page(lesson.path, {**params, "view": "all"})
    assert_clean(whole)
    assert newly_asked(whole, lesson, []), "the lesson asks something"
    by_step: dict[int, list[Exercise]] = {}
    settled: list[Exercise] = []
    for round_number in range(1, ROUNDS + 1):
        every = newly_asked(whole, lesson, settled)
        if not every:
            break
        boxes = step_boxes(whole)
        assert len(boxes) >= 3, "each step in its container"
        asked_now: dict[int, list[Exercise]] = {}
        for item in every:
            steps = [number for number, box in boxes.items() if asks(box, item)]
            assert len(steps) == 1, (item.id, "asked in exactly one step", steps)
            asked_now.setdefault(steps[0], []).append(item)
        for number, items in asked_now.items():
            where = f"{lesson.name} whole view, step {number}, round {round_number}"
            check_before(whole, boxes[number], lesson, items, where, tuple(settled))
        whole = settle(whole, lesson, every)
        assert_clean(whole)
        settled += every
        for number, items in asked_now.items():
            by_step.setdefault(number, []).extend(items)
        boxes = step_boxes(whole)
        for number, items in by_step.items():
            check_after(boxes[number], items, f"{lesson.name} whole view, step {number}, round {round_number}")
    assert not newly_asked(whole, lesson, settled), f"settled within {ROUNDS} rounds"
    asked_ids = {item.id for item in settled}
    never = [item.id for item in whole.session_state[f"_exercises:{lesson.name}"] if item.id not in asked_ids]
    assert not never, ("every exercise is asked in the whole lesson", never)

    asking_steps = 0
    for number in sorted(boxes):  # every step alone: the stepped view may ask in another step than the whole one
        at = open_page(lesson.path, {**params, "step": str(number)})
        assert_clean(at)
        done: list[Exercise] = []
        for round_number in range(1, ROUNDS + 1):
            items = newly_asked(at, lesson, done)
            if not items:
                break
            where = f"{lesson.name} step {number}, round {round_number}"
            check_before(at, at.main, lesson, items, where, tuple(done))
            at = settle(at, lesson, items)
            assert_clean(at)
            done += items
            check_after(at.main, done, where)
        asking_steps += bool(done)
    assert asking_steps, "a step opened alone asks something"
