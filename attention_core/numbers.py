"""Every number as text, and every written-out sum, product or quotient in a form a learner can check by hand.

One format per cell: 4 decimals, as the tutorials print; a cell reads in scientific notation by itself when
4 decimals would hide it (0 < |x| < 1e-4, so a non-zero number never reads 0.0000) or when it is huge
(|x| >= 1e6): 1.0000, 0.1390, 3.2100e-07, 1.0226e+36. An exact 0 (a masked weight) reads "0".

The rule for written arithmetic (sums, sums of products, differences, quotients, e^(a − b)):

    The number written right after "=" is the result of the operands *as written*: the 4-decimal texts
    on the screen, computed exactly from that text (decimal arithmetic, no floating point), then rounded
    half up to 4 decimals. Where the exact (unrounded) value the lab computed differs from it at 4
    decimals, it follows in brackets: "= 0.1975 (unrounded: 0.1972)".

    Terms that are cut ("…") are summarised as one checkable number, the exact sum of the cut terms
    written with 4 decimals: "+ … (4 more terms, together 0.1234) = r", and r counts that number as
    written, so the line still adds up by hand.

So a learner who redoes the arithmetic from the screen always gets the number after "=", and the lab's
own value is never hidden. The functions here hold no Streamlit: the pages (through ui.format), the
clicked cells and the exercise solutions all use them. A result is written in bold (markdown) unless
``bold=False``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Context, Decimal, localcontext

from attention_core.i18n import _

DECIMALS = 4
TINY = 10.0**-DECIMALS  # below this (and not 0) a cell goes scientific: 4 decimals would print 0.0000
HUGE = 1e6  # from this on a cell goes scientific: never a 37-digit number
MAX_TERMS = 8  # terms written out in a sum or a vector before "…"
PRECISION = 60  # significant digits of the decimal arithmetic on written operands: exact for sums and products


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


def _numbers(values) -> list[float]:
    return [float(v) for v in (values.tolist() if hasattr(values, "tolist") else list(values))]


def vector_text(values, limit: int = MAX_TERMS) -> str:
    """A vector as '[0.1234, -0.5678, …]': at most ``limit`` entries (a tensor, array or list)."""
    numbers = _numbers(values)
    shown = ", ".join(format_number(v) for v in numbers[:limit])
    return f"[{shown}{', …' if len(numbers) > limit else ''}]"


def numbers_text(values, separator: str = " ") -> str:
    """Numbers side by side, as a tutorial prints them: '0.1390 0.2369 0.2326'."""
    return separator.join(format_number(v) for v in _numbers(values))


def texts(values) -> list[str]:
    """Every number as text, so an inf or NaN in a demonstration reads as ∞ / NaN, not as an empty cell."""
    return [format_number(v) for v in _numbers(values)]


# --- written arithmetic ---------------------------------------------------------------------------


def _context() -> Context:
    return Context(prec=PRECISION, rounding=ROUND_HALF_UP)


def written_value(text: str) -> Decimal:
    """The exact value of a number as written ('0.1288', '3.2100e-07', '√2'); ValueError for ∞ / NaN."""
    text = text.strip().replace("−", "-")
    with localcontext(_context()):
        if text.startswith("√"):
            return Decimal(text[1:]).sqrt()
        value = Decimal(text)
    if not value.is_finite():
        raise ValueError(f"{text!r} is not a finite number")
    return value


def rounded_text(value: Decimal) -> str:
    """A result worked out from written operands, written by the one rule: half up to 4 decimals (or scientific)."""
    if value == 0:
        return "0"
    if is_scientific(float(value)):
        return format_number(float(value))
    return str(value.quantize(Decimal(1).scaleb(-DECIMALS), rounding=ROUND_HALF_UP))


def result_text(written: Decimal, exact: float, bold: bool = True) -> str:
    """'**0.1975** (unrounded: 0.1972)': the written operands' result, then the exact one where it differs."""
    shown = rounded_text(written)
    unrounded = format_number(exact)
    text = f"**{shown}**" if bold else shown
    return text if unrounded == shown else _("{result} (unrounded: {unrounded})", result=text, unrounded=unrounded)


def _finite(*values: float) -> bool:
    return all(math.isfinite(v) for v in values)


def _cut_text(count: int, together: str) -> str:
    if count == 1:
        return _("… (1 more term, together {together})", together=together)
    return _("… ({count} more terms, together {together})", count=count, together=together)


def _signed_terms(texts_: Sequence[str]) -> str:
    """'a + b − c': a negative term after the first is written as a subtraction."""
    parts = []
    for n, text in enumerate(texts_):
        if n and text.startswith("-"):
            parts.append(f"− {text[1:]}")
        else:
            parts.append(f"+ {text}" if n else text)
    return " ".join(parts)


def _written_terms(numbers: list[float], limit: int) -> list[str]:
    """The terms of a sum as written: the first ``limit`` numbers, then the rest as one 'together' number."""
    terms = [format_number(v) for v in numbers[:limit]]
    return terms + ([format_number(math.fsum(numbers[limit:]))] if len(numbers) > limit else [])


def _written_sum(numbers: list[float], limit: int) -> Decimal:
    """The total of the terms as written (exact decimal arithmetic on their text)."""
    with localcontext(_context()):
        return sum((written_value(t) for t in _written_terms(numbers, limit)), Decimal(0))


def written_sum(values, limit: int = MAX_TERMS) -> str:
    """The result ``sum_text`` writes for these values: a later line that divides by the sum divides by this."""
    return rounded_text(_written_sum(_numbers(values), limit))


def sum_text(values, total: float, limit: int = MAX_TERMS, bold: bool = True) -> str:
    """'a + b − c + … (4 more terms, together x) = **r**': the values as written add up to r."""
    numbers = _numbers(values)
    if not _finite(total, *numbers):
        return f"{_signed_terms([format_number(v) for v in numbers])} = {_bold(format_number(total), bold)}"
    terms = _written_terms(numbers, limit)
    if len(numbers) > limit:
        terms[-1] = _cut_text(len(numbers) - limit, terms[-1])
    return f"{_signed_terms(terms)} = {result_text(_written_sum(numbers, limit), total, bold)}"


def products_sum_text(left, right, total: float, limit: int = MAX_TERMS, bold: bool = True) -> str:
    """'(a × b) + (c × d) + … (4 more terms, together x) = **r**': the products as written add up to r."""
    a, b = _numbers(left), _numbers(right)
    if len(a) != len(b):
        raise ValueError(f"{len(a)} left and {len(b)} right operands")
    pairs = [(format_number(x), format_number(y)) for x, y in zip(a, b, strict=True)]
    shown = " + ".join(f"({x} × {y})" for x, y in pairs[:limit])
    if not _finite(total, *a, *b):
        more = " + " + _("… ({count} more)", count=len(pairs) - limit) if len(pairs) > limit else ""
        return f"{shown}{more} = {_bold(format_number(total), bold)}"
    with localcontext(_context()):
        written = sum((written_value(x) * written_value(y) for x, y in pairs[:limit]), Decimal(0))
    if len(pairs) > limit:
        together = format_number(math.fsum(x * y for x, y in zip(a[limit:], b[limit:], strict=True)))
        shown += f" + {_cut_text(len(pairs) - limit, together)}"
        with localcontext(_context()):
            written += written_value(together)
    return f"{shown} = {result_text(written, total, bold)}"


def quotient_text(numerator: float, denominator: float | str, exact: float, bold: bool = True) -> str:
    """'a / b = **r**' with r = a / b of the written a and b; ``denominator`` may be written '√2'."""
    a = format_number(numerator)
    b = denominator if isinstance(denominator, str) else format_number(denominator)
    try:
        with localcontext(_context()):
            written = written_value(a) / written_value(b)
    except (ArithmeticError, ValueError):  # ∞, NaN or a zero divisor: nothing to work out by hand
        return f"{a} / {b} = {_bold(format_number(exact), bold)}"
    return f"{a} / {b} = {result_text(written, exact, bold)}"


def difference_text(a: float, b: float, exact: float, bold: bool = True) -> str:
    """'a − b = **r**' with r the difference of the written a and b."""
    x, y = format_number(a), format_number(b)
    if not _finite(a, b, exact):
        return f"{x} − {y} = {_bold(format_number(exact), bold)}"
    with localcontext(_context()):
        written = written_value(x) - written_value(y)
    return f"{x} − {y} = {result_text(written, exact, bold)}"


def exp_text(s: float, m: float, exact: float, bold: bool = False) -> str:
    """'e^(s − m) = r' with r = e to the power of the written s minus the written m ('e^(−∞) = 0' when masked)."""
    if s == -math.inf:
        return f"e^(−∞) = {_bold('0', bold)}"
    x, y = format_number(s), format_number(m)
    if not _finite(s, m, exact):
        return f"e^({x} − {y}) = {_bold(format_number(exact), bold)}"
    with localcontext(_context()):
        written = (written_value(x) - written_value(y)).exp()
    return f"e^({x} − {y}) = {result_text(written, exact, bold)}"


def weighted_vectors_text(
    weights, vectors, total, limit: int = MAX_TERMS, entries: int = MAX_TERMS, bold: bool = True
) -> str:
    """'w₁ × [a, b] + w₂ × [c, d] + … (4 more terms, together [x, y]) = **[r, s]**', entry by entry as written.

    ``weights`` (n,), ``vectors`` (n, d), ``total`` (d,): the weighted sum of the vectors. At most
    ``entries`` entries of each vector are written; the result shows the same entries.
    """
    w = _numbers(weights)
    rows = [_numbers(v) for v in (vectors.tolist() if hasattr(vectors, "tolist") else vectors)]
    exact = _numbers(total)
    d = min(len(exact), entries)
    if len(w) != len(rows):
        raise ValueError(f"{len(w)} weights and {len(rows)} vectors")
    if not w:  # every term masked away
        return f"{_('(none)')} = {_bold(vector_text(exact, entries), bold)}"
    terms = [f"{format_number(x)} × {vector_text(v, entries)}" for x, v in zip(w[:limit], rows[:limit], strict=True)]
    if not _finite(*w, *exact, *(x for row in rows for x in row)):
        more = " + …" if len(w) > limit else ""
        return " + ".join(terms) + f"{more} = {_bold(vector_text(exact, entries), bold)}"
    with localcontext(_context()):
        written = [
            sum(
                (
                    written_value(format_number(x)) * written_value(format_number(v[e]))
                    for x, v in zip(w[:limit], rows[:limit], strict=True)
                ),
                Decimal(0),
            )
            for e in range(d)
        ]
    if len(w) > limit:
        cut = list(zip(w[limit:], rows[limit:], strict=True))
        together = [math.fsum(x * v[e] for x, v in cut) for e in range(len(exact))]
        terms.append(_cut_text(len(w) - limit, vector_text(together, entries)))
        with localcontext(_context()):
            written = [s + written_value(format_number(together[e])) for e, s in enumerate(written)]
    shown = "[" + ", ".join(rounded_text(v) for v in written) + (", …" if len(exact) > entries else "") + "]"
    unrounded = vector_text(exact, entries)
    bolded = _bold(shown, bold)
    result = (
        bolded if unrounded == shown else _("{result} (unrounded: {unrounded})", result=bolded, unrounded=unrounded)
    )
    return " + ".join(terms) + f" = {result}"


def _bold(text: str, bold: bool) -> str:
    return f"**{text}**" if bold else text
