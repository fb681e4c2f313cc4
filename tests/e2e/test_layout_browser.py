"""Layout in a real browser: a 390 px phone scrolls wide charts, formulas and tables; the dark theme reads."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import screenshot, wait_for_app
from tests.e2e.test_browser import no_exception

# Every formula, chart and table of the main column: its own width, the width it scrolls over, its overflow rule.
BOXES_JS = """() => {
  const main = document.querySelector("[data-testid='stMainBlockContainer']").getBoundingClientRect();
  const selector = ".katex-display, [data-testid='stVegaLiteChart'], [data-testid='stDataFrame'], .lab-table";
  return [...document.querySelectorAll(`[data-testid='stMain'] :is(${selector})`)]
    .filter((el) => el.offsetParent !== null)
    .map((el) => ({
      kind: el.dataset.testid || el.className,
      right: el.getBoundingClientRect().right,
      mainRight: main.right,
      scrolls: el.scrollWidth > el.clientWidth,
      overflow: getComputedStyle(el).overflowX,
    }));
}"""


@pytest.mark.browser
@pytest.mark.parametrize("path", ["scores?view=all", "masking?view=all", "multi_head?view=all", "pipeline?view=all"])
def test_wide_content_scrolls_on_a_phone_instead_of_being_cut(phone, app_url, path):
    phone.goto(f"{app_url}/{path}")
    wait_for_app(phone)
    no_exception(phone)
    boxes = phone.evaluate(BOXES_JS)
    assert any(box["kind"] == "stVegaLiteChart" for box in boxes)
    assert any(box["kind"].startswith("lab-table") for box in boxes)
    for box in boxes:
        assert box["right"] <= box["mainRight"] + 1, f"{box['kind']} sticks out of the page: {box}"
        if box["scrolls"] and box["kind"] != "stDataFrame":  # tables scroll inside their own grid
            assert box["overflow"] in ("auto", "scroll"), f"{box['kind']} is cut, not scrollable: {box}"
    screenshot(phone, f"phone-{path.split('?')[0]}")


@pytest.mark.browser
def test_the_dark_theme_is_offered_and_charts_draw_on_it(page, app_url):
    page.emulate_media(color_scheme="dark")  # the system's theme
    page.goto(f"{app_url}/softmax?view=all")
    wait_for_app(page)
    no_exception(page)
    background = page.evaluate("() => getComputedStyle(document.querySelector('[data-testid=stApp]')).backgroundColor")
    red, green, blue = (int(part) for part in background[background.index("(") + 1 : -1].split(",")[:3])
    assert red + green + blue < 3 * 80, f"a dark system theme gives a dark app, not {background}"
    assert page.locator("[data-testid='stMain'] [data-testid='stVegaLiteChart'] :is(canvas, svg)").count() > 0
    screenshot(page, "dark-softmax")


def solid_white_box(image, height: int = 10, width: int = 24) -> bool:
    """True when some height x width block of the image is all (near) white: a filled box, not text."""
    import numpy as np

    white = (np.asarray(image.convert("RGB")) >= 245).all(axis=2).astype(np.int32)  # (rows, cols)
    summed = np.pad(white.cumsum(0).cumsum(1), ((1, 0), (1, 0)))
    blocks = summed[height:, width:] - summed[:-height, width:] - summed[height:, :-width] + summed[:-height, :-width]
    return bool((blocks == height * width).any())


@pytest.mark.browser
def test_lesson_12_charts_have_no_white_legend_box_in_the_dark_theme(page, app_url):
    """Issue 22 part 7: "Time, measured vs c·T²" and "Bytes" had white legend boxes (white text on white)."""
    import io

    from PIL import Image

    page.emulate_media(color_scheme="dark")  # the system's theme
    page.goto(f"{app_url}/generation?view=all")
    wait_for_app(page)
    no_exception(page)
    drawn = page.locator("[data-testid='stMain'] [data-testid='stVegaLiteChart'] :is(canvas, svg.marks)")
    boxes = []
    for index in range(drawn.count()):
        chart = drawn.nth(index)
        chart.scroll_into_view_if_needed()
        boxes.append(solid_white_box(Image.open(io.BytesIO(chart.screenshot()))))
    screenshot(page, "dark-generation")
    assert len(boxes) >= 2 and not any(boxes), f"charts with a solid white box in the dark theme: {boxes}"
