"""Lesson 10 in Chromium: the 6 x 12 grid of trained heads draws in its step, and clicking a head opens it."""

from __future__ import annotations

import io
import re

import pytest
from PIL import Image

from tests.e2e.conftest import screenshot, wait_for_app
from ui.charts import GRID_GAP_PX, GRID_LABEL_PX, GRID_PANEL_PX, head_grid_layout

GRID = "[data-testid='stVegaLiteChart'][aria-label^='Attention weights of all 72 heads']"


def _panel(box: dict, layer: int, head: int) -> tuple[float, float, float, float]:
    """The box of one head's panel inside the grid's canvas, from charts.all_heads_grid's layout (any scale)."""
    width, height = head_grid_layout(6, 12)
    left = 56 + (head - 1) * (GRID_PANEL_PX + GRID_GAP_PX) + 6
    top = 22 + (layer - 1) * (GRID_PANEL_PX + GRID_LABEL_PX + GRID_GAP_PX) + GRID_LABEL_PX + 6
    sx, sy = box["width"] / width, box["height"] / height
    return left * sx, top * sy, (left + GRID_PANEL_PX - 12) * sx, (top + GRID_PANEL_PX - 12) * sy


def opened_head(page) -> str:
    heading = re.compile(r"^Layer \d+, head \d+")  # the open head's title
    return page.locator("[data-testid='stMain'] h3").filter(has_text=heading).first.inner_text()


@pytest.mark.browser
def test_grid_draws_and_clicking_a_head_opens_it(page, app_url):
    page.goto(f"{app_url}/trained_model?step=3")  # the step with the grid (issue 24)
    wait_for_app(page, timeout=180_000)
    page.locator(GRID).wait_for(timeout=180_000)
    assert page.locator("[data-testid='stException']").count() == 0
    grid = page.locator(GRID)
    grid.scroll_into_view_if_needed()
    canvas = grid.locator("canvas, svg.marks").first  # Streamlit picks the renderer
    box = canvas.bounding_box()
    width, height = head_grid_layout(6, 12)
    assert box["width"] >= width - 1 and box["height"] >= height - 1  # the whole 6 x 12 grid is drawn
    column = page.locator("[data-testid='stMainBlockContainer']").bounding_box()
    assert box["x"] + box["width"] <= column["x"] + column["width"] + 1, "head 12 is in view, not scrolled off"
    image = Image.open(io.BytesIO(canvas.screenshot()))
    corner = [round(v * image.width / box["width"]) for v in _panel(box, 6, 12)]
    assert len(set(image.crop(corner).get_flattened_data())) > 3, "the last head is painted in several colours"
    assert opened_head(page).startswith("Layer 1, head 1")

    left, top, right, bottom = _panel(box, 4, 9)
    page.mouse.click(box["x"] + (left + right) / 2, box["y"] + (top + bottom) / 2)  # layer 4, head 9
    page.wait_for_function(
        "() => [...document.querySelectorAll('h3')].some(h => h.innerText.startsWith('Layer 4, head 9'))",
        timeout=60_000,
    )
    wait_for_app(page)
    assert page.locator("[data-testid='stException']").count() == 0
    assert opened_head(page).startswith("Layer 4, head 9")
    screenshot(page, "trained-model-picked-head")
