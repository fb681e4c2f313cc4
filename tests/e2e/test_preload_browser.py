"""The browser readies charts, forms and code while the learner reads the first step (runtime/preload.py)."""

from __future__ import annotations

import pytest

from runtime import preload
from tests.e2e.conftest import wait_for_app

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


KINDS = ".st-key-" + preload.KINDS_KEY
# Records what the warm-up container held while it was on the page (the next full run leaves it out) and whether
# it was ever displayed.
WATCH_KINDS_JS = """(() => {
  const seen = (window.__warmKinds = { present: false, displayed: false, inSidebar: false, kinds: [], tables: 0 });
  const kinds = new Set();
  new MutationObserver(() => {
    const box = document.querySelector("__KINDS__");
    if (!box) return;
    seen.present = true;
    seen.inSidebar = !!box.closest("[data-testid='stSidebar']");
    if (getComputedStyle(box).display !== "none") seen.displayed = true;
    box.querySelectorAll("[data-testid]").forEach((el) => kinds.add(el.getAttribute("data-testid")));
    seen.kinds = [...kinds];
    seen.tables = Math.max(seen.tables, box.querySelectorAll(".lab-table table").length);
  }).observe(document, { subtree: true, childList: true, attributes: true });
})();""".replace("__KINDS__", KINDS)


@pytest.mark.browser
def test_the_first_page_draws_each_element_kind_once_out_of_sight(page, app_url):
    """runtime.preload.element_kinds: once the first page is still and the component said it is ready, its fragment
    draws them in the sidebar, never shown; a later run leaves them out."""
    page.add_init_script(WATCH_KINDS_JS)
    page.goto(f"{app_url}/scores?step=1")
    wait_for_app(page)
    expected = ["stForm", "stTabs", "stDownloadButton", "stExpander", "stSlider", "stPageLink", "stMetric"]
    expected.append("stVegaLiteChart")
    page.wait_for_function(
        "(expected) => window.__warmKinds.tables && expected.every((k) => window.__warmKinds.kinds.includes(k))",
        arg=expected,
        timeout=30_000,
    )
    seen = page.evaluate("window.__warmKinds")
    assert seen["inSidebar"] and not seen["displayed"] and seen["tables"] == 1
    page.get_by_role("combobox", name="Query token").click()
    page.get_by_role("option").filter(has_not_text="starts").first.click()
    page.locator(KINDS).wait_for(state="detached", timeout=30_000)
