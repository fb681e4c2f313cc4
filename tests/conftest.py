"""Shared fixtures. Browser fixtures live in tests/e2e/conftest.py."""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # so tests import attention_core and ui from the checkout

import torch  # noqa: E402

# The suite multiplies tiny tensors: one thread is faster than two fighting over small work,
# and leaves the second core to the Streamlit server and Chromium of the browser tests.
torch.set_num_threads(1)

# .streamlit/config.toml hides every exception's details from browsers (client.showErrorDetails = "none");
# AppTest reads that file too, so here the suite shows them in full: a failing test names the real error.
# tests/test_production_config.py checks the production value on its own.
from streamlit import config as _streamlit_config  # noqa: E402

_streamlit_config.set_option("client.showErrorDetails", "full")

# Every AppTest's first run scans the metadata of every installed package for Streamlit components
# (streamlit.components.v2.manifest_scanner: about 1,000 files read, 0.4 s of CPU) for a list that cannot change
# while the suite runs; the suite opens some 2,000 AppTests. Scanned once per process here, the same answer.
from streamlit.components.v2 import manifest_scanner as _manifest_scanner  # noqa: E402

_scan_component_manifests = functools.cache(_manifest_scanner.scan_component_manifests)
_manifest_scanner.scan_component_manifests = lambda max_workers=None: list(_scan_component_manifests())


# --- In parallel: pytest-xdist (`-n 3 --dist loadgroup` in pyproject.toml) -----------------------------------------
# Each worker is a process of its own, with its own Streamlit caches, browser fixtures and temporary folders.


@pytest.hookimpl(tryfirst=True)  # before xdist's worker reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A module whose tests share a module-scoped fixture (a model loaded, a scratch server) runs on one worker, so
    the fixture is built once; the other tests are handed out one by one to whichever worker is free."""
    if not hasattr(config, "workerinput"):  # not an xdist worker: -n 0, -p no:xdist, or no xdist installed
        return
    for item in items:
        fixtures = getattr(item, "_fixtureinfo", None)
        if fixtures is None or item.get_closest_marker("xdist_group"):
            continue
        if any(defs[-1].scope in ("module", "package") for defs in fixtures.name2fixturedefs.values() if defs):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
    for item in items:  # every group, ours and any a test names itself
        mark = item.get_closest_marker("xdist_group")
        if mark is not None:
            _name_group(item, str(mark.args[0] if mark.args else mark.kwargs.get("name", "default")))


def _name_group(item: pytest.Item, group: str) -> None:
    """Put the group in the test's id ('tests/test_bert.py::test_x@tests.test_bert'), where xdist's loadgroup
    scheduler reads it. xdist 3.8 writes it to ``item._nodeid``, which pytest 9 no longer reads (a node's id is
    ``item._id``), so without this every test of a grouped module went to any worker and each worker built the
    module's fixtures again (tests/test_smollm2.py's transformers reference: three times 40 s)."""
    from _pytest.nodeid import NodeId

    if item.nodeid.rsplit("@", 1)[-1] != group:
        item._id = NodeId.parse(f"{item.nodeid}@{group}")


@contextmanager
def _machine_share(config: pytest.Config, alone: bool) -> Iterator[None]:
    """Across the workers of one run: a test marked ``serial`` waits for the running tests to finish and runs with
    no other test beside it (it measures time, or loads the machine on purpose); the others run side by side.

    Two file locks in the run's temporary folder: every test takes ``gate`` for a moment, and a serial one keeps
    it, so no new test starts while it waits for ``run``, which the others hold shared while they run."""
    try:
        import fcntl
    except ImportError:  # Windows: no flock, tests marked serial run beside the others
        yield
        return
    folder = Path(config.option.basetemp).parent  # xdist gives each worker <the run's basetemp>/gwN
    with open(folder / "serial.gate", "a") as gate, open(folder / "serial.run", "a") as run:
        fcntl.flock(gate, fcntl.LOCK_EX)
        if alone:
            fcntl.flock(run, fcntl.LOCK_EX)
        else:
            fcntl.flock(run, fcntl.LOCK_SH)
            fcntl.flock(gate, fcntl.LOCK_UN)
        yield  # both released as the files close


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    if not hasattr(item.config, "workerinput"):  # not under xdist (-n 0, or a run without it)
        return (yield)
    with _machine_share(item.config, alone=item.get_closest_marker("serial") is not None):
        return (yield)
