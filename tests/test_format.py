"""ui.format: 4 decimals as the tutorials print, exact zero as '0', tiny values never shown as 0."""

from __future__ import annotations

import math

import pytest

from ui.format import DECIMALS, TINY, format_number, format_short, is_tiny


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "0"),
        (-0.0, "0"),
        (0.4431, "0.4431"),
        (1 / 3, "0.3333"),
        (-1.23456, "-1.2346"),
        (4.244719982147217, "4.2447"),
        (1.0, "1.0000"),
        (12345.678, "12345.6780"),
        (3.21e-7, "3.21e-07"),
        (-4.6e-5, "-4.60e-05"),
        (5e-5, "0.0001"),  # TINY itself rounds to 0.0001, so it is not tiny
        (float("nan"), "NaN"),
        (math.inf, "∞"),
        (-math.inf, "-∞"),
    ],
)
def test_format_number(value, text):
    assert format_number(value) == text


def test_format_number_never_shows_a_non_zero_value_as_zero():
    for exponent in range(5, 300, 7):
        for value in (10.0**-exponent, -(10.0**-exponent)):
            assert float(format_number(value)) != 0
    assert format_number(1 / 3, decimals=2) == "0.33"
    assert DECIMALS == 4


def test_is_tiny():
    assert is_tiny(1e-9) and is_tiny(-TINY / 2)
    assert not is_tiny(0.0) and not is_tiny(TINY) and not is_tiny(0.5)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "0"),
        (0.4754, "0.48"),
        (-1.5, "-1.50"),
        (0.005, "0.01"),
        (0.004, "4e-03"),
        (2.3e-7, "2e-07"),
        (float("nan"), "NaN"),
        (-math.inf, "-∞"),
    ],
)
def test_format_short(value, text):
    assert format_short(value) == text
