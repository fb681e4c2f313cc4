"""Lessons 7, 8 and 9 in steps (issue 24, item 1): their steps in teaching order, the 15-minute path's stop, and
the pipeline's stages open in the step that holds them.

The generic checks (every step opens from step=N, holds at most 40 elements, asks only what it shows) are in
tests/pages/test_steps.py; this file pins what these three lessons are made of.
"""

from __future__ import annotations

import pytest

from tests.apptest_helpers import assert_clean, frames, lab_input, open_page
from tests.pages.test_pipeline import core_steps, has_frame
from ui import registry
from ui.page import step_label

STEPS = {
    "app_pages/multi_head.py": (
        "Why several heads",
        "Shapes",
        "Q by head",
        "What splitting costs",
        "Every head",
        "One head's weights",
        "Worked example",
        "Output as a sum",
        "Concatenation",
        "W_o",
        "The output",
        "Parameters",
        "Check against PyTorch",
    ),
    "app_pages/positions.py": (
        "Order is invisible",
        "Dog bites man",
        "Positions tell them apart",
        "Your input, shuffled",
        "The query, moved",
        "Repeated words",
        "Adding positions",
        "One position worked out",
        "Weights with positions",
        "Shuffle with positions",
        "Rotary positions",
    ),
    "app_pages/pipeline.py": (
        "The block",
        "Input",
        "Queries, keys, values",
        "Scores",
        "Mask",
        "Weights",
        "Context",
        "Heads and output",
        "One query",
        "Who attends to whom",
        "In a transformer",
        "Cost",
        "Check against PyTorch",
        "Take the numbers",
    ),
}


@pytest.mark.parametrize("page", list(STEPS))
def test_the_lesson_is_in_steps_in_teaching_order(page):
    lesson = registry.lesson_for(page)
    at = open_page(page, {"step": "2"})
    assert_clean(at)
    bar = at.segmented_control(key=f"stepbar:{lesson.name}")
    names = STEPS[page]
    assert list(bar.options) == [step_label(n, name, False) for n, name in enumerate(names, 1)]
    assert bar.value == 2


def test_the_pipeline_step_opens_its_stages_and_the_whole_page_keeps_them_closed():
    """Step 8 holds stages 8 and 9: both start open in every view, so its question's concatenated row is on
    screen, and the output it asks about follows once the question is settled; the whole lesson on one page keeps
    the other stages closed until they are opened (closed stages cost nothing)."""
    page = "app_pages/pipeline.py"
    for params in ({"step": "8"}, {}):
        at = open_page(page, params)
        assert_clean(at)
        labels = list(lab_input(at).labels)
        block = core_steps(at)
        assert has_frame(frames(at), block.concat, labels)
        assert not has_frame(frames(at), block.output, labels)
        for button in [b for b in at.button if str(b.key or "").startswith("exs:pipeline:output-entry")]:
            button.click()
        at.run()
        assert has_frame(frames(at), block.output, labels)
    assert not has_frame(frames(at), block.heads[0].Q, labels)  # the whole page: stage 2 closed
