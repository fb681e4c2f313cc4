"""What one server holds: concurrent Chromium sessions until the p95 click-to-redrawn passes 1 s.

    .venv/bin/python -m benchmarks.capacity                    # levels 2, 4, 8, 12, 16, 24, 32
    .venv/bin/python -m benchmarks.capacity --levels 2,4,8     # a reduced run (a busy machine)

One fresh `streamlit run` on 127.0.0.1. First the CPU seconds of a session's first page: the server
process's user+system time (/proc/PID/stat) from a new context's request until its scores page is
drawn, for the first session of the server (it imports the lesson's modules) and for a new session
on a warm server. Then, at each level n: n sessions at once, n-1 on mixed lesson pages with their own
sentence and seed (distinct from every other level's, so no cache hit) and one on lesson 11 pressing
Train; when all are drawn, every other session picks another query token and the rest type a new
sentence (click or Enter to redrawn, as benchmarks/browser.py measures it); every session checks its
own numbers. The server's memory growth per session is the RSS growth of the level over n. Goes on
past the level whose p95 passes 1 s (to show the trend) until a p95 passes 5 s. Prints the load
average beside every level: figures taken on a busy machine are noisy and say so.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.browser import (  # noqa: E402
    DONE_JS,
    OWN_INPUT_PAGES,
    QUIET_MS,
    check_session,
    finish,
    finish_training,
    free_port,
    load_average,
    new_page,
    query_combobox,
    rss_mb,
    start_pick,
    start_training,
)
from tools.browser import CHROMIUM, CHROMIUM_ARGS, serve, stop, wait_healthy  # noqa: E402
from ui.registry import LESSONS  # noqa: E402

LEVELS = [2, 4, 8, 12, 16, 24, 32]
P95_LIMIT_MS = 1000
STOP_MS = 5000  # levels go on past the limit, to show the trend, until the p95 passes this
TIMEOUT_MS = 180_000


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime (fields 14, 15)


def query(tokens: list[str], seed: int, d_model: int) -> str:
    return (
        f"example=Your+own+sentence&sentence={'+'.join(tokens)}&embedding=Random+%28seeded%29"
        f"&seed={seed}&d_model={d_model}"
    )


def wait_drawn(page) -> None:
    page.wait_for_selector("[data-testid='stMain'] h1", timeout=TIMEOUT_MS)
    page.evaluate("() => { window.__bench.t0 = 0; }")
    page.wait_for_function(DONE_JS, arg=QUIET_MS, timeout=TIMEOUT_MS, polling=100)


def first_page_cpu(browser, base: str, pid: int, tag: str) -> float:
    """CPU seconds the server spends on one new session's scores page, from the request until drawn."""
    tokens = [f"{tag}w{j}" for j in range(6)]
    page = new_page(browser)
    before = cpu_seconds(pid)
    page.goto(f"{base}/scores?{query(tokens, 7, 4)}&view=all", timeout=TIMEOUT_MS)
    wait_drawn(page)
    spent = cpu_seconds(pid) - before
    errors: list[str] = []
    check_session(page, 7, "scores", tokens, 4, errors)
    page.context.close()
    if errors:
        raise RuntimeError(errors[0])
    return spent


def type_sentence(page, tokens: list[str]) -> None:
    """Type a new sentence into the sidebar box and press Enter (the Enter's keydown starts the clock)."""
    box = page.locator("[data-testid='stSidebar']").get_by_role("textbox", name="Your sentence")
    box.fill(" ".join(tokens))
    page.evaluate("window.__benchArm()")
    box.press("Enter")


def level(browser, base: str, pid: int, n: int) -> dict:
    """n sessions at once (one training); their click/Enter-to-redrawn times, errors and memory growth."""
    names = [lesson.name for lesson in LESSONS if lesson.number is not None and lesson.name not in OWN_INPUT_PAGES]
    rss_before = rss_mb(pid)
    errors: list[str] = []
    trainer = start_training(browser, base)
    sessions = []
    for i in range(n - 1):
        tokens, d_model, seed = [f"l{n}s{i}w{j}" for j in range(4 + i % 7)], 2 + i % 7, 1000 * n + i
        name = "scores" if i % 3 == 0 else names[i % len(names)]
        page = new_page(browser)
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(f"{base}/{name}?{query(tokens, seed, d_model)}&view=all", wait_until="commit", timeout=TIMEOUT_MS)
        sessions.append([i, name, tokens, d_model, seed, page])
    for i, name, tokens, d_model, seed, page in sessions:
        try:
            wait_drawn(page)
            check_session(page, seed, name, tokens, d_model, errors)
        except Exception as error:
            errors.append(f"session {i} ({name}) loading: {str(error).splitlines()[0][:160]}")
    rss_drawn = rss_mb(pid)
    acted = []
    for session in sessions:  # all act at once: half pick a query token, half type a new sentence
        i, name, tokens, d_model, seed, page = session
        try:
            if i % 2:
                session[2] = [f"l{n}s{i}t{j}" for j in range(3 + i % 5)]
                type_sentence(page, session[2])
            else:
                start_pick(page, query_combobox(page))
            acted.append(session)
        except Exception as error:
            errors.append(f"session {i} ({name}) acting: {str(error).splitlines()[0][:160]}")
    times = []
    for i, name, tokens, d_model, seed, page in acted:
        try:
            times.append(finish(page)["ms"])
            check_session(page, seed, name, tokens, d_model, errors)
        except Exception as error:
            errors.append(f"session {i} ({name}) redrawing: {str(error).splitlines()[0][:160]}")
    training_s = finish_training(trainer, errors)
    for *_, page in sessions:
        page.context.close()
    times.sort()
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))] if times else float("nan")
    return {
        "n": n,
        "median": statistics.median(times) if times else float("nan"),
        "p95": p95,
        "mb_per_session": (rss_drawn - rss_before) / n,
        "rss": rss_drawn,
        "training_s": training_s,
        "errors": errors,
        "load": load_average(),
    }


def run(levels: list[int], emit=print) -> list[dict]:
    from playwright.sync_api import sync_playwright

    emit(f"Load average (1, 5, 15 min) at start: {load_average()}; {os.cpu_count()} cores\n")
    port = free_port()
    app = serve(ROOT / "streamlit_app.py", port)
    results = []
    try:
        wait_healthy(app, port)
        base = f"http://127.0.0.1:{port}"
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                idle = rss_mb(app.pid)
                cold = first_page_cpu(browser, base, app.pid, "cold")
                warm = first_page_cpu(browser, base, app.pid, "warm")
                emit("| first page (scores), server CPU | seconds |\n|---|---:|")
                emit(f"| first session of a fresh server (imports the lesson) | {cold:.2f} s |")
                emit(f"| a new session on a warm server | {warm:.2f} s |")
                emit(f"\nServer memory idle: {idle:.0f} MB; after those two sessions: {rss_mb(app.pid):.0f} MB\n")
                emit(
                    "| concurrent sessions (1 training) | click to redrawn, median | p95 | memory growth per session "
                    "| server memory | training 150 steps | errors | load average (1, 5, 15 min) |"
                )
                emit("|---:|---:|---:|---:|---:|---:|---:|---|")
                for n in levels:
                    r = level(browser, base, app.pid, n)
                    results.append(r)
                    emit(
                        f"| {n} | {r['median']:.0f} ms | {r['p95']:.0f} ms | {r['mb_per_session']:.1f} MB "
                        f"| {r['rss']:.0f} MB | {r['training_s']:.1f} s | {len(r['errors'])} | {r['load']} |"
                    )
                    for error in r["errors"][:5]:
                        emit(f"|  | error: {error} |||||||")
                    sys.stdout.flush()
                    if r["p95"] > STOP_MS:
                        break
            finally:
                browser.close()
    finally:
        stop(app)
    passed = [r["n"] for r in results if r["p95"] > P95_LIMIT_MS]
    held = [r["n"] for r in results if r["p95"] <= P95_LIMIT_MS]
    emit(
        f"\np95 click to redrawn passes {P95_LIMIT_MS} ms at {passed[0] if passed else 'none of the levels'}"
        f" concurrent sessions; last level under it: {held[-1] if held else 'none'}."
        f"\nLoad average (1, 5, 15 min) at end: {load_average()}"
    )
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default=",".join(map(str, LEVELS)), help="concurrent sessions per level")
    args = parser.parse_args()
    run([int(n) for n in args.levels.split(",")])
