"""Helpers for page tests: open the app with a lesson in the URL, go to a page, read what it shows."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from streamlit.testing.v1 import AppTest

from ui.lessons import LESSONS

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


def assert_clean(at: AppTest) -> None:
    """No exception element and no traceback on the page."""
    assert not at.exception, [e.value for e in at.exception]


def charts(at: AppTest) -> list:
    """Every Altair/Vega-Lite chart element of the last run."""
    return list(at.get("vega_lite_chart"))


def frames(at: AppTest) -> list[pd.DataFrame]:
    """Every st.dataframe's data as a DataFrame (data editors excluded)."""
    return [df.value for df in at.dataframe if df.editing_mode == "read_only"]


def chart_specs(at: AppTest) -> list[dict]:
    """The Vega-Lite spec (as a dict) of every chart of the last run."""
    import json

    return [json.loads(chart.proto.spec) for chart in charts(at)]
