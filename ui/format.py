"""Every number as text, one rule per cell, and every written-out sum checkable by hand: one formatter.

The formatting itself is pure and lives in ``attention_core.numbers`` (the exercise solutions use it
too); this module re-exports it for the pages and adds the few helpers that are only presentation.

Numbers: 4 decimals, scientific notation only for a cell that needs it. A cell reads in scientific
notation by itself when 4 decimals would hide it (0 < |x| < 1e-4) or when it is huge (|x| >= 1e6):
1.0000, 0.1390, 3.2100e-07, 1.0226e+36. An exact 0 (a masked weight) reads "0". Tables, heatmap
cells, tooltips and sentences all use ``format_number``.

Written arithmetic, the one rule (``products_sum_text``, ``sum_text``, ``quotient_text``,
``difference_text``, ``exp_text``, ``weighted_vectors_text``): the number written right after "=" is
the result of the operands as written (their 4-decimal text, computed exactly in decimal arithmetic,
rounded half up to 4 decimals); where the lab's exact (unrounded) value differs from it at 4 decimals
it follows in brackets, "= 0.1975 (unrounded: 0.1972)". Cut terms are summarised as one checkable
number, "+ … (4 more terms, together 0.1234) = r", so every written line adds up by hand. Every
sum, quotient or difference a page or a clicked cell writes out goes through these functions.
"""

from __future__ import annotations

import re

import pandas as pd

from attention_core.i18n import N_, _
from attention_core.numbers import (
    DECIMALS,
    HUGE,
    MAX_TERMS,
    TINY,
    difference_text,
    exp_text,
    format_number,
    is_scientific,
    is_tiny,
    numbers_text,
    products_sum_text,
    quotient_text,
    result_text,
    rounded_text,
    sum_text,
    texts,
    vector_text,
    weighted_vectors_text,
    written_sum,
    written_value,
)

__all__ = [
    "DECIMALS",
    "HUGE",
    "MARKDOWN_SIGNIFICANT",
    "MAX_TERMS",
    "TINY",
    "LearnerText",
    "csv_text",
    "difference_text",
    "exp_text",
    "format_number",
    "is_scientific",
    "is_tiny",
    "latex_int",
    "latex_text",
    "learner_text",
    "numbers_text",
    "plural",
    "products_sum_text",
    "quotient_text",
    "result_text",
    "rounded_text",
    "sum_text",
    "texts",
    "vector_text",
    "weighted_vectors_text",
    "written_sum",
    "written_value",
]


# The nouns the pages count, each as two whole phrases (issue 39): a language without plurals (Chinese) writes both
# alike, and a count reads in the learner's language wherever ``plural`` puts it (a page's _() placeholder).
PLURALS = {
    "token": (N_("{n} token"), N_("{n} tokens")),
    "head": (N_("{n} head"), N_("{n} heads")),
    "column": (N_("{n} column"), N_("{n} columns")),
    "layer": (N_("{n} layer"), N_("{n} layers")),
    "piece": (N_("{n} piece"), N_("{n} pieces")),
    "step": (N_("{n} step"), N_("{n} steps")),
}


def plural(n: int, noun: str) -> str:
    """'1 token', '6 tokens' (in the learner's language for a noun of PLURALS; any other noun in English)."""
    if noun in PLURALS:
        one, many = PLURALS[noun]
        return _(one if n == 1 else many, n=n)
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def latex_int(n: int) -> str:
    """2,359,296 for LaTeX: a bare comma in math mode is punctuation and renders as '2, 359, 296'."""
    return f"{n:,}".replace(",", "{,}")


# --- the learner's text -------------------------------------------------------------------------------
# What a learner types or a link carries (a sentence, its token labels, a seed, a bad value quoted in an
# error) is shown as text, never as Markdown, HTML or LaTeX: ``![](//host/a.png)`` drawn as Markdown would
# make the browser fetch an outside address. Streamlit renders every caption, error and markdown string as
# Markdown (with $...$ LaTeX), so such text goes through ``learner_text`` wherever it reaches one. Only the
# characters that build an image, a link, HTML, code, LaTeX, emphasis or a table are escaped, each with a backslash,
# which Markdown removes when it draws: the text on screen is exactly what was typed, and ordinary words
# ("can't", "the (2)", "d_model") are left as they are.
MARKDOWN_SIGNIFICANT = "\\`*[]<>!$~|&"
_MARKDOWN_ESCAPES = str.maketrans({c: "\\" + c for c in MARKDOWN_SIGNIFICANT} | {"\n": " ", "\r": " "})
_LATEX_ESCAPES = str.maketrans(
    {
        "\\": r"\textbackslash{}",
        "{": r"\{",
        "}": r"\}",
        "$": r"\$",
        "&": r"\&",
        "#": r"\#",
        "%": r"\%",
        "_": r"\_",
        "^": r"\textasciicircum{}",
        "~": r"\textasciitilde{}",
        "\n": " ",
        "\r": " ",
    }
)


_EMPHASIS_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")  # "_em_" emphasises; "d_model" cannot


def learner_text(text: object) -> str:
    """Text from the learner or a URL, safe inside Markdown: drawn literally, never as an image, link or HTML."""
    return _EMPHASIS_UNDERSCORE.sub(r"\_", str(text).translate(_MARKDOWN_ESCAPES))


def latex_text(text: object) -> str:
    """Text from the learner or a URL, safe inside LaTeX's \\text{...}: no command, group or math survives."""
    return str(text).translate(_LATEX_ESCAPES)


class LearnerText(str):
    """A string from the learner (a token label) that escapes itself wherever it is formatted into text.

    It is the plain string everywhere else (tables, charts, tooltips, widget options, comparisons), so the
    pages' f-strings (``f"Row of “{lab.query_label}”"``), which all reach Markdown, are safe without each
    one remembering to escape."""

    __slots__ = ()

    def __format__(self, spec: str) -> str:
        return learner_text(str.__format__(str(self), spec))


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet runs a cell that starts so as a formula


def spreadsheet_safe(value: object) -> object:
    """A text cell that a spreadsheet would run as a formula ('=cmd|...') gets a leading quote; numbers stay."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_text(frame: pd.DataFrame) -> str:
    """The CSV of a table whose labels and text cells are the learner's: no cell opens as a formula."""
    columns = [
        column if pd.api.types.is_numeric_dtype(column) else column.map(spreadsheet_safe)
        for _name, column in frame.items()
    ]
    safe = pd.concat(columns, axis=1) if columns else frame.copy()
    safe.columns = frame.columns
    return safe.rename(index=spreadsheet_safe, columns=spreadsheet_safe).to_csv()
