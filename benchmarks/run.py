"""Speed and memory of Attention Lab, printed as markdown tables.

    .venv/bin/python -m benchmarks.run                  # everything (about 10 minutes on a busy machine)
    .venv/bin/python -m benchmarks.run --quick          # server reruns only, no browser
    .venv/bin/python -m benchmarks.run --browser-only   # browser figures only (benchmarks/browser.py)
    .venv/bin/python -m benchmarks.run --clicks-only    # click to redrawn only, nothing run before it

Measures:
- server time of a rerun of every page of the lesson registry (AppTest, median of 5, scripts
  compiled once as a server does) at the default preset, 32 and 128 tokens, beside a trivial
  one-widget page measured in the same run (the ratio is the figure that matters on a noisy machine);
- bytes sent for the largest chart at 128 tokens;
- full garbage collections (the GIL is held, every session waits) during reruns of every page,
  with and without runtime.collector's freeze of the objects alive after imports;
- in headless Chromium (benchmarks/browser.py): import times, `streamlit run` to the first drawn
  page with its breakdown, server memory after 1 and 10 sessions that opened every page, click
  to redrawn on every lesson page (query token and a page control) against a trivial page, and
  30 concurrent sessions checking their own numbers.
Targets (issue 13, 2-core machine): rerun at most 50 ms at the default preset; click to redrawn at
most 2x the trivial page (3x at 32 tokens); first page at most 4 s; memory at most 690 MB after 10
sessions.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.runtime.scriptrunner.script_cache import ScriptCache  # noqa: E402
from streamlit.testing.v1 import AppTest, app_test  # noqa: E402

from tests.apptest_helpers import APP, PAGES, sentence_params  # noqa: E402

TRIVIAL_PAGE = """
import streamlit as st
st.slider("x", 0, 10, 5)
"""
RUNS = 5
SIZES = {
    "default preset": {},
    "32 tokens": sentence_params(" ".join(f"w{i}" for i in range(32)), d_model=8),
    "128 tokens": sentence_params(" ".join(f"w{i}" for i in range(128)), d_model=16),
}


def compile_scripts_once() -> None:
    """Make AppTest keep compiled scripts as a server does. AppTest compiles lab.py and the page on every
    run (a new ScriptCache each time, 3-8 ms for a lesson page); a server compiles each script once
    and keeps its bytecode (the Runtime's ScriptCache) until the file changes."""
    shared = ScriptCache()
    app_test.ScriptCache = lambda: shared


def median_rerun(at: AppTest) -> float:
    """Median wall time of RUNS reruns of an AppTest already on its page, in seconds."""
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - start)
    assert not at.exception, [e.value for e in at.exception]
    return statistics.median(times)


def trivial_rerun() -> float:
    at = AppTest.from_string(TRIVIAL_PAGE, default_timeout=60)
    at.run()
    return median_rerun(at)


def page_rerun(page: str, params: dict[str, str]) -> tuple[float, int]:
    """(median rerun seconds, bytes of the largest chart) for one page and input."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({**params, "view": "all"})  # the whole lesson on one page (the steps are timed apart)
    at.run()
    if not page.endswith("overview.py"):
        at.switch_page(page).run()
    seconds = median_rerun(at)
    charts = list(at.get("vega_lite_chart"))
    largest = max((chart.proto.ByteSize() for chart in charts), default=0)
    return seconds, largest


def rerun_table() -> tuple[list[str], int, str]:
    trivial = trivial_rerun()
    lines = [
        "| page | default preset | ratio to trivial | 32 tokens | ratio | 128 tokens | ratio |",
        "|---|---:|---:|---:|---:|---:|---:|",
        f"| trivial one-widget page | {trivial * 1000:.1f} ms | 1.0 | | | | |",
    ]
    largest_bytes, largest_page = 0, ""
    for page in PAGES:
        cells = []
        for name, params in SIZES.items():
            seconds, chart_bytes = page_rerun(page, params)
            cells.append(seconds)
            if name == "128 tokens" and chart_bytes > largest_bytes:
                largest_bytes, largest_page = chart_bytes, page
        default, t32, t128 = cells
        lines.append(
            f"| {Path(page).stem} | {default * 1000:.1f} ms | {default / trivial:.1f} | "
            f"{t32 * 1000:.1f} ms | {t32 / trivial:.1f} | {t128 * 1000:.1f} ms | {t128 / trivial:.1f} |"
        )
    return lines, largest_bytes, largest_page


def step_rerun_table(trivial: float, lessons: tuple | None = None) -> list[str]:
    """Server rerun of every step of every stepped lesson and of every stop of the 15-minute path (or of ``lessons``)
    at the default preset (budget 50 ms), with its elements."""
    from tests.pages.test_steps import STEPPED, leaf_count
    from ui import registry

    lines = [
        "| lesson | step | rerun | ratio to trivial | elements | within 50 ms |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for lesson in [*STEPPED, registry.BY_NAME["path"]] if lessons is None else lessons:
        step, count = 1, None
        while count is None or step <= count:
            at = AppTest.from_file(APP, default_timeout=120)
            at.query_params.update({"step": str(step)})
            at.run()
            at.switch_page(lesson.path).run()
            count = len(at.segmented_control(key=f"stepbar:{lesson.name}").options)
            seconds = median_rerun(at)
            lines.append(
                f"| {lesson.name} | {step} | {seconds * 1000:.1f} ms | {seconds / trivial:.1f} | {leaf_count(at.main)} "
                f"| {'yes' if seconds <= 0.05 else 'no'} |"
            )
            step += 1
    return lines


def collector_pauses(freeze: bool, reruns: int = 10) -> tuple[int, float, float]:
    """(full collections, longest ms, total ms) while every page reruns ``reruns`` times at the
    default preset, with the app's gc.freeze after imports (runtime.collector) or without it."""
    import gc

    from runtime import collector

    pauses: list[float] = []
    started: list[float] = []

    def timer(phase: str, info: dict) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            started.append(time.perf_counter())
        elif started:
            pauses.append((time.perf_counter() - started.pop()) * 1000)

    gc.unfreeze()
    real = collector.freeze_after_imports
    if not freeze:
        collector.freeze_after_imports = lambda: False
    gc.callbacks.append(timer)
    try:
        for page in PAGES:
            at = AppTest.from_file(APP, default_timeout=120)
            at.run()
            if not page.endswith("overview.py"):
                at.switch_page(page).run()
            for _ in range(reruns):
                at.run()
    finally:
        gc.callbacks.remove(timer)
        collector.freeze_after_imports = real
        gc.unfreeze()
    return len(pauses), max(pauses, default=0.0), sum(pauses)


def collector_table() -> list[str]:
    lines = [
        "| garbage collector | full collections | longest | total |",
        "|---|---:|---:|---:|",
    ]
    for freeze in (False, True):
        count, longest, total = collector_pauses(freeze)
        name = "objects alive after imports frozen (the app)" if freeze else "nothing frozen"
        lines.append(f"| {name} | {count} | {longest:.0f} ms | {total:.0f} ms |")
    return lines


FEATURE_BENCHMARKS = {  # each in a fresh process: the model's load time is a first-load figure
    "benchmarks.trained_model": "Lesson 10: the trained model (load, forward pass, head change, memory)",
    "benchmarks.training": "Lesson 11: training time, accuracy and three sessions at once",
    "benchmarks.learn_by_doing": "Clickable heatmaps, exercises and the mistakes museum",
}


SMOLLM2_BENCHMARK = ("benchmarks.smollm2", "SmolLM2-135M run by the lab (load, forward, memory)")


def smollm2_benchmark() -> None:
    """SmolLM2's load, forward and memory, in a fresh process (its first load is the figure); --quick too."""
    module, title = SMOLLM2_BENCHMARK
    print(f"\n### {title} (python -m {module})\n", flush=True)
    subprocess.run([sys.executable, "-m", module], cwd=ROOT, check=False)


def feature_benchmarks() -> None:
    """Run every feature's own benchmark module and let it print its figures."""
    for module, title in FEATURE_BENCHMARKS.items():
        print(f"\n### {title} (python -m {module})\n", flush=True)
        subprocess.run([sys.executable, "-m", module], cwd=ROOT, check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="server reruns only, no browser")
    parser.add_argument("--browser-only", action="store_true", help="only the browser figures (benchmarks/browser.py)")
    parser.add_argument("--features-only", action="store_true", help="only the lesson 10-11 and exercise figures")
    parser.add_argument(
        "--clicks-only", action="store_true", help="only click to redrawn, on fresh servers (a few minutes)"
    )
    parser.add_argument(
        "--steps-only", action="store_true", help="only click to redrawn for every step of every lesson"
    )
    parser.add_argument(
        "--pages",
        default="",
        help="with --steps-only (implied): only these lessons, comma-separated names, e.g. path or masking,positions",
    )
    parser.add_argument("--memory-only", action="store_true", help="only server memory after 1 and 10 sessions")
    parser.add_argument("--first-page-only", action="store_true", help="only `streamlit run` to the first page")
    args = parser.parse_args()
    pages = tuple(filter(None, args.pages.split(",")))
    args.steps_only = args.steps_only or bool(pages)
    if args.first_page_only:
        from benchmarks import browser

        browser.first_page_run()
        return
    if args.browser_only or args.clicks_only or args.steps_only or args.memory_only:
        from benchmarks import browser

        # prints each section as it is measured
        browser.run(clicks_only=args.clicks_only, steps_only=args.steps_only, memory_only=args.memory_only, pages=pages)
        return
    if args.features_only:
        feature_benchmarks()
        smollm2_benchmark()
        return
    print(f"Load average (1, 5, 15 min) at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}\n")
    compile_scripts_once()
    print("### Rerun time of every step (server, AppTest, median of 5, default preset)\n")
    print("\n".join(step_rerun_table(trivial_rerun())), flush=True)
    print()
    lines, largest_bytes, largest_page = rerun_table()
    print("### Rerun time (server, AppTest, median of 5)\n")
    print("\n".join(lines), flush=True)
    print("\n(each lesson whole, view=all: exempt from the step budget, measured as before)")
    print(f"\nBytes of the largest chart at 128 tokens ({Path(largest_page).stem}): {largest_bytes / 1024:.0f} KiB.")
    print(f"\n### Full garbage collections during {len(PAGES)} pages x 10 reruns (GIL held)\n")
    print("\n".join(collector_table()), flush=True)
    smollm2_benchmark()
    if not args.quick:
        from benchmarks import browser

        print(flush=True)
        browser.run()
        feature_benchmarks()


if __name__ == "__main__":
    main()
