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
"""

from __future__ import annotations

import importlib
import threading

# What lab.py imports (tested) and what every lesson page imports next (pandas, Altair, pyarrow).
MODULES = (
    "torch",
    "ui.browser_store",
    "ui.collector",
    "ui.format",
    "ui.inputs",
    "ui.lessons",
    "ui.preload",
    "ui.progress",
    "ui.display",
    "ui.charts",
)
WAIT_SECONDS = 120

_imported = threading.Event()
_thread: threading.Thread | None = None


def _import_modules() -> None:
    try:
        for name in MODULES:
            importlib.import_module(name)
    finally:
        _imported.set()  # an import error shows up again, with its traceback, in the script's own import


def start() -> None:
    """Begin importing MODULES in a background thread (once per process)."""
    global _thread
    if _thread is None:
        _thread = threading.Thread(target=_import_modules, name="attention-lab-warmup", daemon=True)
        _thread.start()


def wait() -> bool:
    """Block until the warm-up thread is done, if one was started; True if there was one to wait for."""
    if _thread is None:
        return False
    _imported.wait(WAIT_SECONDS)
    return True
