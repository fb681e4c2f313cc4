"""The one cache of built things for the whole server process, bounded by count and bytes.

``ProcessCache`` (and the ``process_cache`` decorator) keeps what the page API builds (chart specs, heatmap templates,
Arrow datasets, tables' HTML, a function's source) and the real models' forward passes (ui.models): read-only
things that a plain dict serves without st.cache_data's argument hashing and pickled copies, which cost more than
the build is worth for the dozen small items a page draws per rerun. The lab's other caches, one per purpose:
``st.cache_data`` for results computed from plain arguments (GUIDE rule 6), ``st.cache_resource`` for a model loaded
once per server. Pages never import this package; ui/drawing.py and ui/models/ do.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import torch

MB = 2**20


def approx_bytes(item: object) -> int:
    """About how many bytes an item kept here holds: its bytes, strings, arrays and frames, container by container
    (a spec is dicts and lists of strings, numbers and Arrow bytes)."""
    if isinstance(item, (bytes, bytearray, str)):
        return 64 + len(item)
    if isinstance(item, np.ndarray):
        return 128 + item.nbytes
    if isinstance(item, torch.Tensor):
        return 128 + item.element_size() * item.nelement()
    if isinstance(item, pd.DataFrame):
        return 256 + int(item.memory_usage(index=True, deep=True).sum())
    if isinstance(item, pa.Table):
        return 256 + item.nbytes
    if isinstance(item, dict):
        return 64 + sum(approx_bytes(key) + approx_bytes(value) for key, value in item.items())
    if isinstance(item, (list, tuple)):
        return 64 + sum(approx_bytes(value) for value in item)
    if callable(getattr(item, "nbytes", None)):  # a result object that counts its own tensors (smollm2.Forward)
        return 64 + int(item.nbytes())
    return 32


class ProcessCache:
    """A bounded, thread-safe store of built things (chart specs) for the whole server process: at most ``size``
    items and ``max_bytes`` bytes (approx_bytes); the oldest go first, and an item larger than the budget is
    built for its caller but not kept. Long distinct sentences (a 1,000-character sentence makes Arrow data of
    megabytes) would otherwise fill the entries with hundreds of megabytes that no session reads again."""

    def __init__(self, size: int, max_bytes: int = 32 * MB) -> None:
        self.size, self.max_bytes, self.items, self.lock, self.made = size, max_bytes, {}, threading.Lock(), 0
        self.sizes: dict = {}
        self.bytes = 0

    def get(self, key, make: Callable[[], object]):
        """The item kept under ``key``, made by ``make()`` the first time (the oldest go when full)."""
        with self.lock:
            if key in self.items:
                return self.items[key]
        item = make()
        nbytes = approx_bytes(item)
        with self.lock:
            self.made += 1
            if nbytes > self.max_bytes or key in self.items:
                return item
            while self.items and (len(self.items) >= self.size or self.bytes + nbytes > self.max_bytes):
                oldest = next(iter(self.items))
                del self.items[oldest]
                self.bytes -= self.sizes.pop(oldest)
            self.items[key], self.sizes[key] = item, nbytes
            self.bytes += nbytes
        return item


def process_cache(size: int, max_bytes: int = 32 * MB) -> Callable[[Callable], Callable]:
    """A function of hashable positional arguments whose results are kept in a ``ProcessCache(size, max_bytes)`` (its
    ``store``)."""

    def decorate(function: Callable) -> Callable:
        store = ProcessCache(size, max_bytes)

        @functools.wraps(function)
        def cached(*args):
            return store.get(args, lambda: function(*args))

        cached.store = store
        return cached

    return decorate


def fingerprint(value) -> object:
    """A hashable stand-in for a cache key: frames, arrays and tensors by their content, containers item by item."""
    if isinstance(value, pd.DataFrame):
        content = pd.util.hash_pandas_object(value, index=True).to_numpy().tobytes()
        names = (tuple(value.index.names), tuple(value.columns.names))  # a set_index column's name is a header
        return ("frame", tuple(value.columns), tuple(map(str, value.dtypes)), names, content)
    if isinstance(value, torch.Tensor):
        value = value.detach().numpy()
    if isinstance(value, np.ndarray):
        return ("array", str(value.dtype), value.shape, value.tobytes())
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, *map(fingerprint, value))
    if isinstance(value, dict):
        return ("dict", *((key, fingerprint(item)) for key, item in sorted(value.items())))
    return value
