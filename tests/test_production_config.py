"""The production config (.streamlit/config.toml): no traceback, exception type or server path reaches a browser."""

from __future__ import annotations

import tomllib

import pytest
from streamlit import config

from tests.apptest_helpers import ROOT, open_page
from ui import page

SERVER_PATH = "/srv/attention-lab/app_pages/secret_module.py"


def production_value() -> str:
    settings = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    return settings["client"]["showErrorDetails"]


@pytest.fixture
def production_error_details():
    """client.showErrorDetails as the shipped config sets it (the suite runs with "full", tests/conftest.py)."""
    before = config.get_option("client.showErrorDetails")
    config.set_option("client.showErrorDetails", production_value())
    yield
    config.set_option("client.showErrorDetails", before)


def test_the_shipped_config_hides_error_details():
    assert production_value() == "none"  # Streamlit 1.67: "full", "stacktrace", "type" or "none"


def test_an_uncaught_exception_on_a_page_shows_no_path_type_or_traceback(production_error_details, monkeypatch):
    def broken(*_args, **_kwargs):
        raise RuntimeError(f"failed in {SERVER_PATH}")

    monkeypatch.setattr(page, "lesson_title", broken)
    at = open_page("app_pages/scores.py")
    assert at.exception, "the failure is still seen by the test (AppTest records the exception element)"
    for element in at.exception:
        assert SERVER_PATH not in element.message and "/" not in element.message
        assert not element.stack_trace and not element.proto.type
        assert "This app has encountered an error" in element.message


def test_the_suite_sees_exceptions_in_full(monkeypatch):
    """The suite's own setting (tests/conftest.py): a failing test shows the real message."""

    def broken(*_args, **_kwargs):
        raise RuntimeError(f"failed in {SERVER_PATH}")

    monkeypatch.setattr(page, "lesson_title", broken)
    at = open_page("app_pages/scores.py")
    assert at.exception and SERVER_PATH in at.exception[0].message
