"""A page control's value in a step that does not draw the control.

A stepped lesson draws its controls (d_k, the mask, the seed) in one step; the other steps use what the
learner chose there. Streamlit forgets a widget's value after a run that does not draw it, so a step
without the control keeps the value by writing it back (Streamlit's documented way to keep a widget's
state across pages) and reads it, or the control's default when it was never moved.
"""

from __future__ import annotations

from typing import Any

import streamlit as st


def kept(key: str, default: Any) -> Any:
    """The value of the widget ``key`` in a run that does not draw it (kept for the step that does)."""
    if key not in st.session_state:
        return default
    st.session_state[key] = st.session_state[key]  # survives this run although no widget claims it
    return st.session_state[key]


def keep(*keys: str) -> None:
    """Keep the values of the widgets ``keys`` through a run that does not draw them (a step without them)."""
    for key in keys:
        kept(key, None)
