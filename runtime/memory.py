"""The server's memory: fewer malloc arenas, and each real model held only while a session is on a page that used it.

Fewer malloc arenas: Streamlit runs every script run in a thread of its own, and glibc's malloc gives each new
thread an arena of its own, up to 8 per core. Tensors, frames and Arrow buffers freed by one run then leave holes in
many arenas that later runs, on other threads, do not reuse. Measured on this app (``benchmarks.run
--memory-only``: 10 sessions that opened every page whole, SmolLM2 included): 940 MB with glibc's default, 873 MB
with two arenas. ``streamlit_app.py``'s lifespan calls ``limit_malloc_arenas()`` as the server starts, before any
session thread exists. Elsewhere than glibc (macOS, musl) it does nothing.

The real models' lifetime (issue 37: the server has 690 MB): SmolLM2 (115 MB with its tokenizer, and up to 40 MB of
kept forwards) and all-MiniLM-L6-v2 (up to 90 MB of mapped weights) are loaded when a page first asks for them
(``ui.models.smol.model()``, ``ui.models.trained.model()`` call ``held``) and let go as soon as no connected
session is on a page that used them: at the end of every script run (``lab.py`` calls ``run_finished``) and every
``CHECK_SECONDS`` for the sessions whose browser went away. A session that comes back to such a page loads the model
again (SmolLM2 in about 2 s, within its first-load budget of 4 s). Only a real server lets models go: in a script and
under AppTest (whose mock Runtime gives every test one session id) nothing is released.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import dataclasses
import gc
import threading
from collections.abc import Callable

MALLOC_ARENAS = 2  # one per core of the 2-core machines the app is measured on (Community Cloud: 0.078-2 CPU)
M_ARENA_MAX = -8  # glibc's mallopt parameter (malloc.h)
CHECK_SECONDS = 30.0  # how often the server looks for models that no connected session holds


def _libc():
    return ctypes.CDLL(ctypes.util.find_library("c"))


def limit_malloc_arenas(count: int = MALLOC_ARENAS) -> bool:
    """Ask glibc's malloc for at most ``count`` arenas; True if it accepted (False: not glibc, or refused)."""
    with contextlib.suppress(OSError, AttributeError, TypeError):  # no C library by that name, or no mallopt
        return bool(_libc().mallopt(M_ARENA_MAX, count))
    return False


def return_freed_memory() -> None:
    """Collect, then hand the heap's free pages back to the system (glibc's malloc_trim; elsewhere nothing)."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError, TypeError):
        _libc().malloc_trim(0)


# --- the real models' lifetime ---------------------------------------------------------------------------------


@dataclasses.dataclass
class Lifetime:
    """One model's holders: the sessions that used it, each with the page it used it on."""

    release: Callable[[], None]  # drops the model and what it made (its cache_resource, its kept forwards)
    holders: dict[str, str] = dataclasses.field(default_factory=dict)  # session id -> page script hash
    loaded: bool = False  # held() since the last release
    releases: int = 0


_models: dict[str, Lifetime] = {}
_lock = threading.Lock()
_checker: threading.Thread | None = None


def lifetime(name: str, release: Callable[[], None]) -> None:
    """Register the model ``name``: ``release()`` lets it go when no connected session holds it."""
    with _lock:
        _models.setdefault(name, Lifetime(release))


def place() -> tuple[str | None, str]:
    """(session id, page script hash) of the script run on this thread; (None, "") outside one."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None:
        return None, ""
    return ctx.session_id, ctx.page_script_hash


def held(name: str, session: str | None = None, page: str | None = None) -> None:
    """The session of this script run uses the model ``name`` on its page: it stays loaded while the session is on
    that page (``session``/``page`` default to this run's)."""
    here = place()
    session, page = session or here[0], here[1] if page is None else page
    with _lock:
        model = _models[name]
        model.loaded = True
        if session is not None:
            model.holders[session] = page
    if session is not None:
        _start_checker()


def leave(session: str, page: str) -> None:
    """The session's run on ``page`` ended: it no longer holds the models it used on another page."""
    with _lock:
        for model in _models.values():
            if model.holders.get(session, page) != page:
                del model.holders[session]


def release_unheld(connected: Callable[[str], bool] | None = None) -> list[str]:
    """Let go of every loaded model that no connected session holds; returns their names.

    ``connected(session id)``: the Streamlit Runtime's (a session whose browser went away is not connected); without
    a Runtime (AppTest, a script) nothing is released."""
    connected = connected or _connected()
    if connected is None:
        return []
    with _lock:
        for model in _models.values():
            for session in [session for session in model.holders if not connected(session)]:
                del model.holders[session]
        names = [name for name, model in _models.items() if model.loaded and not model.holders]
        for name in names:
            _models[name].loaded = False
            _models[name].releases += 1
    for name in names:
        _models[name].release()
    if names:
        return_freed_memory()
    return names


def run_finished() -> None:
    """End of a script run (lab.py): this session leaves the models of other pages; unheld models are let go."""
    session, page = place()
    if session is not None:
        leave(session, page)
    release_unheld()


def _connected() -> Callable[[str], bool] | None:
    """The Runtime's test of a connected session, or None where no server serves browsers: a script, or AppTest,
    whose mock Runtime exists only during a run and gives every test's session one id ("test session id"), so one
    test's run on another page would let go a model the next test loads again."""
    from streamlit import config
    from streamlit.runtime import Runtime

    if not Runtime.exists() or config.get_option("global.appTest"):
        return None
    return Runtime.instance().is_active_session


def _check_every(seconds: float) -> None:
    while True:
        threading.Event().wait(seconds)
        with contextlib.suppress(Exception):  # a server shutting down: the next check, or none
            release_unheld()


def _start_checker() -> None:
    """The thread that lets models go when the sessions that held them went away (once per process, real server)."""
    global _checker
    if _checker is not None or _connected() is None:
        return
    with _lock:
        if _checker is None:
            _checker = threading.Thread(target=_check_every, args=(CHECK_SECONDS,), name="model-lifetime", daemon=True)
            _checker.start()


def forget(store) -> None:
    """Empty a ``runtime.cache.ProcessCache`` (the forwards of a model let go)."""
    with store.lock:
        store.items.clear()
        store.sizes.clear()
        store.bytes = 0
