"""Ten learners on one server at once, each with their own sentence: nobody sees anybody else's numbers."""

from __future__ import annotations

import re
import urllib.request

import pytest

from tests.e2e.conftest import wait_for_app

pytestmark = pytest.mark.serial  # ten learners at once on one server, with time limits: alone under xdist

SESSIONS = 10


def sentence(i: int) -> str:
    return " ".join(f"user{i}word{j}" for j in range(4 + i))


@pytest.mark.browser
def test_ten_sessions_each_see_their_own_numbers(browser, app_url):
    pages = []
    for i in range(SESSIONS):  # open all ten before waiting for any: their runs overlap on the server
        page = browser.new_context(viewport={"width": 1200, "height": 1600}).new_page()
        query = f"example=Your+own+sentence&sentence={sentence(i).replace(' ', '+')}&seed={i}&d_model={2 + i}"
        page.goto(f"{app_url}/scores?{query}&view=all", wait_until="commit")
        pages.append(page)
    for i, page in enumerate(pages):
        wait_for_app(page, timeout=120_000)
        main = page.locator("[data-testid='stMain']").inner_text()
        assert f"query “user{i}word0”" in main
        assert f"{4 + i} tokens × d_model {2 + i}" in main
        others = {f"user{j}word0" for j in range(SESSIONS) if j != i}
        assert not any(other in main for other in others), f"session {i} sees another session's sentence"
        assert page.locator("[data-testid='stException']").count() == 0
    # each changes its own query token; the others stay where they were
    for i, page in enumerate(pages[:3]):
        page.locator("[data-testid='stSidebar']").get_by_role("combobox", name="Query token").click()
        page.get_by_role("option", name=f"user{i}word1", exact=True).click()
    for i, page in enumerate(pages):
        page.wait_for_timeout(300)
        wait_for_app(page, timeout=120_000)
        expected = f"user{i}word1" if i < 3 else f"user{i}word0"
        assert re.search(f"query “{expected}”", page.locator("[data-testid='stMain']").inner_text())
    with urllib.request.urlopen(f"{app_url}/_stcore/health", timeout=5) as response:
        assert response.status == 200
    for page in pages:
        page.context.close()
