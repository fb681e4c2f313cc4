"""Measurements of this server, taken once per process: the cost of attention that lesson 13 shows.

Timing attention up to a few thousand tokens takes a second or two. ``runtime.warmup`` takes the measurement in its
thread after the server starts, so the learner who opens "The cost of attention" finds it done; a learner who
comes sooner waits for the one measurement under way (a lock), never for a second one.
"""

from __future__ import annotations

import threading

import pandas as pd

from attention_core import generation as gen

_lock = threading.Lock()
_cost: pd.DataFrame | None = None


def attention_cost_ready() -> bool:
    """Whether the cost of attention has been measured in this process."""
    return _cost is not None


def attention_cost() -> pd.DataFrame:
    """``gen.cost_frame()`` measured once per process (the first caller measures, the others wait for it)."""
    global _cost
    with _lock:
        if _cost is None:
            _cost = gen.cost_frame()
    return _cost.copy()
