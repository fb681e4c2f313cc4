"""The server's store of training runs (issue 25 parts 2 and 5): bounded, deduplicated, out of Streamlit's caches."""

from __future__ import annotations

import threading

import pytest
import torch

from attention_core import training as tr
from ui.models import training_runs
from ui.models.training_runs import RunStore, follow


def fake_run(settings: tr.TrainingSettings, progress=None, on_snapshot=None) -> tr.TrainingRun:
    """A run shaped like a real one, made in no time: a loss per step and snapshots at the usual steps."""
    run = tr.TrainingRun(settings, example=torch.arange(8))
    for step in range(settings.steps + 1):
        if step in tr.snapshot_steps(settings.steps):
            snapshot = tr.Snapshot(step, torch.full((1, 1, 8, 8), float(step)), 1.0 / (step + 1), step / 100)
            run.snapshots.append(snapshot)
            if on_snapshot is not None:
                on_snapshot(snapshot)
        if step < settings.steps:
            run.losses.append(1.0 / (step + 1))
            if progress is not None:
                progress(step + 1, settings.steps, run.losses[-1])
    return run


def settings_of(seed: int, steps: int = 20) -> tr.TrainingSettings:
    return tr.TrainingSettings(seed=seed, steps=steps)


def test_the_store_keeps_at_most_its_runs_dropping_the_least_recently_used():
    store = RunStore(max_runs=32, train=fake_run)
    for seed in range(32):
        store.put(settings_of(seed), fake_run(settings_of(seed)))
    assert store.get(settings_of(0)) is not None  # used: now the most recent
    store.put(settings_of(32), fake_run(settings_of(32)))  # the 33rd run
    assert len(store) == 32
    assert settings_of(1) not in store, "the least recently used run goes"
    assert settings_of(0) in store and settings_of(32) in store


def test_the_store_is_bounded_in_bytes_too():
    one = training_runs.run_bytes(fake_run(settings_of(0)))
    store = RunStore(max_runs=32, max_bytes=3 * one + one // 2, train=fake_run)
    for seed in range(10):
        store.put(settings_of(seed), fake_run(settings_of(seed)))
        assert store.bytes() <= store.max_bytes
    assert len(store) == 3 and all(settings_of(seed) in store for seed in (7, 8, 9))


def test_two_threads_training_the_same_settings_train_once_and_both_get_the_run():
    started, release = threading.Event(), threading.Event()
    calls: list[tr.TrainingSettings] = []

    def slow_train(settings, progress=None, on_snapshot=None):
        calls.append(settings)
        started.set()
        assert release.wait(10)
        return fake_run(settings, progress, on_snapshot)

    store = RunStore(train=slow_train)
    settings = settings_of(3)
    results: dict[str, tr.TrainingRun] = {}
    seen: dict[str, list[int]] = {"a": [], "b": []}

    def learner(name: str) -> None:
        flight = store.flight(settings)
        results[name] = follow(flight, progress=lambda step, steps, loss: seen[name].append(step))

    first = threading.Thread(target=learner, args=("a",))
    first.start()
    assert started.wait(10)  # a's run is training
    second = threading.Thread(target=learner, args=("b",))
    second.start()
    release.set()
    first.join(10), second.join(10)
    assert len(calls) == 1 and store.trained == 1, "the same settings train once"
    assert results["a"] is results["b"] is store.get(settings)
    assert seen["a"] == seen["b"] == list(range(1, settings.steps + 1)), "both follow every step of the one run"


def test_different_settings_train_side_by_side():
    """No lock is held while training: a run of other settings starts while the first is still training."""
    inside = threading.Barrier(2, timeout=10)

    def meeting_train(settings, progress=None, on_snapshot=None):
        inside.wait()  # both trainings must be running at once to pass
        return fake_run(settings, progress, on_snapshot)

    store = RunStore(train=meeting_train)
    flights = [store.flight(settings_of(seed)) for seed in (1, 2)]
    runs = [follow(flight) for flight in flights]
    assert [run.settings.seed for run in runs] == [1, 2] and store.trained == 2


def test_a_finished_run_is_replayed_step_by_step_in_order():
    store = RunStore(train=fake_run)
    settings = settings_of(5, steps=30)
    follow(store.flight(settings))
    flight = store.flight(settings)
    assert flight.replay and store.trained == 1
    events: list[tuple[str, int]] = []
    run = follow(
        flight,
        progress=lambda step, steps, loss: events.append(("step", step)),
        on_snapshot=lambda snapshot: events.append(("snapshot", snapshot.step)),
    )
    assert run is store.get(settings)
    assert [step for kind, step in events if kind == "snapshot"] == tr.snapshot_steps(30)
    assert [step for kind, step in events if kind == "step"] == list(range(1, 31))
    for index, (kind, step) in enumerate(events):
        if kind == "snapshot":  # a snapshot comes once the bar has reached its step
            assert [s for k, s in events[:index] if k == "step"][-1:] == ([step] if step else [])


def test_a_failed_training_reaches_every_follower_and_is_not_kept():
    def broken(settings, progress=None, on_snapshot=None):
        raise RuntimeError("out of memory")

    store = RunStore(train=broken)
    with pytest.raises(RuntimeError, match="out of memory"):
        follow(store.flight(settings_of(1)))
    assert settings_of(1) not in store


def test_clearing_streamlit_caches_leaves_the_store():
    """A raw websocket client's clear_cache message clears st.cache_resource and st.cache_data, not the runs."""
    import streamlit as st

    settings = settings_of(9)
    training_runs.store.put(settings, fake_run(settings))
    try:
        st.cache_resource.clear()
        st.cache_data.clear()
        assert training_runs.store.get(settings) is not None
    finally:
        training_runs.store.clear()


def test_a_cleared_store_only_costs_a_recomputation():
    store = RunStore()
    settings = tr.TrainingSettings(seed=2, steps=15)
    before = follow(store.flight(settings))
    store.clear()
    after = follow(store.flight(settings))
    assert store.trained == 2 and after is not before
    assert after.losses == before.losses
    assert all(torch.equal(a.weights, b.weights) for a, b in zip(after.snapshots, before.snapshots, strict=True))


def test_models_built_at_once_in_two_threads_get_their_own_seeds():
    """Each model draws from a generator of its own (attention_core.training.build_model): two sessions building
    models at once never mix their draws."""
    seeds = (11, 12)
    expected = {seed: tr.build_model(settings_of(seed)).state_dict() for seed in seeds}
    mixed: list[int] = []
    start = threading.Barrier(2, timeout=10)

    def build(seed: int) -> None:
        start.wait()
        for _ in range(150):
            built = tr.build_model(settings_of(seed)).state_dict()
            if any(not torch.equal(built[name], expected[seed][name]) for name in built):
                mixed.append(seed)

    threads = [threading.Thread(target=build, args=(seed,)) for seed in seeds]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not mixed, f"{len(mixed)} models were built with another thread's draws"


def test_a_learner_leaving_mid_run_does_not_stop_the_run_another_follows():
    """A learner who leaves the page stops their own script (Streamlit raises in it at their next drawing); the
    training runs in its own thread, so the learner following the same run still gets it."""
    release = threading.Event()

    def gated_train(settings, progress=None, on_snapshot=None):
        assert release.wait(10)
        return fake_run(settings, progress, on_snapshot)

    class Left(Exception):
        pass

    def leave(step, steps, loss):
        raise Left

    store = RunStore(train=gated_train)
    settings = settings_of(4)
    leaving, staying = store.flight(settings), store.flight(settings)
    assert leaving is staying and store.trained == 1
    release.set()
    with pytest.raises(Left):
        follow(leaving, progress=leave)
    run = follow(staying)
    assert run is store.get(settings) and len(run.losses) == settings.steps
