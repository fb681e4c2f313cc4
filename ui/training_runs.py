"""Training runs shared by the training and generation pages: one store per server, a progress bar.

The store is keyed by the settings (plain values), so a revisit or another session with the same
settings gets the run instantly. It is a ``st.cache_resource`` dict rather than ``st.cache_data``
because the first run draws a live progress bar: ``st.cache_data`` would record those updates and
replay them on every hit. Runs in the store are read-only.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import OrderedDict

import streamlit as st
import torch

from attention_core import training as tr

MAX_RUNS = 32  # runs kept per server (a run is a few hundred kB)
SETTINGS_KEY = "_training_settings"  # the settings this session last chose on the training page
WATCH_INTERVAL = 0.25  # seconds between two drawings of the attention while training (the last one always)


@st.cache_resource
def store() -> tuple[OrderedDict, threading.Lock]:
    """The server's finished runs by settings, oldest first, and the lock that guards them."""
    return OrderedDict(), threading.Lock()


def finished(settings: tr.TrainingSettings) -> tr.TrainingRun | None:
    """The stored run of these settings, or None if nobody trained them yet."""
    runs, lock = store()
    with lock:
        return runs.get(settings)


def remember(settings: tr.TrainingSettings, run: tr.TrainingRun) -> None:
    """Keep a finished run (dropping the oldest beyond MAX_RUNS)."""
    runs, lock = store()
    with lock:
        runs[settings] = run
        while len(runs) > MAX_RUNS:
            runs.popitem(last=False)


def train_with_progress(settings: tr.TrainingSettings, watch=None) -> tr.TrainingRun:
    """Train while a status box and a progress bar follow the steps, and ``watch(snapshot)`` (if given) draws
    the attention of each snapshot as it is taken, in one place; store and return the run."""
    with st.status(f"Training for {settings.steps} steps…", expanded=True) as status:
        bar = st.progress(0.0, text="step 0")
        live = st.empty()  # the latest snapshot's attention, redrawn in place
        last_draw, last_watch = [0.0], [0.0]

        def progress(step: int, steps: int, loss: float) -> None:
            now = time.perf_counter()
            if now - last_draw[0] > 0.1 or step == steps:  # at most 10 updates a second
                bar.progress(step / steps, text=f"step {step} of {steps} · loss {loss:.4f}")
                last_draw[0] = now

        def on_snapshot(snapshot: tr.Snapshot) -> None:
            now = time.perf_counter()
            if watch is not None and (now - last_watch[0] > WATCH_INTERVAL or snapshot.step >= settings.steps):
                with live.container():
                    watch(snapshot)
                last_watch[0] = now

        start = time.perf_counter()
        run = tr.train(settings, progress=progress, on_snapshot=on_snapshot)
        seconds = time.perf_counter() - start
        label = f"Trained {len(run.losses)} steps in {seconds:.1f} s"
        status.update(label=label, state="error" if run.diverged_at is not None else "complete", expanded=False)
    remember(settings, run)
    return run


def chosen_settings() -> tr.TrainingSettings:
    """The settings this session last chose on the training page (the default ones before a visit)."""
    return st.session_state.get(SETTINGS_KEY, tr.TrainingSettings())


def choose(settings: tr.TrainingSettings) -> None:
    """Remember the training page's settings for the next visit and for the generation page."""
    st.session_state[SETTINGS_KEY] = settings


def current_run() -> tr.TrainingRun | None:
    """The trained run of this session's chosen settings, if anyone trained them."""
    return finished(chosen_settings())


def untrained(settings: tr.TrainingSettings) -> tuple[torch.Tensor, tr.Snapshot]:
    """The example and the untrained model's step-0 snapshot, cached per settings (plain values)."""
    return _untrained(*dataclasses.astuple(settings))


@st.cache_data(max_entries=64, show_spinner=False)
def _untrained(*fields) -> tuple[torch.Tensor, tr.Snapshot]:
    return tr.untrained_snapshot(tr.TrainingSettings(*fields))
