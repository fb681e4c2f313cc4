"""Attention Lab's script: page config, the shared sidebar, the navigation; nothing else.

``streamlit run streamlit_app.py`` serves it (and imports what it needs as the server starts).
"""

from __future__ import annotations

import streamlit as st

from runtime import warmup

warmup.wait()  # the server may still be importing these in its warm-up thread: never import alongside it

import torch  # noqa: E402

from attention_core.i18n import _  # noqa: E402
from runtime import browser_store, collector, memory, preload, switches  # noqa: E402
from ui import drawing, registry  # noqa: E402
from ui.format import learner_text  # noqa: E402
from ui.widgets import inputs, language, progress  # noqa: E402

# The lab multiplies matrices of a few dozen numbers: one thread avoids thread hand-offs
# that cost milliseconds per call (and a Community Cloud app has a fraction of a CPU).
torch.set_num_threads(1)


def run() -> None:
    # An emoji favicon is drawn in the browser; a ":material/...:" page icon is fetched from fonts.gstatic.com.
    st.set_page_config(page_title="Attention Lab", page_icon="👁️", layout="wide")
    language.picker()  # first: every string after it is in the learner's language
    pages = {
        lesson.name: st.Page(lesson.path, title=lesson.label, icon=lesson.icon, default=lesson.default)
        for lesson in registry.LESSONS
    }
    page = st.navigation(
        {_(section): [pages[lesson.name] for lesson in group] for section, group in registry.sections().items()},
        expanded=True,  # every lesson listed: Streamlit folds the list after 10 pages otherwise
    )
    progress.note_visit(next(name for name, entry in pages.items() if entry == page))
    drawing.page_style()  # the lab's few layout rules and its page script (ui.widgets.a11y)
    inputs.sidebar()
    marker = st.sidebar.empty()  # filled after the page: it counts the answer this run recorded
    reason = inputs.problem()
    if reason:
        st.error(
            _("{reason} The numbers below still use the last valid input.", reason=learner_text(reason)),
            icon=":material/error:",
        )
    note = " ".join(note for note in (language.link_note(), inputs.link_note()) if note)
    if note:
        st.warning(learner_text(note), icon=":material/link_off:")
    try:
        page.run()
    finally:  # also when a page stops early (st.stop)
        marker.caption(progress.progress_marker())
        browser_store.sync()
        if not switches.off("preload"):  # the browser readies charts, forms and code
            preload.mount(specs_ready=not warmup.charts_pending())
        warmup.first_run_finished()  # the server's chart warm-up waited for its first page
        memory.run_finished()  # a real model no session is on a page of is let go (runtime/memory.py)
    if not switches.off("collector"):
        collector.freeze_after_imports()  # after the page's imports: no full collection walks them again


run()
