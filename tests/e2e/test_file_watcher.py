"""The shipped file watcher (issue 37, item 6): with a .venv inside the project, Streamlit sets no inotify watch
(watchdog would watch every folder of the project recursively), and editing a page still reloads it.

The app is copied to a temporary folder, with the checkout's .venv linked into it as a developer's would sit, and
served with the shipped .streamlit/config.toml (tools.browser.serve(watch=True): the config's watcher, rerun on save).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.e2e.conftest import ROOT, free_port, screenshot, wait_for_app
from tools.browser import serve, stop, wait_healthy

SKIP = shutil.ignore_patterns(".git", ".venv", "test-artifacts", "__pycache__", "*.pyc", ".pytest_cache")


def inotify_watches(pid: int) -> int:
    """How many inotify watches a process holds (Linux /proc)."""
    count = 0
    for info in Path(f"/proc/{pid}/fdinfo").iterdir():
        try:
            count += sum(1 for line in info.read_text().splitlines() if line.startswith("inotify"))
        except OSError:
            continue
    return count


@pytest.fixture
def copied_app(tmp_path):
    app = tmp_path / "lab"
    shutil.copytree(ROOT, app, ignore=SKIP)
    venv = ROOT / ".venv"
    if venv.is_dir():
        (app / ".venv").symlink_to(venv, target_is_directory=True)
    return app


@pytest.mark.browser
def test_a_page_edit_reloads_it_and_the_venv_is_not_watched(page, copied_app):
    port = free_port()
    process = serve(copied_app / "streamlit_app.py", port, cwd=copied_app, watch=True)
    try:
        wait_healthy(process, port)
        page.goto(f"http://127.0.0.1:{port}/")
        wait_for_app(page)
        assert inotify_watches(process.pid) == 0, "no folder of the project (.venv included) is watched"
        overview = copied_app / "app_pages" / "overview.py"
        source = overview.read_text(encoding="utf-8")
        marker = "Edited while the server ran."
        anchor = "    st.title(_(TITLE))\n"
        assert anchor in source, "the overview's title line moved: edit this test's anchor"
        overview.write_text(source.replace(anchor, f'{anchor}    st.caption("{marker}")\n', 1), encoding="utf-8")
        page.get_by_text(marker).wait_for(timeout=60_000)  # the poller notices the change and the page reruns
        screenshot(page, "file-watcher-edited")
    finally:
        stop(process)
