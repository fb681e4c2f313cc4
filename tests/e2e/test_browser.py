"""The app in a real browser (Debian's headless Chromium): pages render, inputs update them, links share them.

The lessons' tables are HTML, so updates are checked through their text and the text the page writes (the
worked breakdown); heatmaps through their pixels and their cells' labels.
"""

from __future__ import annotations

import re

import pytest

from tests.e2e.conftest import screenshot, show_answers, wait_for_app
from ui import registry

PAGES = {"": "Attention Lab"} | {lesson.name: lesson.label for lesson in registry.numbered() if lesson.number <= 9}
LONG_SENTENCE = " ".join(f"w{i}" for i in range(32))
MAIN_CHART = "[data-testid='stMain'] [data-testid='stVegaLiteChart']"  # not the sidebar's hidden warm-up chart


def no_exception(page) -> None:
    assert page.locator("[data-testid='stException']").count() == 0, page.locator(
        "[data-testid='stException']"
    ).first.inner_text()


def title(page) -> str:
    return page.locator("[data-testid='stMain'] h1").first.inner_text().strip()


def choose(page, label: str, option: str) -> None:
    """Pick an option in the sidebar selectbox with this label, then wait for the rerun."""
    page.locator("[data-testid='stSidebar']").get_by_role("combobox", name=label).click()
    page.get_by_role("option", name=option, exact=True).click()
    page.wait_for_timeout(300)
    wait_for_app(page)


def downloaded_csv(page, label: str = "Download Attention scores") -> str:
    """Click a CSV download button and return the file's text: the exact numbers behind the table."""
    with page.expect_download() as info:
        page.get_by_role("button", name=re.compile(label)).first.click()
    return open(info.value.path(), encoding="utf-8").read()


def breakdown(page) -> str:
    """The worked example sentence of the scores page, with its numbers."""
    return page.locator("[data-testid='stMarkdown']").filter(has_text="For example, with the key").first.inner_text()


@pytest.mark.browser
def test_overview_renders_without_exception(page, app_url):
    page.goto(app_url)
    wait_for_app(page)
    assert title(page) == "Attention Lab"
    no_exception(page)
    assert page.locator("[data-testid='stSidebar'] [data-testid='stSelectbox']").count() >= 2
    screenshot(page, "overview")


@pytest.mark.browser
def test_every_page_reached_from_the_sidebar(page, app_url):
    page.goto(app_url)
    wait_for_app(page)
    for path, expected in PAGES.items():
        if not path:
            continue
        page.locator("[data-testid='stSidebarNav'] a").filter(has_text=expected).first.click()
        page.wait_for_url(re.compile(f"/{path}"))
        wait_for_app(page)
        assert title(page).startswith(expected)
        no_exception(page)
        # a lesson opens at its first step: its step bar, or a chart on a page without steps
        drawn = "[data-testid='stButtonGroup'], [data-testid='stVegaLiteChart'], [data-testid='stImage']"
        page.locator(f"[data-testid='stMain'] :is({drawn})").first.wait_for(timeout=30_000)
        screenshot(page, f"page-{path}")


@pytest.mark.browser
@pytest.mark.parametrize("path", [p for p in PAGES if p])
def test_every_page_with_a_32_token_sentence(page, app_url, path):
    query = "example=Your+own+sentence&sentence=" + LONG_SENTENCE.replace(" ", "+") + "&d_model=8&seed=3&view=all"
    page.goto(f"{app_url}/{path}?{query}")
    wait_for_app(page)
    assert title(page).startswith(PAGES[path])
    no_exception(page)
    screenshot(page, f"page-{path}-32-tokens")


@pytest.mark.browser
def test_preset_and_query_token_update_the_numbers(page, app_url):
    page.goto(f"{app_url}/scores?view=all")
    wait_for_app(page)
    show_answers(page)
    first_text = breakdown(page)
    table = page.locator(".lab-table:visible").first  # the term-by-term table (X's is in a tab)
    # the scores heatmap: each cell reads '“query” → “key”: value' (X's heatmap names token and dimension)
    scores = page.locator(MAIN_CHART).filter(has=page.locator("[aria-label^='“starts” → “journey”: ']")).first
    name = scores.get_attribute("aria-label").split(": heatmap of ")[0]  # its title, whatever the sentence's length
    chart = page.locator(MAIN_CHART + f"[aria-label^='{name}: heatmap of ']").first
    first_table, first_chart, first_csv = table.inner_text(), chart.screenshot(), downloaded_csv(page)

    choose(page, "Query token", "journey")
    show_answers(page)  # another query asks its own questions first
    headings = page.locator("[data-testid='stMain'] h2, [data-testid='stMain'] h3").all_inner_texts()
    assert any("query “journey”" in heading for heading in headings)
    assert breakdown(page) != first_text
    assert table.inner_text() != first_table  # the term-by-term table follows the query

    choose(page, "Example", "I can't find the light switch")
    no_exception(page)
    show_answers(page)
    assert "0.9046" in page.locator("[data-testid='stMain']").inner_text()  # 001's score of "light" with "I"
    assert chart.screenshot() != first_chart  # the score heatmap follows the preset
    assert downloaded_csv(page) != first_csv and "light" in downloaded_csv(page)
    cell = chart.locator("[aria-label^='“light” → “I”: ']").first  # the heatmap's own cell, drawn as SVG
    assert cell.get_attribute("aria-label").startswith("“light” → “I”: 0.9046")
    screenshot(page, "scores-after-preset-change")


@pytest.mark.browser
def test_a_copied_link_opens_the_same_numbers(page, app_url):
    first = page
    first.goto(f"{app_url}/scores?view=all")
    wait_for_app(first)
    choose(first, "Example", "Your own sentence")
    sentence = first.locator("[data-testid='stSidebar']").get_by_role("textbox", name="Your sentence")
    sentence.fill("attention is all you need is it")
    sentence.press("Enter")
    first.wait_for_timeout(300)
    wait_for_app(first)
    choose(first, "Query token", "all")
    show_answers(first)
    expected_text = breakdown(first)
    expected_csv = downloaded_csv(first)
    url = first.url
    assert "sentence=attention" in url and "query=all" in url

    second = page.context.new_page()  # a new tab: a new session, with only the link to go on
    second.goto(url)
    wait_for_app(second)
    no_exception(second)
    show_answers(second)
    assert breakdown(second) == expected_text
    assert downloaded_csv(second) == expected_csv
    assert expected_csv.splitlines()[0] == ",attention,is (1),all,you,need,is (2),it"
    assert second.get_by_text("A shared link contains the sentence you type here.").count() == 1
    screenshot(second, "scores-from-copied-link")


@pytest.mark.browser
def test_head_grid_and_line_view_are_visible(page, app_url):
    page.goto(f"{app_url}/multi_head?step=5")  # the step "Every head"
    wait_for_app(page)
    no_exception(page)
    show_answers(page)  # the heads' heatmaps answer the step's question
    grid = page.locator(MAIN_CHART + "[aria-label^='Attention weights of head']")
    assert grid.count() == 2  # the default layer has two heads, each drawn
    assert grid.first.locator("[aria-label^='“starts” → “journey”: ']").count() >= 1  # cells carry values
    screenshot(page, "multi-head-grid")

    page.goto(f"{app_url}/pipeline?step=10")  # the step "Who attends to whom"
    wait_for_app(page)
    no_exception(page)
    show_answers(page)
    line_view = page.locator(MAIN_CHART).last
    line_view.scroll_into_view_if_needed()
    before = line_view.screenshot()
    box = line_view.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.18, box["y"] + box["height"] * 0.45)  # over a query token
    page.wait_for_timeout(600)
    assert line_view.screenshot() != before, "hovering a token highlights its lines"
    screenshot(page, "pipeline-line-view")
