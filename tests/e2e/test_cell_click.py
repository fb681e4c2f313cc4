"""Click a heatmap cell in Chromium and read its arithmetic panel: the numbers are the core's.

A small script (written to a temporary folder, served on a free port) draws two clickable heatmaps
of the default input with a causal mask: the weights and the context vectors.
"""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest

import attention_core as ac
from tests.e2e.conftest import ROOT, free_port, screenshot, wait_for_app
from ui.charts import CELL_PX
from ui.format import format_number

SCRIPT = """
import sys
sys.path.insert(0, {root!r})
import streamlit as st
import attention_core as ac
from ui.widgets import cell_click, inputs
from ui import drawing

st.title("Cell click")
lab = inputs.default_input()
steps = ac.self_attention(lab.X, mask=ac.causal_mask(lab.T))
drawing.heatmap(
    steps.weights, lab.labels, lab.labels, kind="weights", title="weights", key="w",
    explain=cell_click.weights_of(steps),
)
drawing.heatmap(
    steps.context, lab.labels, ["d1", "d2", "d3"], kind="values", title="context", key="c",
    explain=cell_click.context_of(steps), col_title="entry",
)
"""


@pytest.fixture(scope="module")
def scratch_url(tmp_path_factory) -> Iterator[str]:
    """A Streamlit server running the two-heatmap script."""
    script = tmp_path_factory.mktemp("cell_click") / "cell_click_app.py"
    script.write_text(SCRIPT.format(root=str(ROOT)))
    port = free_port()
    command = [sys.executable, "-m", "streamlit", "run", str(script), "--server.port", str(port)]
    command += ["--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"]
    command += ["--server.fileWatcherType", "none"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):
                break
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise RuntimeError("the cell-click script did not start") from None
            time.sleep(0.3)
    yield f"http://127.0.0.1:{port}"
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


def tooltip(page) -> tuple[str, str] | None:
    """(row, col) of the Vega tooltip on screen, or None."""
    tip = page.locator("#vg-tooltip-element")
    if not tip.count() or not tip.is_visible():
        return None
    lines = [line.strip() for line in tip.inner_text().splitlines() if line.strip()]
    return lines[1], lines[3]


def click_cell(page, chart_index: int, key: str, rows: list[str], cols: list[str], row: str, col: str) -> None:
    """Hover until the tooltip names a cell, step to the wanted one by the cell size, check, click, wait."""
    before = panel(page, key)
    box = page.locator("[data-testid='stMain'] [data-testid='stVegaLiteChart']").nth(chart_index).bounding_box()
    for y in range(int(box["y"]) + 5, int(box["y"] + box["height"]), CELL_PX // 2):
        for x in range(int(box["x"]) + 5, int(box["x"] + box["width"]), CELL_PX // 2):
            page.mouse.move(x, y)
            page.wait_for_timeout(20)
            seen = tooltip(page)
            if seen:
                target_x = x + (cols.index(col) - cols.index(seen[1])) * CELL_PX
                target_y = y + (rows.index(row) - rows.index(seen[0])) * CELL_PX
                for step in range(10):  # the tooltip follows mouse moves: nudge until it shows
                    page.mouse.move(target_x + step % 2, target_y)
                    page.wait_for_timeout(50)
                    if tooltip(page):
                        break
                assert tooltip(page) == (row, col)
                page.mouse.click(target_x, target_y)
                for _ in range(100):  # the rerun redraws the panel below the chart
                    page.wait_for_timeout(100)
                    if panel(page, key) != before:
                        break
                wait_for_app(page)
                return
    raise AssertionError("no heatmap cell found under the mouse")


def panel(page, key: str) -> str:
    return page.locator(f".st-key-{key}_arithmetic").inner_text()


def test_clicked_cells_show_the_cores_numbers(scratch_url, page):
    lab_labels = list(ac.token_labels(ac.DEFAULT_PRESET.tokens))
    steps = ac.self_attention(ac.DEFAULT_PRESET.matrix(), mask=ac.causal_mask(len(lab_labels)))
    page.goto(scratch_url)
    wait_for_app(page)
    assert "Click any cell" in panel(page, "w")

    click_cell(page, 0, "w", lab_labels, lab_labels, "starts", "journey")
    text = panel(page, "w")
    assert "Weight of key “journey”" in text
    weight = format_number(float(steps.weights[2, 1]))  # the result, or beside the written operands' one
    assert f"= {weight}" in text or f"(unrounded: {weight})" in text
    assert format_number(float(steps.masked_scores[2].max())) in text, "the row maximum m"

    click_cell(page, 0, "w", lab_labels, lab_labels, "journey", "step")
    text = panel(page, "w")
    assert "e^(−∞) = 0" in text and "= 0" in text, "a masked cell: weight exactly 0"

    click_cell(page, 1, "c", lab_labels, ["d1", "d2", "d3"], "with", "d2")
    text = panel(page, "c")
    assert "Entry “d2” of the context vector of “with”" in text
    result = text.strip().split("=")[-1]  # 'r' or 'r (unrounded: x)'
    context = format_number(float(steps.context[3, 1]))
    assert result.split()[0] == context or f"(unrounded: {context})" in result
    assert "Weight of key “step”" in panel(page, "w"), "the first chart's cell survives the second's rerun"
    assert page.locator("[data-testid='stException']").count() == 0
    screenshot(page, "cell_click")
