"""Speed of lesson 11's live training, printed as a markdown table.

    .venv/bin/python -m benchmarks.training

Measures, on one torch thread as the app runs:
- the default task and settings: training time and held-out accuracy (target: >= 95 % within 20 s),
  and every task's preset;
- three sessions training at once: a real server (Streamlit runs each session's script in a thread of
  one process) and three Chromium sessions of the training page, each with its own seed (so none
  reuses another's run), pressing Train together; each session's training time as the server times
  it around the loop (the page's status line), beside sessions training alone. Training must not
  block the others: with 2 cores the three share the CPU, so each takes longer, but all finish and
  none waits for another. (Not AppTest sessions in threads: AppTest keeps the runtime in a
  process-wide global, Runtime._instance, which the first session to finish a run sets to None, so
  the others lose their forms' context and fail with duplicate keys.);
- another session's page rerun, idle and while a session trains.
"""

from __future__ import annotations

import dataclasses
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from attention_core import training as tr  # noqa: E402
from benchmarks import browser as browser_bench  # noqa: E402
from tests.apptest_helpers import open_page  # noqa: E402

SESSIONS = 3


def time_training(settings: tr.TrainingSettings, repeats: int = 3) -> tuple[float, float, float]:
    """(median wall seconds, median CPU seconds, accuracy) of training these settings from scratch.

    CPU seconds (this process) are what one thread costs; wall seconds also count waiting for a core
    on a busy machine.
    """
    walls, cpus, run = [], [], None
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        run = tr.train(settings)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), run.accuracy


def sessions_training(browser, base: str, seeds: list[int]) -> list[float]:
    """Chromium sessions of the training page, one per seed, pressing Train together; the training seconds
    the server reports for each (its status line). Raises if a session shows an error or a held-out accuracy
    under 95 %."""
    pages = [browser_bench.ready_to_train(browser, base, seed) for seed in seeds]
    for page in pages:
        browser_bench.press_train(page)
    errors: list[str] = []
    seconds = [browser_bench.finish_training(page, errors, min_accuracy=95) for page in pages]
    if errors:
        raise RuntimeError("; ".join(errors))
    return seconds


def three_at_once() -> tuple[list[float], list[float]]:
    """(each session alone, the three at once): server-timed training seconds of the default task."""
    from playwright.sync_api import sync_playwright

    first = int(time.time()) % 9_000 + 500  # seeds no earlier run of this server used
    port = browser_bench.free_port()
    server = browser_bench.serve(ROOT / "streamlit_app.py", port)
    try:
        browser_bench.wait_healthy(server, port)
        base = f"http://127.0.0.1:{port}"
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=browser_bench.CHROMIUM, args=browser_bench.CHROMIUM_ARGS
            )
            try:
                sessions_training(browser, base, [first])  # warm up the server (imports, caches)
                alone = [sessions_training(browser, base, [first + i])[0] for i in range(1, SESSIONS + 1)]
                together = sessions_training(browser, base, [first + SESSIONS + i for i in range(1, SESSIONS + 1)])
            finally:
                browser.close()
    finally:
        browser_bench.stop(server)
    return alone, together


def rerun_times(page: str, seconds: float) -> list[float]:
    """Rerun times of one AppTest session of ``page``, back to back for about ``seconds``."""
    at = open_page(page)
    times, end = [], time.perf_counter() + seconds
    while time.perf_counter() < end:
        start = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - start)
    return times


def rerun_during_training(page: str = "app_pages/scores.py") -> tuple[float, float, float]:
    """(median rerun idle, median rerun while a thread trains the induction preset, its training seconds)."""
    idle = statistics.median(rerun_times(page, 2.0))
    results: dict[int, float] = {}
    trainer = threading.Thread(target=induction_session, args=(results,))
    trainer.start()
    busy = statistics.median(rerun_times(page, 2.0))
    trainer.join()
    return idle, busy, results[0]


def induction_session(results: dict[int, float]) -> None:
    """What a session's script thread runs when it trains the induction preset (the longest of the three)."""
    start = time.perf_counter()
    tr.train(dataclasses.replace(tr.DEFAULTS["induction"], seed=77))
    results[0] = time.perf_counter() - start


def main() -> None:
    torch.set_num_threads(1)
    tr.train(tr.TrainingSettings(steps=10))  # warm up torch
    print(
        "| task (preset) | layers x heads | steps | learning rate | wall s (median of 3) | CPU s | held-out accuracy |"
    )
    print("|---|---|---|---|---|---|---|")
    for task, settings in tr.DEFAULTS.items():
        seconds, cpu, accuracy = time_training(settings)
        default = " (default)" if settings == tr.TrainingSettings() else ""
        print(
            f"| {task}{default} | {settings.layers} x {settings.heads} | {settings.steps} | "
            f"{settings.learning_rate:g} | {seconds:.2f} | {cpu:.2f} | {accuracy:.1%} |"
        )
    alone, together = three_at_once()
    print()
    print(
        f"{SESSIONS} sessions training the default task ({browser_bench.TRAINING_STEPS} steps) at once: a real "
        f"server, {SESSIONS} Chromium sessions, training seconds as the server times them:"
    )
    print("| session | alone (s) | three at once (s) | ratio |")
    print("|---|---|---|---|")
    for i, (by_itself, with_others) in enumerate(zip(alone, together, strict=True), start=1):
        print(f"| {i} | {by_itself:.2f} | {with_others:.2f} | {with_others / by_itself:.1f}x |")
    print(f"Slowest of the three at once: {max(together):.2f} s (sum alone {sum(alone):.2f} s).")
    idle, busy, trained = rerun_during_training()
    print()
    print(
        f"Another session's rerun of the scores page: median {idle * 1000:.0f} ms idle, {busy * 1000:.0f} ms while "
        f"a thread trains the induction preset as a session does ({trained:.1f} s)."
    )


if __name__ == "__main__":
    main()
