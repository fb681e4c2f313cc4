"""Speed of lesson 11's live training, printed as a markdown table.

    .venv/bin/python -m benchmarks.training

Measures, on one torch thread as the app runs:
- the default task and settings: training time and held-out accuracy (target: >= 95 % within 20 s),
  and every task's preset;
- three sessions training at once: three AppTest sessions of the training page, each pressing Train
  with its own seed (so none reuses another's run), in three threads as Streamlit runs sessions;
  each session's wall time beside the same session alone. Training must not block the others: with
  2 cores the three share the CPU, so each takes longer, but all finish and none waits for another;
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
from tests.apptest_helpers import open_page  # noqa: E402

PAGE = "app_pages/training.py"
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


def session_trains(seed: int, results: dict[int, float]) -> None:
    """One AppTest session: open the training page, set a seed, press Train; wall time of the click."""
    at = open_page(PAGE, timeout=120)
    at.number_input(key="training_seed").set_value(seed).run()
    start = time.perf_counter()
    at.button(key="training_train").click().run()
    results[seed] = time.perf_counter() - start
    accuracy = next(metric.value for metric in at.metric if metric.label == "Held-out accuracy")
    assert not at.exception and float(accuracy.rstrip("%")) >= 95, (seed, accuracy)


def concurrent_sessions(seeds: list[int]) -> dict[int, float]:
    """Every seed's session in its own thread, all started together."""
    results: dict[int, float] = {}
    threads = [threading.Thread(target=session_trains, args=(seed, results)) for seed in seeds]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


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
    session_trains(99, {})  # warm up the app (imports, caches)
    alone = {seed: concurrent_sessions([seed])[seed] for seed in (1, 2, 3)}
    together = concurrent_sessions([11, 12, 13])
    print()
    print(f"Three sessions training the default task at once ({SESSIONS} AppTest sessions in threads):")
    print("| session | alone (s) | three at once (s) | ratio |")
    print("|---|---|---|---|")
    for i, (seed_alone, seed_together) in enumerate(zip(alone, together, strict=True), start=1):
        ratio = together[seed_together] / alone[seed_alone]
        print(f"| {i} | {alone[seed_alone]:.2f} | {together[seed_together]:.2f} | {ratio:.1f}x |")
    print(f"All three done in {max(together.values()):.2f} s (sum alone {sum(alone.values()):.2f} s).")
    idle, busy, trained = rerun_during_training()
    print()
    print(
        f"Another session's rerun of the scores page: median {idle * 1000:.0f} ms idle, {busy * 1000:.0f} ms while "
        f"a thread trains the induction preset as a session does ({trained:.1f} s)."
    )


if __name__ == "__main__":
    main()
