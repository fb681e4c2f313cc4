"""The overview's forget / download / load controls and the sidebar's progress line, in the whole app (AppTest)."""

from __future__ import annotations

import json

import pytest
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

from runtime import browser_store
from tests.apptest_helpers import frames, open_page
from ui.widgets import progress

NONE_YET = "Exercises: none answered yet"
FILE = {
    "version": 1,
    "lessons": {"mistakes": {"wrong-axis": {"tries": 1, "correct": True, "revealed": False}}},
    "visited": ["mistakes"],
}


def marker(at) -> str:
    return next(c.value for c in at.sidebar.caption if c.value.startswith("Exercises:"))


def answer_first_exhibit(at):
    """Answer the museum's first exhibit with its first line (right or wrong, one answered)."""
    radio = at.radio(key="ex:museum:1")
    radio.set_value(radio.options[0])
    next(b for b in at.button if b.label == "Check").click()
    return at.run()


@pytest.fixture
def served(monkeypatch) -> dict[str, bytes]:
    """What the app puts in its media store, by URL (AppTest's store goes away after each run)."""
    files: dict[str, bytes] = {}
    load = MemoryMediaFileStorage.load_and_get_id

    def keep(self, path_or_data, mimetype, kind, filename=None):
        file_id = load(self, path_or_data, mimetype, kind, filename)
        files[self.get_url(file_id)] = path_or_data
        return file_id

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", keep)
    return files


def downloaded(at, served: dict[str, bytes]) -> dict:
    """The JSON the Download my progress button serves."""
    return json.loads(served[at.get("download_button")[0].proto.url])


def test_the_sidebar_line_counts_the_answer_of_the_same_run():
    at = answer_first_exhibit(open_page("app_pages/mistakes.py"))
    assert marker(at).endswith("/1 correct"), marker(at)


def test_forget_clears_answers_and_visits_and_tells_the_browser():
    at = answer_first_exhibit(open_page("app_pages/mistakes.py"))
    at.switch_page("app_pages/overview.py").run()
    at.session_state[browser_store.LOADED] = True  # as after the browser's first read
    at.run()
    assert json.loads(at.session_state[browser_store.WRITTEN])["lessons"]["mistakes"], "the answer was written"
    at.button(key="reset_progress").click().run()
    assert marker(at) == NONE_YET
    assert not any(e["tries"] for book in at.session_state[progress.STATE_KEY].values() for e in book.values())
    assert json.loads(at.session_state[browser_store.WRITTEN]) == {
        "version": 1,
        "lessons": {},
        "visited": ["overview"],
        "steps": {},
        "path": 0,
    }


def test_download_holds_the_answers_and_visits(served):
    at = answer_first_exhibit(open_page("app_pages/mistakes.py"))
    at.switch_page("app_pages/overview.py").run()
    data = downloaded(at, served)
    assert data["version"] == 1 and data["visited"] == ["mistakes", "overview"]
    (entry,) = data["lessons"]["mistakes"].values()
    assert entry["tries"] == 1


def test_load_merges_a_good_file_and_refuses_a_hostile_one_changing_nothing():
    at = open_page()
    hostile = json.dumps(FILE | {"lessons": {"<img src=x onerror=alert(1)>": {}}}).encode()
    at.get("file_uploader")[0].set_value(("p.json", hostile, "application/json"))
    at.run()
    assert [e.value for e in at.error] == [
        "This is not a progress file of this lab: it names a lesson this lab does not have. Nothing changed."
    ]
    assert marker(at) == NONE_YET and not at.session_state[progress.STATE_KEY].get("mistakes")
    at.get("file_uploader")[0].set_value(("p.json", json.dumps(FILE).encode(), "application/json"))
    at.run()
    assert not at.error
    assert [s.value for s in at.success] == ["Progress loaded: 1 exercises, 1 lessons visited."]
    assert marker(at) == "Exercises: 1/1 correct"
    assert frames(at)[0].loc["Mistakes museum", "correct"] == 1
