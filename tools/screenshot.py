"""Screenshot pages of a running Attention Lab with the system Chromium.

Usage: python tools/screenshot.py URL OUT.png [more URL/PNG pairs] [--width 1400] [--height 2800]
Streamlit scrolls inside its own container, so the viewport height decides how much is captured.
Waits for Streamlit to finish running, then saves a full-page PNG.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playwright.sync_api import sync_playwright

from tools.browser import CHROMIUM, CHROMIUM_ARGS, wait_for_app


def main(argv: list[str]) -> None:
    width, height = 1400, 2800
    if "--width" in argv:
        i = argv.index("--width")
        width = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2 :]
    if "--height" in argv:
        i = argv.index("--height")
        height = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2 :]
    pairs = list(zip(argv[0::2], argv[1::2], strict=True))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": width, "height": height})
        for url, out in pairs:
            page.goto(url)
            wait_for_app(page)
            page.screenshot(path=out, full_page=True)
            errors = page.locator("[data-testid='stException']").count()
            print(f"{out}: {'EXCEPTION ON PAGE' if errors else 'ok'}")
        browser.close()


if __name__ == "__main__":
    main(sys.argv[1:])
