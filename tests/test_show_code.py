"""The code a page shows is code that page runs: every function passed to drawing.show_code is called.

Each page of the registry is opened with AppTest at the default input. ``drawing.show_code`` is
wrapped to record what the page shows, and a profiler (sys.setprofile in this thread and
threading.setprofile for AppTest's script thread) records the code object of every Python call made
while the page renders. Caches are cleared first, so a cached result cannot hide a call.
"""

from __future__ import annotations

import inspect
import sys
import threading
from collections.abc import Callable

import pytest
import streamlit as st

from tests.apptest_helpers import assert_clean, open_code, open_page
from tests.pages.answered import answered  # noqa: F401 (a fixture, used by pytestmark)
from ui import drawing, page
from ui.registry import LESSONS

# Pages are read as the learner sees them once every question is answered: a step asks before it shows (issue 36).
pytestmark = pytest.mark.usefixtures("answered")

# Pages that show a function they never call at the default input, today: the lead fixes these at
# merge (issue 8 item 5). The core now computes through ``attention``, split_heads and merge_heads.
SHOWN_NOT_CALLED: dict[str, tuple[str, ...]] = {}


def _param(path: str):
    """One pytest param per page, xfail (not strict) where SHOWN_NOT_CALLED lists offenders."""
    offenders = SHOWN_NOT_CALLED.get(path)
    if offenders is None:
        return pytest.param(path, id=path)
    reason = "shown but never called: " + ", ".join(offenders)
    return pytest.param(path, id=path, marks=pytest.mark.xfail(strict=False, reason=reason))


def _codes(shown: Callable) -> set:
    """The code objects a call of ``shown`` runs: a function's own (through functools.wraps), a class's methods."""
    if inspect.isclass(shown):
        return {member.__code__ for member in vars(shown).values() if inspect.isfunction(member)}
    return {inspect.unwrap(shown).__code__}


def _name(function: Callable) -> str:
    unwrapped = inspect.unwrap(function)
    return f"{unwrapped.__module__}.{unwrapped.__qualname__}"


@pytest.fixture
def shown(monkeypatch) -> list[Callable]:
    """Every function the page passes to drawing.show_code, in order (the real show_code still runs)."""
    recorded: list[Callable] = []
    original = drawing.show_code

    def recording_show_code(*functions: Callable, **kwargs) -> None:
        recorded.extend(functions)
        original(*functions, **kwargs)

    for module in (drawing, page):  # the page API re-exports it; widgets call it in ui.drawing
        monkeypatch.setattr(module, "show_code", recording_show_code)
    return recorded


def render_and_trace(path: str) -> set:
    """Open ``path`` with cleared caches and return the code objects of every Python call it made."""
    st.cache_data.clear()
    st.cache_resource.clear()
    called: set = set()

    def profiler(frame, event, arg) -> None:
        if event == "call":
            called.add(frame.f_code)

    threading.setprofile(profiler)  # AppTest runs the page script in its own thread
    sys.setprofile(profiler)
    try:
        at = open_page(path)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    assert_clean(at)
    return called


@pytest.mark.parametrize("path", [_param(lesson.path) for lesson in LESSONS])
def test_every_function_shown_is_called(path, shown):
    called = render_and_trace(path)
    if not path.endswith("overview.py"):
        assert shown, f"{path} shows no code"
    missing = [_name(function) for function in shown if not _codes(function) & called]
    assert not missing, f"{path} shows code it never runs: {missing}"


def test_the_code_is_drawn_only_while_its_expander_is_open():
    """A closed "Show the code" sends no code to the browser (which would highlight it on every load); opened, it
    shows the exact source of what the page runs, and stays open when the page is run again."""
    at = open_page("app_pages/scores.py")
    assert "Show the code" in [box.label for box in at.expander]
    assert not at.code, "a closed expander draws no code"
    at = open_code(at)
    code = " ".join(block.value for block in at.code)
    assert "def attention_scores" in code and "def dot_product_terms" in code
    assert "def attention_scores" in " ".join(block.value for block in at.run().code)
