"""Every number as text, one rule per cell: 4 decimals, scientific notation only for a cell that needs it.

A cell reads in scientific notation by itself when 4 decimals would hide it (0 < |x| < 1e-4)
or when it is huge (|x| >= 1e6): 1.0000, 0.1390, 3.2100e-07, 1.0226e+36. An exact 0 (a masked
weight) reads "0". Tables, heatmap cells, tooltips and sentences all use ``format_number``.
"""

from __future__ import annotations

import math

DECIMALS = 4
TINY = 10.0**-DECIMALS  # below this (and not 0) a cell goes scientific: 4 decimals would print 0.0000
HUGE = 1e6  # from this on a cell goes scientific: never a 37-digit number


def is_tiny(x: float) -> bool:
    """True for a non-zero value that 4 decimals would hide."""
    return x != 0 and abs(x) < TINY


def is_scientific(x: float) -> bool:
    """True where a cell reads in scientific notation: tiny non-zero or huge (finite)."""
    return math.isfinite(x) and (is_tiny(x) or abs(x) >= HUGE)


def format_number(x: float, decimals: int = DECIMALS) -> str:
    """'0' for exact zero, 'NaN' / '∞', '3.2100e-07' or '1.0226e+36' alone, else 4 decimals ('1.0000')."""
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if x == 0:
        return "0"
    if is_scientific(x):
        return f"{x:.{decimals}e}"
    return f"{x:.{decimals}f}"


MAX_TERMS = 8  # terms written out in a sum or a vector before "…"


def vector_text(values, limit: int = MAX_TERMS) -> str:
    """A vector as '[0.1234, -0.5678, …]': at most ``limit`` entries (a tensor, array or list)."""
    numbers = values.tolist() if hasattr(values, "tolist") else list(values)
    shown = ", ".join(format_number(v) for v in numbers[:limit])
    return f"[{shown}{', …' if len(numbers) > limit else ''}]"


def numbers_text(values, separator: str = " ") -> str:
    """Numbers side by side, as a tutorial prints them: '0.1390 0.2369 0.2326'."""
    numbers = values.tolist() if hasattr(values, "tolist") else list(values)
    return separator.join(format_number(v) for v in numbers)


def products_sum_text(left, right, total: float, limit: int = MAX_TERMS) -> str:
    """'(a × b) + (c × d) + … = **total**' with real numbers, cut after ``limit`` products."""
    pairs = [f"({format_number(a)} × {format_number(b)})" for a, b in zip(left, right, strict=True)]
    shown = " + ".join(pairs[:limit]) + (f" + … ({len(pairs) - limit} more)" if len(pairs) > limit else "")
    return f"{shown} = **{format_number(total)}**"


def sum_text(values, total: float, limit: int = MAX_TERMS) -> str:
    """'a + b + … = **total**' with real numbers, cut after ``limit`` terms (as ``products_sum_text``)."""
    numbers = values.tolist() if hasattr(values, "tolist") else list(values)
    terms = [format_number(v) if v >= 0 else f"({format_number(v)})" for v in numbers]
    shown = " + ".join(terms[:limit]) + (f" + … ({len(terms) - limit} more)" if len(terms) > limit else "")
    return f"{shown} = **{format_number(total)}**"


def plural(n: int, noun: str) -> str:
    """'1 token', '6 tokens'."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def latex_int(n: int) -> str:
    """2,359,296 for LaTeX: a bare comma in math mode is punctuation and renders as '2, 359, 296'."""
    return f"{n:,}".replace(",", "{,}")


def texts(values) -> list[str]:
    """Every number as text, so an inf or NaN in a demonstration reads as ∞ / NaN, not as an empty cell."""
    numbers = values.tolist() if hasattr(values, "tolist") else list(values)
    return [format_number(v) for v in numbers]
