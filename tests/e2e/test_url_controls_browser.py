"""A link reproduces the screen, in a real browser (issue 38, item 7): a lesson opened at a URL with a step control
set draws it; moving the control writes the address; the next step, which uses the value without drawing the
control, keeps it in the address; a value the control cannot take gives a sentence."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import screenshot, wait_for_app
from tests.e2e.test_browser import no_exception


def address(page) -> dict[str, str]:
    return page.evaluate("() => Object.fromEntries(new URLSearchParams(window.location.search))")


def main_text(page) -> str:
    return page.locator("[data-testid='stMain']").inner_text()


@pytest.mark.browser
def test_a_link_sets_the_temperature_moving_it_writes_the_address_and_the_next_step_keeps_it(page, app_url):
    page.goto(f"{app_url}/softmax?step=5&softmax_temperature=2.5")
    wait_for_app(page)
    no_exception(page)
    slider = page.get_by_role("slider", name="Temperature t")
    assert slider.input_value() == "2.5"
    assert "at t = 2.5" in main_text(page), "the metrics and the table are drawn at t = 2.5"
    screenshot(page, "url-softmax-temperature-2.5")
    slider.focus()
    page.keyboard.press("ArrowRight")  # one step of 0.1
    page.wait_for_function("() => new URLSearchParams(window.location.search).get('softmax_temperature') === '2.6'")
    wait_for_app(page)
    assert "at t = 2.6" in main_text(page)
    assert address(page)["step"] == "5"
    page.locator("[data-testid='stMain'] button", has_text="Next:").first.click()
    page.wait_for_function("() => new URLSearchParams(window.location.search).get('step') === '6'")
    wait_for_app(page)
    assert "t = 2.6: change it in the step" in main_text(page), "the next step draws the weights at t = 2.6"
    assert address(page)["softmax_temperature"] == "2.6", "the step without the slider keeps it in the address"
    copied = page.url
    other = page.context.new_page()  # the copied address in a new tab: a new session
    other.goto(copied)
    wait_for_app(other)
    no_exception(other)
    assert "t = 2.6: change it in the step" in main_text(other), "the copied link opens the same step at t = 2.6"
    other.close()


@pytest.mark.browser
def test_a_link_with_a_value_the_control_cannot_take_says_so(page, app_url):
    page.goto(f"{app_url}/masking?step=2&masking_type=Padding&masking_pads=many")
    wait_for_app(page)
    no_exception(page)
    text = main_text(page)
    assert "(masking_pads=) to “many”, which it cannot take" in text
    assert page.get_by_role("slider").first.input_value() == "2", "the default number of [PAD]s"
    assert "masking_pads" not in address(page) and address(page)["masking_type"] == "Padding"
    screenshot(page, "url-masking-bad-pads")
