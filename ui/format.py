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
