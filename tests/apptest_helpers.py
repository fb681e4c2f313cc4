"""Helpers for page tests: open the app with a lesson in the URL, go to a page, read what it shows."""

from __future__ import annotations

import functools
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import pandas as pd
from streamlit.testing.v1 import AppTest

from ui.registry import LESSONS

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "lab.py")  # the script streamlit_app.py serves
PAGES = [lesson.path for lesson in LESSONS]
# URL values are what the widgets display (Streamlit binds the formatted option).
OWN_SENTENCE = "Your own sentence"
EMBEDDING_LABELS = {
    "printed": "As printed in the tutorial",
    "random": "Random (seeded)",
    "one-hot": "One-hot",
    "edited": "Edit by hand",
    "trained": "Trained (all-MiniLM-L6-v2)",
}


def open_page(
    page: str = "app_pages/overview.py", params: dict[str, str] | None = None, timeout: float = 60
) -> AppTest:
    """Open ``page`` as a deep link with ``params`` in the URL: the first run is that page's.

    A lesson opens whole (``view=all``: every step on one page, as the page tests read it) unless ``params``
    name a step, a view or the path; tests of the stepped view pass ``step``."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    params = dict(params or {})
    if not {"step", "view", "path"} & set(params):
        params["view"] = "all"
    at.query_params.update(params)
    if page != "app_pages/overview.py":
        at.switch_page(page)
    return at.run()


def sentence_params(
    sentence: str, *, embedding: str = "random", seed: int = 0, d_model: int = 4, query: str | None = None
) -> dict[str, str]:
    """URL parameters for a typed sentence."""
    params = {
        "example": OWN_SENTENCE,
        "sentence": sentence,
        "embedding": EMBEDDING_LABELS[embedding],
        "seed": str(seed),
        "d_model": str(d_model),
    }
    if query is not None:
        params["query"] = query
    return params


def lab_input(at: AppTest):
    """The LabInput the sidebar built in the last run."""
    return at.session_state["_lab_input"]


def open_code(at: AppTest) -> AppTest:
    """Every code expander of the page opened (its key starts with "code ": ui.drawing.show_code's, lesson 9's
    reproduction code), as a learner's click would, and the page run again: they draw their code only while open."""
    for key in [key for key in at.session_state if key.startswith("code ")]:
        at.session_state[key] = True
    return at.run()


def assert_clean(at: AppTest) -> None:
    """No exception element and no traceback on the page."""
    assert not at.exception, [e.value for e in at.exception]


@functools.cache
def _vega_lite_validator() -> jsonschema.protocols.Validator:
    """A validator for Altair's Vega-Lite schema, built once: Altair's ``Root.validate`` deep-copies the whole schema
    and builds a validator on every call, half the time of a check."""
    from altair.vegalite.v6.schema.core import Root

    validator = jsonschema.validators.validator_for(Root._schema)  # the schema names its draft (7)
    return validator(Root._schema, format_checker=validator.FORMAT_CHECKER)


def vega_lite_errors(spec: dict) -> list[str]:
    """Why ``spec`` is not valid Vega-Lite (the schema check of ``Root.from_dict(spec, validate=True)``), or []."""
    errors = _vega_lite_validator().iter_errors(spec)
    return [f"{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in errors]


def charts(at: AppTest) -> list:
    """Every Altair/Vega-Lite chart element of the last run."""
    return list(at.get("vega_lite_chart"))


def frames(at) -> list[pd.DataFrame]:
    """Every table the page shows, in page order, as the DataFrame that was drawn: the lessons' HTML tables
    (ui.widgets.html_table, read back by ``read_table_html``) and the st.dataframes of larger tables (data editors
    excluded). Each frame's ``attrs["alt"]`` is the table's alt text. ``at``: an AppTest or any block of one (a
    column, a tab)."""
    found = []

    def visit(node) -> None:
        if getattr(node, "type", None) == "html":
            found.extend(read_table_html(node.proto.body))
        elif getattr(node, "type", None) == "dataframe" and node.editing_mode == "read_only":
            frame = node.value
            frame.attrs["alt"] = node.proto.alt
            found.append(frame)
        for child in getattr(node, "children", {}).values():
            visit(child)

    visit(at._tree if isinstance(at, AppTest) else at)
    return found


class _TableReader(HTMLParser):
    """Reads the tables of ui.widgets.html_table back: header kinds (data-t), labels, and each cell's exact value."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict] = []
        self.cell: dict | None = None

    def handle_starttag(self, tag: str, attrs) -> None:
        attributes = dict(attrs)
        if tag == "table":
            self.tables.append({"head": [], "rows": [], "alt": attributes.get("aria-label") or ""})
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"].append([])
        elif tag in ("th", "td") and self.tables:
            self.cell = {"tag": tag, "scope": attributes.get("scope"), "text": "", **attributes}

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell["text"] += data

    def handle_endtag(self, tag: str) -> None:
        if tag in ("th", "td") and self.cell is not None:
            table = self.tables[-1]
            if self.cell["scope"] == "col":
                table["head"].append(self.cell)
            else:
                table["rows"][-1].append(self.cell)
            self.cell = None


def _value(cell: dict, kind: str):
    exact = cell.get("data-v")
    if exact is None:
        return cell["text"] if cell["text"] else None
    return {"f": float, "i": int, "b": lambda v: v == "1"}[kind](exact)


def read_table_html(body: str) -> list[pd.DataFrame]:
    """The DataFrames of the HTML tables in ``body`` (none when it has none): columns named as drawn (the
    column's name where its label differs), row labels from the row headers, every number exact."""
    reader = _TableReader()
    reader.feed(body)
    frames_read = []
    for table in reader.tables:
        head = table["head"]
        rows = [row for row in table["rows"] if row]
        with_index = bool(head) and "data-i" in head[0]  # the index's corner header
        columns = head[1:] if with_index else head
        kinds = [column["data-t"] for column in columns]
        data = {
            column.get("data-c", column["text"]): [_value(row[i + with_index], kind) for row in rows]
            for i, (column, kind) in enumerate(zip(columns, kinds, strict=True))
        }
        frame = pd.DataFrame(data)
        for name, kind in zip(data, kinds, strict=True):
            if kind == "b":
                frame[name] = frame[name].astype(bool)
        if with_index:
            labels = [row[0]["text"] for row in rows]
            index_kind = head[0]["data-t"]
            frame.index = pd.Index(
                [int(v) for v in labels] if index_kind == "i" else labels, name=head[0]["text"] or None
            )
        frame.attrs["alt"] = table["alt"]
        frames_read.append(frame)
    return frames_read


def chart_specs(at: AppTest) -> list[dict]:
    """The Vega-Lite spec (as a dict) of every chart of the last run."""
    import json

    return [json.loads(chart.proto.spec) for chart in charts(at)]
