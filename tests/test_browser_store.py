"""The browser store's messages: read once per session, write only when the book changed, trust nothing it reads."""

from __future__ import annotations

import json

import pytest

from runtime import browser_store
from ui.widgets import progress

STORED = {
    "version": 1,
    "lessons": {"softmax": {"weight-1a2b3c4d5e6f": {"tries": 1, "correct": True, "revealed": False}}},
    "visited": ["softmax"],
}


@pytest.fixture
def state(monkeypatch) -> dict:
    state: dict = {}
    monkeypatch.setattr(progress.st, "session_state", state)
    monkeypatch.setattr(browser_store.st, "session_state", state)
    return state


def test_the_first_run_reads_and_later_runs_write_only_changes(state):
    assert browser_store.message() == {"read": 1}
    assert browser_store.message() == {"read": 1}, "until the browser answers"
    browser_store.receive(json.dumps(STORED))
    assert progress.counts("softmax") == (1, 1)
    assert browser_store.message() == {"write": progress.payload_text()}
    assert browser_store.message() is None, "nothing changed: nothing sent"
    progress.note_try("scores", "weight-000000000001", correct=False)
    written = browser_store.message()["write"]
    assert json.loads(written)["lessons"]["scores"] == {
        "weight-000000000001": {"tries": 1, "correct": False, "revealed": False}
    }
    progress.reset()
    assert browser_store.message() == {"write": ""}, "an empty book removes the browser's value"


@pytest.mark.parametrize("value", ["", None, 42, "not json", json.dumps(STORED | {"lessons": {"<b>": {}}})])
def test_a_missing_or_damaged_stored_value_starts_empty(state, value):
    browser_store.receive(value)
    assert state[browser_store.LOADED] is True
    assert progress.totals() == (0, 0)


def test_another_tabs_value_merges_after_the_first_read_and_the_tabs_settle(state):
    browser_store.receive("")  # this tab's first read: nothing stored yet
    progress.note_try("scores", "weight-000000000001", correct=True)
    assert "write" in browser_store.message()
    browser_store.receive(json.dumps(STORED))  # another tab wrote its book (the storage event)
    assert progress.totals() == (2, 2)
    merged = browser_store.message()["write"]
    assert set(json.loads(merged)["lessons"]) == {"scores", "softmax"}
    browser_store.receive(merged)  # the other tab's answer to our write: nothing new, nothing sent
    assert browser_store.message() is None


def test_a_book_with_only_the_checks_around_the_path_is_written_not_removed(state):
    browser_store.receive("")
    progress.note_check("pre", dict.fromkeys(("scores", "softmax", "context", "scaling", "masking"), "skipped"))
    written = browser_store.message()["write"]
    assert written and json.loads(written)["checks"]["pre"]["scores"] == "skipped"
    progress.reset()
    assert browser_store.message() == {"write": ""}, "forgetting them removes the browser's value"
