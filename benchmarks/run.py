"""Speed and memory of Attention Lab, printed as a markdown table.

    .venv/bin/python -m benchmarks.run            # everything (about 3 minutes)
    .venv/bin/python -m benchmarks.run --quick    # reruns only, no browser

Measures:
- server time of a rerun of every page (AppTest, median of 5) at the default preset, 32 and
  128 tokens, beside a trivial one-widget page measured in the same run (the ratio is the
  figure that matters on a noisy machine);
- time from `streamlit run` to the first fully rendered page in headless Chromium;
- bytes sent for the largest chart at 128 tokens;
- resident memory of the server after 1 and after 10 browser sessions.
Targets (2-core machine): default preset < 100 ms, 128 tokens < 500 ms, first page < 6 s,
server memory < 450 MB after 10 sessions.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

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
    at.query_params.update(params)
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
        "| page | default preset | ratio to trivial | 32 tokens | 128 tokens |",
        "|---|---:|---:|---:|---:|",
        f"| trivial one-widget page | {trivial * 1000:.1f} ms | 1.0 | | |",
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
            f"{t32 * 1000:.1f} ms | {t128 * 1000:.1f} ms |"
        )
    return lines, largest_bytes, largest_page


def rss_mb(pid: int) -> float:
    """Resident memory of a process in MB, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def browser_figures() -> list[str]:
    """First-render time and server memory after 1 and 10 sessions, in a real Chromium."""
    from playwright.sync_api import sync_playwright

    from tests.e2e.conftest import free_port, start_server
    from tools.browser import CHROMIUM, CHROMIUM_ARGS, SETTLE_MS, wait_for_app

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        port = free_port()
        start = time.perf_counter()
        server = start_server(port)
        try:
            first = browser.new_context().new_page()
            first.goto(f"http://127.0.0.1:{port}/scores")
            wait_for_app(first, timeout=120_000)
            first_render = time.perf_counter() - start - SETTLE_MS / 1000  # less the settle pause
            after_one = rss_mb(server.pid)
            pages = []
            for i in range(9):
                page = browser.new_context().new_page()
                sentence = "+".join(f"s{i}w{j}" for j in range(8 + i))
                path = Path(PAGES[i % len(PAGES)]).stem
                page.goto(f"http://127.0.0.1:{port}/{path}?example=Your+own+sentence&sentence={sentence}&seed={i}")
                pages.append(page)
            for page in pages:
                wait_for_app(page, timeout=120_000)
            after_ten = rss_mb(server.pid)
        finally:
            server.terminate()
            server.wait(timeout=10)
        browser.close()
    return [
        f"| time from `streamlit run` to the first rendered page | {first_render:.2f} s | < 6 s |",
        f"| server memory after 1 session | {after_one:.0f} MB | |",
        f"| server memory after 10 sessions | {after_ten:.0f} MB | < 450 MB |",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="reruns only, no browser")
    args = parser.parse_args()
    lines, largest_bytes, largest_page = rerun_table()
    print("### Rerun time (server, AppTest, median of 5)\n")
    print("\n".join(lines))
    print("\n### Browser and memory\n")
    print("| figure | measured | target |\n|---|---:|---:|")
    print(
        f"| bytes of the largest chart at 128 tokens ({Path(largest_page).stem}) | {largest_bytes / 1024:.0f} KiB | |"
    )
    if not args.quick:
        print("\n".join(browser_figures()))


if __name__ == "__main__":
    main()
