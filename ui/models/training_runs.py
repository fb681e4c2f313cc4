"""Training runs for the training and generation pages: a learner's own runs, a server store, a progress box.

A run belongs to the session that pressed **Train** (issue 25 part 2): the session keeps the runs it trained in
its own ``st.session_state`` (at most SESSION_RUNS), and only those make the Train button "done" or let lesson 12
speak of "the model you trained". What other learners trained changes nothing a session sees.

Training is deterministic (seeded model, batches and held-out set), so the server also keeps finished runs by
settings in ``store``, a ``RunStore``: a module-level object, bounded in runs and in bytes, least recently used
first out. It is deliberately not a ``st.cache_resource``: Streamlit's "clear cache" command (one ``clear_cache``
message from any websocket client) clears those, for everyone. Clearing or evicting the store only costs a
recomputation: a session's own runs live in its session state, and a run trained again is the same run.

When a learner presses Train on settings the store holds, the stored run is replayed to them as their run: the
progress bar and the attention redraw step through its losses and snapshots (quickly), and it is recorded as
theirs. When the same settings are already training for another learner, the second learner follows that run as
it forms (see ``RunStore.flight``) instead of training a copy.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

import streamlit as st
import torch

from attention_core import training as tr
from attention_core.i18n import _

MAX_RUNS = 32  # finished runs kept by the server (a run is tens to a few hundred kB)
MAX_BYTES = 64 * 2**20  # and at most this many bytes of them
SESSION_RUNS = 4  # runs a session keeps as its own (the page shows the run of its current settings)
SETTINGS_KEY = "_training_settings"  # the settings this session last chose on the training page
RUNS_KEY = "_training_runs"  # this session's own runs, by settings, oldest first
WATCH_INTERVAL = 0.25  # seconds between two drawings of the attention while training (the last one always)
REPLAY_PAUSE = 0.08  # seconds between two snapshots when a stored run is replayed (11 snapshots: about 1 s)
WAKE_SECONDS = 0.1  # a follower looks at its run at least this often (a rerun request then stops it promptly)


def run_bytes(run: tr.TrainingRun) -> int:
    """About how many bytes a finished run holds: its tensors, its model's parameters and its losses."""
    tensors = [snapshot.weights for snapshot in run.snapshots]
    if run.example is not None:
        tensors.append(run.example)
    if run.model is not None:
        tensors.extend(run.model.state_dict().values())
    return sum(t.nelement() * t.element_size() for t in tensors) + 32 * len(run.losses)


class Flight:
    """One run as it forms (or a finished run to replay): its losses and snapshots so far, for its followers."""

    def __init__(self, settings: tr.TrainingSettings, run: tr.TrainingRun | None = None) -> None:
        self.settings = settings
        self.changed = threading.Condition()
        self.losses: list[float] = list(run.losses) if run is not None else []
        self.snapshots: list[tr.Snapshot] = list(run.snapshots) if run is not None else []
        self.run = run  # set when the run is finished
        self.error: BaseException | None = None
        self.replay = run is not None  # finished before this learner pressed Train
        self.started = time.perf_counter()
        self.seconds = 0.0  # how long the training took

    @property
    def done(self) -> bool:
        return self.run is not None or self.error is not None

    def progress(self, step: int, steps: int, loss: float) -> None:
        with self.changed:
            self.losses.append(loss)
            self.changed.notify_all()

    def on_snapshot(self, snapshot: tr.Snapshot) -> None:
        with self.changed:
            self.snapshots.append(snapshot)
            self.changed.notify_all()

    def finish(self, run: tr.TrainingRun | None, error: BaseException | None = None) -> None:
        with self.changed:
            self.seconds = time.perf_counter() - self.started
            self.run, self.error = run, error
            self.changed.notify_all()


class RunStore:
    """Finished runs by settings (least recently used first out, bounded in runs and bytes) and the runs training.

    Deduplication: when a learner presses Train on settings that another session is training right now, they
    follow that run (``flight`` returns the same Flight) and see it form, instead of training a copy or waiting
    blind. Why follow rather than train again: the run is deterministic, so a copy would be the same run and would
    only take a core from everyone (the server has two); following costs nothing and the second learner still
    watches the bar and the attention move step by step. Why not a lock: each training runs in its own thread and
    the store's lock is held only to look up or insert, never while training, so runs of different settings go
    side by side and nobody waits for anybody beyond the shared cores.

    A training runs in a worker thread, not in the session's script thread, so a learner who leaves the page
    mid-run (which stops their script) does not stop the run that another learner follows.
    """

    def __init__(self, max_runs: int = MAX_RUNS, max_bytes: int = MAX_BYTES, train: Callable | None = None) -> None:
        self.max_runs, self.max_bytes = max_runs, max_bytes
        self._train = train  # None: attention_core.training.train, looked up at each call
        self._runs: OrderedDict[tr.TrainingSettings, tuple[tr.TrainingRun, int]] = OrderedDict()
        self._flights: dict[tr.TrainingSettings, Flight] = {}
        self._lock = threading.Lock()
        self.trained = 0  # trainings started (for tests and benchmarks)

    def __len__(self) -> int:
        with self._lock:
            return len(self._runs)

    def __contains__(self, settings: tr.TrainingSettings) -> bool:
        with self._lock:
            return settings in self._runs

    def bytes(self) -> int:
        with self._lock:
            return sum(size for _run, size in self._runs.values())

    def clear(self) -> None:
        """Forget every finished run (runs training go on)."""
        with self._lock:
            self._runs.clear()

    def get(self, settings: tr.TrainingSettings) -> tr.TrainingRun | None:
        """The finished run of these settings, or None."""
        with self._lock:
            if settings not in self._runs:
                return None
            self._runs.move_to_end(settings)
            return self._runs[settings][0]

    def put(self, settings: tr.TrainingSettings, run: tr.TrainingRun) -> None:
        """Keep a finished run, dropping the least recently used beyond max_runs runs or max_bytes bytes."""
        size = run_bytes(run)
        with self._lock:
            self._runs[settings] = (run, size)
            self._runs.move_to_end(settings)
            total = sum(size for _run, size in self._runs.values())
            while len(self._runs) > self.max_runs or (total > self.max_bytes and len(self._runs) > 1):
                _settings, (_run, dropped) = self._runs.popitem(last=False)
                total -= dropped

    def flight(self, settings: tr.TrainingSettings) -> Flight:
        """The run of these settings to follow: the stored one (to replay), the one training now, or a new one."""
        with self._lock:
            if settings in self._runs:
                self._runs.move_to_end(settings)
                return Flight(settings, self._runs[settings][0])
            if settings in self._flights:
                return self._flights[settings]
            flight = self._flights[settings] = Flight(settings)
            self.trained += 1
        threading.Thread(target=self._fly, args=(flight,), name="attention-lab-training", daemon=True).start()
        return flight

    def _fly(self, flight: Flight) -> None:
        train = self._train or tr.train
        try:
            run = train(flight.settings, progress=flight.progress, on_snapshot=flight.on_snapshot)
        except BaseException as error:  # handed to every follower, who shows it
            with self._lock:
                self._flights.pop(flight.settings, None)
            flight.finish(None, error)
            return
        self.put(flight.settings, run)
        with self._lock:
            self._flights.pop(flight.settings, None)
        flight.finish(run)


def _in_step_order(base: int, losses: list[float], snapshots: list[tr.Snapshot]):
    """(step, loss) for each loss after step ``base`` and each snapshot, interleaved so that a snapshot comes once
    the bar has reached its step."""
    step = base
    for snapshot in snapshots:
        while step < min(snapshot.step, base + len(losses)):
            step += 1
            yield step, losses[step - 1 - base]
        yield snapshot
    while step < base + len(losses):
        step += 1
        yield step, losses[step - 1 - base]


def follow(flight: Flight, progress=None, on_snapshot=None, pause: float = 0.0) -> tr.TrainingRun:
    """Hand ``flight``'s losses (as ``progress(step, steps, loss)``) and snapshots to the callbacks in step order,
    as they come, pausing ``pause`` seconds after each snapshot; the finished run (or the training's error)."""
    steps, seen_losses, seen_snapshots = flight.settings.steps, 0, 0
    while True:
        with flight.changed:
            while not flight.done and (len(flight.losses), len(flight.snapshots)) == (seen_losses, seen_snapshots):
                flight.changed.wait(WAKE_SECONDS)
            losses, snapshots = flight.losses[seen_losses:], flight.snapshots[seen_snapshots:]  # what is new
            done = flight.done
        for event in _in_step_order(seen_losses, losses, snapshots):
            if isinstance(event, tr.Snapshot):
                if on_snapshot is not None:
                    on_snapshot(event)
                if pause:
                    time.sleep(pause)
            elif progress is not None:
                step, loss = event
                progress(step, steps, loss)
        seen_losses, seen_snapshots = seen_losses + len(losses), seen_snapshots + len(snapshots)
        if done:
            if flight.error is not None:
                raise flight.error
            return flight.run


store = RunStore()  # the server's runs: module-level, so Streamlit's "clear cache" cannot wipe it


def train_with_progress(settings: tr.TrainingSettings, watch=None) -> tr.TrainingRun:
    """Train while a status box and a progress bar follow the steps, and ``watch(snapshot)`` (if given) draws
    the attention of each snapshot as it is taken, in one place; record the run as this session's and return it.

    Settings the server has trained already are replayed from its store, step by step, quickly."""
    flight = store.flight(settings)
    with st.status(_("Training for {steps} steps…", steps=settings.steps), expanded=True) as status:
        bar = st.progress(0.0, text=_("step {step}", step=0))
        live = st.empty()  # the latest snapshot's attention, redrawn in place
        last_draw, last_watch = [0.0], [0.0]

        def progress(step: int, steps: int, loss: float) -> None:
            now = time.perf_counter()
            if now - last_draw[0] > 0.1 or step == steps:  # at most 10 updates a second
                bar.progress(
                    step / steps, text=_("step {step} of {steps} · loss {loss:.4f}", step=step, steps=steps, loss=loss)
                )
                last_draw[0] = now

        def on_snapshot(snapshot: tr.Snapshot) -> None:
            now = time.perf_counter()
            last = snapshot.step >= settings.steps
            if watch is not None and (flight.replay or now - last_watch[0] > WATCH_INTERVAL or last):
                with live.container():
                    watch(snapshot)
                last_watch[0] = now

        start = time.perf_counter()
        run = follow(flight, progress, on_snapshot, pause=REPLAY_PAUSE if flight.replay else 0.0)
        seconds = time.perf_counter() - start
        if flight.replay:
            label = _(
                "Trained {steps} steps (replayed in {seconds:.1f} s: this server trained these settings before, and "
                "the same settings always give the same run)",
                steps=len(run.losses),
                seconds=seconds,
            )
        else:
            label = _("Trained {steps} steps in {seconds:.1f} s", steps=len(run.losses), seconds=seconds)
        status.update(label=label, state="error" if run.diverged_at is not None else "complete", expanded=False)
    record(settings, run)
    return run


def my_runs() -> OrderedDict:
    """This session's own runs by settings, oldest first (in its session state)."""
    return st.session_state.setdefault(RUNS_KEY, OrderedDict())


def record(settings: tr.TrainingSettings, run: tr.TrainingRun) -> None:
    """Keep a run as this session's (dropping its oldest beyond SESSION_RUNS)."""
    runs = my_runs()
    runs[settings] = run
    runs.move_to_end(settings)
    while len(runs) > SESSION_RUNS:
        runs.popitem(last=False)


def mine(settings: tr.TrainingSettings) -> tr.TrainingRun | None:
    """The run of these settings if this session trained it, else None (whatever other sessions trained)."""
    return my_runs().get(settings)


def chosen_settings() -> tr.TrainingSettings:
    """The settings this session last chose on the training page (the default ones before a visit)."""
    return st.session_state.get(SETTINGS_KEY, tr.TrainingSettings())


def choose(settings: tr.TrainingSettings) -> None:
    """Remember the training page's settings for the next visit and for the generation page."""
    st.session_state[SETTINGS_KEY] = settings


def current_run() -> tr.TrainingRun | None:
    """This session's run of its chosen settings, if this session trained them."""
    return mine(chosen_settings())


def untrained(settings: tr.TrainingSettings) -> tuple[torch.Tensor, tr.Snapshot]:
    """The example and the untrained model's step-0 snapshot, cached per settings (plain values)."""
    return _untrained(*dataclasses.astuple(settings))


@st.cache_data(max_entries=64, show_spinner=False)
def _untrained(*fields) -> tuple[torch.Tensor, tr.Snapshot]:
    return tr.untrained_snapshot(tr.TrainingSettings(*fields))


@st.cache_data(max_entries=64, show_spinner=False)
def example_targets(task: str, seed: int) -> torch.Tensor:
    """The held-out example's targets (T,): what each of its positions must predict, tr.IGNORE where nothing is
    scored (the example is the first held-out sequence, as ``untrained`` and every run show it)."""
    _inputs, targets = tr.make_batch(task, tr.HELD_OUT, torch.Generator().manual_seed(seed + 1))  # (HELD_OUT, T)
    return targets[0]  # (T,)
