"""The bare pages the browser benchmarks measure the lab against (benchmarks/browser.py): each draws what its row
says, and nothing else, so a floor is the cost of just that (issue 37, item 4)."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from benchmarks.browser import FIRST_PAGE_FLOORS, FLOOR_PAGE


def floor_page(**params: str) -> AppTest:
    at = AppTest.from_string(FLOOR_PAGE, default_timeout=60)
    at.query_params.update(params)
    return at.run()


def next_click(at: AppTest) -> AppTest:
    next(button for button in at.button if button.label.startswith("Next")).click()
    return at.run()


@pytest.mark.parametrize(("charts", "tokens"), [(1, 6), (2, 32)])
def test_the_step_floor_shows_only_its_heatmaps(charts, tokens):
    at = floor_page(n=str(tokens), charts=str(charts))
    assert not at.exception and not at.get("vega_lite_chart")
    at = next_click(at)
    assert not at.exception
    assert len(at.get("vega_lite_chart")) == charts
    assert not at.get("form") and not at.get("segmented_control") and len(at.button) == 1  # the Next alone
    assert not next_click(at).get("vega_lite_chart"), "the next Next hides them"


def test_the_question_floor_shows_a_step_bar_a_sentence_and_a_question_and_no_chart():
    """The least a stop of the path shows when it opens (issue 36: it asks before it shows)."""
    at = floor_page(charts="0", ask="1")
    assert not at.get("form")
    at = next_click(at)
    assert not at.exception and not at.get("vega_lite_chart")
    assert len(at.get("segmented_control")) == 1 and len(at.get("form")) == 1
    assert [box.label for box in at.number_input] == ["Your answer"]
    assert "Show me the answer" in [button.label for button in at.button]
    assert any("Which token" in text.value for text in at.markdown)


@pytest.mark.parametrize("name", list(FIRST_PAGE_FLOORS))
def test_each_first_page_floor_draws_its_title_and_what_it_names(name):
    at = AppTest.from_string(FIRST_PAGE_FLOORS[name], default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    assert [title.value for title in at.title] == ["Floor"]
    assert len(at.get("vega_lite_chart")) == (1 if "heatmap" in name else 0)
