"""Browser fixtures: a Streamlit server on a free port and Debian's headless Chromium via Playwright.

Without Chromium (or the playwright package) the browser tests skip with the reason, so the
test command passes for anyone; with ATTENTION_LAB_REQUIRE_BROWSER=1 (set by .ci/run) a
missing browser is an error instead.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tools.browser import CHROMIUM, CHROMIUM_ARGS, serve, stop, wait_for_app, wait_healthy

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "e2e"
REQUIRE = os.environ.get("ATTENTION_LAB_REQUIRE_BROWSER") == "1"
BROWSER_RERUNS = 1


def _missing_browser() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -r requirements-dev.txt)"
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    return None


def pytest_collection_modifyitems(config, items):
    browser_tests = [item for item in items if "e2e" in str(item.fspath)]
    for item in browser_tests:  # every test here is a browser test, so -m "not browser" leaves them all out
        item.add_marker(pytest.mark.browser)
        # One more try for a browser test that failed: with three workers on two cores a click can land while
        # Chromium is still laying out the last run (a timed-out click, a toggle missed). A second failure fails
        # the run, and pytest's summary line counts every rerun ("N rerun"), so a test that keeps needing one shows.
        item.add_marker(pytest.mark.flaky(reruns=BROWSER_RERUNS, reruns_delay=1))
    reason = _missing_browser()
    if reason is None:
        return
    if REQUIRE:
        return  # _browser_required fails every browser test instead
    for item in browser_tests:
        item.add_marker(pytest.mark.skip(reason=f"browser tests skipped: {reason}"))


@pytest.fixture(scope="session", autouse=True)
def _browser_required() -> None:
    """In CI a missing browser fails the run loudly instead of skipping."""
    reason = _missing_browser()
    if reason and REQUIRE:
        pytest.fail(f"ATTENTION_LAB_REQUIRE_BROWSER=1 but {reason}", pytrace=False)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(port: int) -> subprocess.Popen:
    """`streamlit run streamlit_app.py` headless on 127.0.0.1:port, waiting until it is healthy."""
    process = serve(ROOT / "streamlit_app.py", port)
    wait_healthy(process, port)
    return process


@pytest.fixture(scope="session")
def app_url() -> Iterator[str]:
    """Base URL of a Streamlit server running this checkout's app."""
    port = free_port()
    process = start_server(port)
    yield f"http://127.0.0.1:{port}"
    stop(process)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1400, "height": 2400}


@pytest.fixture(scope="session")
def desktop_context(browser):
    """One desktop browser context for the worker's ``page`` tests: its HTTP and code caches keep Streamlit's
    bundle parsed and compiled from test to test (a new context loads and compiles it again: about 2.5 s of CPU a
    page)."""
    context = browser.new_context(viewport=DESKTOP)
    yield context
    context.close()


@pytest.fixture(scope="session")
def phone_context(browser):
    """The same for ``phone`` tests: a 390 px phone with touch."""
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    yield context
    context.close()


def fresh_page(context) -> Iterator:
    """A new tab in a shared context; afterwards every tab is closed and what the pages kept in the browser is
    forgotten (the learner's progress in localStorage, cookies), so the next test starts as a new visitor."""
    page = context.new_page()
    try:
        yield page
    finally:
        for tab in context.pages:
            try:
                if tab.url.startswith("http"):
                    tab.evaluate("() => { window.localStorage.clear(); window.sessionStorage.clear(); }")
            finally:
                tab.close()
        context.clear_cookies()


@pytest.fixture
def phone(phone_context):
    """A 390 px phone with touch, as a new visitor."""
    yield from fresh_page(phone_context)


@pytest.fixture
def page(desktop_context):
    """A 1,400 x 2,400 desktop tab, as a new visitor."""
    yield from fresh_page(desktop_context)


def show_answers(page, rounds: int = 16) -> None:
    """Click "Show me the answer" in the main area until none is left, as a learner who does not answer would: a
    step draws what answers its questions once they are settled, and may then ask the next one (issue 36).

    Every button on screen is clicked at once: Streamlit sends a rerun per click and merges the clicks a rerun has
    not yet read (streamlit.runtime.state.widgets._coalesce_widget_states), so one rerun settles them all."""
    for _ in range(rounds):
        buttons = page.locator("[data-testid='stMain']").get_by_role("button", name="Show me the answer")
        if buttons.count() == 0:
            return
        buttons.evaluate_all("(all) => all.forEach((button) => button.click())")
        page.wait_for_timeout(300)
        wait_for_app(page)


def screenshot(page, name: str) -> Path:
    """Save a screenshot under test-artifacts/e2e/ for a person to look at."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
