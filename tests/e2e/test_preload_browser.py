"""The browser readies charts, forms and code while the learner reads the first step (ui/preload.py)."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import wait_for_app
from ui import preload

LOADED_JS = """(names) => performance.getEntriesByType("resource")
    .map((entry) => entry.name.split("/").pop())
    .filter((file) => names.some((name) => file.startsWith(name + ".")))"""


@pytest.mark.browser
def test_the_first_step_readies_the_chart_modules_before_the_first_chart(page, app_url):
    page.goto(f"{app_url}/scores?step=1")  # a step with no chart
    wait_for_app(page)
    assert page.locator("[data-testid='stMain'] [data-testid='stVegaLiteChart']").count() == 0
    page.wait_for_function("() => window.__attentionLabPreload === 'done'", timeout=30_000)
    loaded = page.evaluate(LOADED_JS, list(preload.MODULES))
    assert sorted({file.split(".")[0] for file in loaded}) == sorted(preload.MODULES)
    before = len(page.evaluate(LOADED_JS, ["embed", "ArrowVegaLiteChart"]))
    page.locator("[data-testid='stMain'] button", has_text="Next:").first.click()
    page.locator("[data-testid='stMain'] [data-testid='stVegaLiteChart'] svg").first.wait_for(timeout=30_000)
    assert len(page.evaluate(LOADED_JS, ["embed", "ArrowVegaLiteChart"])) == before, "the chart loaded them again"
    assert page.locator("body > div[aria-hidden='true'] svg").count() == 0, "the warm-up chart is gone"
