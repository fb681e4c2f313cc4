"""Server memory under many sessions of distinct long sentences: it must level off, not grow with every session.

    .venv/bin/python -m benchmarks.memory_long_inputs               # 100 sessions (slow: about 2 s each)
    .venv/bin/python -m benchmarks.memory_long_inputs --sessions 40

One server, then sessions one after another in Debian's headless Chromium (a fresh context each: its own
Streamlit session): each opens a lesson page (the pages in turn) with a sentence of about 1,000 characters that
no other session typed, waits until the page is drawn, and closes. The server's RSS is printed after every 10
sessions. It passes when the last figure is within the budget docs/benchmarks.md states for 10 sessions
(700 MB) plus MARGIN_MB, and the last half of the run grew by less than PLATEAU_MB (the caches are full and
replace their oldest entries instead of growing). Not a test: it takes minutes, and its figures depend on the
machine's load (printed beside them).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from urllib.parse import urlencode

from benchmarks.browser import free_port, rss_mb
from tools.browser import CHROMIUM, CHROMIUM_ARGS, serve, stop, wait_for_app, wait_healthy
from ui import lessons

ROOT_SCRIPT = "streamlit_app.py"
BUDGET_MB = 700  # docs/benchmarks.md: server memory after 10 sessions that opened every page
MARGIN_MB = 250  # the long sentences' kept specs and data (the byte budgets of ui._drawing) and lesson 10's passes
PLATEAU_MB = 60  # growth allowed over the last half of the run (allocator noise, not a cache that keeps growing)
SENTENCE_CHARS = 1_000
# Every lesson that draws the sidebar's sentence (the overview draws none; lesson 11 trains on its own examples).
PAGES = [lesson.name for lesson in lessons.LESSONS if lesson.name not in ("overview", "training")]


def long_sentence(rng: random.Random, chars: int = SENTENCE_CHARS) -> str:
    """A sentence of about ``chars`` characters whose words no other session uses."""
    words: list[str] = []
    while sum(len(word) + 1 for word in words) < chars:
        words.append("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9))))
    return " ".join(words)


def load_average() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def run(sessions: int, seed: int = 0) -> bool:
    from pathlib import Path

    from playwright.sync_api import sync_playwright

    rng = random.Random(seed)
    port = free_port()
    process = serve(Path(ROOT_SCRIPT).resolve(), port)
    wait_healthy(process, port)
    base = f"http://127.0.0.1:{port}"
    figures: list[tuple[int, float]] = [(0, rss_mb(process.pid))]
    print(f"Load average at start: {load_average()}; server RSS before any session: {figures[0][1]:.0f} MB\n")
    print("| sessions | server RSS | load average | seconds |\n|---:|---:|---|---:|")
    start = time.monotonic()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for i in range(1, sessions + 1):
                context = browser.new_context(viewport={"width": 1400, "height": 2000})
                page = context.new_page()
                params = {
                    "example": "Your own sentence",
                    "sentence": long_sentence(rng),
                    "embedding": "Random (seeded)",
                    "seed": str(i),
                }
                page.goto(f"{base}/{PAGES[i % len(PAGES)]}?{urlencode(params)}")
                try:
                    wait_for_app(page, timeout=180_000)
                finally:
                    context.close()
                if i % 10 == 0 or i == sessions:
                    figures.append((i, rss_mb(process.pid)))
                    print(f"| {i} | {figures[-1][1]:.0f} MB | {load_average()} | {time.monotonic() - start:.0f} |")
                    sys.stdout.flush()
            browser.close()
        time.sleep(5)  # the closed sessions' state is dropped
        figures.append((sessions, rss_mb(process.pid)))
        print(f"| {sessions}, 5 s after the last closed | {figures[-1][1]:.0f} MB | {load_average()} | |")
    finally:
        stop(process)
    last = figures[-1][1]
    half = min(figures[1:], key=lambda figure: abs(figure[0] - sessions / 2))[1]
    within = last <= BUDGET_MB + MARGIN_MB
    level = last - half <= PLATEAU_MB
    print(
        f"\nLast {last:.0f} MB: {'within' if within else 'OVER'} {BUDGET_MB} + {MARGIN_MB} MB; "
        f"growth over the last half {last - half:+.0f} MB: {'a plateau' if level else 'STILL GROWING'} "
        f"(allowed {PLATEAU_MB} MB)."
    )
    return within and level


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sys.exit(0 if run(args.sessions, args.seed) else 1)


if __name__ == "__main__":
    main()
