"""The 15-minute path in Chromium (issue 36), started from the overview's button as a learner would: every stop asks
its question before its result, the V of the Q, K, V stop is the V later stops blend, and the path ends on a
trained model's head and a GPT-style model's next token. Every stop is screenshot on a desktop and a phone."""

from __future__ import annotations

import pytest

from attention_core import DEFAULT_PRESET
from attention_core import story as sty
from tests.e2e.conftest import screenshot, wait_for_app
from tests.e2e.test_browser import no_exception
from tests.e2e.test_steps_browser import STICKING_OUT_JS, click_and_wait
from ui.format import format_number

STOPS = 13
ASKING = range(2, 13)
RESULT = "[data-testid='stMain'] [data-testid='stVegaLiteChart'], [data-testid='stMain'] table"


def main_text(page) -> str:
    """Everything the main area holds, hidden tabs included."""
    return page.locator("[data-testid='stMain']").text_content()


def results(page) -> int:
    return page.locator(RESULT).count()


def reveal(page) -> None:
    """Answer by "Show me the answer", as a learner who does not know would."""
    click_and_wait(page, "Show me the answer")


@pytest.mark.browser
def test_the_path_from_the_overview_to_the_next_token(page, app_url):
    story = sty.tell(DEFAULT_PRESET.matrix(), DEFAULT_PRESET.query_index)
    V = [format_number(v) for v in story.V.reshape(-1).tolist()]
    page.goto(f"{app_url}/")
    wait_for_app(page)
    page.get_by_role("link", name="Take the 15-minute path").click()
    page.wait_for_url("**/path?*step=1*")
    wait_for_app(page)
    no_exception(page)
    assert page.get_by_role("button", name="Check my answers").count() == 1, "the check before the path"
    click_and_wait(page, "Skip the check")
    screenshot(page, "path-stop-01")
    texts = {}
    for number in ASKING:
        page.locator("[data-testid='stMain']").get_by_role("button", name="Next:").first.click()
        page.wait_for_timeout(300)
        wait_for_app(page)
        no_exception(page)
        assert page.evaluate("() => new URLSearchParams(location.search).get('step')") == str(number)
        assert page.get_by_text("Your turn: predict first").count() == 1, f"stop {number} asks a question"
        assert page.get_by_role("button", name="Check").count() == 1
        before = results(page)
        screenshot(page, f"path-stop-{number:02d}-question")
        reveal(page)
        assert results(page) > before, f"stop {number} shows its result after the answer"
        screenshot(page, f"path-stop-{number:02d}-revealed")
        texts[number] = main_text(page)
    assert all(v in texts[2] for v in V), "stop 2 shows V"
    assert all(v in texts[7] for v in V), "the context stop blends stop 2's V"
    assert all(v in texts[10] for v in V), "the one line runs on stop 2's V"
    context = [format_number(c) for c in story.context[story.query].tolist()]
    assert all(c in texts[8] for c in context), "the heads stop concatenates stop 7's context vector"
    assert "One head of a trained model" in texts[11] and "Layer" in texts[11]
    assert "probability" in texts[12] and "SmolLM2" in texts[12]
    page.locator("[data-testid='stMain']").get_by_role("button", name="Next:").first.click()
    page.wait_for_timeout(300)
    wait_for_app(page)
    assert page.get_by_role("button", name="Check my answers").count() == 1, "the matched check after the path"
    screenshot(page, "path-stop-13")


@pytest.mark.browser
def test_every_stop_fits_a_phone(phone, app_url):
    for number in range(1, STOPS + 1):
        phone.goto(f"{app_url}/path?step={number}")
        wait_for_app(phone)
        no_exception(phone)
        if number in ASKING:
            reveal(phone)
        found = phone.evaluate(STICKING_OUT_JS)
        assert not found["pageScrolls"] and not found["out"], (number, found)
        screenshot(phone, f"path-phone-stop-{number:02d}")
