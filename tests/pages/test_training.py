"""Page tests of lesson 11 (how attention is learned): settings, messages, a short training run."""

from __future__ import annotations

import pytest

from tests.apptest_helpers import assert_clean, charts, frames, open_page

PAGE = "app_pages/training.py"


@pytest.fixture(autouse=True)
def fresh_store():
    """Every test starts with no trained runs on the server (the store is process-wide)."""
    from ui.models import training_runs

    training_runs.store.clear()


def metrics(at) -> dict[str, str]:
    return {metric.label: metric.value for metric in at.metric}


def test_page_before_training_shows_the_task_and_the_untrained_attention():
    at = open_page(PAGE)
    assert_clean(at)
    assert not at.error
    assert at.button(key="training_train")
    assert any("Not trained yet" in info.value for info in at.info)
    assert len(charts(at)) >= 3, "the right pattern (twice) and the untrained head"
    assert frames(at) and at.get("download_button")
    assert float(metrics(at)["Weight on the right key"]) < 0.5


def test_settings_that_do_not_fit_give_a_message_and_no_training():
    at = open_page(PAGE)
    at.selectbox(key="training_heads").set_value(3).run()
    assert_clean(at)
    assert any("cannot be split into 3" in error.value for error in at.error)
    assert "training_train" not in [button.key for button in at.button]  # nothing to train


def test_a_short_training_shows_the_loss_accuracy_and_a_step_slider():
    at = open_page(PAGE)
    at.number_input(key="training_steps").set_value(60).run()
    at.button(key="training_train").click().run()
    assert_clean(at)
    shown = metrics(at)
    assert float(shown["Held-out accuracy"].rstrip("%")) >= 95
    assert shown["Steps trained"] == "60"
    slider = at.select_slider(key="training_step")
    assert slider.options[0] == "0" and slider.value == 60
    weight_after = float(metrics(at)["Weight on the right key"])
    slider.set_value(0).run()
    assert float(metrics(at)["Weight on the right key"]) < weight_after
    assert_clean(at)


def test_choosing_a_task_loads_its_preset():
    at = open_page(PAGE)
    at.selectbox(key="training_task").set_value("induction").run()
    assert_clean(at)
    assert at.selectbox(key="training_layers").value == 2
    assert at.number_input(key="training_steps").value == 500


def test_a_diverging_learning_rate_is_explained():
    at = open_page(PAGE)
    at.number_input(key="training_steps").set_value(30).run()
    at.select_slider(key="training_learning_rate").set_value(100.0).run()
    at.button(key="training_train").click().run()
    assert_clean(at)
    assert any("diverged" in error.value and "last good snapshot" in error.value for error in at.error)


def test_exercises_footer_and_a_clickable_snapshot():

    from attention_core import training as tr
    from tests.learn_helpers import clickable_keys, has_exercises_and_footer, page_exercises, right_wrong_malformed

    at = open_page(PAGE)
    assert_clean(at)
    has_exercises_and_footer(at)
    assert [key for key in clickable_keys(at) if key.endswith("training_cell")]
    settings = tr.TrainingSettings()
    example, snapshot = tr.untrained_snapshot(settings)
    items = page_exercises(at, PAGE)
    right_wrong_malformed(at, PAGE, items["batch-scored"])
    labels = tr.position_labels(settings.task, example)
    at.session_state["_cell:training_cell"] = (labels[0], labels[3])
    at.run()
    assert_clean(at)
    assert any("Causal mask: key 4 comes after query 1" in m.value for m in at.markdown)
    at.session_state["_cell:training_cell"] = (labels[3], labels[2])
    at.run()
    weight = float(snapshot.weights[0, 0, 3, 2])
    from ui.format import format_number

    assert any(f"**{format_number(weight)}**" in m.value for m in at.markdown)


def test_the_attention_redraws_while_training(monkeypatch):
    """Issue 24 item 4: the held-out example's attention is drawn at every snapshot as training runs (here with no
    pause between drawings), in place, not only the progress bar; the last drawing is the final step."""
    from tests.learn_helpers import record_training_drawings
    from ui.models import training_runs

    monkeypatch.setattr(training_runs, "WATCH_INTERVAL", 0.0)
    drawn = record_training_drawings(monkeypatch)
    at = open_page(PAGE)
    at.number_input(key="training_steps").set_value(60).run()
    at.button(key="training_train").click().run()
    assert_clean(at)
    steps = [int(caption.split(":")[0].removeprefix("Step ")) for caption in drawn]
    assert len(steps) >= 5 and steps == sorted(steps) and steps[0] < 60 and steps[-1] == 60, steps
    assert any(caption.startswith("Step 60: layer") for caption in (c.value for c in at.caption)), "drawn in place"


def test_in_steps_the_settings_carry_to_the_train_step_which_redraws_while_training(monkeypatch):
    """Issue 24: lesson 11 in steps. The task step holds the settings, the next one the right pattern and the task's
    questions; Next opens the train step with those settings, where the attention redraws while it trains; the next
    step scrubs the run."""
    from tests.learn_helpers import record_training_drawings
    from ui.format import format_number
    from ui.models import training_runs
    from ui.widgets.exercises import place_name

    monkeypatch.setattr(training_runs, "WATCH_INTERVAL", 0.0)
    drawn = record_training_drawings(monkeypatch)
    at = open_page(PAGE, {"step": "2"})
    assert_clean(at)
    assert "_exercises_shown:training" not in at.session_state
    assert "training_train" not in [button.key for button in at.button]
    at.number_input(key="training_steps").set_value(40).run()
    at.button(key="stepnext:training").click().run()
    assert at.query_params["step"] == "3" and "What attention must learn" in [h.value for h in at.subheader]
    shown = {place_name(item) for item in at.session_state["_exercises_shown:training"]}
    assert shown == {"ideal-key", "uniform-closeness", "causal-future", "batch-scored"}
    at.button(key="stepnext:training").click().run()
    assert at.query_params["step"] == "4"
    assert "training_steps" not in [number.key for number in at.number_input]  # the settings stay in their step
    assert any("40 steps" in caption.value for caption in at.caption)
    at.button(key="training_train").click().run()
    assert_clean(at)
    assert metrics(at)["Steps trained"] == "40"
    steps = [int(caption.split(":")[0].removeprefix("Step ")) for caption in drawn]
    assert len(steps) >= 3 and steps[-1] == 40, steps
    assert "The task" not in [h.value for h in at.subheader]
    at.button(key="stepnext:training").click().run()
    assert_clean(at)
    (closer,) = at.session_state["_exercises_shown:training"]
    assert place_name(closer) == "closer"
    # the question first: the heads at each step (the slider) and the weights it compares come once it is settled
    assert "training_step" not in [slider.key for slider in at.select_slider]
    assert not any("Weight on the right key" in m.value for m in at.markdown)
    at.button(key=f"exs:training:{closer.id}").click().run()
    assert_clean(at)
    assert at.select_slider(key="training_step").value == 40
    compared = next(m.value for m in at.markdown if m.value.startswith("**Weight on the right key**"))
    assert all(format_number(value) in compared for value in closer.reveals)


def test_in_steps_a_try_this_button_on_the_last_step_sets_up_the_train_step():
    """The footer's Try this sits on the last step, away from the settings: the train step trains what it set up."""
    at = open_page(PAGE, {"step": "5"})
    at.button(key="try:training:0").click().run()  # reverse task, 2 heads, 300 steps
    at.button(key="stepback:training").click().run()
    assert_clean(at)
    assert at.query_params["step"] == "4"
    assert any(c.value.startswith("Settings from the task step: Reverse the sequence") and "2 heads, 300 steps"
               in c.value for c in at.caption)  # fmt: skip
    at.button(key="stepback:training").click().run()
    at.button(key="stepback:training").click().run()
    assert at.selectbox(key="training_task").value == "reverse" and at.number_input(key="training_steps").value == 300
