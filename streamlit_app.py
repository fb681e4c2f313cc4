"""Attention Lab: `streamlit run streamlit_app.py` serves lab.py, the app's script.

This file only starts the server. Streamlit sees the ``st.App`` below and runs it; its lifespan
imports torch, pandas, Altair and the lab in a thread as the server starts (``runtime/warmup.py``), so
the first visitor's browser loads Streamlit's bundle while the imports run instead of before them,
after limiting malloc to two arenas (``runtime/memory.py``).
The navigation, the sidebar and the pages are in ``lab.py``.
"""

from __future__ import annotations

from contextlib import asynccontextmanager

import streamlit as st

from runtime import memory, switches, warmup


@asynccontextmanager
async def warm_imports(_app):
    memory.limit_malloc_arenas()  # before any session's thread: see runtime/memory.py
    if not switches.off("warmup"):  # a benchmark's switch (runtime/switches.py)
        warmup.start()
    try:
        yield
    finally:
        warmup.stop()  # a server stopped before its first page does not wait for the chart warm-up


app = st.App("lab.py", lifespan=warm_imports)
