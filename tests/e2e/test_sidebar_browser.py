"""The sidebar in a real browser: the Query token box always shows the token the page computes for."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import screenshot, show_answers, wait_for_app
from tests.e2e.test_browser import choose, no_exception


def query_box(page) -> str:
    """The text the learner sees in the sidebar's Query token box."""
    return page.locator("[data-testid='stSidebar']").get_by_role("combobox", name="Query token").input_value()


def computed_query(page) -> str:
    """The query the scores page works out ('Step by step for the query “light”')."""
    heading = page.locator("[data-testid='stMain'] h2, [data-testid='stMain'] h3").filter(has_text="for the query")
    return heading.first.inner_text().split("“", 1)[1].split("”", 1)[0]


def settle(page) -> None:
    page.wait_for_timeout(600)
    wait_for_app(page)


def assert_box_shows(page, expected: str, timeout_ms: int = 20_000) -> None:
    """The page computes for ``expected`` (waiting for a slow rerun) and the box shows the same token."""
    for _ in range(timeout_ms // 250):
        show_answers(page)  # the worked example, which names its query, follows the step's question
        if computed_query(page) == expected:
            break
        page.wait_for_timeout(250)
    wait_for_app(page)
    assert computed_query(page) == expected
    assert query_box(page) == expected, f"the box shows {query_box(page)!r}, the page computes {expected!r}"


@pytest.mark.browser
def test_query_box_follows_example_changes_and_reset(page, app_url):
    page.goto(f"{app_url}/scores?view=all")
    wait_for_app(page)
    assert_box_shows(page, "starts")
    choose(page, "Example", "I can't find the light switch")
    assert_box_shows(page, "light")
    choose(page, "Query token", "switch")
    assert_box_shows(page, "switch")
    choose(page, "Example", "Self Attention is good")
    assert_box_shows(page, "Self")
    choose(page, "Example", "Your own sentence")
    assert_box_shows(page, "the (1)")
    page.get_by_role("button", name="Reset to the default input").click()
    settle(page)
    assert_box_shows(page, "starts")
    no_exception(page)


@pytest.mark.browser
def test_query_box_after_a_deep_link_a_page_switch_and_back(page, app_url):
    page.goto(f"{app_url}/scores?example=I+can%27t+find+the+light+switch&query=I&view=all")
    wait_for_app(page)
    assert_box_shows(page, "I")
    choose(page, "Example", "Self Attention is good")
    assert_box_shows(page, "Self")
    page.locator("[data-testid='stSidebarNav'] a").filter(has_text="Softmax").first.click()
    settle(page)
    assert query_box(page) == "Self"
    page.go_back()
    settle(page)
    assert_box_shows(page, "Self")
    page.go_forward()
    settle(page)
    assert query_box(page) == "Self"
    screenshot(page, "query-box-after-back-forward")


@pytest.mark.browser
def test_hand_edits_in_a_link_survive_opening_and_a_page_switch(page, app_url):
    edits = "2.5_0_0~0_1_0~0_0_1~1_1_1~0.5_0.5_0.5~3_0_1"
    page.goto(f"{app_url}/scores?embedding=Edit+by+hand&edits={edits}&view=all")
    wait_for_app(page)
    no_exception(page)
    assert page.get_by_text("A copied link holds these edited embeddings.").count() == 1
    assert f"edits={edits}" in page.url
    page.locator("[data-testid='stSidebarNav'] a").filter(has_text="Softmax").first.click()
    settle(page)
    assert f"edits={edits}" in page.url  # a link copied on another page still holds them
    assert "0.0847" in page.locator("[data-testid='stMain']").inner_text()  # softmax of the edited scores
