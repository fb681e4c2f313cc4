"""ui.format: one format per cell. 4 decimals as the tutorials print; a cell goes scientific only by itself."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ui.format import DECIMALS, HUGE, TINY, format_number, is_scientific, is_tiny, texts


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "0"),
        (-0.0, "0"),
        (0.4431, "0.4431"),
        (1 / 3, "0.3333"),
        (-1.23456, "-1.2346"),
        (4.244719982147217, "4.2447"),
        (1.0, "1.0000"),  # a sum of 1, never 1.000e+0
        (0.9999999403953552, "1.0000"),  # a float32 row sum
        (12345.678, "12345.6780"),
        (999999.0, "999999.0000"),
        (1e6, "1.0000e+06"),
        (1.0226e36, "1.0226e+36"),  # the overflow demo, never a 37-digit integer
        (-2.5e7, "-2.5000e+07"),
        (3.21e-7, "3.2100e-07"),
        (-4.6e-5, "-4.6000e-05"),
        (5e-5, "5.0000e-05"),
        (1e-4, "0.0001"),
        (0.004, "0.0040"),  # not 4e-03
        (float("nan"), "NaN"),
        (math.inf, "∞"),
        (-math.inf, "-∞"),
        (np.float32(0.25), "0.2500"),
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


def test_each_cell_chooses_its_own_format():
    """A column with one tiny value keeps 4 decimals in its other cells."""
    assert texts([1.0, 3e-7, 0.25, 2e40]) == ["1.0000", "3.0000e-07", "0.2500", "2.0000e+40"]


def test_is_tiny_and_is_scientific():
    assert is_tiny(1e-9) and is_tiny(-TINY / 2)
    assert not is_tiny(0.0) and not is_tiny(TINY) and not is_tiny(0.5)
    assert is_scientific(HUGE) and is_scientific(-1e-9)
    assert not is_scientific(0.0) and not is_scientific(math.inf) and not is_scientific(123.0)
