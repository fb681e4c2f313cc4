"""Import the app's heavy modules once, when the server starts, while the first browser loads.

``streamlit run streamlit_app.py`` starts the server at once; the first page request then spends
about a second fetching Streamlit's JS bundle before any script runs, and the first script run
spent 2-3 s importing torch, pandas, Altair and the lab. ``streamlit_app.py``'s lifespan calls
``start()``: a thread imports the modules below while the server answers the browser, and the
script (``lab.py``) calls ``wait()`` before its own imports, so it finds them in ``sys.modules``.
The script never imports alongside the thread: two threads importing the same packages can meet a
half-initialised module.

Without ``start()`` (AppTest, ``streamlit run lab.py``) ``wait()`` returns at once and the script
imports as usual.

Once the imports are done and the first page has been drawn (``first_run_finished``, or after
``FIRST_RUN_WAIT_SECONDS``), the same thread builds the heatmap specs the lessons ask for first
(``ui.drawing.warm_heatmaps``: Altair builds one per kind and look, slowly, the first ones of a process the
slowest) and the spec the browser warm-up draws (``runtime.preload``), and times attention for lesson 13's "The cost
of attention" (``ui.models.measured``). Without it, the first learner to open each step after a restart waited for
those builds, several times a step's usual run (docs/benchmarks.md,
"A server's first visit of a step").
"""

from __future__ import annotations

import importlib
import logging
import sys
import threading

# What lab.py imports (tested) and what every lesson page imports next (pandas, Altair, pyarrow).
MODULES = (
    "torch",
    "attention_core.i18n",
    "runtime.browser_store",
    "runtime.collector",
    "ui.format",
    "ui.widgets.inputs",
    "ui.widgets.language",
    "ui.registry",
    "runtime.memory",
    "runtime.preload",
    "runtime.switches",
    "ui.widgets.progress",
    "ui.drawing",
    "ui.charts",
)
WAIT_SECONDS = 120

_imported = threading.Event()
_first_run_done = threading.Event()
_stopping = threading.Event()
_charts_done = threading.Event()
# The chart warm-up waits for the first script run (the first page) to finish, at most this long: sharing the
# interpreter with it, the builds tripled that run (docs/benchmarks.md, "A server's first visit of a step").
FIRST_RUN_WAIT_SECONDS = 30
_thread: threading.Thread | None = None


def _import_modules() -> None:
    try:
        for name in MODULES:
            importlib.import_module(name)
        # One torch thread, as lab.py sets for the app, before this thread times attention (ui.models.measured):
        # timed on two threads of a busy machine, the smallest size read a hundred times its work.
        sys.modules["torch"].set_num_threads(1)
    finally:
        _imported.set()  # an import error shows up again, with its traceback, in the script's own import
    _first_run_done.wait(FIRST_RUN_WAIT_SECONDS)
    try:
        if not _stopping.is_set():
            warm_charts()
    finally:
        _charts_done.set()


def warm_charts() -> None:
    """Build the heatmap specs and the browser warm-up's spec and measure the cost of attention (lesson 13), after
    the imports (the script may run meanwhile)."""
    try:
        from runtime import preload
        from ui import drawing
        from ui.models import measured

        drawing.warm_heatmaps()
        preload.warm_specs()
        measured.attention_cost()
    except Exception:  # a warm-up only saves time: the pages build what they need themselves
        logging.getLogger(__name__).exception("warming the chart specs failed")


def start() -> None:
    """Begin importing MODULES in a background thread (once per process)."""
    global _thread
    if _thread is None:
        # not a daemon: a server stopped during the warm-up waits for it (a second) instead of aborting in torch
        _thread = threading.Thread(target=_import_modules, name="attention-lab-warmup", daemon=False)
        _thread.start()


def first_run_finished() -> None:
    """The script's first run has finished (lab.py says so after every run): the chart warm-up may begin."""
    _first_run_done.set()


def charts_pending() -> bool:
    """Whether this server's warm-up will build the chart specs but has not yet (a page can leave them to it)."""
    return _thread is not None and not _charts_done.is_set()


def stop() -> None:
    """The server is stopping: a warm-up still waiting for the first page ends without building anything."""
    _stopping.set()
    _first_run_done.set()


def wait() -> bool:
    """Block until the warm-up thread is done, if one was started; True if there was one to wait for."""
    if _thread is None:
        return False
    _imported.wait(WAIT_SECONDS)
    return True
