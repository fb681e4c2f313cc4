"""The lab's tables as plain HTML tables: drawn by the browser in one go, and readable like text.

A lesson's tables are small: a few dozen cells, at most 64 x 64 (``ui.drawing.MAX_HTML_CELLS``). Streamlit's
st.dataframe draws a canvas data grid, made for thousands of rows: mounting one was the largest part of a step
change, much of it after the numbers were already on screen (the grid lays itself out again on a timer), and a
step with a table or two went over its click budget for that alone (docs/benchmarks.md, "Tables as HTML"). An
HTML table of the same numbers costs the browser about as much as a paragraph. It also reads better: the numbers
are text, so the browser's find, a copy and a print take them, and a screen reader reads the table's rows and
columns.

What a table shows is what ``st.dataframe`` showed: the index as row headers, the column names as column
headers (a column config's label, its help as the header's tooltip), one text per cell (``format_number``
unless the column has a format). Every number cell also keeps its exact value in ``data-v`` and every column
its kind in ``data-t``, so the tests read the page's numbers back as the DataFrame that was drawn
(tests/apptest_helpers.py ``frames``), not only their 4-decimal text. Tables larger than a lesson's stay
st.dataframe (``ui.drawing``), which draws only the rows in view.

Pure: a DataFrame in, one HTML string out (``st.html`` draws it; its styles are in ``ui.drawing.PAGE_CSS``).
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from ui.format import format_number

TALL_ROWS = 16  # more rows than this scroll inside a box of TALL_PX, with the header row kept in view
TALL_PX = 420
BOX_CLASS = "lab-table"

# Column kinds, as data-t says them: float, integer, boolean, text.
FLOAT, INTEGER, BOOLEAN, TEXT = "f", "i", "b", "s"


def column_kind(values: pd.Series | pd.Index) -> str:
    """The kind of a column (or of the index): 'f', 'i', 'b' or 's'."""
    if pd.api.types.is_bool_dtype(values.dtype):
        return BOOLEAN
    if pd.api.types.is_integer_dtype(values.dtype):
        return INTEGER
    if pd.api.types.is_float_dtype(values.dtype):
        return FLOAT
    return TEXT


def number_text(value: float | int, fmt: str | None) -> str:
    """A number as the table shows it: ``format_number`` for floats and the integer for integers, unless the
    column has a format (printf such as '%.1f', or 'localized': thousands separated by commas)."""
    if fmt == "localized":
        return f"{value:,}" if isinstance(value, (int, np.integer)) else f"{value:,.4f}"
    if fmt:
        return fmt % value
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return format_number(value)


def cell(value: object, kind: str, fmt: str | None) -> str:
    """One <td>: its text, and for a number or a flag its exact value in data-v (a number's data-v also aligns it
    right: no class, as the browser sanitises every attribute of every cell)."""
    if value is None or (isinstance(value, float) and math.isnan(value) and kind == TEXT):
        return "<td></td>"
    if kind == BOOLEAN:
        return f'<td class="b{int(bool(value))}" data-v="{int(bool(value))}">{bool(value)}</td>'
    if kind in (FLOAT, INTEGER):
        exact = repr(float(value)) if kind == FLOAT else str(int(value))
        return f'<td data-v="{exact}">{html.escape(number_text(value, fmt))}</td>'
    text = format_number(value) if isinstance(value, float) else str(value)  # a number among texts: one format
    return f"<td>{html.escape(text)}</td>"


def column_header(name: object, kind: str, config: Mapping | None) -> str:
    """One column's <th>: its label (a column config's label, else its name) and help as the tooltip."""
    label = (config or {}).get("label") or name
    help_text = (config or {}).get("help")
    tooltip = f' title="{html.escape(str(help_text))}"' if help_text else ""
    named = f' data-c="{html.escape(str(name))}"' if str(label) != str(name) else ""
    align = ' class="s"' if kind in (TEXT, BOOLEAN) else ""
    return f'<th scope="col" data-t="{kind}"{named}{tooltip}{align}>{html.escape(str(label))}</th>'


def column_format(config: Mapping | None) -> str | None:
    """The number format a column config asks for ('%.4f', 'localized'), or None."""
    return ((config or {}).get("type_config") or {}).get("format")


def shows_index(frame: pd.DataFrame, hide_index: bool | None) -> bool:
    """Whether the index is drawn: as asked, and by default unless it is a plain 0, 1, 2, ... RangeIndex."""
    if hide_index is not None:
        return not hide_index
    return not isinstance(frame.index, pd.RangeIndex)


def table_html(
    frame: pd.DataFrame,
    *,
    alt: str | None = None,
    column_config: Mapping[str, Mapping] | None = None,
    hide_index: bool | None = None,
    width: str | int | None = None,
    height: str | int | None = None,
) -> str:
    """The frame as one HTML table in a scrolling box (the options are st.dataframe's: a column config's label,
    help and number format, hide_index, width 'stretch', an integer or 'auto' height)."""
    configs = {str(name): config for name, config in (column_config or {}).items()}
    kinds = [column_kind(frame[name]) for name in frame.columns]
    formats = [column_format(configs.get(str(name))) for name in frame.columns]
    with_index = shows_index(frame, hide_index)
    index_kind = column_kind(frame.index)
    corner = html.escape(str(frame.index.name)) if frame.index.name is not None else ""
    head = (f'<th scope="col" data-i data-t="{index_kind}" class="s">{corner}</th>' if with_index else "") + "".join(
        column_header(name, kind, configs.get(str(name))) for name, kind in zip(frame.columns, kinds, strict=True)
    )
    rows = []
    for label, values in zip(frame.index, frame.itertuples(index=False, name=None), strict=True):
        row_header = f'<th scope="row">{html.escape(str(label))}</th>' if with_index else ""
        cells = "".join(cell(v, kind, fmt) for v, kind, fmt in zip(values, kinds, formats, strict=True))
        rows.append(f"<tr>{row_header}{cells}</tr>")
    box = box_style(len(frame), width, height)
    label = f' aria-label="{html.escape(alt)}"' if alt else ""
    return f"<div {box}><table{label}><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"


def box_style(n_rows: int, width: str | int | None, height: str | int | None) -> str:
    """The box's class and style: stretched to the column's width when asked, and a scrolling height past
    TALL_ROWS rows (or the height asked for)."""
    classes = BOX_CLASS + (" stretch" if width == "stretch" else "")
    if isinstance(height, int):
        limit = height
    elif height == "auto":
        limit = None
    else:
        limit = TALL_PX if n_rows > TALL_ROWS else None
    style = f' style="max-height: {limit}px"' if limit else ""
    return f'class="{classes}"{style}'
