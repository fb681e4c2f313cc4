"""The server's garbage collector: objects that live as long as the process are frozen out of it.

The lab imports torch, pandas, Altair, Streamlit (and safetensors and tokenizers on lesson 10): about 300,000
objects that are never freed. CPython's full (generation 2) cycle collection walks every one of
them, 150-250 ms with the GIL held on this machine, and allocation-heavy reruns trigger one about
every rerun. During that pause no session's messages go out: the browser waits for the end of a
run that finished long before. ``gc.freeze`` moves what is alive into a permanent generation that
collections skip.

Freezing happens at the end of a run that imported modules (the first run of the process, the
first visit of a page with new imports), so objects made by later reruns are still collected.
Reference counting still frees frozen objects that become unreachable; only cycles made before a
freeze and dropped after it stay until the process ends (a one-time, bounded amount).
"""

from __future__ import annotations

import gc
import sys

_modules_at_last_freeze = 0


def freeze_after_imports() -> bool:
    """Freeze everything alive now if modules were imported since the last freeze; True if it froze."""
    global _modules_at_last_freeze
    if len(sys.modules) == _modules_at_last_freeze:
        return False
    _modules_at_last_freeze = len(sys.modules)
    gc.freeze()
    return True
