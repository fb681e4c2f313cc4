"""Issue 24's click budgets on lessons 1-6: the heavy steps split in two (each half with its own numbers and the
questions on them), so a query pick redraws fewer elements. Everything stays reachable; the whole-lesson view is
tested by each lesson's own page tests."""

from __future__ import annotations

import pytest
import torch

import attention_core as ac
from tests.apptest_helpers import assert_clean, charts, frames, lab_input, open_page
from tests.pages.answered import answered  # noqa: F401 (a fixture)
from tests.pages.test_steps import leaf_count, shown_exercises
from ui import registry
from ui.widgets.exercises import place_name


def open_step(lesson: str, name: str, params: dict | None = None):
    """The lesson opened at the step called ``name`` (its number read from the step bar)."""
    path = f"app_pages/{lesson}.py"
    at = open_page(path, {**(params or {}), "step": "1"})
    names = [str(option) for option in at.segmented_control(key=f"stepbar:{lesson}").options]
    number = next((n for n, label in enumerate(names, 1) if label.split(". ", 1)[-1] == name), None)
    assert number is not None, (lesson, name, names)
    at = open_page(path, {**(params or {}), "step": str(number)})
    assert_clean(at)
    return at


def asked(at, lesson: str) -> list[str]:
    """The exercises the step shows, by place name."""
    return [place_name(ex) for ex in shown_exercises(at, registry.BY_NAME[lesson])]


@pytest.mark.parametrize(
    ("lesson", "name", "places", "most"),
    [
        ("scores", "Worked example", ["score"], 24),
        ("scores", "Length and direction", ["top-score"], 24),
        ("context_vectors", "All context vectors", [], 20),
        ("context_vectors", "One entry by hand", ["context-entry", "uniform"], 22),
        ("qkv_projections", "W_q, W_k, W_v", [], 20),
        ("qkv_projections", "Shapes", ["shape-q", "parameters"], 20),
        ("qkv_projections", "All tokens", ["same-q-k"], 20),
        ("qkv_projections", "Keys and values", [], 20),
        ("scaling", "Beside the printout", [], 20),
        ("scaling", "Printout: weights", [], 20),
        ("scaling", "Your input", [], 16),
        ("scaling", "The query's row", ["scaled-score", "sharper", "scaling-switched"], 24),
        ("masking", "Masked scores", ["non-zero"], 20),
        ("masking", "Masked weights", ["masked-weight", "masked-top"], 24),
        ("softmax", "Temperature", ["temperature"], 22),
        ("softmax", "All rows at t", [], 12),
    ],
)
def test_each_half_of_a_split_step_asks_its_own_questions_and_stays_small(lesson, name, places, most):
    at = open_step(lesson, name)
    assert asked(at, lesson) == places
    assert leaf_count(at.main) <= most, leaf_count(at.main)


@pytest.mark.usefixtures("answered")  # the step shows them once its question is answered (issue 36)
def test_one_entry_by_hand_shows_the_weights_values_and_context_vector_of_the_query():
    at = open_step("context_vectors", "One entry by hand")
    lab = lab_input(at)
    steps = ac.self_attention(lab.X, scale=False)
    q = lab.query_index
    mixed = next(f for f in frames(at) if any(c.startswith("weight w_j") for c in f.columns))
    assert torch.allclose(torch.tensor(mixed.iloc[:, 0].to_numpy()), steps.weights[q].double(), atol=1e-6)
    assert torch.allclose(torch.tensor(mixed.iloc[:, 1:].to_numpy()), lab.X.double(), atol=1e-6)
    context = next(f for f in frames(at) if list(f.index) == [f"c(“{lab.query_label}”)"])
    assert torch.allclose(torch.tensor(context.to_numpy()[0]), steps.context[q].double(), atol=1e-6)


def test_the_heatmap_of_every_row_at_t_follows_the_temperature_step():
    at = open_step("softmax", "Temperature")
    assert len(charts(at)) == 1, "the query's bars; the heatmap of every row is the next step"
    at.slider(key="softmax_temperature").set_value(0.5).run()
    at.button(key="stepnext:softmax").click().run()
    assert_clean(at)
    assert not [s for s in at.slider if s.key == "softmax_temperature"]
    assert any(c.value.startswith("t = 0.5:") for c in at.caption)
    assert len(charts(at)) == 1
    at.button(key="stepback:softmax").click().run()
    assert at.slider(key="softmax_temperature").value == 0.5, "the temperature survives the visit"


def test_the_printout_steps_share_the_four_comparisons():
    at = open_step("scaling", "Beside the printout")
    differences = next(f for f in frames(at) if "largest |lab − printed|" in f.columns)
    assert list(differences.index) == ["Q Kᵀ", "Q Kᵀ / √d_k", "weights (softmax)", "context (weights V)"]
    assert [t.label for t in at.tabs] == ["Q Kᵀ", "Q Kᵀ / √d_k"]
    at = open_step("scaling", "Printout: weights")
    assert [t.label for t in at.tabs] == ["weights (softmax)", "context (weights V)"]
