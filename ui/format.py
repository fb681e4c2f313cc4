"""Number formatting shared by tables and charts: 4 decimals, and never a tiny value shown as 0.

An exact 0 (a masked weight) reads "0"; a tiny non-zero weight reads in scientific notation.
"""

from __future__ import annotations

import math

DECIMALS = 4
TINY = 0.5 * 10**-DECIMALS  # below this, 4 decimals would print 0.0000


def is_tiny(x: float) -> bool:
    """True for a non-zero value that 4 decimals would round to zero."""
    return x != 0 and abs(x) < TINY


def format_number(x: float, decimals: int = DECIMALS) -> str:
    """'0' for exact zero, '3.21e-07' for tiny values, 'NaN' / '∞', else 4 decimals."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if x == 0:
        return "0"
    if is_tiny(x):
        return f"{x:.2e}"
    return f"{x:.{decimals}f}"


def format_short(x: float) -> str:
    """The text inside a heatmap cell: 2 decimals; '0' for exact zero; '2e-07' for small values."""
    if math.isnan(x) or math.isinf(x) or x == 0:
        return format_number(x)
    if abs(x) < 0.005:
        return f"{x:.0e}"
    return f"{x:.2f}"


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
