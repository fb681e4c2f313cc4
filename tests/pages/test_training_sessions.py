"""Two learners on lessons 11 and 12 (issue 25 parts 2 and 5): each session's runs are its own.

Two AppTests stand for two browser sessions of one server (they share the process, so its module-level store);
AppTest cannot run two scripts at once in one process, so the sessions take turns.
"""

from __future__ import annotations

import pytest

from tests.apptest_helpers import assert_clean, open_page

TRAINING, GENERATION = "app_pages/training.py", "app_pages/generation.py"
STEPS = 40


@pytest.fixture(autouse=True)
def fresh_store():
    """Every test starts with no trained runs on the server (the store is process-wide)."""
    from ui.models import training_runs

    training_runs.store.clear()


@pytest.fixture
def trainings(monkeypatch) -> list:
    """The settings of every training the server runs from now on (a replay trains nothing)."""
    from attention_core import training as tr

    calls, original = [], tr.train

    def counting_train(settings, *args, **kwargs):
        calls.append(settings)
        return original(settings, *args, **kwargs)

    monkeypatch.setattr(tr, "train", counting_train)
    return calls


def metrics(at) -> dict[str, str]:
    return {metric.label: metric.value for metric in at.metric}


def learner(steps: int = STEPS, seed: int = 0):
    """A new session on lesson 11 with these settings chosen (not trained)."""
    at = open_page(TRAINING)
    at.number_input(key="training_steps").set_value(steps).run()
    if seed:
        at.number_input(key="training_seed").set_value(seed).run()
    return at


def train(at):
    at.button(key="training_train").click().run()
    assert_clean(at)
    return at


def trained_results(at) -> tuple[str, str, str]:
    shown = metrics(at)
    return shown["Held-out accuracy"], shown["Loss at the last step"], shown["Steps trained"]


def says_you_trained(at) -> bool:
    return any("the model you trained" in element.value for element in (*at.success, *at.info, *at.markdown))


def test_a_second_learner_gets_train_enabled_and_their_own_run_replayed(monkeypatch, trainings):
    from tests.learn_helpers import record_training_drawings

    a = train(learner())
    assert len(trainings) == 1
    b = learner()
    button = b.button(key="training_train")
    assert not button.disabled, "another learner's run leaves Train enabled here"
    assert any("Not trained yet" in info.value for info in b.info), "b sees the untrained model, not a's run"
    assert "Held-out accuracy" not in metrics(b)

    drawn = record_training_drawings(monkeypatch)
    train(b)
    assert len(trainings) == 1, "the stored run is replayed, not trained again"
    steps = [int(caption.split(":")[0].removeprefix("Step ")) for caption in drawn]
    assert steps == [0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40], "the replay steps through every stored snapshot"
    label = b.status[0].label
    assert label.startswith(f"Trained {STEPS} steps") and "replayed" in label
    assert trained_results(b) == trained_results(a), "the same settings give the same run"
    b.run()
    assert b.button(key="training_train").disabled, "b has trained these settings now"
    b.switch_page(GENERATION).run()
    assert_clean(b)
    assert says_you_trained(b)


def test_lesson_12_speaks_of_the_model_you_trained_only_in_the_session_that_trained():
    train(learner())  # a trains the settings that b will choose
    b = learner()
    b.switch_page(GENERATION).run()
    assert_clean(b)
    assert not says_you_trained(b)
    assert any("No model trained yet" in info.value and "this session" in info.value for info in b.info)
    b.switch_page(TRAINING).run()
    train(b)
    b.switch_page(GENERATION).run()
    assert says_you_trained(b)


def test_many_runs_of_one_learner_do_not_evict_another_learners_run(monkeypatch):
    """Issue 25 part 5 (33 runs from one session evicted another's run of a 32-run store), in a small form: a store
    of 2 runs and 3 runs from a."""
    from ui.models import training_runs

    monkeypatch.setattr(training_runs, "MAX_RUNS", 2)
    monkeypatch.setattr(training_runs.store, "max_runs", 2, raising=False)  # main: MAX_RUNS
    b = train(learner(steps=20))
    before = trained_results(b)
    a = learner(steps=10)
    for seed in (1, 2, 3):
        a.number_input(key="training_seed").set_value(seed).run()
        train(a)
    b.run()
    assert_clean(b)
    assert trained_results(b) == before, "b's run is still b's"
    assert b.button(key="training_train").disabled
    b.switch_page(GENERATION).run()
    assert says_you_trained(b)


def test_clearing_streamlit_caches_keeps_a_learners_run_and_the_answers(trainings):
    import streamlit as st

    from ui.models import training_runs

    b = train(learner())
    before = trained_results(b)
    st.cache_resource.clear()  # what one clear_cache message from any websocket client does
    st.cache_data.clear()
    b.run()
    assert_clean(b)
    assert trained_results(b) == before and b.button(key="training_train").disabled
    c = train(learner())
    assert len(trainings) == 1, "the store survived: c's run is replayed"
    assert trained_results(c) == before
    training_runs.store.clear()  # a store emptied anyway (evicted): only a recomputation, the same answers
    d = train(learner())
    assert len(trainings) == 2
    assert trained_results(d) == before
    b.run()
    assert trained_results(b) == before
