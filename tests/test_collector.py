"""The server freezes long-lived objects out of the garbage collector after a run that imported modules."""

from __future__ import annotations

import gc
import sys
import types

import pytest

from runtime import collector
from tests.apptest_helpers import open_page


@pytest.fixture
def unfrozen(monkeypatch):
    """Start with nothing frozen and no freeze remembered; unfreeze again afterwards."""
    gc.unfreeze()
    monkeypatch.setattr(collector, "_modules_at_last_freeze", 0)
    yield
    gc.unfreeze()


def test_freezes_once_per_set_of_imports(unfrozen, monkeypatch):
    assert collector.freeze_after_imports() is True
    frozen = gc.get_freeze_count()
    assert frozen > 1000  # the test process's modules, functions and classes

    kept = [[i] for i in range(500)]  # tracked objects made after the freeze
    assert collector.freeze_after_imports() is False  # no new module: later objects stay collectable
    # nothing more is frozen (a frozen object that another thread lets go of leaves, so the count may only shrink)
    assert gc.get_freeze_count() <= frozen

    monkeypatch.setitem(sys.modules, "_newly_imported_for_test", types.ModuleType("_newly_imported_for_test"))
    assert collector.freeze_after_imports() is True
    assert gc.get_freeze_count() >= frozen + len(kept)


def test_a_run_of_the_app_freezes_what_it_imported(unfrozen):
    at = open_page("app_pages/scores.py")
    assert not at.exception
    assert gc.get_freeze_count() > 1000
