"""Stepped lessons in a real browser (issue 24): step= links, Next / Back, the whole-lesson switch and the path,
and every step of every lesson on a 390 px phone with nothing wider than the screen outside a scroll container."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import screenshot, wait_for_app
from tests.e2e.test_browser import no_exception
from tests.pages.test_steps import STEPPED
from ui.page import WHOLE

# Elements of the main column that stick out past the screen's right edge with no scrolling ancestor inside it.
STICKING_OUT_JS = """() => {
  const limit = document.documentElement.clientWidth + 1;
  const out = [];
  for (const el of document.querySelectorAll("[data-testid='stMain'] [data-testid='stElementContainer'] *")) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0 || box.right <= limit) continue;
    let scroller = el.parentElement;
    let held = false;
    while (scroller && scroller !== document.body) {
      const overflow = getComputedStyle(scroller).overflowX;
      if ((overflow === "auto" || overflow === "scroll") && scroller.getBoundingClientRect().right <= limit) {
        held = true;
        break;
      }
      scroller = scroller.parentElement;
    }
    const name = `${el.tagName.toLowerCase()}.${String(el.className).slice(0, 40)}`;
    if (!held) out.push(`${name} right=${Math.round(box.right)}`);
  }
  return {out: out.slice(0, 5), pageScrolls: document.documentElement.scrollWidth > limit};
}"""


def current_step(page) -> str:
    return page.evaluate("() => new URLSearchParams(window.location.search).get('step')")


def click_and_wait(page, name: str) -> None:
    page.get_by_role("button", name=name).first.click()
    page.wait_for_timeout(300)
    wait_for_app(page)


def move_and_wait(page, name: str, step: int) -> None:
    """Click Next or Back and wait until the URL names the step it leads to and that step is drawn (a run that has
    not started yet 300 ms after the click, as under load, is not mistaken for a finished one)."""
    page.get_by_role("button", name=name).first.click()
    page.wait_for_function(f"() => new URLSearchParams(window.location.search).get('step') === '{step}'")
    wait_for_app(page)


@pytest.mark.browser
@pytest.mark.parametrize("lesson", STEPPED, ids=lambda lesson: lesson.name)
def test_every_step_fits_a_phone(phone, app_url, lesson):
    """Open step 1 from its link, then walk every step with Next, checking the width of each on a 390 px phone."""
    phone.goto(f"{app_url}/{lesson.name}?step=1")
    wait_for_app(phone)
    number = 1
    while True:
        no_exception(phone)
        assert current_step(phone) == str(number)
        found = phone.evaluate(STICKING_OUT_JS)
        assert not found["out"] and not found["pageScrolls"], (lesson.name, number, found)
        if number <= 2:
            screenshot(phone, f"phone-{lesson.name}-step{number}")
        next_button = phone.locator("[data-testid='stMain'] button", has_text="Next:")
        if next_button.count() == 0:
            break
        next_button.first.click()
        number += 1
        phone.wait_for_function(f"() => new URLSearchParams(window.location.search).get('step') === '{number}'")
        wait_for_app(phone)
    assert number >= 3


@pytest.mark.browser
def test_step_links_next_back_and_the_whole_lesson_switch(page, app_url):
    from playwright.sync_api import expect  # imported here: without playwright the browser tests skip

    page.goto(f"{app_url}/softmax?step=3")
    wait_for_app(page)
    no_exception(page)
    assert page.get_by_text("Pitfall: why not just divide by the sum?").count() == 1
    move_and_wait(page, "Next: All rows", 4)  # the click scrolls the button at the bottom into view first
    assert current_step(page) == "4"
    assert page.evaluate("() => document.querySelector(\"[data-testid='stMain']\").scrollTop") == 0, "opens at its top"
    move_and_wait(page, "Back: Divide by the sum?", 3)
    assert current_step(page) == "3"
    page.get_by_text("Whole lesson on one page").click()  # its label: the switch's input is drawn hidden
    expect(page.get_by_role("switch", name="Whole lesson on one page")).to_be_checked()
    page.wait_for_function(f"() => new URLSearchParams(window.location.search).get('view') === '{WHOLE}'")
    wait_for_app(page)
    assert page.get_by_text("What you just learned").count() == 1
    assert page.get_by_text("Stability: subtract the maximum before exp").count() == 1
    page.reload()
    wait_for_app(page)
    assert page.get_by_text("What you just learned").count() == 1, "a reload keeps the whole lesson"


@pytest.mark.browser
def test_the_steps_seen_survive_a_new_tab(page, app_url):
    """Issue 25 part 1 with issue 24: the steps a learner saw are ticked again in a new tab of the same browser."""
    first = page  # the fixture closes both tabs and forgets the stored progress
    first.set_viewport_size({"width": 1280, "height": 900})
    first.goto(f"{app_url}/softmax?step=2")
    wait_for_app(first)
    move_and_wait(first, "Next: Divide by the sum?", 3)
    first.wait_for_function("() => (localStorage.getItem('attention-lab-progress') || '').includes('softmax')")
    other = first.context.new_page()
    other.goto(f"{app_url}/softmax?step=5")
    wait_for_app(other)
    other.wait_for_timeout(1000)
    wait_for_app(other)
    bar = other.locator("[data-testid='stMain'] [data-testid='stButtonGroup']").first
    assert "✓ 2. Worked example" in bar.inner_text() and "✓ 3. Divide by the sum?" in bar.inner_text()
    assert "✓ 4." not in bar.inner_text()
