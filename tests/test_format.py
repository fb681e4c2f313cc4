"""ui.format: one format per cell (4 decimals as the tutorials print; a cell goes scientific only by itself),
and written arithmetic whose result is that of its written operands."""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
import pytest

from ui.format import (
    DECIMALS,
    HUGE,
    TINY,
    difference_text,
    exp_text,
    format_number,
    is_scientific,
    is_tiny,
    products_sum_text,
    quotient_text,
    rounded_text,
    sum_text,
    texts,
    weighted_vectors_text,
    written_value,
)


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


# --- written arithmetic: the result after "=" is the written operands' result ---------------------


def test_products_sum_writes_the_sum_of_the_written_products_and_the_exact_one_beside_it():
    """The issue's example: 0.1288 × 1.4575 as printed is 0.18773…, the unrounded operands gave 0.1972."""
    left, right = [0.12884, 0.5], [1.45746, 0.01]  # products 0.18778… + 0.005 = 0.19278…; as written 0.1927…
    exact = 0.12884 * 1.45746 + 0.5 * 0.01
    text = products_sum_text(left, right, exact)
    assert text.startswith("(0.1288 × 1.4575) + (0.5000 × 0.0100) = ")
    assert text == "(0.1288 × 1.4575) + (0.5000 × 0.0100) = **0.1927** (unrounded: 0.1928)"
    agreeing = products_sum_text([0.5, 0.25], [2.0, 4.0], 2.0)
    assert agreeing == "(0.5000 × 2.0000) + (0.2500 × 4.0000) = **2.0000**"  # no bracket where they agree


def test_a_cut_sum_summarises_the_cut_terms_as_one_checkable_number():
    values = [0.1] * 8 + [0.01234, 0.02, 0.03]
    text = sum_text(values, sum(values), limit=8)
    assert "+ … (3 more terms, together 0.0623) = **0.8623**" in text
    text = products_sum_text([1.0] * 9, [0.1] * 8 + [0.05], 0.85, limit=8)
    assert text.endswith("+ … (1 more term, together 0.0500) = **0.8500**")


def test_quotient_difference_and_exponential_follow_the_written_operands():
    assert quotient_text(0.88804, 4.40164, 0.88804 / 4.40164) == "0.8880 / 4.4016 = **0.2017** (unrounded: 0.2018)"
    assert quotient_text(0.3532, 3.4815, 0.10144) == "0.3532 / 3.4815 = **0.1015** (unrounded: 0.1014)"
    assert quotient_text(0.8733, "√2", 0.8733 / 2**0.5) == "0.8733 / √2 = **0.6175**"
    assert difference_text(0.30004, 0.10004, 0.2) == "0.3000 − 0.1000 = **0.2000**"
    assert exp_text(-0.00404, 0.11135, 0.8910) == "e^(-0.0040 − 0.1114) = 0.8910"
    assert exp_text(float("-inf"), 0.5, 0.0) == "e^(−∞) = 0"


def test_a_negative_term_is_written_as_a_subtraction_and_half_rounds_up():
    assert sum_text([0.5, -0.25, 0.00005], 0.25005) == "0.5000 − 0.2500 + 5.0000e-05 = **0.2501** (unrounded: 0.2500)"
    assert rounded_text(Decimal("0.12345")) == "0.1235"
    assert rounded_text(Decimal("-0.00003")) == "-3.0000e-05"  # never 0.0000 for a non-zero result
    assert rounded_text(Decimal(0)) == "0"
    assert written_value("√4") == 2 and written_value("3.2100e-07") == Decimal("3.21e-7")


def test_weighted_vectors_sum_entry_by_entry_and_cut_terms_together():
    text = weighted_vectors_text([0.2068, 0.7932], [[0.21, 0.47], [0.52, 0.11]], [0.455888, 0.184448])
    assert text == "0.2068 × [0.2100, 0.4700] + 0.7932 × [0.5200, 0.1100] = **[0.4559, 0.1844]**"
    exact = [0.4 * 1 + 0.3 * 2 + 0.3 * 3.00004]
    text = weighted_vectors_text([0.4, 0.3, 0.3], [[1.0], [2.0], [3.00004]], exact, limit=2)
    assert text == "0.4000 × [1.0000] + 0.3000 × [2.0000] + … (1 more term, together [0.9000]) = **[1.9000]**"
    assert weighted_vectors_text([], [], [0.0, 0.0]) == "(none) = **[0, 0]**"  # a fully masked row


def test_non_finite_operands_are_written_as_they_are():
    assert sum_text([1.0, float("inf")], float("inf")) == "1.0000 + ∞ = **∞**"
    assert quotient_text(1.0, 0.0, float("nan")) == "1.0000 / 0 = **NaN**"
