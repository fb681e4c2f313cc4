"""Server memory under many sessions of distinct long sentences: it must level off, not grow with every session.

    .venv/bin/python -m benchmarks.memory_long_inputs               # 100 sessions (slow: about 2 s each)
    .venv/bin/python -m benchmarks.memory_long_inputs --sessions 40

One server, then sessions one after another in Debian's headless Chromium (a fresh context each: its own
Streamlit session): each opens a lesson page (the pages in turn) with a sentence of about 1,000 characters that
no other session typed, waits until the page is drawn, and closes. The server's RSS is printed after every 10
sessions; at half the run and at its end it is printed again once the closed sessions have outlived Streamlit's
disconnectedSessionTTL (SESSION_TTL_S: "settled"). It passes when every figure is within the budget
docs/benchmarks.md states for 10 sessions (690 MB: Community Cloud's smallest app) plus MARGIN_MB, and the
settled figure grew by less than PLATEAU_MB over the last half (the caches are full and replace their oldest
entries instead of growing). Not a test: it takes minutes, and its figures depend on the machine's load (printed
beside them).
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
from ui import registry

ROOT_SCRIPT = "streamlit_app.py"
# Streamlit keeps a closed session (its state, its media files) for server.disconnectedSessionTTL, 120 s by default,
# so a browser whose network blips finds it again. The RSS after N sessions therefore holds the sessions closed in
# the last 120 s, as many as the machine ran in that time: 14 at 8.6 s a session (busy), 40 at 3 s (quiet). The
# plateau is judged on RSS once those have expired, at half the run and at its end ("settled").
SESSION_TTL_S = 120
BUDGET_MB = 690  # docs/benchmarks.md: server memory after 10 sessions that opened every page
MARGIN_MB = 250  # the long sentences' kept specs and data (the byte budgets of ui.drawing) and lesson 10's passes
PLATEAU_MB = 60  # growth allowed over the last half of the run (allocator noise, not a cache that keeps growing)
SENTENCE_CHARS = 1_000
# Every lesson that draws the sidebar's sentence (the overview draws none; lesson 11 trains on its own examples).
PAGES = [lesson.name for lesson in registry.LESSONS if lesson.name not in ("overview", "training")]


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

            def session(i: int, sentence: str) -> None:
                context = browser.new_context(viewport={"width": 1400, "height": 2000})
                page = context.new_page()
                params = {"example": "Your own sentence", "sentence": sentence, "embedding": "Random (seeded)"}
                page.goto(f"{base}/{PAGES[i % len(PAGES)]}?{urlencode(params | {'seed': str(i), 'view': 'all'})}")
                try:
                    wait_for_app(page, timeout=180_000)
                finally:
                    context.close()

            def settled(label: str) -> float:
                """RSS once every closed session has outlived the server's disconnectedSessionTTL and is dropped."""
                time.sleep(SESSION_TTL_S + 5)
                session(0, "the cat sat")  # a new session's disconnect makes the server drop the expired ones
                time.sleep(5)
                rss = rss_mb(process.pid)
                print(f"| {label}, after the closed sessions' {SESSION_TTL_S} s | {rss:.0f} MB | {load_average()} | |")
                sys.stdout.flush()
                return rss

            for i in range(1, sessions + 1):
                session(i, long_sentence(rng))
                if i % 10 == 0 or i == sessions:
                    figures.append((i, rss_mb(process.pid)))
                    print(f"| {i} | {figures[-1][1]:.0f} MB | {load_average()} | {time.monotonic() - start:.0f} |")
                    sys.stdout.flush()
                if i == sessions // 2:
                    half = settled(str(i))
            last = settled(str(sessions))
            browser.close()
    finally:
        stop(process)
    peak = max([last, *(rss for _, rss in figures[1:])])
    within = peak <= BUDGET_MB + MARGIN_MB
    level = last - half <= PLATEAU_MB
    print(
        f"\nHighest {peak:.0f} MB: {'within' if within else 'OVER'} {BUDGET_MB} + {MARGIN_MB} MB; settled after "
        f"{sessions // 2} sessions {half:.0f} MB, after {sessions} {last:.0f} MB; "
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
