"""Server time of the issue-11 parts (AppTest, median of RUNS reruns), printed as a markdown table.

    .venv/bin/python -m benchmarks.learn_by_doing

- a click's rerun: four clickable heatmaps (scores, masked scores, weights, context) at the default
  preset, each with a clicked cell, plus lesson 2's exercises ('Check yourself');
- the same script before any click, and a trivial one-widget page for scale;
- the Mistakes museum page through the real app;
- lessons 10-12 through the real app at the default input (exercises and footer included), before
  and after a cell is kept clicked in their clickable heatmaps.
Target: a click's rerun < 100 ms at the default preset.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from tests.apptest_helpers import open_page  # noqa: E402

RUNS = 7
LATER_LESSONS = {  # page: the cells kept clicked (chart key -> (row, col)) at the default preset
    "app_pages/trained_model.py": {"tm_head_weights": ("journey", "[CLS]"), "tm_by_hand_square": ("journey", "your")},
    "app_pages/training.py": {"training_cell": ("3:j", "2:d")},
    "app_pages/generation.py": {"generation_k_cache": ("journey", "d2"), "generation_recomputed": ("Your", "starts")},
}
TRIVIAL = """
import streamlit as st
st.slider("x", 0, 10, 5)
"""
CLICKABLE = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
import attention_core as ac
from ui.widgets import cell_click, inputs
from ui import drawing
from ui.widgets.exercises import exercises_section

lab = inputs.default_input()
mask = ac.causal_mask(lab.T)
steps = ac.self_attention(lab.X, mask=mask)
labels, dims = lab.labels, [f"d{{i + 1}}" for i in range(lab.d_model)]
drawing.heatmap(steps.scores, labels, labels, kind="scores", key="s",
                explain=cell_click.scores_of(steps))
drawing.heatmap(steps.masked_scores, labels, labels, kind="scores", key="m",
                explain=cell_click.masked_scores_of(steps, mask))
drawing.heatmap(steps.weights, labels, labels, key="w", explain=cell_click.weights_of(steps))
drawing.heatmap(steps.context, labels, dims, kind="values", key="c",
                explain=cell_click.context_of(steps), col_title="entry")
exercises_section("app_pages/softmax.py", lab)
"""


def median_ms(at: AppTest) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def main() -> None:
    torch.set_num_threads(1)  # as lab.py does: tiny tensors, no thread hand-offs
    trivial = AppTest.from_string(TRIVIAL, default_timeout=60).run()
    page = AppTest.from_string(CLICKABLE, default_timeout=60).run()
    before = median_ms(page)
    for key, cell in {"s": ("starts", "journey"), "m": ("Your", "step"), "w": ("starts", "journey")}.items():
        page.session_state[f"_cell:{key}"] = cell
    page.session_state["_cell:c"] = ("with", "d2")
    clicked = median_ms(page)
    museum = open_page("app_pages/mistakes.py")
    rows = [
        ("trivial one-widget page", median_ms(trivial)),
        ("4 clickable heatmaps + lesson 2 exercises, nothing clicked", before),
        ("the same, a cell clicked in each heatmap (a click's rerun)", clicked),
        ("Mistakes museum page (real app, default preset)", median_ms(museum)),
    ]
    for path, cells in LATER_LESSONS.items():
        lesson = open_page(path, timeout=300)
        rows.append((f"{Path(path).stem} (real app, default preset)", median_ms(lesson)))
        for key, cell in cells.items():
            lesson.session_state[f"_cell:{key}"] = cell
        rows.append((f"{Path(path).stem}, {len(cells)} cell(s) kept clicked", median_ms(lesson)))
    print(f"| server rerun (median of {RUNS}) | ms |\n|---|---:|")
    for name, ms in rows:
        print(f"| {name} | {ms:.0f} |")


if __name__ == "__main__":
    main()
