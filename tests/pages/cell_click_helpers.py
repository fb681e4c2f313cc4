"""Read the clickable heatmaps of a page in AppTest: selectable specs, the query's outlined row, kept cells."""

from __future__ import annotations

import json

from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

from tests.apptest_helpers import charts
from ui import charts as ui_charts
from ui.widgets import cell_click


def _has_cell_param(node) -> bool:
    if isinstance(node, dict):
        if any(p.get("name") == ui_charts.CELL_SELECTION for p in node.get("params", []) if isinstance(p, dict)):
            return True
        return any(_has_cell_param(value) for value in node.values())
    if isinstance(node, list):
        return any(_has_cell_param(value) for value in node)
    return False


def clickable_specs(at) -> list[dict]:
    """The spec of every chart of the last run that has the cell selection (a click selects a cell), with
    the chart's data (sent beside the spec as Arrow) under the key "data_frame"."""
    clickable = []
    for chart in charts(at):
        spec = json.loads(chart.proto.spec)
        if _has_cell_param(spec):
            spec["named_data"] = {d.name: convert_arrow_bytes_to_pandas_df(d.data.data) for d in chart.proto.datasets}
            spec["data_frame"] = spec["named_data"][ui_charts.CELLS_DATA]
            clickable.append(spec)
    return clickable


def outlined_rows(spec: dict) -> list[str]:
    """The rows a heatmap outlines: the rows of its dataset ui.charts.OUTLINE_DATA ([] when none)."""
    return spec["named_data"][ui_charts.OUTLINE_DATA]["row"].tolist()


def colour_range(spec: dict) -> tuple[float, float]:
    """The colour range of a heatmap, carried by its data (columns low and high)."""
    data = spec["data_frame"]
    return float(data["low"].min()), float(data["high"].max())


def keep_cell(at, key: str, row: str, col: str) -> None:
    """Keep a clicked cell of the chart ``key`` as a click would, then rerun."""
    at.session_state[cell_click.state_key(key)] = (row, col)
    at.run()


def markdown(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def has_footer(at, path: str) -> bool:
    """The 'Check yourself' exercises and the previous / next links of the lesson at ``path``."""
    from ui import registry

    previous, following = registry.neighbours(path)
    links = [link.proto.page for link in at.get("page_link")]
    subheaders = [s.value for s in at.subheader]
    wanted = [lesson for lesson in (previous, following) if lesson is not None]

    def linked(lesson) -> bool:  # the default page (the overview) is served at the root: its link is ""
        return "" in links if lesson.default else any(lesson.name in link for link in links)

    return "Check yourself" in subheaders and all(linked(lesson) for lesson in wanted)
