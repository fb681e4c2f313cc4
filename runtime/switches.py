"""One switch per piece of the lab's speed machinery, to turn it off for a benchmark run.

``ATTENTION_LAB_OFF`` holds a comma-separated list of the names below (``ATTENTION_LAB_OFF=warmup,html_tables``);
each piece asks ``off(name)`` where it starts and, when off, the lab does the plain Streamlit thing instead.
Unset (as served, and in the tests), everything is on. ``benchmarks/mechanisms.py`` serves the app with each piece
off in turn and measures what it buys (docs/benchmarks.md, "Where the time goes").
"""

from __future__ import annotations

import functools
import os

VARIABLE = "ATTENTION_LAB_OFF"

# name: what it is, and what the lab does with it off
MECHANISMS = {
    "warmup": "runtime/warmup.py's thread at server start (imports, heatmap specs); off: the script imports",
    "preload": "runtime/preload.py's browser warm-up (chart code, element kinds); off: loaded on first use",
    "collector": "runtime/collector.py's gc.freeze after imports; off: Python's collector as it comes",
    "spec_cache": "ui/drawing.py's kept heatmap templates and chart specs; off: Altair builds each spec every run",
    "html_tables": "ui/widgets/html_table.py's HTML tables; off: the same DataFrame drawn by st.table",
}


@functools.cache
def parse(text: str) -> frozenset[str]:
    """The names in a comma-separated list (spaces and empty items ignored); an unknown name is an error."""
    names = frozenset(name.strip() for name in text.split(",") if name.strip())
    unknown = sorted(names - MECHANISMS.keys())
    if unknown:
        raise ValueError(f"{VARIABLE} names {', '.join(unknown)}: not a mechanism (known: {', '.join(MECHANISMS)})")
    return names


def off(name: str) -> bool:
    """Whether ``ATTENTION_LAB_OFF`` turns this mechanism off."""
    if name not in MECHANISMS:
        raise ValueError(f"{name!r} is not a mechanism (known: {', '.join(MECHANISMS)})")
    return name in parse(os.environ.get(VARIABLE, ""))
