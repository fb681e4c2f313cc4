"""Debian's Chromium driven by Playwright, and a headless Streamlit server to point it at.

Shared by tools/screenshot.py, the browser tests and the benchmarks.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

CHROMIUM = os.environ.get("ATTENTION_LAB_CHROMIUM", "/usr/bin/chromium")
# Without the networking flags Chromium keeps calling home, which this closed network refuses.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# The status widget shows only after a delay, so the app's own script state says whether the script
# has finished (lesson 10's first run loads the model for seconds with no status widget yet).
RENDERED_JS = """() => document.querySelector("[data-testid='stApp'][data-test-script-state='notRunning']")
    && !document.querySelector("[data-stale='true']")
    && !document.querySelector("[data-testid='stMain'] [data-testid='stSkeleton']")
    && [...document.querySelectorAll("[data-testid='stMain'] :is([data-testid='stDataFrame'], "
        + "[data-testid='stVegaLiteChart'])")]
        .filter((el) => el.offsetParent !== null)
        .every((el) => el.querySelector('canvas, svg'))"""
SETTLE_MS = 300


def wait_for_app(page, timeout: float = 60_000) -> None:
    """Wait until the title is drawn, the script has finished and every visible table and chart is drawn."""
    page.wait_for_selector("[data-testid='stMain'] h1", timeout=timeout)
    page.wait_for_function("() => !document.querySelector('[data-testid=stStatusWidget]')", timeout=timeout)
    page.wait_for_function(RENDERED_JS, timeout=timeout)
    page.wait_for_timeout(SETTLE_MS)


ROOT = Path(__file__).resolve().parents[1]


def serve(script: Path, port: int, cwd: Path = ROOT, *, watch: bool = False) -> subprocess.Popen:
    """`streamlit run script` headless on 127.0.0.1:port from the repository root (its .streamlit config).

    Tests and benchmarks turn the file watcher off; ``watch`` keeps the shipped config's watcher, and reruns on save."""
    watcher = ["--server.runOnSave", "true"] if watch else ["--server.fileWatcherType", "none"]
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(script),
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        *watcher,
    ]
    return subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def wait_healthy(process: subprocess.Popen, port: int, timeout: float = 60) -> float:
    """Block until the health endpoint answers; returns the wall time (time.time()) it did."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return time.time()
        except OSError:
            time.sleep(0.02)
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited: {process.stderr.read().decode()[-2000:]}")
    process.kill()
    raise RuntimeError(f"streamlit did not become healthy within {timeout:.0f} s")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_quiet(process: subprocess.Popen, busy_share: float = 0.05, timeout: float = 120) -> float:
    """Block until the server's process uses under busy_share of a core over a second; returns the seconds waited.

    A fresh lab server warms up in a thread after it answers (ui/warmup.py: imports, heatmap specs, lesson 13's
    cost measurement). A benchmark that measured its reference page meanwhile would share the cores with that
    work and read a slow reference, which flatters every ratio."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        before = cpu_seconds(process.pid)
        time.sleep(1.0)
        if cpu_seconds(process.pid) - before < busy_share:
            break
    return time.monotonic() - start


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
