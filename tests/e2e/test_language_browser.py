"""The lab in Chinese in a real browser (issue 39): the picker, lang= in the address, a reload, and the language
coming back from the learner's browser in a tab opened without lang=."""

from __future__ import annotations

import json
import re

import pytest

from runtime import browser_store
from tests.e2e.conftest import screenshot, wait_for_app
from tests.e2e.test_browser import no_exception

STORED = f"() => window.localStorage.getItem({json.dumps(browser_store.STORAGE_KEY)})"


def title(page) -> str:
    return page.locator("[data-testid='stMain'] h1").first.inner_text().strip()


CJK = re.compile(r"[\u4e00-\u9fff]")


def wait_title(page, chinese: bool, timeout_ms: int = 20_000) -> str:
    """Wait until the page's title is in Chinese (or not); the title."""
    for _ in range(timeout_ms // 250):
        if bool(CJK.search(title(page))) == chinese:
            break
        page.wait_for_timeout(250)
    wait_for_app(page)
    assert bool(CJK.search(title(page))) == chinese, title(page)
    return title(page)


@pytest.mark.browser
def test_the_picker_switches_to_chinese_and_the_language_survives_a_reload_and_a_new_tab(page, app_url):
    page.goto(f"{app_url}/scores?step=1")
    wait_for_app(page)
    english = wait_title(page, chinese=False)
    picker = page.locator("[data-testid='stSidebar'] [data-testid='stSelectbox']").filter(has_text="Language").first
    picker.click()
    page.get_by_role("option", name="简体中文").click()
    page.wait_for_function("() => new URLSearchParams(location.search).get('lang') === 'zh'")
    chinese = wait_title(page, chinese=True)
    assert chinese != english
    no_exception(page)
    # Each sidebar choice still shows its value: a radio whose labels change shows none checked unless set again.
    groups = page.locator("[data-testid='stSidebar'] [data-testid='stRadio']")
    assert groups.count() >= 2
    for index in range(groups.count()):
        assert groups.nth(index).locator("input[type=radio]:checked").count() == 1, index
    # A screen reader reads the page in Chinese (ui.widgets.a11y), and axe finds nothing serious in the zh markup.
    page.wait_for_function("() => document.documentElement.lang === 'zh-Hans'")
    from tests.e2e.test_accessibility import DESKTOP, serious

    assert not serious(page, [("light", DESKTOP, None)])
    screenshot(page, "language-zh-scores")

    page.reload()  # the address keeps lang=zh
    wait_for_app(page)
    assert wait_title(page, chinese=True) == chinese

    page.wait_for_function(f"() => ({STORED})() !== null && JSON.parse(({STORED})()).language === 'zh'")
    page.goto(f"{app_url}/scores?step=1")  # no lang=: the browser's book names zh
    wait_for_app(page)
    assert wait_title(page, chinese=True) == chinese
    page.wait_for_function("() => new URLSearchParams(location.search).get('lang') === 'zh'")
