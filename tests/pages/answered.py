"""The page as the learner sees it once every question is settled.

A step draws the table or sentence that answers its questions only after them (issue 36, item 8;
``tests/pages/test_answers_after.py`` checks the page before and after). The page tests that read those tables
use the fixture ``answered``: after every run, each "Show me the answer" on the page is clicked (a step that asks
again once its first questions are settled gets its next ones clicked too), so a test reads the whole step.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import ElementTree

ROUNDS = 4  # a step asks at most this many rounds of questions, each after the last is settled


def show_every_answer(at: AppTest, run) -> AppTest:
    """Click every "Show me the answer" of the page and run again, until none is left."""
    for _ in range(ROUNDS):
        buttons = [button for button in at.button if str(button.key or "").startswith("exs:")]
        if not buttons:
            return at
        for button in buttons:
            button.click()
        at = run(at)
    return at


@pytest.fixture
def answered(monkeypatch):
    """Every AppTest run of the test ends with every question settled ("Show me the answer" clicked)."""
    original = ElementTree.run  # AppTest.run and every widget's run come here

    def run(self, *, timeout=None):
        return show_every_answer(original(self, timeout=timeout), lambda at: original(at._tree, timeout=timeout))

    monkeypatch.setattr(ElementTree, "run", run)
