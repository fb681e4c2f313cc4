"""Progress kept in the learner's own browser (localStorage): reload, new tab, forget, download and load."""

from __future__ import annotations

import json

import pytest

from runtime import browser_store
from tests.e2e.conftest import screenshot, wait_for_app
from tests.e2e.test_browser import no_exception

NONE_YET = "Exercises: none answered yet"


def marker(page) -> str:
    """The sidebar's progress line."""
    line = page.locator("[data-testid='stSidebar'] [data-testid='stCaptionContainer']").filter(has_text="Exercises:")
    return line.first.inner_text().strip()


def wait_marker(page, expected: str, timeout_ms: int = 20_000) -> None:
    """The sidebar line shows ``expected`` (the stored value comes back a moment after the first run)."""
    for _ in range(timeout_ms // 250):
        if marker(page) == expected:
            break
        page.wait_for_timeout(250)
    wait_for_app(page)
    assert marker(page) == expected


STORED = f"window.localStorage.getItem({json.dumps(browser_store.STORAGE_KEY)})"  # the stored progress, or null
STORED_JS = f"() => {STORED} !== null"


def stored(page) -> str | None:
    return page.evaluate(f"() => {STORED}")


def answer_next_exhibit(page, app_url: str, before: str = NONE_YET) -> None:
    """Answer the museum's first unanswered 'Spot the bug' (any line: one more answered, right or wrong), once the
    sidebar shows the progress ``before`` (the stored answers are back)."""
    page.goto(f"{app_url}/mistakes?view=all")  # every exhibit on one page: the first unanswered one
    wait_for_app(page)
    wait_marker(page, before)
    # in the main area: the sidebar may hold runtime.preload's hidden form for a moment
    form = page.locator("[data-testid='stMain'] [data-testid='stForm']").first
    form.locator("[data-testid='stRadio'] [role='radiogroup'] label").first.click()
    form.get_by_role("button", name="Check").click()
    page.wait_for_timeout(300)
    wait_for_app(page)


def answered_line(page) -> str:
    line = marker(page)
    assert line != NONE_YET and line.startswith("Exercises: ") and line.endswith("/1 correct"), line
    return line


@pytest.mark.browser
def test_an_answer_survives_a_reload_and_a_new_tab_and_forget_clears_it(browser, app_url):
    context = browser.new_context(viewport={"width": 1400, "height": 2400})
    try:
        page = context.new_page()
        page.goto(app_url)
        wait_for_app(page)
        assert marker(page) == NONE_YET
        answer_next_exhibit(page, app_url)
        line = answered_line(page)  # current at once: drawn after the page recorded the answer
        assert stored(page), "the answer is written to localStorage"
        page.reload()
        wait_for_app(page)
        wait_marker(page, line)
        other = context.new_page()  # a new tab of the same browser
        other.goto(app_url)
        wait_for_app(other)
        wait_marker(other, line)
        screenshot(other, "progress-overview-restored")
        answer_next_exhibit(page, app_url, line)  # the first tab, still open, answers the next exhibit
        assert marker(page).endswith("/2 correct"), marker(page)
        wait_marker(other, marker(page))  # the open overview tab hears of it without a reload
        other.get_by_role("button", name="Forget my progress").click()
        other.wait_for_timeout(300)
        wait_for_app(other)
        assert marker(other) == NONE_YET
        kept = json.loads(stored(other))  # forgotten in the browser: only this visit of the overview is left
        assert kept == {"version": 1, "lessons": {}, "visited": ["overview"], "steps": {}, "path": 0}, kept
        other.reload()
        wait_for_app(other)
        other.wait_for_timeout(1500)
        assert marker(other) == NONE_YET
        no_exception(other)
    finally:
        context.close()


@pytest.mark.browser
def test_download_then_load_in_a_fresh_browser_and_a_hostile_file_changes_nothing(browser, app_url, tmp_path):
    first = browser.new_context(viewport={"width": 1400, "height": 2400})
    try:
        page = first.new_page()
        answer_next_exhibit(page, app_url)
        line = answered_line(page)
        page.goto(app_url)
        wait_for_app(page)
        wait_marker(page, line)  # the stored answers are back: the button's file is drawn from them
        with page.expect_download() as info:
            page.get_by_role("button", name="Download my progress").click()
        saved = tmp_path / "progress.json"
        info.value.save_as(saved)
    finally:
        first.close()
    data = json.loads(saved.read_text())
    assert data["version"] == 1 and data["lessons"]["mistakes"], data

    fresh = browser.new_context(viewport={"width": 1400, "height": 2400})
    try:
        page = fresh.new_page()
        page.goto(app_url)
        wait_for_app(page)
        page.wait_for_function(STORED_JS, timeout=30_000)  # this visit of the overview is written (a later run)
        wait_for_app(page)
        assert marker(page) == NONE_YET
        before = stored(page)
        hostile = tmp_path / "hostile.json"
        hostile.write_text(json.dumps({"version": 1, "lessons": {"<img src=x onerror=alert(1)>": {}}, "visited": []}))
        page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(hostile))
        page.wait_for_timeout(500)
        wait_for_app(page)
        error = page.locator("[data-testid='stAlertContentError']").filter(has_text="Nothing changed")
        assert error.count() == 1, "one clear message"
        assert "onerror" not in error.inner_text()
        assert marker(page) == NONE_YET and stored(page) == before, "a hostile file changes nothing"
        page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(saved))
        page.wait_for_timeout(500)
        wait_for_app(page)
        assert marker(page) == line
        assert page.locator("[data-testid='stAlertContentSuccess']").filter(has_text="Progress loaded").count() == 1
        page.reload()  # and the loaded progress is now kept in this browser too
        wait_for_app(page)
        wait_marker(page, line)
        screenshot(page, "progress-loaded")
        no_exception(page)
    finally:
        fresh.close()
