"""Every exercise is answerable from the screen, and not copyable from it (issue 22, parts 1 and 2; issue 36, item 8).

Each lesson runs in AppTest with page controls away from their defaults (d_k, heads, seed, temperature,
mask). For every exercise the page asks:
- every operand (``Exercise.uses``: the numbers the learner reads to answer) is on the screen before answering;
- grading cannot be passed by guessing: 1/T, 0, 1 and every number on screen (the neighbouring cells among them)
  are marked wrong unless they are the answer to the precision asked;
- once the learner has asked for the answers ("Show me the answer" on each; every lesson at its default settings),
  a numeric answer (to be computed, not
  imagined) is one of the numbers the page shows, in a table, a metric, a heatmap's cells or its text, at the
  precision shown (exact counts are counted on screen, so they are exempt).
That the answer is absent from its step until then is ``tests/pages/test_answers_after.py``'s to check.
"""

from __future__ import annotations

import math
import re

import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block

from attention_core.exercises import MAX_ANSWER, Exercise, check_answer
from tests.apptest_helpers import assert_clean, frames, open_page, sentence_params
from tests.pages.answered import ROUNDS
from ui import registry
from ui.format import format_number

NUMBER = re.compile(r"−?-?\d+\.\d{4}(?:e[+-]\d+)?")
TEXT_KINDS = ("markdown", "caption", "latex", "info", "success", "warning", "error", "code")


def leaves(node) -> list:
    """The elements under ``node`` (an AppTest, a block or an element), in page order."""
    if isinstance(node, AppTest):
        node = node._tree
    if isinstance(node, Block):
        return [leaf for child in node.children.values() for leaf in leaves(child)]
    return [node]


def element_numbers(element) -> set[str]:
    """The numbers one element shows, as the lab writes them (4 decimals, or scientific alone)."""
    found: set[str] = set()
    kind = getattr(element, "type", None)
    tables = frames(element) + ([element.value] if kind == "table" else [])
    for frame in tables:
        for value in frame.to_numpy().reshape(-1).tolist():
            if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
                found.add(format_number(value))  # a masked −∞ is not a number a learner reads or types
            elif isinstance(value, str):
                found.update(NUMBER.findall(value))
    if kind == "metric":
        found.update(NUMBER.findall(str(element.value)))
    if kind == "vega_lite_chart":
        for dataset in element.proto.datasets:
            table = pa.ipc.open_stream(dataset.data.data).read_all().to_pandas()
            for column in table.columns:
                for value in table[column].tolist():
                    if isinstance(value, float) and math.isfinite(value):
                        found.add(format_number(value))
                    elif isinstance(value, str):
                        found.update(NUMBER.findall(value))
    if kind in TEXT_KINDS:
        found.update(NUMBER.findall(str(element.value)))
    return {text.replace("−", "-") for text in found}


def shown_numbers(node) -> set[str]:
    """Every number the page (or a block of it) shows, as the lab writes it (4 decimals, or scientific alone)."""
    found: set[str] = set()
    for leaf in leaves(node):
        found |= element_numbers(leaf)
    return found


def asked(at, lesson: str) -> tuple[Exercise, ...]:
    """The exercises the page's last run asked."""
    return at.session_state[f"_exercises:{registry.lesson_for(lesson).name}"]


def is_count(item: Exercise) -> bool:
    return item.tolerance == 0


def on_the_page(at, lesson: str) -> tuple[Exercise, ...]:
    """The exercises whose card the page shows: a step asks its next round once the round before is settled."""
    texts = [str(element.value) for element in at.markdown]
    return tuple(item for item in asked(at, lesson) if any(text.endswith(item.prompt) for text in texts))


def show_every_answer(at, lesson: str):
    """Click "Show me the answer" on every exercise the page shows unsettled (one run)."""
    name = registry.lesson_for(lesson).name
    for button in at.button:
        if str(button.key or "").startswith(f"exs:{name}:"):
            button.click()
    return at.run()


def open_answered(page: str, params: dict | None = None):
    """The lesson (whole, as open_page opens it) after "Show me the answer" on every exercise: what its steps reveal
    once their questions are settled is drawn too."""
    at = open_page(page, params)
    assert_clean(at)
    return show_every_answer(at, page)


def check_on_screen(at, lesson: str, *, answers: bool = False):
    """Operands on screen before answering; with ``answers``, every numeric answer on screen once shown (one more
    run). Returns the page, after the answers were shown if they were."""
    assert_clean(at)
    items = on_the_page(at, lesson)
    assert items, "the lesson asks something"
    numbers = shown_numbers(at)
    assert len(numbers) > 20, "the collector reads the page"
    for item in items:
        for used in item.uses:
            assert format_number(used) in numbers, (lesson, item.id, "uses", format_number(used))
    if not answers:
        return at
    for _ in range(ROUNDS):  # each round's answers shown; a question the round opens has its operands on screen
        at = show_every_answer(at, lesson)
        assert_clean(at)
        new = [item for item in on_the_page(at, lesson) if item not in items]
        if not new:
            break
        numbers = shown_numbers(at)
        for item in new:
            for used in item.uses:
                assert format_number(used) in numbers, (lesson, item.id, "uses", format_number(used))
        items += tuple(new)
    numbers = shown_numbers(at)
    for item in items:
        if item.kind == "numeric" and not is_count(item):
            assert format_number(float(item.answer)) in numbers, (lesson, item.id, format_number(float(item.answer)))
    return at


def check_not_guessable(at, lesson: str, T: int, *, items=None, node=None) -> None:
    """1/T, 0, 1 and every number the page (or ``node``, a step of it) shows, the neighbouring cells among them, are
    marked wrong unless they are the answer to the 3 decimals asked (``items``: the exercises to check, else all)."""
    shown = [float(text) for text in shown_numbers(at if node is None else node)]
    for item in asked(at, lesson) if items is None else items:
        if item.is_choice or is_count(item):
            continue
        answer = float(item.answer)
        assert item.tolerance <= 0.005, (item.id, item.tolerance)
        guesses = [1 / T, 0.0, 1.0, *shown]
        for guess in guesses:
            verdict = check_answer(item, repr(guess)).status
            right = abs(guess - answer) <= item.tolerance
            expected = "correct" if right else ("invalid" if abs(guess) > MAX_ANSWER else "wrong")  # a typo's size
            assert verdict == expected, (item.id, guess, answer)
            if right:
                assert round(guess, 3) == pytest.approx(round(answer, 3), abs=0.0011), (item.id, guess)


SENTENCE = sentence_params("the chef who ran the kitchen tasted the soup", d_model=6, seed=4, query="kitchen")
SHORT = sentence_params("dogs chase cats", d_model=4, seed=1, query="cats")
PRESET = {}  # the default example
TUTORIAL_001 = {"example": "I can't find the light switch"}


def lesson_run(page: str, params: dict, widgets: dict) -> object:
    """The page with the URL's input, then its own controls set away from their defaults."""
    at = open_page(page, params)
    for key, value in widgets.items():
        widget = next((w for kind in WIDGET_KINDS for w in at.get(kind) if getattr(w, "key", None) == key), None)
        if widget is None:  # an expander's open state
            at.session_state[key] = value
        else:
            widget.set_value(value)
        at.run()
    return at


STEP_8 = {"pipeline_step_concat": True}  # the pipeline's step 8, opened
WIDGET_KINDS = ("slider", "number_input", "toggle", "radio", "selectbox", "select_slider", "text_input")

CASES = [
    ("app_pages/scores.py", {}),
    ("app_pages/softmax.py", {"softmax_temperature": 0.1}),
    ("app_pages/context_vectors.py", {}),
    ("app_pages/qkv_projections.py", {"qkv_seed": 7, "qkv_d_k": 5}),
    ("app_pages/qkv_projections.py", {"qkv_seed": 3, "qkv_d_k": 3, "qkv_scale_random": False}),
    ("app_pages/scaling.py", {"scaling_seed": 5, "scaling_d_k": 9}),
    ("app_pages/scaling.py", {"scaling_seed": 2, "scaling_d_k": 4, "scaling_scale": False}),
    ("app_pages/masking.py", {"masking_type": "sliding window", "masking_window": 2}),
    ("app_pages/masking.py", {"masking_type": "padding", "masking_pads": 3}),
    ("app_pages/masking.py", {"masking_enabled": False}),
    ("app_pages/multi_head.py", {"multi_head_seed": 6, "multi_head_heads": 4, "multi_head_causal": True}),
    ("app_pages/positions.py", {"positions_seed": 9}),
    ("app_pages/pipeline.py", {"pipeline_seed": 4, "pipeline_heads": 3, "pipeline_mask": "causal", **STEP_8}),
]


@pytest.mark.parametrize("inputs", [PRESET, TUTORIAL_001, SENTENCE, SHORT], ids=["preset", "001", "typed", "short"])
@pytest.mark.parametrize(("page", "widgets"), CASES, ids=[f"{p[10:-3]}-{i}" for i, (p, _) in enumerate(CASES)])
def test_every_exercise_is_answerable_from_the_screen(page, widgets, inputs):
    at = lesson_run(page, inputs, widgets)
    for key, value in widgets.items():
        assert at.session_state[key] == value, "the control was really moved"
    check_not_guessable(at, page, len(at.session_state["_lab_input"].labels))
    check_on_screen(at, page)


LATER_CASES = [("app_pages/trained_model.py", {"tm_layer": 2, "tm_head": 5})]  # another head than the default


@pytest.mark.parametrize(("page", "widgets"), LATER_CASES, ids=[p[10:-3] for p, _ in LATER_CASES])
def test_later_lessons_exercises_are_answerable_from_the_screen(page, widgets):
    at = lesson_run(page, PRESET, widgets)
    check_not_guessable(at, page, len(at.session_state["_lab_input"].labels))
    check_on_screen(at, page)


@pytest.mark.parametrize("lesson", registry.numbered(), ids=lambda lesson: lesson.name)
def test_every_lesson_of_the_registry_asks_three_kinds_from_the_screen(lesson):
    """Every numbered lesson, a new one included, at its default settings: numeric, choice and what-if
    questions, each answerable from what the page shows."""
    at = lesson_run(lesson.path, PRESET, {})
    check_not_guessable(at, lesson.path, len(at.session_state["_lab_input"].labels))
    assert {item.kind for item in asked(at, lesson.path)} == {"numeric", "choice", "what-if"}
    check_on_screen(at, lesson.path, answers=True)
