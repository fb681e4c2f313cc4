"""What each piece of the lab's speed machinery buys: every budget with it on and off, in one run.

    .venv/bin/python -m benchmarks.mechanisms           # two servers with each piece off, 11 on (~10 min quiet)
    .venv/bin/python -m benchmarks.mechanisms --quick   # one server with each piece off, 6 on (~5 min quiet)

The pieces are runtime/switches.py's (``ATTENTION_LAB_OFF``). Servers are started one at a time, everything on and
one piece off in turn (on, warmup off, on, preload off, on, ...), so the machine's load falls on both alike. Each
fresh server gets one fresh browser session that walks what a learner does first:

- first page: `streamlit run` to the scores lesson's first step drawn (benchmarks/browser.py's rule, its first run);
- then the learner reads (the server's warm-up and the browser's preload finish, at most READ_SECONDS);
- step change: Next through every step of the scores lesson, then the softmax lesson (opened from the sidebar), each
  step's first visit on this server; the median of those clicks;
- query pick: PICKS picks of another query token on each lesson's last step; the median;
- RSS: the server's resident memory after the walk.

Each piece's server is compared with the two everything-on servers just before and after it ("on": their mean),
so a load that drifts over the run falls on both sides alike. Gain: off / on - 1 (what the budget would cost without
the piece); noise: how far those two on servers differ. A piece is kept when it buys at least KEEP_GAIN on some
budget beyond that noise (issue 37, item 3); removed when it buys less on every budget and the noise was small enough
to see KEEP_GAIN; otherwise the run cannot tell, and it stays. With two rounds each figure is the median of two.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.browser import FIRST_PAGE_JS, change_step, query_token, rss_mb  # noqa: E402
from runtime import switches  # noqa: E402
from tools.browser import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    DONE_JS,
    QUIET_MS,
    TIMEOUT_MS,
    free_port,
    load_average,
    new_page,
    serve,
    stop,
    wait_healthy,
    wait_quiet,
)
from ui.registry import LESSONS  # noqa: E402

LESSON_WALK = ("scores", "softmax")  # stepped lessons with tables and heatmaps; scores is the first page
PICKS = 3  # query picks on each lesson's last step
READ_SECONDS = 20  # at most this long reading the first step: the warm-ups finish meanwhile
KEEP_GAIN = 0.10
BUDGETS = ("first page", "step change", "query pick", "RSS")
UNITS = {"first page": "s", "step change": "ms", "query pick": "ms", "RSS": "MB"}
PRELOAD_DONE_JS = "() => window.__attentionLabPreload !== 'started'"  # done, failed, or never started (off)


def with_off(names: tuple[str, ...]):
    """A context in which servers started inherit ATTENTION_LAB_OFF=names (unset for none)."""

    class Env:
        def __enter__(self):
            self.before = os.environ.pop(switches.VARIABLE, None)
            if names:
                os.environ[switches.VARIABLE] = ",".join(names)

        def __exit__(self, *_):
            os.environ.pop(switches.VARIABLE, None)
            if self.before is not None:
                os.environ[switches.VARIABLE] = self.before

    return Env()


def open_in_sidebar(page, name: str) -> None:
    """Open a lesson from the sidebar's navigation (same session) and wait until it is drawn."""
    label = next(lesson.label for lesson in LESSONS if lesson.name == name)
    page.locator("[data-testid='stSidebarNav'] a").filter(has_text=label).first.click()
    page.wait_for_url(f"**/{name}**", timeout=TIMEOUT_MS)
    page.evaluate("() => { window.__bench.t0 = 0; }")
    page.wait_for_function(DONE_JS, arg=QUIET_MS, timeout=TIMEOUT_MS, polling=50)


def walk(browser, off: tuple[str, ...]) -> dict[str, float]:
    """One fresh server with these pieces off, one fresh session's walk: the four budgets."""
    port = free_port()
    with with_off(off):
        started = time.time()
        server = serve(ROOT / "streamlit_app.py", port)
    try:
        wait_healthy(server, port)
        page = new_page(browser)
        page.goto(f"http://127.0.0.1:{port}/{LESSON_WALK[0]}", timeout=TIMEOUT_MS)
        page.wait_for_selector("[data-testid='stMain'] h1", timeout=TIMEOUT_MS)
        page.evaluate("() => { window.__bench.t0 = 0; }")
        page.wait_for_function(DONE_JS, arg=QUIET_MS, timeout=TIMEOUT_MS, polling=50)
        t = page.evaluate(FIRST_PAGE_JS)
        first = t["origin"] / 1000 + t["firstDrawn"] / 1000 - started
        read = time.monotonic()
        wait_quiet(server, timeout=READ_SECONDS)
        page.wait_for_function(PRELOAD_DONE_JS, timeout=max(1, READ_SECONDS - (time.monotonic() - read)) * 1000)
        changes, picks = [], []
        for i, name in enumerate(LESSON_WALK):
            if i:
                open_in_sidebar(page, name)
            while (moved := change_step(page)) is not None:
                changes.append(moved["ms"])
            picks += [query_token(page)["ms"] for _ in range(PICKS)]
        memory = rss_mb(server.pid)
        page.context.close()
    finally:
        stop(server)
    return {
        "first page": first,
        "step change": statistics.median(changes),
        "query pick": statistics.median(picks),
        "RSS": memory,
    }


def schedule(mechanisms: tuple[str, ...], rounds: int) -> list[tuple[str, ...]]:
    """The servers in order: everything on before each piece off, and once more at the end."""
    order: list[tuple[str, ...]] = []
    for _ in range(rounds):
        for name in mechanisms:
            order += [(), (name,)]
    return [*order, ()]


def digits(budget: str) -> int:
    return 2 if UNITS[budget] == "s" else 0


def paired(runs: list[tuple[tuple[str, ...], dict]], name: str, budget: str) -> tuple[float, float, float, float]:
    """A piece's servers against the everything-on servers just before and after each (the load drifts over a run):
    (on, off, gain, noise), medians over its rounds. on: the mean of the two on servers; gain: off / on - 1;
    noise: how far those two on servers differ, as a share of their mean."""
    ons, offs, gains, noises = [], [], [], []
    for i, (off, run) in enumerate(runs):
        if off == (name,):
            before, after = runs[i - 1][1][budget], runs[i + 1][1][budget]
            on = (before + after) / 2
            ons.append(on)
            offs.append(run[budget])
            gains.append(run[budget] / on - 1)
            noises.append(abs(before - after) / on)
    return tuple(statistics.median(values) for values in (ons, offs, gains, noises))


def verdict(cells: list[tuple[str, float, float]]) -> str:
    """Keep a piece that buys KEEP_GAIN on some budget beyond the noise; remove one that buys less on every budget
    where the run could have seen KEEP_GAIN; otherwise the run cannot tell (kept)."""
    if any(gain >= KEEP_GAIN and gain > noise for _, gain, noise in cells):
        return "yes"
    if all(gain < KEEP_GAIN and noise < KEEP_GAIN for _, gain, noise in cells):
        return "no"
    return "within noise: kept"


def table(runs: list[tuple[tuple[str, ...], dict]], mechanisms: tuple[str, ...]) -> list[str]:
    """The markdown table: each budget on / off (gain, noise), the best gain, keep or not."""
    on = [run for off, run in runs if not off]
    ranges = [
        f"{statistics.median(r[b] for r in on):.{digits(b)}f} {UNITS[b]} "
        f"({min(r[b] for r in on):.{digits(b)}f}-{max(r[b] for r in on):.{digits(b)}f})"
        for b in BUDGETS
    ]
    lines = [
        "| mechanism | " + " | ".join(f"{budget} on / off" for budget in BUDGETS) + " | best gain | keep? |",
        "|---|" + "---:|" * len(BUDGETS) + "---:|---|",
        f"| everything on, {len(on)} servers: median (range) | " + " | ".join(ranges) + " | | |",
    ]
    for name in mechanisms:
        cells, row = [], []
        for budget in BUDGETS:
            with_it, without, gain, noise = paired(runs, name, budget)
            cells.append((budget, gain, noise))
            row.append(f"{with_it:.{digits(budget)}f} / {without:.{digits(budget)}f} ({gain:+.0%}, ±{noise:.0%})")
        best, _, where = max((gain, i, budget) for i, (budget, gain, _) in enumerate(cells))
        lines.append(f"| {name} | " + " | ".join(row) + f" | {best:+.0%} ({where}) | {verdict(cells)} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one server with each piece off, not two")
    parser.add_argument("--only", default="", help="comma-separated pieces to measure (default: all)")
    args = parser.parse_args()
    mechanisms = tuple(filter(None, args.only.split(","))) or tuple(switches.MECHANISMS)
    switches.parse(",".join(mechanisms))  # an unknown name fails here, before any server starts
    from playwright.sync_api import sync_playwright

    runs: list[tuple[tuple[str, ...], dict]] = []
    loads = [load_average()]
    print(f"Load average (1, 5, 15 min) at start: {loads[0]}", flush=True)
    began = time.monotonic()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for off in schedule(mechanisms, 1 if args.quick else 2):
                run = walk(browser, off)
                runs.append((off, run))
                loads.append(load_average())
                shown = ", ".join(f"{b} {run[b]:.2f}" if UNITS[b] == "s" else f"{b} {run[b]:.0f}" for b in BUDGETS)
                print(f"- {','.join(off) or 'everything on'}: {shown}; load {loads[-1]}", file=sys.stderr, flush=True)
        finally:
            browser.close()
    lines = [
        "",
        *table(runs, mechanisms),
        "",
        "Each cell: on / off (gain: off / on - 1; ± noise: how far the two everything-on servers around it differ). "
        f"Kept: a gain of {KEEP_GAIN:.0%} or more on some budget, beyond its noise. "
        f"Step change: median of the Next clicks through {' and '.join(LESSON_WALK)} (first visits); query pick: "
        f"median of {PICKS} picks on each one's last step; RSS after that walk.",
        f"Load average (1, 5, 15 min) at start {loads[0]}, at end {loads[-1]}; "
        f"1-min load over the run {min(float(x.split()[0]) for x in loads):.1f}-"
        f"{max(float(x.split()[0]) for x in loads):.1f}; {(time.monotonic() - began) / 60:.1f} minutes.",
    ]
    print("\n".join(lines), flush=True)


if __name__ == "__main__":
    main()
