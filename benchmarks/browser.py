"""Browser figures of Attention Lab in Debian's headless Chromium (Playwright), printed as markdown tables.

    .venv/bin/python -m benchmarks.run --browser-only      # only these figures

- click to redrawn: on every lesson page at the default preset and at 32 tokens, pick another
  token in the sidebar's "Query token" selectbox (and move one page-local control where the
  page has one) and time until every chart and table is drawn again; the same interactions on
  a trivial one-selectbox page served from a temp file in the same run give the ratio;
- first page: `streamlit run` to the first fully drawn page, split into server start, browser
  bundle, websocket/session, first script run (which imports the app) and drawing;
- load: 30 concurrent browser sessions on mixed pages, each with its own sentence and seed,
  each checking its own number against attention_core, with their click-to-redrawn times.

"Drawn again" is decided in the page: a MutationObserver on the whole document records the time
of the last DOM change after the click (and the animation frame after it); the interaction is
finished when Streamlit's script state is back to "notRunning", no element is stale
(`data-stale="true"`), the status widget is gone, no element is still a skeleton (a chart or
table whose lazy JS chunk is loading), every visible chart and table has its svg/canvas, and
nothing has changed for QUIET_MS. The figure is the last frame minus the
click (pointerdown/keydown), so the quiet wait is not part of it. Vega charts are SVG here, so
a redrawn chart is a DOM change; a data grid, and a chart Streamlit draws on a canvas (past 2,000
items per datum), draw on a canvas, so their drawing calls count as changes. The grid's hidden
accessibility table is not counted: glide updates it through a 200 ms debounce, after the grid
is drawn (screen readers get a changed table 200 ms later).
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools.browser import (  # noqa: E402, F401  (shared with the other benchmarks)
    CHROMIUM,
    CHROMIUM_ARGS,
    DONE_JS,
    OWN_INPUT_PAGES,
    QUIET_MS,
    TIMEOUT_MS,
    VIEWPORT,
    VISIBLE_JS,
    check_session,
    expected_score,
    free_port,
    load_average,
    new_page,
    query_combobox,
    serve,
    start_pick,
    stop,
    wait_healthy,
    wait_quiet,
)
from ui.format import plural  # noqa: E402
from ui.registry import LESSONS  # noqa: E402

REPEATS = int(os.environ.get("BENCH_REPEATS", "5"))  # interactions per page, size and control (median printed)
# Every ratio divides by the trivial page's median, so it gets more repeats: with 5, one run's reference read
# 75, 84 and 94 ms on the same quiet machine within an hour (26 Nov).
REFERENCE_REPEATS = max(15, 3 * REPEATS)
TRACED_PICKS = 3  # extra query picks per page and size, traced for the main thread's busy time
SESSIONS = 30
LONG = "+".join(f"w{i}" for i in range(32))
SIZES = {
    "default preset": "",
    "32 tokens": f"example=Your+own+sentence&sentence={LONG}&embedding=Random+%28seeded%29&d_model=8",
}
# One page-local control per page (kind, start of its label); found by label, so a renamed
# widget prints "not found" instead of failing the run.
PAGE_CONTROLS = {
    "softmax": ("slider", "Temperature t"),
    "qkv_projections": ("slider", "d_k (size of each query"),
    "scaling": ("slider", "d_k (size of queries"),
    "multi_head": ("number", "Number of heads h"),
    "masking": ("toggle", "Apply the mask"),
    "context_vectors": ("radio", "Map to 2-D by"),
    "positions": ("radio", "Positions to add"),
    "pipeline": ("radio", "Mask"),
    "trained_model": ("selectbox", "Head"),
    "generation": ("slider", "Step t"),
    "path": ("button", "Show me the answer"),  # each stop's one control: it reveals the stop's result
}
TRIVIAL_PAGE = """
import streamlit as st

query = st.sidebar.selectbox("Query token", ["the", "cat", "sat", "on", "mat"])
value = st.slider("Temperature t", 0.1, 5.0, 1.0, 0.1)
st.title("Trivial page")
st.write(f"Query token {query}, t = {value}")
"""
# The same page with the app's garbage-collector freeze (runtime/collector.py): stock Streamlit's trivial page
# spends part of its time in full collections of Streamlit's own objects. Printed beside it, not a reference.
TRIVIAL_FROZEN_PAGE = f"{TRIVIAL_PAGE}\nimport gc\n\ngc.freeze()\n"

# Installed before the page's own scripts: records script-state changes, DOM changes and data-grid
# canvas drawing. A data grid (glide) is pixels on a canvas; its hidden accessibility table is the
# canvas's fallback content (never drawn) and follows the cells through a 200 ms debounce (glide's
# useDebouncedMemo), 200 ms after the grid is drawn. Changes inside a canvas are not counted; the
# grid's drawing calls and the canvas's own size and style are.
RESULT_JS = f"""() => {{
  const b = window.__bench;
  const visible = {VISIBLE_JS};
  return {{
    ms: Math.max(b.last, b.paint) - b.t0,
    running: b.running,
    visible: visible.length,
    touched: visible.filter((el) => b.touched.has(el)).length,
  }};
}}"""


# --- servers ---------------------------------------------------------------------------------------


def status_mb(pid: int, field: str = "VmRSS") -> float:
    """A memory figure of /proc/<pid>/status in MB: VmRSS (resident now), VmHWM (its peak), RssAnon, RssFile."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def rss_mb(pid: int) -> float:
    return status_mb(pid, "VmRSS")


def rss_parts(pid: int) -> str:
    """Resident memory split: anonymous (heap, tensors) and file-backed (libraries, mapped weights)."""
    return f"{status_mb(pid, 'RssAnon'):.0f} MB anonymous, {status_mb(pid, 'RssFile'):.0f} MB of mapped files"


# --- one page and its interactions -----------------------------------------------------------------


def open_page(browser, url: str):
    """A fresh context on url, waited until drawn (same rule as an interaction)."""
    page = new_page(browser)
    page.goto(url, timeout=TIMEOUT_MS)
    page.wait_for_selector("[data-testid='stMain'] h1", timeout=TIMEOUT_MS)
    page.evaluate("() => { window.__bench.t0 = 0; }")  # wait for the first run like for a click
    page.wait_for_function(DONE_JS, arg=QUIET_MS, timeout=TIMEOUT_MS, polling=50)
    return page


def finish(page) -> dict:
    page.wait_for_function(DONE_JS, arg=QUIET_MS, timeout=TIMEOUT_MS, polling=50)
    result = page.evaluate(RESULT_JS)
    if page.locator("[data-testid='stException']").count():
        raise RuntimeError(page.locator("[data-testid='stException']").first.inner_text()[:500])
    return result


def pick_option(page, combobox) -> dict:
    """Time picking another option of a selectbox until the page is drawn again."""
    start_pick(page, combobox)
    return finish(page)


def query_token(page) -> dict:
    return pick_option(page, query_combobox(page))


def widget(page, kind: str, label: str):
    """The page-local control of this kind whose label starts with label, or None."""
    main = page.locator("[data-testid='stMain']")
    testid = {
        "slider": "stSlider",
        "number": "stNumberInput",
        "toggle": "stCheckbox",
        "radio": "stRadio",
        "selectbox": "stSelectbox",
        "button": "stButton",
    }[kind]
    if kind == "button":  # a button's label is its text
        box = main.locator(f"[data-testid='{testid}']").filter(has=page.get_by_role("button", name=label))
        return box.first if box.count() else None
    box = main.locator(f"[data-testid='{testid}']").filter(
        has=page.locator("[data-testid='stWidgetLabel']", has_text=re.compile("^" + re.escape(label)))
    )
    return box.first if box.count() else None


def move_control(page, kind: str, box, step: int) -> dict:
    """Time one change of a page-local control; step alternates the direction (0, 1, 0, ...)."""
    if kind == "slider":
        thumb = box.get_by_role("slider").first
        key = "ArrowRight" if step % 2 == 0 else "ArrowLeft"
        # Streamlit 1.67's slider thumb is an <input type=range>: its value, min and max
        value, low, high = thumb.evaluate("(e) => [e.value, e.min, e.max]")
        if value == high:  # at an end the key would change nothing (a slider kept at its last step): the other way
            key = "ArrowLeft"
        elif value == low:
            key = "ArrowRight"
        thumb.focus()
        page.evaluate("window.__benchArm()")
        page.keyboard.press(key)
    elif kind == "number":
        down = box.locator("[data-testid='stNumberInputStepDown']")
        up = box.locator("[data-testid='stNumberInputStepUp']")
        button = down if step % 2 == 0 else up
        if button.is_disabled():  # at its minimum or maximum (a seed at 0): the other way
            button = up if button is down else down
        page.evaluate("window.__benchArm()")
        button.click()
    elif kind == "toggle":
        page.evaluate("window.__benchArm()")
        box.locator("label").first.click()
    elif kind == "radio":
        target = box.locator("label").filter(has=page.locator("input:not(:checked)")).first  # another choice
        page.evaluate("window.__benchArm()")
        target.click()
    elif kind == "button":  # pressed once: a button that reveals is gone after its click
        page.evaluate("window.__benchArm()")
        box.get_by_role("button").first.click()
    else:
        return pick_option(page, box.get_by_role("combobox"))
    return finish(page)


TRACE_CATEGORIES = ["devtools.timeline", "disabled-by-default-devtools.timeline", "blink.user_timing"]
ELEMENTS_JS = """() => document.querySelectorAll(["stElementContainer", "stVerticalBlock", "stHorizontalBlock"]
    .map((id) => `[data-testid='stMain'] [data-testid='${id}']`).join(', ')).length"""
CHARTS_JS = """() => document.querySelectorAll(["stVegaLiteChart", "stGraphVizChart"]
    .map((id) => `[data-testid='stMain'] [data-testid='${id}']`).join(', ')).length"""


def main_thread_busy(browser, page) -> float:
    """ms the renderer's main thread was busy (Chrome trace: its tasks) from the click of one query pick until
    the page was redrawn. Close to the click-to-redrawn figure itself means the browser's CPU, not the server
    or the network, is what the click waits for."""
    browser.start_tracing(page=page, categories=TRACE_CATEGORIES)
    try:
        result = query_token(page)
    finally:
        trace = json.loads(browser.stop_tracing())
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    threads = {
        (e["pid"], e["tid"])
        for e in events
        if e.get("name") == "thread_name" and e.get("args", {}).get("name") == "CrRendererMain"
    }
    clicks = [e["ts"] for e in events if e.get("name") == "bench-click" and (e.get("pid"), e.get("tid")) in threads]
    if not clicks:
        return float("nan")
    start, end = clicks[-1], clicks[-1] + result["ms"] * 1000  # trace times are microseconds
    tasks = [e for e in events if e.get("name") == "RunTask" and e.get("ph") == "X" and (e["pid"], e["tid"]) in threads]
    return sum(max(0, min(e["ts"] + e["dur"], end) - max(e["ts"], start)) for e in tasks) / 1000


def median_ms(results: list[dict]) -> float:
    return statistics.median(r["ms"] for r in results)


# --- click to redrawn ------------------------------------------------------------------------------


def trivial_figures(browser, url: str) -> tuple[float, float, float]:
    """(selectbox, slider, main thread busy during a pick) median ms on the trivial page."""
    page = open_page(browser, url)
    picks = [query_token(page) for _ in range(REFERENCE_REPEATS)]
    box = widget(page, "slider", "Temperature t")
    slides = [move_control(page, "slider", box, i) for i in range(REFERENCE_REPEATS)]
    busy = statistics.median(main_thread_busy(browser, page) for _ in range(TRACED_PICKS))
    page.context.close()
    return median_ms(picks), median_ms(slides), busy


def click_to_redrawn(browser, base: str, trivial_url: str, frozen_url: str | None = None) -> list[str]:
    """The click-to-redrawn table: every lesson page x (default preset, 32 tokens) x (query, page control).
    Ratios are to the stock trivial page; with frozen_url, the trivial page with a gc.freeze is printed too."""
    trivial_pick, trivial_slide, trivial_busy = trivial_figures(browser, trivial_url)
    lines = [
        "| page | size | query token | ratio | page control | ratio | main thread busy (query) | elements "
        "| charts+tables redrawn / shown |",
        "|---|---|---:|---:|---|---:|---:|---:|---:|",
        f"| trivial page | | {trivial_pick:.0f} ms | 1.0 | slider {trivial_slide:.0f} ms | 1.0 | "
        f"{trivial_busy:.0f} ms | 3 | |",
    ]
    if frozen_url:
        frozen_pick, frozen_slide, frozen_busy = trivial_figures(browser, frozen_url)
        lines.append(
            f"| trivial page, gc.freeze (not the reference) | | {frozen_pick:.0f} ms | "
            f"{frozen_pick / trivial_pick:.1f} | slider {frozen_slide:.0f} ms | {frozen_slide / trivial_slide:.1f} | "
            f"{frozen_busy:.0f} ms | 3 | |"
        )
    for lesson in LESSONS:
        if lesson.number is None:
            continue
        for size, query in SIZES.items():
            url = f"{base}/{lesson.name}?view=all" + (f"&{query}" if query else "")  # the whole lesson
            try:
                page = open_page(browser, url)
                picks = [query_token(page) for _ in range(REPEATS)]
                pick = median_ms(picks)
                control_cell, control_ratio = "", ""
                if lesson.name in PAGE_CONTROLS:
                    kind, label = PAGE_CONTROLS[lesson.name]
                    box = widget(page, kind, label)
                    if box is None:
                        control_cell = f"{label}: not found"
                    else:
                        moves = [move_control(page, kind, box, i) for i in range(REPEATS)]
                        control = median_ms(moves)
                        reference = trivial_slide if kind == "slider" else trivial_pick
                        control_cell = f"{label} {control:.0f} ms"
                        control_ratio = f"{control / reference:.1f}"
                busy = statistics.median(main_thread_busy(browser, page) for _ in range(TRACED_PICKS))
                elements = page.evaluate(ELEMENTS_JS)
                touched = f"{picks[-1]['touched']} / {picks[-1]['visible']}"
                lines.append(
                    f"| {lesson.name} | {size} | {pick:.0f} ms | {pick / trivial_pick:.1f} | {control_cell} | "
                    f"{control_ratio} | {busy:.0f} ms | {elements} | {touched} |"
                )
                page.context.close()
            except Exception as error:  # one broken page must not hide the others' figures
                lines.append(f"| {lesson.name} | {size} | error: {str(error).splitlines()[0][:120]} | | | | | | |")
    lines.append(
        f"\nMedian of {REPEATS}; the ratio of a slider is to the trivial page's slider, of any other control "
        "to its selectbox. Main thread busy: the browser's renderer main thread, from the click of a query pick to "
        f"the page redrawn (Chrome trace, median of {TRACED_PICKS} more picks). Elements: the element containers "
        "and blocks in the page's main area. Last column: charts and tables whose DOM changed on the last query "
        "pick, of those shown."
    )
    return lines


# --- click to redrawn, step by step (issue 24) --------------------------------------------------------------

STEP_REPEATS = int(os.environ.get("BENCH_STEP_REPEATS", "3"))  # interactions per step, size and control
CONTROL_TESTIDS = {
    "stSlider": "slider",
    "stNumberInput": "number",
    "stCheckbox": "toggle",
    "stRadio": "radio",
    "stSelectbox": "selectbox",
}
NOT_STEP_CONTROLS = ("Whole lesson on one page", "Your answer")  # the lesson's switch; exercise answers
STEP_CONTROLS_JS = f"""() => {{
  const found = [];
  for (const [testid, kind] of Object.entries({json.dumps(CONTROL_TESTIDS)})) {{
    for (const box of document.querySelectorAll(`[data-testid='stMain'] [data-testid='${{testid}}']`)) {{
      if (box.closest("[data-testid='stForm']") || box.offsetParent === null) continue;
      // a disabled control (a sampling seed while greedy is chosen) cannot be moved
      if (box.querySelector("input[disabled], [role='slider'][aria-disabled='true']")) continue;
      const label = box.querySelector("[data-testid='stWidgetLabel']");
      const text = label ? label.innerText.trim() : "";
      const skipped = {json.dumps(list(NOT_STEP_CONTROLS))}.some((skip) => text.startsWith(skip));
      if (text && !skipped) found.push([kind, text]);
    }}
  }}
  return found;
}}"""


def step_controls(page) -> list[tuple[str, str]]:
    """The step's own controls (kind, label): not the sidebar, the whole-lesson switch or an exercise's form."""
    return [(kind, label) for kind, label in page.evaluate(STEP_CONTROLS_JS)]


def change_step(page, direction: str = "Next:") -> dict | None:
    """Time a click on Next (or Back) until that step is drawn; None where there is none."""
    button = page.locator("[data-testid='stMain'] button", has_text=direction)
    if button.count() == 0:
        return None
    page.evaluate("window.__benchArm()")
    button.first.click()
    return finish(page)


def step_row(
    page, lesson: str, step: int, size: str, trivial_pick: float, trivial_slide: float, opened: float | None
) -> tuple[str, int]:
    """One row: the step's query pick, each of its own controls, the Next click that opened it (ms, None for the
    first step), its element and chart counts, and the verdict on all three budgets; and its chart count."""
    picks = [query_token(page) for _ in range(STEP_REPEATS)]
    pick = median_ms(picks)
    limit = 2 if size == "default preset" else 3
    verdicts = [pick / trivial_pick <= limit]
    cells = []
    for kind, label in step_controls(page)[:3]:
        box = widget(page, kind, label)
        if box is None:
            continue
        moves = [move_control(page, kind, box, i) for i in range(STEP_REPEATS)]
        control = median_ms(moves)
        ratio = control / (trivial_slide if kind == "slider" else trivial_pick)
        verdicts.append(ratio <= limit)
        cells.append(f"{label[:28]} {control:.0f} ms ({ratio:.1f})")
    opened_cell = "-"
    if opened is not None:
        verdicts.append(opened / trivial_pick <= 3)  # changing the step: at most 3x the trivial pick, both sizes
        opened_cell = f"{opened:.0f} ms ({opened / trivial_pick:.1f})"
    elements, charts = page.evaluate(ELEMENTS_JS), page.evaluate(CHARTS_JS)
    row = (
        f"| {lesson} | {step} | {size} | {pick:.0f} ms | {pick / trivial_pick:.1f} | {'; '.join(cells) or '-'} "
        f"| {opened_cell} | {elements} | {charts} | {'yes' if all(verdicts) else 'no'} |"
    )
    return row, charts


def click_to_redrawn_by_step(
    browser, base: str, trivial_url: str, floor_url: str | None = None, pages: tuple[str, ...] = ()
) -> list[str]:
    """Every step of every stepped lesson, and every stop of the path, x (default preset, 32 tokens): query pick,
    the step's own controls, and the time to change the step, against the trivial page measured in the same run;
    with floor_url (a server of FLOOR_PAGE), first the floor of a step change (``step_change_floor``). pages: only
    these lessons (names; the path is "path"), else every one."""
    from tests.pages.test_steps import STEPPED

    trivial_pick, trivial_slide, _ = trivial_figures(browser, trivial_url)
    floor, floors = step_change_floor(browser, floor_url, trivial_pick) if floor_url else ([], {})
    lines = [
        "| lesson | step | size | query token | ratio | the step's controls (ratio) | opened by Next (ratio) "
        "| elements | charts | within budget |",
        "|---|---:|---|---:|---:|---|---:|---:|---:|---|",
        f"| trivial page | | | {trivial_pick:.0f} ms | 1.0 | slider {trivial_slide:.0f} ms (1.0) | | 3 | 0 | |",
    ]
    changes: list[float] = []
    by_charts: dict[tuple[str, bool], list[float]] = {}  # (size, two charts or more): the Next clicks onto them
    only = pages or tuple(filter(None, os.environ.get("BENCH_STEP_LESSONS", "").split(",")))  # a part of the run
    for lesson in [lesson for lesson in STEPPED if not only or lesson.name in only]:
        for size, query in SIZES.items():
            url = f"{base}/{lesson.name}?step=1" + (f"&{query}" if query else "")
            try:
                page = open_page(browser, url)
                step, opened = 1, None
                while True:
                    row, charts = step_row(page, lesson.name, step, size, trivial_pick, trivial_slide, opened)
                    lines.append(row)
                    print(row, file=sys.stderr, flush=True)  # progress: the table prints when complete
                    if opened is not None:
                        by_charts.setdefault((size, charts >= 2), []).append(opened)
                    moved = change_step(page)
                    if moved is None:
                        break
                    changes.append(moved["ms"])
                    step, opened = step + 1, moved["ms"]
                page.context.close()
            except Exception as error:  # one broken step must not hide the others' figures
                lines.append(f"| {lesson.name} | | {size} | error: {str(error).splitlines()[0][:120]} | | | | | | |")
                print(lines[-1], file=sys.stderr, flush=True)
    if changes:
        worst = max(changes)
        lines.append(
            f"\nChanging the step (Next): median {statistics.median(changes):.0f} ms, slowest {worst:.0f} ms over "
            f"{len(changes)} changes = {worst / trivial_pick:.1f}x the trivial page's query pick (budget 3x: "
            f"{'yes' if worst <= 3 * trivial_pick else 'no'})."
        )
        for (size, several), opened_list in sorted(by_charts.items()):
            within = sum(ms <= 3 * trivial_pick for ms in opened_list)
            lines.append(
                f"- onto a step with {'two charts or more' if several else 'one chart or none'} ({size}): "
                f"{within} of {len(opened_list)} within 3x, median {statistics.median(opened_list):.0f} ms"
            )
    lines.append(
        f"Median of {STEP_REPEATS} per cell. Budget (issue 24): query pick and every control of the step at most 2x "
        "the trivial page at the default preset and 3x at 32 tokens (a slider against the trivial slider, anything "
        "else against its selectbox); the Next click that opened the step at most 3x the trivial page's pick (one "
        "click each). Elements: element containers and blocks in the main area; charts: its Vega-Lite and Graphviz "
        "charts."
    )
    if not only or PATH in only:
        lines += ["", "#### The 15-minute path, stop by stop (same run)", ""]
        lines += path_table(browser, base, trivial_pick, trivial_slide, floors)
    if floor:
        lines += ["", "#### The floor of a step change (same run)", "", *floor]
    return lines


# --- the 15-minute path (issue 36, item 9) --------------------------------------------------------------------

PATH = "path"
MODEL_STOPS = (11, 12)  # the trained model's and SmolLM2's stops: their first visit in a server loads the model
PATH_FLOOR_LIMIT = 1.3  # a stop change at most 1.3x the floor of a Next that shows the same heatmaps


def size_tokens(size: str) -> int:
    """How many tokens the input of SIZES[size] has."""
    import attention_core as ac

    return len(ac.DEFAULT_PRESET.tokens) if size == "default preset" else len(LONG.split("+"))


def reveal_times(page) -> list[dict]:
    """ "Show me the answer" on the stop, STEP_REPEATS times where another query token asks the question anew (the
    pick between two reveals is not timed); fewer where the question does not depend on the query, none where the
    stop asks nothing. The stop is left answered."""
    kind, label = PAGE_CONTROLS[PATH]
    times = []
    for i in range(STEP_REPEATS):
        box = widget(page, kind, label)
        if box is None:
            break
        times.append(move_control(page, kind, box, i))
        if i < STEP_REPEATS - 1:
            query_token(page)
    if times and widget(page, kind, label) is not None:  # the last pick asked a new question: answer it too
        move_control(page, kind, widget(page, kind, label), 0)
    return times


def model_first_visits(browser, base: str) -> list[str]:
    """Next onto stops 11 and 12 in a fresh session on a server that has not run their models: the model loads
    (excluded from the budget, printed apart). After this the models are loaded for the walks."""
    page = open_page(browser, f"{base}/{PATH}?step={MODEL_STOPS[0] - 1}")
    cells = []
    for number in MODEL_STOPS:
        moved = change_step(page)
        cells.append(f"stop {number} {moved['ms'] / 1000:.2f} s")
    page.context.close()
    return cells


def path_walk(browser, base: str, size: str, query: str, trivial_pick: float) -> list[dict]:
    """One walk of the path by Next: at each stop the query picks (unanswered), the stop's own controls, "Show me
    the answer", then Next onto the next stop (timed), Back onto this one, answered (timed), and Next again (timed;
    the stop change is the median of the two Nexts). Each stop's figures as a dict."""
    page = open_page(browser, f"{base}/{PATH}?step=1" + (f"&{query}" if query else ""))
    stops: list[dict] = []
    opened: list[float] = []
    charts_opened = page.evaluate(CHARTS_JS)
    while True:
        fig = {"stop": len(stops) + 1, "size": size, "opened": opened, "charts_opened": charts_opened}
        fig["pick"] = median_ms([query_token(page) for _ in range(STEP_REPEATS)])
        fig["controls"] = []
        for kind, label in step_controls(page)[:3]:
            box = widget(page, kind, label)
            if box is not None:
                moves = [move_control(page, kind, box, i) for i in range(STEP_REPEATS)]
                fig["controls"].append((kind, label, median_ms(moves)))
        reveals = reveal_times(page)
        fig["reveal"] = median_ms(reveals) if reveals else None
        fig["reveals"] = len(reveals)
        fig["elements"], fig["charts"] = page.evaluate(ELEMENTS_JS), page.evaluate(CHARTS_JS)
        stops.append(fig)
        print(f"path {size} fig {fig['stop']}: {fig}", file=sys.stderr, flush=True)  # progress
        moved = change_step(page)
        if moved is None:
            break
        charts_opened = page.evaluate(CHARTS_JS)
        fig["back"] = change_step(page, "Back:")["ms"]
        fig["charts_back"] = page.evaluate(CHARTS_JS)
        opened = [moved["ms"], change_step(page)["ms"]]
    page.context.close()
    return stops


def change_cell(ms: float | None, charts: int, tokens: int, trivial_pick: float, floors: Floors) -> tuple[str, float]:
    """A cell "ms (x trivial, x floor)" of a click that shows ``charts`` heatmaps, and its ratio to that floor (NaN
    without one)."""
    if ms is None:
        return "-", float("nan")
    floor = floor_of(floors, tokens, charts)
    to_floor = ms / floor if floor else float("nan")
    return f"{ms:.0f} ms ({ms / trivial_pick:.1f}x" + (f", {to_floor:.1f}x floor)" if floor else ")"), to_floor


def path_table(browser, base: str, trivial_pick: float, trivial_slide: float, floors: Floors) -> list[str]:
    """The path's stops at both sizes against the trivial page and the floor of a step change, one row per stop, and
    how many meet each budget of issue 36, item 9."""
    try:
        first = model_first_visits(browser, base)
    except Exception as error:
        first = [f"error: {str(error).splitlines()[0][:120]}"]
    rows = [
        "| stop | size | query token (x trivial) | Show me the answer (x trivial, x floor) | opened by Next "
        "(x trivial, x floor) | Back onto it, answered (x trivial, x floor) | elements | charts (opened / answered) "
        "| met |",
        "|---:|---|---:|---:|---:|---:|---:|---|---|",
    ]
    budgets: dict[str, list[bool]] = {}  # each budget: one verdict per click measured against it

    def judge(budget: str, met: bool) -> bool:
        budgets.setdefault(budget, []).append(met)
        return met

    for size, query in SIZES.items():
        tokens = size_tokens(size)
        limit = 2 if size == "default preset" else 3
        try:
            stops = path_walk(browser, base, size, query, trivial_pick)
        except Exception as error:  # one broken walk must not hide the other's figures
            rows.append(f"| | {size} | error: {str(error).splitlines()[0][:120]} | | | | | | |")
            continue
        for fig in stops:
            verdicts = [judge(f"query pick ≤ {limit}x the trivial pick ({size})", fig["pick"] <= limit * trivial_pick)]
            reveal = "-"
            if fig["reveal"] is not None:
                reveal, _ = change_cell(fig["reveal"], fig["charts"], tokens, trivial_pick, floors)
                reveal += f", {fig['reveals']} made"
                within = fig["reveal"] <= limit * trivial_pick
                verdicts.append(judge(f"Show me the answer ≤ {limit}x the trivial pick ({size})", within))
            for kind, label, ms in fig["controls"]:
                ratio = ms / (trivial_slide if kind == "slider" else trivial_pick)
                verdicts.append(judge(f"another control ≤ {limit}x ({size})", ratio <= limit))
                reveal += f"; {label[:24]} {ms:.0f} ms ({ratio:.1f}x)"
            cells = []
            opened = statistics.median(fig["opened"]) if fig["opened"] else None
            for ms, charts in ((opened, fig["charts_opened"]), (fig.get("back"), fig.get("charts_back", 0))):
                cell, to_floor = change_cell(ms, charts, tokens, trivial_pick, floors)
                cells.append(cell)
                if ms is None:
                    continue
                if to_floor == to_floor:  # a floor was measured
                    verdicts.append(
                        judge(f"stop change ≤ {PATH_FLOOR_LIMIT}x its floor ({size})", to_floor <= PATH_FLOOR_LIMIT)
                    )
                if size == "default preset" and charts <= 1:
                    verdicts.append(
                        judge(f"stop change with ≤ 1 chart ≤ 3x the trivial pick ({size})", ms <= 3 * trivial_pick)
                    )
            if fig["stop"] in MODEL_STOPS and fig["opened"]:
                cells[0] += " warm"
            rows.append(
                f"| {fig['stop']} | {size} | {fig['pick']:.0f} ms ({fig['pick'] / trivial_pick:.1f}x) | {reveal} "
                f"| {cells[0]} | {cells[1]} | {fig['elements']} | {fig['charts_opened']} / {fig['charts']} "
                f"| {'yes' if all(verdicts) else 'no'} |"
            )
    lines = [*rows, ""]
    lines += [f"- {budget}: {sum(verdicts)} of {len(verdicts)}" for budget, verdicts in budgets.items()]
    lines.append(
        f"\nFirst visit of the model stops in this server (Next onto them while the model loads; not in the budget): "
        f"{', '.join(first)}; the walks' visits are warm. Trivial pick {trivial_pick:.0f} ms. Budgets (issue 36, "
        'item 9): a query pick and "Show me the answer" at most 2x the trivial pick (3x at 32 tokens); a stop change '
        f"(Next onto the stop, unanswered; Back onto it, answered) at most {PATH_FLOOR_LIMIT}x the floor of a Next "
        "that shows the same heatmaps (below; none: the Next alone), and at the default preset with one heatmap or "
        f"none at most 3x the trivial pick. Median of {STEP_REPEATS} picks; of the reveals made (a question that does "
        "not depend on the query token is revealed once); of two Nexts; one Back. Charts: after the Next / answered."
    )
    return lines


# --- the floor of a step change ------------------------------------------------------------------------

# A bare page whose Next shows or hides only the lab's heatmaps (ui.drawing.heatmap, the spec a lesson sends):
# no step bar, URL, sidebar or text around them. Whatever a Next onto it costs, a step showing those charts costs
# at least that much in the app. ?n= tokens, ?charts= how many heatmaps. The garbage-collector freeze is the app's.
FLOOR_PAGE = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
import streamlit as st
import torch
from runtime import collector
from ui import drawing

n, charts = int(st.query_params.get("n", "6")), int(st.query_params.get("charts", "1"))
ask = st.query_params.get("ask") == "1"
st.sidebar.selectbox("Query token", ["the", "cat", "sat", "on", "mat"])
st.title("A step's floor")
if st.button("Next: show or hide the heatmaps"):
    st.session_state.shown = not st.session_state.get("shown", False)
if ask and st.session_state.get("shown", False):  # the least a stop of the path shows (issue 36: it asks first)
    st.segmented_control("Step", [str(stop) for stop in range(1, 14)], default="3", key="bar")
    st.markdown("Which token gets the most weight? Work it out from the numbers above, then check.")
    with st.form("question"):
        st.number_input("Your answer", value=None, format="%.4f")
        st.form_submit_button("Check")
    st.button("Show me the answer")
if st.session_state.get("shown", False):
    labels = [f"w{{i}}" for i in range(n)]
    for chart in range(charts):
        scores = torch.randn(n, n, generator=torch.Generator().manual_seed(chart), dtype=torch.float64)  # (n, n)
        weights = torch.softmax(scores, dim=-1)  # (n, n)
        drawing.heatmap(weights, labels, labels, title=f"Attention weights {{chart + 1}}", highlight_row=labels[0])
if not charts and not ask:  # no heatmap: the Next changes one word (a run that changes nothing draws nothing)
    st.write("Shown." if st.session_state.get("shown", False) else "Hidden.")
collector.freeze_after_imports()
"""
# (tokens, heatmaps): the default preset's size, and 32 tokens; none (the Next alone) and two at 6 tokens for the path,
# whose stops show their heatmaps only once answered
FLOOR_CASES = ((6, 0), (6, 1), (6, 2), (32, 1), (32, 2))
FLOOR_REPEATS = 7
Floors = dict[tuple[int, int], float]  # (tokens, heatmaps) -> the median ms of a Next that shows them


def floor_of(floors: Floors, tokens: int, charts: int) -> float | None:
    """The floor of a step change that shows ``charts`` heatmaps of ``tokens`` tokens (no heatmap: any size)."""
    if charts == 0:
        return next((ms for (_, shown), ms in floors.items() if shown == 0), None)
    return floors.get((tokens, charts))


def step_change_floor(browser, url: str, trivial_pick: float) -> tuple[list[str], Floors]:
    """Next onto a step that holds nothing but FLOOR_CASES' heatmaps, and back off it, against the trivial pick;
    the table and each case's median."""
    floors: Floors = {}
    lines = [
        "| a Next that shows | first time (Vega loads) | then (median) | ratio | the Next that hides them (median) |",
        "|---|---:|---:|---:|---:|",
    ]
    for tokens, charts, ask in [(*case, False) for case in FLOOR_CASES] + [(6, 0, True)]:
        page = open_page(browser, f"{url}/?n={tokens}&charts={charts}" + ("&ask=1" if ask else ""))
        first = change_step(page)["ms"]
        hides, shows = [change_step(page)["ms"]], []
        for _ in range(FLOOR_REPEATS):
            shows.append(change_step(page)["ms"])
            hides.append(change_step(page)["ms"])
        page.context.close()
        shown = statistics.median(shows)
        if ask:  # not a floor: what the least question costs above the floor of no heatmap
            bare = floors[(6, 0)]
            what = f"no heatmap: a step bar, a sentence, a question form ({shown / bare:.1f}x the Next alone)"
        else:
            floors[(tokens, charts)] = shown
            what = f"{plural(charts, 'heatmap')} of {tokens} tokens" if charts else "no heatmap (the Next alone)"
        lines.append(
            f"| {what} | {first:.0f} ms | {shown:.0f} ms "
            f"| {shown / trivial_pick:.1f} | {statistics.median(hides):.0f} ms |"
        )
    lines.append(
        f"\nTrivial page's query pick: {trivial_pick:.0f} ms (a step change's budget, 3x: {3 * trivial_pick:.0f} ms). "
        "A bare page whose Next only draws the lab's heatmaps (ui.drawing.heatmap), warm after the first time: in "
        "the app, a step that shows them also changes its step bar, URL, buttons and text."
    )
    return lines, floors


# --- first page ------------------------------------------------------------------------------------

FIRST_PAGE_JS = """() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const b = window.__bench;
  const running = b.states.find((s) => s[0] === 'running');
  const done = b.states.filter((s) => s[0] === 'notRunning' && running && s[1] > running[1]).pop();
  const firstDone = b.states.find((s) => s[0] === 'notRunning' && running && s[1] > running[1]);
  const runs = b.states.filter((s) => s[0] === 'running').length;
  const start = running ? running[1] : Infinity;
  const files = performance.getEntriesByType('resource').filter((r) => /\\.(js|css|woff2?)(\\?|$)/.test(r.name));
  const early = files.filter((r) => r.startTime < start);
  const late = files.filter((r) => r.startTime >= start);
  const sum = (list) => list.reduce((total, r) => total + (r.encodedBodySize || 0), 0);
  const end = (list) => list.reduce((most, r) => Math.max(most, r.responseEnd), 0);
  return { origin: performance.timeOrigin, loaded: nav.loadEventEnd, running: running ? running[1] : null,
           done: done ? done[1] : null, drawn: Math.max(b.last, b.paint), runs,
           firstDone: firstDone ? firstDone[1] : null,
           // the first page as drawn by its first run: the last frame before a second run began, or the main area's
           // last change if later (a second run that starts before the page is drawn does not end it early)
           firstDrawn: runs > 1 ? Math.max(b.drawnAtRun[1], b.lastMain) : Math.max(b.last, b.paint),
           bundleEnd: end(early), bundleBytes: sum(early), bundleFiles: early.length,
           lateEnd: end(late), lateBytes: sum(late), lateFiles: late.length };
}"""


FIRST_PAGE_RUNS = 5  # fresh servers, one after the other: the median is the figure
# The floor of the first page: bare apps served the same way, each a part of what the lab's first page needs (a
# Streamlit page, PyTorch's import, one of the lab's heatmaps drawn by ui.drawing). No page that shows a heatmap
# computed with torch can be drawn sooner than the last of them.
FIRST_PAGE_FLOORS = {
    "a bare page (a title and a line)": "import streamlit as st\nst.title('Floor')\nst.write('A line.')\n",
    "the same, importing torch": (
        "import streamlit as st\nimport torch\nst.title('Floor')\nst.write(float(torch.ones(3).sum()))\n"
    ),
    "the same, with one of the lab's heatmaps (6 x 6, ui.drawing.heatmap)": (
        f"import sys\nsys.path.insert(0, {str(ROOT)!r})\nimport streamlit as st\nimport torch\n"
        "from ui import drawing\nst.title('Floor')\nlabels = [f'w{i}' for i in range(6)]\n"
        "scores = torch.randn(6, 6, generator=torch.Generator().manual_seed(0), dtype=torch.float64)  # (6, 6)\n"
        "drawing.heatmap(torch.softmax(scores, dim=-1), labels, labels, title='Attention weights')\n"
    ),
}


def first_pages(browser, runs: int = FIRST_PAGE_RUNS) -> list[str]:
    """``first_page`` on ``runs`` fresh servers: the first run's table, then every run's total and their median;
    then the floors (FIRST_PAGE_FLOORS), measured the same way in the same run."""
    totals, table = [], []
    for _ in range(runs):
        lines, total = first_page(browser)
        table = table or lines
        totals.append(total)
    listed = ", ".join(f"{total:.2f}" for total in totals)
    median = statistics.median(totals)
    floors = ["", f"The floor of the first page, {runs} fresh servers each (same run):", "",
              "| bare app | runs (s) | median |", "|---|---|---:|"]  # fmt: skip
    for name, code in FIRST_PAGE_FLOORS.items():
        bare = []
        for _ in range(runs):
            with tempfile.TemporaryDirectory() as scratch:
                (Path(scratch) / "streamlit_app.py").write_text(code)
                bare.append(first_page(browser, "", Path(scratch))[1])
        floors.append(f"| {name} | {', '.join(f'{t:.2f}' for t in bare)} | {statistics.median(bare):.2f} s |")
    return [
        *table,
        f"\nThe first page in {runs} runs: {listed} s; median {median:.2f} s (budget 4 s, issue 37).",
        *floors,
    ]


def first_page(browser, page_name: str = "scores", root: Path = ROOT) -> tuple[list[str], float]:
    """`streamlit run` to the first fully drawn page, with where the time goes (root: the checkout served), and that
    total in seconds."""
    port = free_port()
    started = time.time()
    server = serve(root / "streamlit_app.py", port, cwd=root)
    try:
        healthy = wait_healthy(server, port)
        page = new_page(browser)
        navigated = time.time()
        page.goto(f"http://127.0.0.1:{port}/{page_name}", timeout=TIMEOUT_MS)
        page.wait_for_selector("[data-testid='stMain'] h1", timeout=TIMEOUT_MS)
        page.evaluate("() => { window.__bench.t0 = 0; }")
        page.wait_for_function(DONE_JS, arg=QUIET_MS, timeout=TIMEOUT_MS, polling=50)
        t = page.evaluate(FIRST_PAGE_JS)
        memory = rss_mb(server.pid)
        page.context.close()
    finally:
        stop(server)
    origin = t["origin"] / 1000  # epoch seconds of the page's time zero
    bundle = origin + t["bundleEnd"] / 1000
    running = origin + t["running"] / 1000
    done = origin + t["done"] / 1000
    first_done = origin + t["firstDone"] / 1000
    first_drawn = origin + t["firstDrawn"] / 1000
    drawn = origin + t["drawn"] / 1000
    rows = [
        ("server start (`streamlit run` until /_stcore/health answers)", healthy - started),
        ("browser asks for the page (Playwright)", origin - healthy),
        (
            f"browser bundle: HTML and the {t['bundleFiles']} JS/CSS/font files fetched before the script starts "
            f"({t['bundleBytes'] / 1e6:.1f} MB compressed)",
            bundle - origin,
        ),
        ("bundle parsed, websocket open, session until the script starts", running - bundle),
        (
            "first script run (waits for the rest of the warm-up imports of torch, pandas, Altair and the lab, "
            "begun at server start; computes; sends)",
            first_done - running,
        ),
        (
            f"drawing after the script finished ({t['lateFiles']} lazy JS/CSS/font files for charts, tables "
            f"and formulas, {t['lateBytes'] / 1e6:.1f} MB, fetched after the script started)",
            max(0.0, first_drawn - first_done),
        ),
    ]
    lines = ["| step | seconds |", "|---|---:|"]
    lines += [f"| {name} | {seconds:.2f} |" for name, seconds in rows]
    total = first_drawn - started
    lines.append(f"| **total: `streamlit run` to the first drawn page ({page_name})** | **{total:.2f}** |")
    if t["runs"] > 1:  # the browser's first answer (its stored progress) starts a run that draws the warm-up
        lines.append(
            f"| then {t['runs'] - 1} more run(s): the browser's first answer (the learner's stored progress) and "
            f"the warm-up it draws out of sight (runtime.preload), until still | {max(drawn, done) - first_drawn:.2f} |"
        )
    lines.append(
        f"\nServer memory after this first page: {memory:.0f} MB. "
        f"Navigation started {navigated - started:.2f} s after `streamlit run`."
    )
    return lines, total


IMPORTS = [
    "streamlit",
    "torch",
    "numpy",
    "pandas",
    "altair",
    "attention_core",
    "ui.widgets.inputs",
    "ui.drawing",
    "ui.charts",
]


def import_times() -> list[str]:
    """`python -X importtime`: each import alone in a fresh interpreter, and in the order the app does them."""

    def cumulative(code: str, names: list[str]) -> dict[str, float]:
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
        )
        found = {}
        for line in done.stderr.splitlines():
            match = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\S.*)$", line)  # top level only: no indent
            if match and match.group(2).strip() in names:
                found[match.group(2).strip()] = int(match.group(1)) / 1e6
        return found

    alone = {name: cumulative(f"import {name}", [name]).get(name, float("nan")) for name in IMPORTS}
    order = ["streamlit", "torch", "attention_core", "ui.widgets.inputs", "ui.drawing"]
    app_order = cumulative("; ".join(f"import {name}" for name in order), order)
    lines = ["| module | alone (fresh interpreter) | after the ones above, in the app's order |", "|---|---:|---:|"]
    for name in IMPORTS:
        after = f"{app_order[name]:.2f} s" if name in app_order else ""
        lines.append(f"| {name} | {alone[name]:.2f} s | {after} |")
    return lines


# --- memory: 10 sessions that opened every page ---------------------------------------------------


def memory_after_sessions(browser, base: str, process: subprocess.Popen, sessions: int = 10) -> list[str]:
    """Server RSS after 1 and after `sessions` sessions that each clicked through every page of the sidebar."""
    pages = []
    rows = []
    for i in range(sessions):
        tokens = "+".join(f"m{i}w{j}" for j in range(5 + i))
        query = f"example=Your+own+sentence&sentence={tokens}&embedding=Random+%28seeded%29&seed={i}"
        pages.append(open_page(browser, f"{base}/scores?{query}&view=all"))  # whole lessons from here on
        if i == 0:
            rss, parts = rss_mb(process.pid), rss_parts(process.pid)
            rows.append(f"| server memory after 1 session (lesson 1, whole) | {rss:.0f} MB ({parts}) |")
    walk = []  # (lesson, RSS once every session has drawn it, peak so far)
    for lesson in LESSONS[2:]:  # every session walks the navigation: same session, every page, each whole
        for page in pages:
            page.locator("[data-testid='stSidebarNav'] a").filter(has_text=lesson.label).first.click()
        for page in pages:
            page.wait_for_url(re.compile(f"/{lesson.name}"), timeout=TIMEOUT_MS)
            page.evaluate("() => { window.__bench.t0 = 0; }")
            page.wait_for_function(DONE_JS, arg=QUIET_MS, timeout=120_000, polling=100)
        walk.append(f"{lesson.number or lesson.name} {rss_mb(process.pid):.0f} ({status_mb(process.pid, 'VmHWM'):.0f})")
    rows.append(f"| RSS (peak) once all {sessions} sessions drew each page, MB | {'; '.join(walk)} |")
    rss, parts = rss_mb(process.pid), rss_parts(process.pid)
    rows.append(f"| server memory after {sessions} sessions that opened every page | {rss:.0f} MB ({parts}) |")
    rows.append(f"| peak server memory (VmHWM) | {status_mb(process.pid, 'VmHWM'):.0f} MB |")
    for page in pages:
        page.context.close()
    return rows


# --- load: 30 sessions at once ---------------------------------------------------------------------


TRAINING_STEPS = 150  # lesson 11's run in the load test: a few seconds of training on one of the 2 cores


def start_training(browser, base: str):
    """A session on lesson 11 with a seed no other run used (so the server really trains), Train pressed."""
    page = ready_to_train(browser, base, int(time.time()) % 9_000 + 500)
    press_train(page)
    return page


def ready_to_train(browser, base: str, seed: int):
    """A session on lesson 11 with this seed and TRAINING_STEPS steps set, Train not pressed yet. A seed no
    other run of the server used makes it really train (runs are cached by their settings)."""
    page = open_page(browser, f"{base}/training?step=2")  # the task step: the training settings
    for label, value in (("Seed", str(seed)), ("Steps", str(TRAINING_STEPS))):
        box = page.locator("[data-testid='stMain']").get_by_role("spinbutton", name=label)
        page.evaluate("window.__benchArm()")
        box.fill(value)
        box.press("Enter")
        finish(page)
    for step in ("Next: The right pattern", "Next: Train it"):  # on to the step with Train (the settings follow)
        page.evaluate("window.__benchArm()")
        page.get_by_role("button", name=step).click()
        finish(page)
    return page


def press_train(page) -> None:
    page.get_by_role("button", name="Train", exact=True).click()


def finish_training(page, errors: list[str], min_accuracy: float = 0.0) -> float:
    """Wait for lesson 11's run to finish; the seconds its status reports ("Trained 150 steps in 1.2 s",
    timed by the server around the loop), NaN on an error. A held-out accuracy below min_accuracy (%) is
    an error too."""
    try:
        status = page.get_by_text(re.compile(rf"Trained {TRAINING_STEPS} steps in [\d.]+ s"))
        status.first.wait_for(timeout=180_000)
        metric = page.locator("[data-testid='stMetric']").filter(has_text="Held-out accuracy")
        metric.wait_for()
        accuracy = float(metric.locator("[data-testid='stMetricValue']").inner_text().strip().rstrip("%"))
        if accuracy < min_accuracy:
            errors.append(f"session training: held-out accuracy {accuracy:.1f} % < {min_accuracy:.0f} %")
        if page.locator("[data-testid='stException']").count():
            errors.append("session training: exception on the page")
        return float(re.search(r"in ([\d.]+) s", status.first.inner_text()).group(1))
    except Exception as error:
        errors.append(f"session training: {str(error).splitlines()[0][:160]}")
        return float("nan")
    finally:
        page.context.close()


def concurrent_sessions(browser, base: str, sessions: int = SESSIONS) -> tuple[list[str], float]:
    """`sessions` contexts at once on mixed pages, own sentence and seed each; each checks its own score cell.

    One of them is lesson 11 training a model: it presses Train just before the others pick a query token.
    """
    names = [lesson.name for lesson in LESSONS if lesson.number is not None]
    pages, errors, times = [], [], []
    trainer = start_training(browser, base)
    for i in range(sessions - 1):  # the trainer is the last session
        tokens = [f"u{i}w{j}" for j in range(4 + i % 7)]
        d_model = 2 + i % 7
        name = "scores" if i % 3 == 0 else names[i % len(names)]  # a third on the page whose cell is checked
        query = (
            f"example=Your+own+sentence&sentence={'+'.join(tokens)}&embedding=Random+%28seeded%29"
            f"&seed={i}&d_model={d_model}"
        )
        page = new_page(browser)
        page.goto(f"{base}/{name}?{query}&view=all", wait_until="commit", timeout=TIMEOUT_MS)
        pages.append((i, name, tokens, d_model, page))
    for i, name, tokens, d_model, page in pages:  # all load at once; each checks its own numbers
        try:
            page.wait_for_selector("[data-testid='stMain'] h1", timeout=120_000)
            page.evaluate("() => { window.__bench.t0 = 0; }")
            page.wait_for_function(DONE_JS, arg=QUIET_MS, timeout=120_000, polling=100)
            check_session(page, i, name, tokens, d_model, errors)
        except Exception as error:
            errors.append(f"session {i} ({name}) loading: {str(error).splitlines()[0][:160]}")
    picked = {}
    for i, name, _tokens, _d_model, page in pages:  # then all pick another query token at once
        try:
            picked[i] = start_pick(page, query_combobox(page))
        except Exception as error:
            errors.append(f"session {i} ({name}) picking: {str(error).splitlines()[0][:160]}")
    for i, name, tokens, d_model, page in pages:
        if i not in picked:
            continue
        try:
            times.append(finish(page)["ms"])
            check_session(page, i, name, tokens, d_model, errors)
            shown = query_combobox(page).input_value()
            if picked[i] not in shown:
                errors.append(f"session {i} ({name}): shows query {shown!r}, picked {picked[i]!r}")
        except Exception as error:
            errors.append(f"session {i} ({name}) after the pick: {str(error).splitlines()[0][:160]}")
    training_s = finish_training(trainer, errors)
    for *_, page in pages:
        page.context.close()
    times.sort()
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))] if times else float("nan")
    lines = [
        f"| concurrent sessions (mixed pages, own sentence and seed) | {sessions} |",
        f"| sessions with an error or a wrong number | {len({e.split(' ')[1] for e in errors})} |",
        f"| click to redrawn (query token), median | {statistics.median(times) if times else float('nan'):.0f} ms |",
        f"| click to redrawn (query token), p95 | {p95:.0f} ms |",
        f"| lesson 11 training among them ({TRAINING_STEPS} steps, timed by the server) | {training_s:.1f} s |",
    ]
    lines += [f"| error | {error} |" for error in errors[:10]]
    return lines, len(errors)


# --- the runner's entry point ----------------------------------------------------------------------


def first_page_run(emit=print) -> None:
    """Only `streamlit run` to the first drawn page (benchmarks.run --first-page-only)."""
    from playwright.sync_api import sync_playwright

    emit(f"Load average (1, 5, 15 min) at start: {load_average()}\n")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            emit("\n".join(["### First page after `streamlit run` (headless Chromium)", "", *first_pages(browser)]))
        finally:
            browser.close()


def run(
    emit=print,
    clicks_only: bool = False,
    steps_only: bool = False,
    memory_only: bool = False,
    pages: tuple[str, ...] = (),
) -> list[str]:
    """Every browser figure as markdown lines, each section passed to emit as soon as it is measured.

    pages: only these lessons' steps (names, "path" for the path). clicks_only: only click to redrawn. In the full
    run it follows the ten memory sessions, whose load (the browsers closing, the server collecting) can still be on
    the machine when it starts.
    """
    from playwright.sync_api import sync_playwright

    out: list[str] = []

    def section(lines: list[str]) -> None:
        out.extend(lines)
        emit("\n".join(lines))
        sys.stdout.flush()

    section([f"Load average (1, 5, 15 min) at start: {load_average()}", ""])
    if not (clicks_only or steps_only or memory_only):
        section(["### Imports (`python -X importtime`, cumulative)", "", *import_times()])
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            if not (clicks_only or steps_only or memory_only):
                section(["", "### First page after `streamlit run` (headless Chromium)", "", *first_pages(browser)])
                section([f"Load average: {load_average()}"])
            with tempfile.TemporaryDirectory() as scratch:
                trivial, frozen = Path(scratch) / "trivial_page.py", Path(scratch) / "trivial_frozen_page.py"
                floor_page = Path(scratch) / "step_floor_page.py"
                trivial.write_text(TRIVIAL_PAGE)
                frozen.write_text(TRIVIAL_FROZEN_PAGE)
                floor_page.write_text(FLOOR_PAGE)
                app_port, trivial_port, frozen_port, floor_port = free_port(), free_port(), free_port(), free_port()
                app, small = serve(ROOT / "streamlit_app.py", app_port), serve(trivial, trivial_port)
                small_frozen = serve(frozen, frozen_port)
                floor = serve(floor_page, floor_port) if steps_only else None
                try:
                    wait_healthy(app, app_port)
                    wait_healthy(small, trivial_port)
                    wait_healthy(small_frozen, frozen_port)
                    if floor:
                        wait_healthy(floor, floor_port)
                    open_page(browser, f"http://127.0.0.1:{app_port}").context.close()  # its warm-up follows a page
                    warm_up = wait_quiet(app)  # the reference pages are measured on a machine the app leaves alone
                    section([f"The app server's warm-up ended {warm_up:.0f} s after its first page."])
                    base = f"http://127.0.0.1:{app_port}"
                    if memory_only:
                        table = ["| figure | measured |", "|---|---:|", *memory_after_sessions(browser, base, app)]
                        section(["", "### Memory (fresh server)", "", *table, f"\nLoad average: {load_average()}"])
                        return out
                    floor_url = f"http://127.0.0.1:{floor_port}" if floor else None
                    trivial_url = f"http://127.0.0.1:{trivial_port}"
                    lines = click_to_redrawn_by_step(browser, base, trivial_url, floor_url, pages)
                    section(["", "### Click to redrawn, step by step (headless Chromium)", "", *lines])
                    section([f"Load average: {load_average()}"])
                    if steps_only:
                        return out
                    if not clicks_only:
                        table = ["| figure | measured |", "|---|---:|", *memory_after_sessions(browser, base, app)]
                        section(["", "### Memory (fresh server)", "", *table, f"\nLoad average: {load_average()}"])
                    lines = click_to_redrawn(
                        browser, base, f"http://127.0.0.1:{trivial_port}", f"http://127.0.0.1:{frozen_port}"
                    )
                    section(["", "### Click to redrawn (headless Chromium)", "", *lines])
                    section([f"Load average: {load_average()}"])
                    if clicks_only:
                        return out
                    lines, _ = concurrent_sessions(browser, base)
                    lines.append(f"| server memory after them | {rss_mb(app.pid):.0f} MB |")
                    section(["", f"### {SESSIONS} sessions at once", "", "| figure | measured |", "|---|---:|", *lines])
                finally:
                    stop(app)
                    stop(small)
                    stop(small_frozen)
                    if floor:
                        stop(floor)
        finally:
            browser.close()
    section([f"\nLoad average (1, 5, 15 min) at end: {load_average()}"])
    return out


if __name__ == "__main__":
    run()
