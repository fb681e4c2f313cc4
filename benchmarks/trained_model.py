"""Speed and memory of lesson 10 (all-MiniLM-L6-v2), printed as a markdown table.

    .venv/bin/python -m benchmarks.trained_model

Measures: loading the model (once per process: safetensors and tokenizers imports, checksum, weights, tokenizer);
one forward pass of 32 word pieces (median of 5); the page's server-side rerun when the learner
changes the layer or head (AppTest, median of 5, a head not seen before each time); resident
memory of a server after 10 headless-Chromium sessions that opened this page with different sentences.
Targets (2-core machine): 4 s, 150 ms, 100 ms, 690 MB. A trivial one-widget page is timed in the same
run: on a busy machine the ratio to it is the figure to trust.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from attention_core import trained_model as tm  # noqa: E402
from benchmarks.browser import rss_mb  # noqa: E402
from benchmarks.run import trivial_rerun  # noqa: E402
from tests.apptest_helpers import open_page, sentence_params  # noqa: E402

RUNS = 5
PAGE = "app_pages/trained_model.py"
SENTENCE_32 = " ".join(["the cat sat on the mat while the dog watched"] * 3)  # 30 words, 32 pieces


def load_and_forward() -> tuple[float, float, int]:
    """(load seconds, median forward seconds, pieces) in this process."""
    torch.set_num_threads(1)  # as the app runs
    start = time.perf_counter()
    trained = tm.load_model()
    load = time.perf_counter() - start
    tm.run_forward(trained, SENTENCE_32)  # warm-up
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        forward = tm.run_forward(trained, SENTENCE_32)
        times.append(time.perf_counter() - start)
    return load, statistics.median(times), len(forward.pieces)


def head_change_rerun(params: dict[str, str] | None = None) -> float:
    """Median server time of a rerun after picking another layer and head (AppTest): the default preset, or params."""
    at = open_page(PAGE, params or {}, timeout=300)
    at.run()
    times = []
    for i in range(RUNS):
        at.selectbox(key="tm_layer").set_value(2 + i % 5)
        at.selectbox(key="tm_head").set_value(3 + i)
        start = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - start)
    assert not at.exception, [e.value for e in at.exception]
    return statistics.median(times)


def server_memory() -> tuple[float, float]:
    """Server RSS in MB after 1 and after 10 Chromium sessions that opened this page."""
    from playwright.sync_api import sync_playwright

    from tests.e2e.conftest import free_port, start_server
    from tools.browser import CHROMIUM, CHROMIUM_ARGS, wait_for_app

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        port = free_port()
        server = start_server(port)
        try:
            pages = []
            for i in range(10):
                page = browser.new_context().new_page()
                sentence = "+".join(f"word{i}x{j}" for j in range(8 + i))
                page.goto(f"http://127.0.0.1:{port}/trained_model?example=Your+own+sentence&sentence={sentence}")
                wait_for_app(page, timeout=240_000)
                if i == 0:
                    after_one = rss_mb(server.pid)
                pages.append(page)
            after_ten = rss_mb(server.pid)
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
        browser.close()
    return after_one, after_ten


def main() -> None:
    print("| measure | value | target |")
    print("|---|---:|---:|")
    load, forward, pieces = load_and_forward()
    print(f"| model load (once per process) | {load:.2f} s | ≤ 4 s |", flush=True)
    print(f"| forward pass, {pieces} pieces (median of {RUNS}) | {forward * 1000:.1f} ms | ≤ 150 ms |", flush=True)
    rerun, long_rerun, trivial = head_change_rerun(), head_change_rerun(sentence_params(SENTENCE_32)), trivial_rerun()
    label = f"page rerun after a layer/head change, default preset (median of {RUNS})"
    print(f"| {label} | {rerun * 1000:.0f} ms | < 100 ms |")
    print(f"| the same at {pieces} pieces | {long_rerun * 1000:.1f} ms | |")
    print(f"| trivial one-widget page, same run (the noise floor) | {trivial * 1000:.1f} ms | |")
    print(f"| ratio: layer/head rerun to trivial rerun | {rerun / trivial:.1f} | |", flush=True)
    after_one, after_ten = server_memory()
    print(f"| server memory after 1 session on this page | {after_one:.0f} MB | |")
    print(f"| server memory after 10 sessions on this page | {after_ten:.0f} MB | ≤ 690 MB |")


if __name__ == "__main__":
    main()
