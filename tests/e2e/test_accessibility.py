"""axe-core in Chromium: no serious or critical violation in the lab's own markup, on every step of every page.

axe-core comes with the axe-playwright-python package (requirements-dev.txt pins it, so the rules do not change under
the tests). It checks the main area, the lab's own markup ([data-testid=stMain]); what Streamlit draws around it (the
navigation) is listed in docs/accessibility.md.

Every step of a page is on its whole-lesson view (view=all), so one load covers a lesson; it is audited answered ("Show
me the answer" round after round, the museum's exhibits spotted), where the steps draw what their questions reveal and
keep the questions. What only an unanswered step shows (the answer forms' buttons, a museum exhibit's form) and the
step bar are audited on three stepped views as first drawn (FIRST_DRAWN). One page load serves every audit: the theme
follows the system's (emulated prefers-color-scheme) and the layout the viewport, so the page is switched light/dark
and 1,280/390 px in place (VARIANTS: the light desktop runs every rule, the phones the rules that colours and widths
decide). Each test opens a new tab in its worker's desktop context (conftest.page): the tests spread over workers.
"""

from __future__ import annotations

import re

import pytest

from tests.e2e.conftest import PHONE, show_answers, wait_for_app
from tests.e2e.test_browser import no_exception
from ui import registry

DESKTOP = {"width": 1280, "height": 900}
MAIN = {"include": [["[data-testid='stMain']"]]}
SERIOUS = ("serious", "critical")
THEME_RULES = ["color-contrast", "link-in-text-block"]
LAYOUT_RULES = ["scrollable-region-focusable", "target-size"]
# (theme, viewport, the rules to run: None for every rule). The markup is the same in each: the light desktop runs
# every rule; the phones run the rules that colours and widths decide. A dark desktop would check nothing these do
# not: its colours are the dark phone's, its widths the light desktop's, and it shows nothing a phone hides.
VARIANTS = (
    ("light", DESKTOP, None),
    ("dark", PHONE, THEME_RULES + LAYOUT_RULES),
    ("light", PHONE, THEME_RULES + LAYOUT_RULES),
)
PAGES = [lesson.name for lesson in registry.LESSONS]  # the overview, the path, the lessons and the museum
LOAD_MS = 180_000  # lessons 10 and 11 load their models on a cold server


def page_url(app_url: str, name: str) -> str:
    """A page's whole-lesson view (the overview has no steps)."""
    entry = registry.BY_NAME[name]
    return f"{app_url}/" if entry.default else f"{app_url}/{name}?view=all"


@pytest.fixture
def tab(page):
    """A new tab in the worker's desktop context (conftest.page, its caches warm): the tests spread over the
    workers instead of running one after another on one."""
    page.set_viewport_size(DESKTOP)
    return page


def axe_results(page, rules: list[str] | None) -> list[dict]:
    """axe's violations in the main area (only ``rules``, or every rule)."""
    from axe_playwright_python.sync_playwright import Axe

    options = {"resultTypes": ["violations"]} | ({"runOnly": rules} if rules else {})
    return Axe().run(page, context=MAIN, options=options).response["violations"]


def serious(page, variants) -> list[str]:
    """Every serious or critical violation of the page as drawn now, in each variant: 'theme width: rule (impact):
    node, why'."""
    found = []
    page.wait_for_function("() => window.__attentionLabA11y !== undefined", timeout=LOAD_MS)  # a11y script runs
    for theme, viewport, rules in variants:
        page.emulate_media(color_scheme=theme)
        page.set_viewport_size(viewport)
        page.wait_for_timeout(700)  # the restyle, and ui.widgets.a11y's passes (at once, and 600 ms after a change)
        wait_for_app(page, timeout=LOAD_MS)  # no rerun under way: Streamlit dims what a rerun may replace
        for violation in axe_results(page, rules):
            if violation["impact"] in SERIOUS:
                for node in violation["nodes"]:
                    why = node.get("failureSummary", "").replace("\n", " ")[:240]
                    found.append(f"{theme} {viewport['width']}: {violation['id']} ({violation['impact']}): "
                                 f"{node['html'][:160]} -- {why}")  # fmt: skip
    return found


def spot_every_bug(page) -> None:
    """The museum's exhibits answered: the first line picked and checked, exhibit by exhibit (the form goes away)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    for _ in range(20):
        forms = page.locator("[data-testid='stMain'] [data-testid='stForm']").filter(has_text="Spot the bug")
        if forms.count() == 0:
            return
        form = forms.first
        for attempt in range(3):  # under load a late rerun may replace the form while it is clicked: once drawn again
            try:
                form.locator("[data-testid='stRadio'] [role='radiogroup'] label").first.click(timeout=10_000)
                break
            except PlaywrightTimeoutError:
                if attempt == 2:
                    raise
                wait_for_app(page, timeout=LOAD_MS)
        form.get_by_role("button", name="Check").click()
        page.wait_for_timeout(300)
        wait_for_app(page, timeout=LOAD_MS)


@pytest.mark.browser
@pytest.mark.parametrize("name", PAGES)
def test_no_serious_violation_on_any_step_answered(tab, app_url, name):
    tab.emulate_media(color_scheme="light")
    tab.set_viewport_size(DESKTOP)
    tab.goto(page_url(app_url, name))
    wait_for_app(tab, timeout=LOAD_MS)
    show_answers(tab, rounds=40)
    spot_every_bug(tab)
    no_exception(tab)
    found = serious(tab, VARIANTS)
    assert not found, "\n".join(found)


# Steps as first drawn, in the stepped view: the step bar (the path's 13 stops, lesson 9's 14 steps), the questions'
# forms and buttons before an answer, and a museum exhibit's spot-the-bug form (all gone once answered).
FIRST_DRAWN = ("path?step=3", "pipeline?step=3", "mistakes?step=2")


@pytest.mark.browser
@pytest.mark.parametrize("path", FIRST_DRAWN)
def test_a_step_as_first_drawn_and_its_step_bar_have_no_serious_violation(tab, app_url, path):
    tab.emulate_media(color_scheme="light")
    tab.set_viewport_size(DESKTOP)
    tab.goto(f"{app_url}/{path}")
    wait_for_app(tab, timeout=LOAD_MS)
    found = serious(tab, VARIANTS)
    assert not found, "\n".join(found)


@pytest.mark.browser
def test_code_opened_from_the_keyboard_has_no_serious_violation(tab, app_url):
    """ui.drawing.show_code draws its code only once opened: Enter on the expander's summary opens it, and its blocks
    (a line longer than the column scrolls) pass axe, the scrolling ones focusable (ui.widgets.a11y)."""
    tab.emulate_media(color_scheme="light")
    tab.set_viewport_size(DESKTOP)
    tab.goto(f"{app_url}/scores?step=5")
    wait_for_app(tab, timeout=LOAD_MS)
    code = tab.locator("[data-testid='stMain'] [data-testid='stCode']")
    assert code.count() == 0, "closed, the expander draws no code"
    tab.locator("[data-testid='stExpander'] summary").filter(has_text="Show the code").first.focus()
    tab.keyboard.press("Enter")
    code.first.wait_for(timeout=LOAD_MS)
    wait_for_app(tab, timeout=LOAD_MS)
    assert code.count() == 3
    found = serious(tab, VARIANTS)
    assert not found, "\n".join(found)


@pytest.mark.browser
def test_a_heatmap_has_a_name_and_reads_its_largest_and_smallest_cells_first(tab, app_url):
    """The chart's accessible name says what it shows; inside it, the first thing read is its summary (the data's
    largest and smallest cells), then each cell once; the arithmetic a click opens is a polite live region."""
    tab.emulate_media(color_scheme="light")
    tab.set_viewport_size(DESKTOP)
    tab.goto(f"{app_url}/scores?view=all")  # as first drawn: the input's heatmap and the scores' clickable one
    wait_for_app(tab, timeout=LOAD_MS)
    charts = tab.locator("[data-testid='stMain'] [data-testid='stVegaLiteChart'][aria-label*=': heatmap of ']")
    assert charts.count() >= 2
    for chart in charts.all():
        name = chart.get_attribute("aria-label")
        assert re.fullmatch(r".+: heatmap of \d+ \w+ rows × \d+ \w+ columns", name), name
        read = chart.evaluate(READ_OUT)
        assert re.fullmatch(r"Largest: “.+” → “.+” \S+; smallest: “.+” → “.+” \S+\.", read[0]), read[:2]
        cells = [label for label in read[1:] if "→" in label]
        rows, cols = (int(n) for n in re.findall(r"of (\d+) \w+ rows × (\d+)", name)[0])
        assert len(cells) == rows * cols and all(re.fullmatch(r"“.+” → “.+”: .+", label) for label in cells), cells
    arithmetic = tab.locator("[data-testid='stMain'] [data-testid='stVerticalBlock'][class*='_arithmetic']")
    assert arithmetic.count() > 0, "the lesson's clickable heatmaps explain a cell below them"
    for box in arithmetic.all():  # ui.widgets.keyboard_grid's script: read out when a click or a key opens a cell
        assert (box.get_attribute("role"), box.get_attribute("aria-live")) == ("status", "polite")


# What a screen reader meets inside a chart, in order: every named symbol that no aria-hidden group hides.
READ_OUT = """(chart) => [...chart.querySelectorAll("svg [role='graphics-symbol'][aria-label]")]
    .filter((node) => !node.closest("[aria-hidden='true']")).map((node) => node.getAttribute("aria-label"))"""
