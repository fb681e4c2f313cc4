"""Three copies of the app behind Debian's nginx (deploy/nginx.conf), six Chromium learners, one copy killed.

The small form of `python -m deploy.many_copies` (30 learners): every learner sees its own number
(attention_core's), page and websocket reach the same copy, new learners spread over the copies, and
the learners of a killed copy reconnect to another one where their page works again and their progress
(an answered exercise, kept in their browser) is there.
"""

from __future__ import annotations

import re
import shutil
import threading

import pytest

from tests.e2e.conftest import REQUIRE

pytestmark = pytest.mark.serial  # three servers, nginx and six learners with time limits: alone under xdist


@pytest.mark.browser
def test_three_copies_behind_nginx_keep_each_learner_and_survive_a_killed_copy():
    from deploy import many_copies

    if not shutil.which(many_copies.NGINX):
        if REQUIRE:
            pytest.fail(f"ATTENTION_LAB_REQUIRE_BROWSER=1 but no nginx at {many_copies.NGINX} (apt-get install nginx)")
        pytest.skip(f"no nginx at {many_copies.NGINX} (apt-get install nginx)")
    # In its own thread: the suite's browser fixture already runs Playwright's event loop in this one, and the
    # sync API refuses to start a second loop inside it.
    result: dict = {}

    def run() -> None:
        try:
            result["run"] = many_copies.run(sessions=6, copies=3, emit=print)
        except BaseException as error:  # raised again below, in the test's own thread
            result["error"] = error

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    if "error" in result:
        raise result["error"]
    lines, errors = result["run"]
    assert errors == [], "\n".join(lines)
    moved = next(line for line in lines if line.startswith("| its sessions' websockets moved to"))
    assert "127.0.0.1:" in moved
    kept = next(line for line in lines if line.startswith("| its learners whose progress was back"))
    assert re.search(r"\| (\d+) of \1 \|$", kept) and "| 0 of" not in kept, kept
