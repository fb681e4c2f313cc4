"""The keyboard reaches every number (issue 38, item 2): a lesson walked with Tab and Enter alone, a heatmap's cells
reached and moved through with the arrow keys, and a cell's arithmetic opened with Enter, the same text a click on
that cell opens. One server (the session's ``app_url``) and one browser page for the module."""

from __future__ import annotations

import pytest

import attention_core as ac
from tests.e2e.conftest import screenshot, wait_for_app
from tests.e2e.test_browser import no_exception
from ui.format import format_number
from ui.widgets import keyboard_grid

CHART = "scores_scores_chart"  # lesson 1's clickable heatmap of X Xᵀ, in its step "All scores" (step 3)
GRID = f".st-key-{keyboard_grid.grid_key(CHART)}"
ARITHMETIC = f".st-key-{CHART}_arithmetic"

# The ring over the chart's cell and the box of the chart's cell marks (the group with one mark per cell).
RING = """(grid) => {
  const host = document.querySelector(grid);
  const ring = host.querySelector('.alab-cells-ring');
  const style = getComputedStyle(ring);
  const box = ring.getBoundingClientRect();
  return {display: style.display, border: style.borderTopWidth + ' ' + style.borderTopStyle,
          left: box.left, top: box.top, width: box.width, height: box.height,
          chip: host.querySelector('.alab-cells-chip').textContent};
}"""
MARKS = """(chart) => [...document.querySelectorAll(`.st-key-${chart} svg g.mark-rect`)]
  .reduce((sum, g) => sum + g.childElementCount, 0)"""  # the chart's rect marks, its selected cell's outline among them
CELLS_BOX = """(chart) => {
  const groups = [...document.querySelectorAll(`.st-key-${chart} svg g.mark-rect`)]
    .filter((g) => g.childElementCount === 36);
  const box = groups[0].getBoundingClientRect();
  return {left: box.left, top: box.top, width: box.width, height: box.height};
}"""


def focused(page) -> dict:
    """The focused element: tag, text, accessible name, whether it is in the heatmap's grid and has a focus ring (an
    outline or a box shadow: Streamlit's buttons ring with a shadow, the lab's style with an outline)."""
    return page.evaluate(
        """(grid) => { const a = document.activeElement; const style = getComputedStyle(a);
        const outline = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0;
        const ring = outline || style.boxShadow !== 'none';
        return {tag: a.tagName, text: (a.innerText || '').trim(), label: a.getAttribute('aria-label') || '',
                inGrid: !!a.closest(grid), ring}; }""",
        GRID,
    )


def press_until(page, wanted, key: str = "Tab", limit: int = 150) -> dict:
    """Press ``key`` until the focused element satisfies ``wanted`` (a test of focused()'s dict); returns it. Every
    stop on the way shows a focus ring (text fields and selects: Streamlit outlines their box, not the input)."""
    for _ in range(limit):
        page.keyboard.press(key)
        now = focused(page)
        assert now["ring"] or now["tag"] in ("INPUT", "BODY"), f"no focus ring on {now}"
        if wanted(now):
            return now
    raise AssertionError(f"{key} never reached the wanted element (last: {focused(page)})")


def click(page, row: int, col: int) -> str:
    """Click the chart's cell (row, col) with the mouse, at its centre; the arithmetic panel's text once redrawn."""
    cells = page.evaluate(CELLS_BOX, CHART)
    before = page.locator(ARITHMETIC).inner_text()
    page.mouse.click(cells["left"] + (col + 0.5) * cells["width"] / 6, cells["top"] + (row + 0.5) * cells["height"] / 6)
    return rerun_done(page, before)


def rerun_done(page, before: str) -> str:
    """Wait until the arithmetic panel shows something other than ``before`` and the script is done; its text."""
    for _ in range(100):
        page.wait_for_timeout(100)
        if page.locator(ARITHMETIC).inner_text() != before:
            break
    wait_for_app(page)
    return page.locator(ARITHMETIC).inner_text()


@pytest.mark.browser
def test_a_lesson_by_keyboard_opens_a_cells_arithmetic(app_url, page):
    scores = ac.self_attention(ac.DEFAULT_PRESET.matrix(), scale=False).scores  # (T, T), lesson 1's X Xᵀ
    page.goto(f"{app_url}/scores?step=1")
    wait_for_app(page)

    # Step 1 -> 3 with Tab and Enter only: the skip link first, then on through the main area to Next.
    press_until(page, lambda f: f["text"] == "Skip to main content")
    page.keyboard.press("Enter")
    for step in (2, 3):
        press_until(page, lambda f: f["tag"] == "BUTTON" and "Next:" in f["text"])
        page.keyboard.press("Enter")
        page.wait_for_function(f"() => new URLSearchParams(location.search).get('step') === '{step}'")
        wait_for_app(page)
    no_exception(page)
    assert "Click any cell" in page.locator(ARITHMETIC).inner_text()
    assert page.locator(ARITHMETIC).get_attribute("role") == "status"
    assert page.locator(ARITHMETIC).get_attribute("aria-live") == "polite"

    # Back up from Next to the heatmap's grid: one Tab stop, its first cell, and a ring over the chart's own cell.
    cell = press_until(page, lambda f: f["inGrid"], key="Shift+Tab")
    assert cell["label"] == f"query “Your”, key “Your”: {format_number(float(scores[0, 0]))}"
    for key in ("ArrowDown", "ArrowDown", "ArrowRight", "ArrowRight", "ArrowLeft"):
        page.keyboard.press(key)
    cell = focused(page)
    assert cell["label"] == f"query “starts”, key “journey”: {format_number(float(scores[2, 1]))}"
    ring, cells = page.evaluate(RING, GRID), page.evaluate(CELLS_BOX, CHART)
    assert ring["display"] == "block" and ring["border"] == "3px solid", ring
    assert abs(ring["left"] - (cells["left"] + cells["width"] / 6)) < 2, (ring, cells)
    assert abs(ring["top"] - (cells["top"] + 2 * cells["height"] / 6)) < 2, (ring, cells)
    assert ring["chip"].startswith("query “starts”, key “journey”")
    screenshot(page, "keyboard-cell-focus")

    before = page.locator(ARITHMETIC).inner_text()
    page.keyboard.press("Enter")
    by_keyboard = rerun_done(page, before)
    assert "Score of query “starts” with key “journey”" in by_keyboard
    assert f"= {format_number(float(scores[2, 1]))}" in by_keyboard or "(unrounded: " in by_keyboard
    assert focused(page)["label"] == cell["label"], "focus stays on the cell through the rerun"

    # The mouse: another cell, then the keyboard's cell; the click gives the very text Enter gave.
    assert "Score of query “with” with key “one”" in click(page, 3, 4)
    assert click(page, 2, 1) == by_keyboard

    # The keyboard after a click: Enter on another cell opens it, and the chart's outline of the clicked cell goes.
    outlined = page.evaluate(MARKS, CHART)
    page.locator(f"{GRID} td[tabindex='0']").focus()  # back onto the grid: the cursor has followed the click
    assert focused(page)["label"].startswith("query “starts”, key “journey”")
    page.keyboard.press("ArrowUp")
    before = page.locator(ARITHMETIC).inner_text()
    page.keyboard.press("Enter")
    assert "Score of query “journey” with key “journey”" in rerun_done(page, before)
    page.wait_for_function(f"(chart) => ({MARKS})(chart) === {outlined - 1}", arg=CHART)
    wait_for_app(page)
    assert "Score of query “journey” with key “journey”" in page.locator(ARITHMETIC).inner_text()
    assert focused(page)["label"].startswith("query “journey”, key “journey”")
    no_exception(page)
