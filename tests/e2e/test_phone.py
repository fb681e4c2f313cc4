"""A 390 px phone, light and dark: a wide table shows that it scrolls and keeps its row labels opaque, the museum's
heatmaps fit, the step bar is its title and one row (issue 38, item 4).

One tab for the module: the theme follows the emulated system theme, switched in place.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

from tests.e2e.conftest import screenshot, wait_for_app
from tests.e2e.test_accessibility import LOAD_MS, spot_every_bug
from tests.e2e.test_browser import no_exception

THEMES = ("light", "dark")
BAR = "[data-testid='stMain'] [class*='st-key-stepbar-']"


@pytest.fixture
def tab(phone):
    """A new tab on the worker's phone (conftest.phone): the tests spread over the workers."""
    return phone


def open_page(tab, url: str, theme: str) -> None:
    tab.emulate_media(color_scheme=theme)
    tab.goto(url)
    wait_for_app(tab, timeout=LOAD_MS)
    no_exception(tab)


def pixels(locator) -> np.ndarray:
    """The element's screenshot as an (H, W, 3) array of 0..255 values."""
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(locator.screenshot())).convert("RGB"), dtype=float)


def app_background(tab) -> np.ndarray:
    colour = tab.evaluate("() => getComputedStyle(document.querySelector('[data-testid=stApp]')).backgroundColor")
    return np.array([float(part) for part in colour[colour.index("(") + 1 : -1].split(",")[:3]])


def wide_table(tab):
    """The first table of the main area that is wider than its box (it scrolls sideways)."""
    boxes = tab.locator("[data-testid='stMain'] .lab-table")
    for box in boxes.all():
        if box.is_visible() and box.evaluate("(el) => el.scrollWidth > el.clientWidth + 20"):
            box.scroll_into_view_if_needed()
            return box
    raise AssertionError("no table wider than a phone on this step")


@pytest.mark.browser
@pytest.mark.parametrize("theme", THEMES)
def test_a_wide_table_shows_it_scrolls_and_its_row_labels_stay_opaque(tab, app_url, theme):
    open_page(tab, f"{app_url}/softmax?step=4", theme)  # the temperature's table: 7 rows, 7 columns
    box = wide_table(tab)
    screenshot(tab, f"phone-{theme}-wide-table")
    background = app_background(tab)
    # The row labels: the same pixels scrolled or not, so nothing that scrolls under them shows through.
    label = box.locator("tbody th").first
    before = pixels(label)
    box.evaluate("(el) => { el.scrollLeft = 120; }")
    tab.wait_for_timeout(200)
    after = pixels(label)
    assert np.abs(before - after).max() <= 8, "numbers show through the row labels once the table scrolls"
    tint = np.abs(before[2:-2, 2:-2] - background).sum(axis=2)
    assert np.median(tint) < 40, "the row labels' background is the theme's, lightly tinted"
    # The hint: with the numbers hidden, the right edge of the rows is shaded while more columns lie beyond it, and
    # is the page's background once the table is scrolled to its end.
    tab.add_style_tag(content=".lab-table td { color: transparent !important; }")
    box.evaluate("(el) => { el.scrollLeft = 0; }")
    tab.wait_for_timeout(200)

    def right_edge() -> float:
        image = pixels(box)
        header = int(box.locator("thead").bounding_box()["height"]) + 2
        strip = image[header:-3, -7:-3]  # inside the border, below the header row
        return float(np.abs(strip - background).sum(axis=2).mean())

    shaded = right_edge()
    box.evaluate("(el) => { el.scrollLeft = el.scrollWidth; }")
    tab.wait_for_timeout(200)
    plain = right_edge()
    assert shaded > plain + 10 and plain < 12, (shaded, plain)


@pytest.mark.browser
@pytest.mark.parametrize("theme", THEMES)
def test_the_museums_heatmaps_fit_a_phone(tab, app_url, theme):
    open_page(tab, f"{app_url}/mistakes?step=2", theme)
    spot_every_bug(tab)  # exhibit 1 answered: its two heatmaps, the code's and softmax along the rows
    charts = tab.locator("[data-testid='stMain'] [data-testid='stVegaLiteChart']")
    assert charts.count() == 2
    right = tab.evaluate("() => document.querySelector('[data-testid=stMainBlockContainer]').getBoundingClientRect()")
    for chart in charts.all():
        fits = chart.evaluate("(el) => [el.scrollWidth, el.clientWidth, el.getBoundingClientRect().right]")
        assert fits[0] <= fits[1] + 1 and fits[2] <= right["right"] + 1, fits
    charts.first.scroll_into_view_if_needed()
    screenshot(tab, f"phone-{theme}-museum")


@pytest.mark.browser
@pytest.mark.parametrize(("path", "title"), [("path?step=9", "Step 9 of 13: Word order"), ("pipeline?step=12", None)])
def test_the_step_bar_is_its_title_and_one_row_on_a_phone(tab, app_url, path, title):
    for theme in THEMES:
        open_page(tab, f"{app_url}/{path}", theme)
        bar = tab.locator(BAR)
        label = bar.locator("[data-testid='stWidgetLabel']")
        steps = bar.get_by_role("radio")
        count = steps.count()
        assert count >= 12
        assert label.inner_text().startswith(f"Step {path.split('=')[1]} of {count}: ")
        if title:
            assert label.inner_text() == title
        tops = {round(box["y"]) for box in (steps.nth(i).bounding_box() for i in range(count))}
        assert len(tops) == 1, f"the steps take {len(tops)} rows"
        line = label.bounding_box()["height"]
        assert bar.bounding_box()["height"] <= line + 2.2 * steps.first.bounding_box()["height"], "two rows at most"
        group = bar.get_by_role("radiogroup").bounding_box()
        picked = bar.locator("[aria-checked='true']").bounding_box()
        assert group["x"] <= picked["x"] and picked["x"] + picked["width"] <= group["x"] + group["width"] + 1
        switch = tab.locator("[data-testid='stMain'] [data-testid='stCheckbox']").first.bounding_box()
        assert label.bounding_box()["y"] < group["y"] < switch["y"], "the step's title, then its controls"
        screenshot(tab, f"phone-{theme}-{path.split('?')[0]}-step-bar")


@pytest.mark.browser
def test_on_a_wide_screen_the_step_bar_shows_every_step_and_no_title(page, app_url):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{app_url}/pipeline?step=7")
    wait_for_app(page, timeout=LOAD_MS)
    bar = page.locator(BAR)
    assert not bar.locator("[data-testid='stWidgetLabel']").is_visible()
    assert bar.get_by_role("radiogroup").get_attribute("aria-label").startswith("Step 7 of ")
    steps = bar.get_by_role("radio")
    assert all(steps.nth(i).is_visible() for i in range(steps.count())), "every step in view, in a few rows"
