"""Attention Lab: entry point. Page config, the shared sidebar, the navigation; nothing else."""

from __future__ import annotations

import streamlit as st
import torch

from ui import inputs

LESSONS = {
    "Start": [
        st.Page("app_pages/overview.py", title="Overview", icon=":material/home:", default=True),
    ],
    "Self-attention, step by step": [
        st.Page("app_pages/scores.py", title="1. Attention scores", icon=":material/grid_on:"),
        st.Page("app_pages/softmax.py", title="2. Softmax", icon=":material/functions:"),
        st.Page("app_pages/context_vectors.py", title="3. Context vectors", icon=":material/merge:"),
        st.Page("app_pages/qkv_projections.py", title="4. Queries, keys, values", icon=":material/key:"),
        st.Page("app_pages/scaling.py", title="5. Scaling by √d_k", icon=":material/straighten:"),
    ],
    "Towards a transformer block": [
        st.Page("app_pages/masking.py", title="6. Masking", icon=":material/visibility_off:"),
        st.Page("app_pages/multi_head.py", title="7. Multi-head attention", icon=":material/view_column:"),
        st.Page("app_pages/positions.py", title="8. Word order and positions", icon=":material/format_list_numbered:"),
        st.Page("app_pages/pipeline.py", title="9. The full pipeline", icon=":material/account_tree:"),
    ],
}


# The lab multiplies matrices of a few dozen numbers: one thread avoids thread hand-offs
# that cost milliseconds per call (and a Community Cloud app has a fraction of a CPU).
torch.set_num_threads(1)


def run() -> None:
    st.set_page_config(page_title="Attention Lab", page_icon=":material/visibility:", layout="wide")
    page = st.navigation(LESSONS)
    inputs.sidebar()
    reason = inputs.problem()
    if reason:
        st.error(f"{reason} The numbers below still use the last valid input.", icon=":material/error:")
    note = inputs.link_note()
    if note:
        st.warning(note, icon=":material/link_off:")
    page.run()


run()
