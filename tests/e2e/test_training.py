"""Lesson 11 in a real browser: press Train, watch the status, see the loss chart and the accuracy appear."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import screenshot, wait_for_app


@pytest.mark.browser
def test_a_short_training_shows_the_loss_chart_and_accuracy(page, app_url):
    page.goto(f"{app_url}/training")
    wait_for_app(page)
    assert page.locator("[data-testid='stMain'] h1").first.inner_text().startswith("11. How attention is learned")
    steps = page.get_by_label("Steps")
    steps.fill("40")
    steps.press("Enter")
    wait_for_app(page)
    page.get_by_role("button", name="Train").click()
    page.locator("[data-testid='stMetricLabel']").filter(has_text="Held-out accuracy").wait_for(timeout=60_000)
    wait_for_app(page)
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.get_by_text("Trained 40 steps").count() == 1, "the status box says what ran"
    assert page.locator("[data-testid='stMetricValue']").first.inner_text().endswith("%")
    chart_titles = page.locator("[data-testid='stVegaLiteChart']").all_inner_texts()
    assert any("Training loss" in text for text in chart_titles)
    screenshot(page, "training-after")
