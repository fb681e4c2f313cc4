"""Page tests of lesson 12 (generation, step by step): with the sidebar's input, then with a trained model."""

from __future__ import annotations

import pytest

from tests.apptest_helpers import assert_clean, charts, frames, open_page, sentence_params
from tests.pages.answered import answered  # noqa: F401  (the fixture)

PAGE = "app_pages/generation.py"
READ_ANSWERED = pytest.mark.usefixtures("answered")  # a test that reads the steps as once their questions are answered


@pytest.fixture(autouse=True)
def fresh_store():
    """Every test starts with no trained runs on the server (the store is process-wide)."""
    from ui.models import training_runs

    training_runs.store.clear()


def metrics(at) -> dict[str, str]:
    return {metric.label: metric.value for metric in at.metric}


def small(value: str) -> bool:
    return value == "0" or float(value) < 1e-5


@READ_ANSWERED
def test_page_runs_on_the_sidebar_input_with_equal_cached_and_recomputed():
    at = open_page(PAGE)
    assert_clean(at)
    assert any("No model trained yet" in info.value for info in at.info)
    shown = metrics(at)
    assert small(shown["Max difference, cached vs recomputed (weights and context)"])
    assert small(shown["Max difference, online vs plain softmax"])
    assert len(charts(at)) >= 6 and frames(at)


@READ_ANSWERED
def test_step_slider_and_block_size_change_what_is_shown():
    at = open_page(PAGE)
    at.slider(key="generation_step").set_value(2).run()
    assert any(m.value.startswith("Step 2: the new token") for m in at.markdown)
    assert any("the cache holds 2 K rows and 2 V rows" in m.value for m in at.markdown)
    for block_size in (1, 3, 8):
        at.selectbox(key="generation_block").set_value(block_size).run()
        assert_clean(at)
        assert small(metrics(at)["Max difference, online vs plain softmax"])


def test_a_long_sentence_is_cut_with_a_message():
    at = open_page(PAGE, sentence_params(" ".join(f"w{i}" for i in range(40))))
    assert_clean(at)
    assert any("steps through the first 32" in warning.value for warning in at.warning)


def test_after_training_the_page_uses_the_trained_model():
    at = open_page("app_pages/training.py")
    at.selectbox(key="training_task").set_value("reverse").run()
    at.number_input(key="training_steps").set_value(100).run()
    at.button(key="training_train").click().run()
    at.switch_page(PAGE).run()
    assert_clean(at)
    assert any("Using the model you trained" in s.value for s in at.success)
    assert small(metrics(at)["Max difference of the logits, cached vs one full pass"])


def test_the_training_settings_survive_a_visit_and_decide_which_model_is_used():
    at = open_page("app_pages/training.py")
    at.number_input(key="training_steps").set_value(40).run()
    at.button(key="training_train").click().run()
    at.switch_page(PAGE).run()
    assert any("Using the model you trained" in s.value for s in at.success)
    at.switch_page("app_pages/training.py").run()
    assert at.number_input(key="training_steps").value == 40, "the choices are kept across pages"
    at.number_input(key="training_seed").set_value(5).run()  # settings nobody has trained
    at.switch_page(PAGE).run()
    assert_clean(at)
    assert any("No model trained yet" in info.value for info in at.info)


def test_exercises_footer_and_clickable_cells():
    import attention_core as ac
    from tests.apptest_helpers import lab_input
    from tests.learn_helpers import clickable_keys, has_exercises_and_footer, page_exercises, right_wrong_malformed
    from ui.format import format_number

    at = open_page(PAGE)
    assert_clean(at)
    has_exercises_and_footer(at)
    keys = clickable_keys(at)
    assert {"generation_k_cache", "generation_v_cache", "generation_cached", "generation_recomputed"} <= {
        key.rsplit("-", 1)[-1] for key in keys
    }
    lab = lab_input(at)
    params = ac.random_projections(lab.d_model, lab.d_model, lab.seed)
    items = page_exercises(at, PAGE)
    right_wrong_malformed(at, PAGE, items["cache-numbers"])
    at.session_state["_cell:generation_k_cache"] = (lab.labels[1], "d2")  # a kept click: k_1, entry 2
    at.session_state["_cell:generation_recomputed"] = (lab.labels[0], lab.labels[2])  # a future key
    at.run()
    assert_clean(at)
    text = "\n".join(m.value for m in at.markdown)
    shown = format_number(float((lab.X @ params.W_k)[1, 1]))  # the result, or beside the written operands' one
    assert f"**{shown}**" in text or f"(unrounded: {shown})" in text
    assert "Causal mask: key 3 comes after query 1" in text


def test_steps_count_from_1():
    """Issue 22 part 3: the first step is step 1 (it holds 1 K row), as every count the learner reads."""
    at = open_page(PAGE)
    slider = at.slider(key="generation_step")
    assert slider.min == 1
    slider.set_value(1).run()
    assert any(m.value.startswith("Step 1: the new token") and "holds 1 K rows" in m.value for m in at.markdown)


def test_the_cost_caption_follows_the_measured_times():
    """Issue 22 part 7: the sentence under the cost table states the measured ratio at the smallest T."""
    at = open_page(PAGE)
    table = next(f for f in frames(at) if "ms (c·T²)" in f.columns)
    smallest = table.iloc[0]
    caption = next(c.value for c in at.caption if c.value.startswith("Time: the fastest of 3 runs"))
    assert "falls short of T²" not in caption
    ratio = float(smallest["ms"]) / float(smallest["ms (c·T²)"])
    assert f"At T = {int(table.index[0])} the measured time is " in caption
    assert (f"{ratio:.1f}× c·T²" if ratio >= 1 else f"{ratio:.2f}× c·T²") in caption
    assert ("dominates" in caption) == (ratio >= 1.5), "an overhead is said to dominate only where it does"


def test_in_steps_the_kv_cache_step_asks_about_the_step_its_slider_shows():
    """Issue 24: lesson 12 is stepped; the KV cache step holds the cache and its slider, the next step the new
    query's row over it with the same slider and only the questions about that step (the cost table and online
    softmax wait in their own steps), and its questions follow the slider."""
    from ui.widgets.exercises import place_name

    at = open_page(PAGE, {"step": "2"})
    assert_clean(at)
    assert at.segmented_control(key="stepbar:generation").value == 2
    headers = [h.value for h in at.subheader]
    assert "The KV cache, step by step" in headers
    assert "The cost of attention" not in headers and "Online softmax, block by block" not in headers
    assert "_exercises_shown:generation" not in at.session_state, "the cache's step asks nothing"
    at.slider(key="generation_step").set_value(2).run()
    at.button(key="stepnext:generation").click().run()
    assert_clean(at)
    assert at.slider(key="generation_step").value == 2, "the slider keeps its step"
    assert "The new query over the cache" in [h.value for h in at.subheader]
    shown = at.session_state["_exercises_shown:generation"]
    assert {place_name(item) for item in shown} == {"cache-numbers", "step-top", "cache-unchanged"}
    asked = next(item for item in at.session_state["_exercises_shown:generation"] if item.id.startswith("cache-num"))
    assert "After step 2" in asked.prompt
    at.slider(key="generation_step").set_value(3).run()
    asked = next(item for item in at.session_state["_exercises_shown:generation"] if item.id.startswith("cache-num"))
    assert "After step 3" in asked.prompt
    online = open_page(PAGE, {"step": "7"})
    assert [place_name(item) for item in online.session_state["_exercises_shown:generation"]] == ["running-sum"]
    assert "The KV cache, step by step" not in [h.value for h in online.subheader]
