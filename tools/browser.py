"""Debian's Chromium driven by Playwright: launch flags and waiting for a Streamlit page to be drawn.

Shared by tools/screenshot.py, the browser tests and the benchmarks.
"""

from __future__ import annotations

import os

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
RENDERED_JS = """() => !document.querySelector("[data-testid='stMain'] [data-testid='stSkeleton']")
    && [...document.querySelectorAll("[data-testid='stDataFrame'], [data-testid='stVegaLiteChart']")]
        .filter((el) => el.offsetParent !== null)
        .every((el) => el.querySelector('canvas, svg'))"""
SETTLE_MS = 300


def wait_for_app(page, timeout: float = 60_000) -> None:
    """Wait until the title is drawn, the script has finished and every visible table and chart is drawn."""
    page.wait_for_selector("[data-testid='stMain'] h1", timeout=timeout)
    page.wait_for_function("() => !document.querySelector('[data-testid=stStatusWidget]')", timeout=timeout)
    page.wait_for_function(RENDERED_JS, timeout=timeout)
    page.wait_for_timeout(SETTLE_MS)
