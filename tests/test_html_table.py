"""ui/widgets/html_table.py: the lessons' tables as HTML, one number format per cell, every number readable back."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import streamlit as st
import torch

from attention_core.tables import to_frame
from tests.apptest_helpers import read_table_html
from ui.format import format_number
from ui.widgets import html_table


def texts(body: str) -> list[list[str]]:
    """Each body row's cell texts (row headers left out)."""
    rows = re.findall(r"<tr>(.*?)</tr>", body)[1:]
    return [re.findall(r"<td[^>]*>([^<]*)</td>", row) for row in rows]


def test_a_matrix_reads_back_as_the_frame_that_was_drawn():
    matrix = torch.tensor([[0.5, 0.0, -3e-7], [1.0226e36, float("-inf"), 0.12345678]], dtype=torch.float64)
    frame = to_frame(matrix, ["the (1)", "cat"], ["d1", "d2", "d3"])
    (back,) = read_table_html(html_table.table_html(frame, alt="weights"))
    pd.testing.assert_frame_equal(back, frame, check_names=False)
    assert back.attrs["alt"] == "weights"


def test_every_cell_reads_by_the_one_number_format():
    values = [0.5, 0.0, -3e-7, 1.0226e36, float("-inf"), float("nan"), 0.12345678]
    body = html_table.table_html(pd.DataFrame({"x": values}, index=list("abcdefg")))
    assert [row[0] for row in texts(body)] == [format_number(v) for v in values]
    assert [row[0] for row in texts(body)][:4] == ["0.5000", "0", "-3.0000e-07", "1.0226e+36"]


def test_flags_counts_texts_and_index_names_keep_their_kinds():
    frame = pd.DataFrame(
        {"may attend": [True, False], "count": [3, 12_000], "token": ["the", "cat"], "mixed": ["x", 0.25]},
        index=pd.Index([7, 8], name="step"),
    )
    (back,) = read_table_html(html_table.table_html(frame))
    assert back["may attend"].dtype == bool and back["may attend"].tolist() == [True, False]
    assert back["count"].tolist() == [3, 12_000] and back.index.name == "step" and back.index.tolist() == [7, 8]
    assert back["token"].tolist() == ["the", "cat"]
    body = html_table.table_html(frame)
    assert texts(body) == [["True", "3", "the", "x"], ["False", "12000", "cat", "0.2500"]]
    assert 'class="b0"' in body  # False reads faint, so a mask's pattern shows


def test_column_formats_labels_and_help_come_from_the_column_config():
    frame = pd.DataFrame({"bytes": [69_120, 23_040], "ms": [0.123456, 2.5], "ratio": [1.04, 3.0]})
    config = {
        "bytes": st.column_config.NumberColumn("bytes per token", format="localized", help="K and V, all layers"),
        "ms": st.column_config.NumberColumn(format="%.4f"),
        "ratio": st.column_config.NumberColumn(format="%.1f"),
    }
    body = html_table.table_html(frame, column_config=config, hide_index=True)
    assert texts(body) == [["69,120", "0.1235", "1.0"], ["23,040", "2.5000", "3.0"]]
    assert 'title="K and V, all layers"' in body and ">bytes per token</th>" in body
    assert '<th scope="row">' not in body  # hide_index
    (back,) = read_table_html(body)
    assert list(back.columns) == ["bytes", "ms", "ratio"]  # read back by name, as the frame was drawn
    assert back["ms"].tolist() == [0.123456, 2.5]


def test_a_plain_range_index_is_hidden_unless_asked_for():
    frame = pd.DataFrame({"x": [1.0, 2.0]})
    assert 'scope="row"' not in html_table.table_html(frame)
    assert 'scope="row"' in html_table.table_html(frame, hide_index=False)
    assert 'scope="row"' in html_table.table_html(frame.set_axis(["a", "b"]))


@pytest.mark.parametrize("text", ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", 'a"b', "&amp;"])
def test_learner_text_is_escaped_in_labels_headers_and_cells(text):
    frame = pd.DataFrame({text: [text]}, index=[text])
    body = html_table.table_html(frame, alt=text)
    assert "<script" not in body and "<img" not in body
    (back,) = read_table_html(body)
    assert back.index.tolist() == [text] and list(back.columns) == [text] and back.iloc[0, 0] == text
    assert back.attrs["alt"] == text


def test_a_long_table_scrolls_in_its_box_and_a_height_can_be_asked_for():
    long = pd.DataFrame({"x": np.arange(html_table.TALL_ROWS + 1, dtype=float)})
    short = long.head(html_table.TALL_ROWS)
    assert f"max-height: {html_table.TALL_PX}px" in html_table.table_html(long)
    assert "max-height" not in html_table.table_html(short)
    assert "max-height: 300px" in html_table.table_html(short, height=300)
    assert "max-height" not in html_table.table_html(long, height="auto")
    assert 'class="lab-table stretch"' in html_table.table_html(short, width="stretch")


def test_the_styles_scroll_wide_tables_and_keep_headers_in_view():
    from ui import drawing

    css = drawing.PAGE_CSS
    assert f".{html_table.BOX_CLASS} {{ overflow: auto" in css
    assert "overflow: auto" in css and "max-width: 100%" in css  # a phone scrolls a wide table inside its box
    assert "position: sticky" in css  # the header row and the row labels stay in view while it scrolls
