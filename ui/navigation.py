"""The place under a lesson page's title that its step bar and whole-lesson switch are drawn in."""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.runtime.scriptrunner import get_script_run_ctx

# The container under the page's title that the step bar and the whole-lesson switch are drawn in, per session (the
# page's title reserves it, ui.display.lesson_title; ui.steps.lesson_steps takes it): the step's title comes before
# the page's own controls, which every step of the lesson uses.
_NAVIGATION: dict[str, DeltaGenerator] = {}


def _session() -> str:
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx else ""


def reserve_navigation() -> None:
    """Keep the place under the page's title for the step navigation (lesson_title calls this)."""
    _NAVIGATION[_session()] = st.container()


def navigation() -> DeltaGenerator:
    """The place reserved under the title, or here when the page reserved none."""
    return _NAVIGATION.pop(_session(), None) or st.container()
