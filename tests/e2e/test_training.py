"""The training lesson in a real browser: choose the steps in the task step, go on to the train step, press Train,
watch the status, see the loss chart and the accuracy appear."""

from __future__ import annotations

import time

import pytest

from tests.e2e.conftest import screenshot, wait_for_app
from ui import registry


@pytest.mark.browser
def test_a_short_training_shows_the_loss_chart_and_accuracy(page, app_url):
    page.goto(f"{app_url}/training?step=2")
    wait_for_app(page)
    assert page.locator("[data-testid='stMain'] h1").first.inner_text().startswith(registry.BY_NAME["training"].label)
    choose_steps(page, 40)
    page.get_by_role("button", name="Train", exact=True).click()
    page.locator("[data-testid='stMetricLabel']").filter(has_text="Held-out accuracy").wait_for(timeout=60_000)
    wait_for_app(page)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.get_by_text("Trained 40 steps").count() == 1, "the status box says what ran"
    assert accuracy(page).inner_text().endswith("%")
    chart_titles = page.locator("[data-testid='stMain'] [data-testid='stVegaLiteChart']").all_inner_texts()
    assert any("Training loss" in text for text in chart_titles)
    screenshot(page, "training-after")


def choose_steps(page, steps: int) -> None:
    """In the task step: set the number of training steps, then go on past the right pattern to the train step (the
    settings follow)."""
    field = page.get_by_label("Steps", exact=True)
    field.fill(str(steps))
    field.press("Enter")
    wait_for_app(page)
    page.get_by_role("button", name="Next: The right pattern").click()
    page.get_by_role("button", name="Next: Train it").click()
    page.get_by_role("button", name="Train", exact=True).wait_for(timeout=60_000)
    wait_for_app(page)


def _training_page(browser, app_url: str, steps: int):
    """A new browser context (a learner of their own) on lesson 11 with ``steps`` chosen."""
    context = browser.new_context(viewport={"width": 1400, "height": 2400})
    page = context.new_page()
    page.goto(f"{app_url}/training?step=2")
    wait_for_app(page)
    choose_steps(page, steps)
    return context, page


def accuracy(page):
    """The lesson's held-out accuracy (the main area's metric of that name: the sidebar holds the browser warm-up's
    hidden "Warm-up metric" for a while, runtime.preload)."""
    metric = page.locator("[data-testid='stMain'] [data-testid='stMetric']").filter(has_text="Held-out accuracy")
    return metric.locator("[data-testid='stMetricValue']").first


def _finished(page, steps: int) -> str:
    """Wait for the run's results; the held-out accuracy shown once it has settled (a learner who follows another's
    run sees its live figures first, then the finished run's: two reads a second apart that agree)."""
    page.locator("[data-testid='stMetricLabel']").filter(has_text="Held-out accuracy").wait_for(timeout=60_000)
    page.get_by_text(f"Trained {steps} steps").wait_for(timeout=60_000)
    metric = accuracy(page)
    shown, deadline = None, time.monotonic() + 30
    while time.monotonic() < deadline:
        wait_for_app(page)
        now = metric.inner_text()
        if now == shown:
            break
        shown = now
        page.wait_for_timeout(1000)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.get_by_text(f"Trained {steps} steps").count() == 1, "this learner's own status box, completed"
    return shown


@pytest.mark.browser
def test_two_learners_pressing_train_at_once_each_get_their_own_run(browser, app_url):
    """Issue 25 parts 2 and 5: two learners press Train on the same settings at once; each sees their own completed
    run (one trains, the other follows or replays it: the same numbers). A third learner arriving afterwards still
    finds Train enabled and gets the run as theirs."""
    steps = 30
    learners = [_training_page(browser, app_url, steps) for _ in range(2)]
    try:
        for _, page in learners:
            page.get_by_role("button", name="Train", exact=True).click(no_wait_after=True)
        accuracies = [_finished(page, steps) for _, page in learners]
        assert accuracies[0] == accuracies[1] and accuracies[0].endswith("%")
        context, late = _training_page(browser, app_url, steps)
        learners.append((context, late))
        train = late.get_by_role("button", name="Train", exact=True)
        assert train.is_enabled(), "another learner's run leaves Train enabled"
        assert late.locator("[data-testid='stMetricLabel']").filter(has_text="Held-out accuracy").count() == 0
        train.click()
        assert _finished(late, steps) == accuracies[0]
        assert late.get_by_text("replayed").count() == 1, "the stored run, replayed to this learner"
        screenshot(late, "training-replayed")
    finally:
        for context, _ in learners:
            context.close()
