"""Lesson 7 in a real browser: the parameter counts (this page's d_model and BERT-base's 768) fit their column."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import screenshot, show_answers, wait_for_app
from tests.e2e.test_browser import no_exception

SLACK_PX = 4
# Every formula of the main column: the width it needs against the width it has, and where it ends.
FORMULAS_JS = """() => {
  const main = document.querySelector("[data-testid='stMainBlockContainer']").getBoundingClientRect();
  return [...document.querySelectorAll("[data-testid='stMain'] .katex-display")]
    .filter((el) => el.offsetParent !== null)
    .map((el) => ({
      text: el.textContent,
      needs: el.scrollWidth,
      has: el.clientWidth,
      right: el.getBoundingClientRect().right,
      mainRight: main.right,
    }));
}"""


@pytest.mark.browser
@pytest.mark.parametrize("width", [390, 1280])
def test_the_parameter_counts_fit_their_column_on_a_phone_and_a_desktop(page, app_url, width):
    """The BERT-base counts (2,359,296 and more) was wider than its column: cut on a desktop, scrolled on a phone."""
    page.set_viewport_size({"width": width, "height": 1600})
    page.goto(f"{app_url}/multi_head?step=12")  # the step "Parameters"
    wait_for_app(page)
    no_exception(page)
    show_answers(page)  # the counts answer the step's question
    formulas = page.evaluate(FORMULAS_JS)
    screenshot(page, f"multi-head-parameters-{width}")
    assert any("2,359,296" in formula["text"] for formula in formulas), formulas
    for formula in formulas:
        # a fitting formula overhangs by 2 px (KaTeX's italic corrections); the old one by 11 px (desktop), 55 (phone)
        assert formula["needs"] <= formula["has"] + SLACK_PX, f"a formula is wider than its column: {formula}"
        assert formula["right"] <= formula["mainRight"] + 1, f"a formula sticks out of the page: {formula}"
