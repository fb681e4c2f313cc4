"""Fewer malloc arenas: the server's memory stays closer to what its sessions really hold.

Streamlit runs every script run in a thread of its own, and glibc's malloc gives each new thread an arena
of its own, up to 8 per core. Tensors, frames and Arrow buffers freed by one run then leave holes in many
arenas that later runs, on other threads, do not reuse. Measured on this app (``benchmarks.run
--memory-only``: 10 sessions that opened every page whole, SmolLM2 included): 940 MB with glibc's default,
873 MB with two arenas. ``streamlit_app.py``'s lifespan calls ``limit_malloc_arenas()`` as the server
starts, before any session thread exists. Elsewhere than glibc (macOS, musl) it does nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util

MALLOC_ARENAS = 2  # one per core of the 2-core machines the app is measured on (Community Cloud: 0.078-2 CPU)
M_ARENA_MAX = -8  # glibc's mallopt parameter (malloc.h)


def limit_malloc_arenas(count: int = MALLOC_ARENAS) -> bool:
    """Ask glibc's malloc for at most ``count`` arenas; True if it accepted (False: not glibc, or refused)."""
    with contextlib.suppress(OSError, AttributeError, TypeError):  # no C library by that name, or no mallopt
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        return bool(libc.mallopt(M_ARENA_MAX, count))
    return False
