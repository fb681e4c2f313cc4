"""tools.browser.wait_quiet: a benchmark waits for a busy server to settle before it measures its reference."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tools.browser import cpu_seconds, wait_quiet

pytestmark = pytest.mark.serial  # a busy loop's CPU share and a wait measured in seconds: alone under xdist

BUSY_THEN_IDLE = "import time\nend = time.monotonic() + 2.0\nwhile time.monotonic() < end: pass\ntime.sleep(30)"


def test_wait_quiet_waits_for_a_busy_process_and_returns_once_it_idles():
    process = subprocess.Popen([sys.executable, "-c", BUSY_THEN_IDLE])
    try:
        waited = wait_quiet(process, timeout=20)
        used = cpu_seconds(process.pid)
    finally:
        process.kill()
        process.wait()
    assert 2.0 <= waited < 10, waited  # not before the busy two seconds ended, and soon after
    assert used >= 1.5, used  # it was busy, so the test measured a wait, not an idle process


def test_wait_quiet_returns_within_a_second_or_two_for_an_idle_process():
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        wait_quiet(process)  # the interpreter's own start may still be running in the first second
        assert wait_quiet(process) < 1.5
    finally:
        process.kill()
        process.wait()
