"""Lesson 5 page: 003 reproduced, scaling on the sidebar input, variance and saturation simulations."""

from __future__ import annotations

import pandas as pd
import pytest
import torch

import attention_core as ac
from attention_core.attention import self_attention
from attention_core.presets import PRESETS, SCALING_EXAMPLE
from attention_core.projections import random_projections
from attention_core.saturation import SERIES_SCALED, SERIES_UNSCALED, dot_product_variance, summary
from tests.apptest_helpers import assert_clean, chart_specs, frames, lab_input, open_page, sentence_params
from tests.pages.cell_click_helpers import clickable_specs, has_footer, keep_cell, markdown, outlined_rows
from ui.format import format_number

PAGE = "app_pages/scaling.py"
EXAMPLE = ["t1", "t2", "t3"]


def close(frame: pd.DataFrame, values, atol: float = 1e-5) -> bool:
    expected = torch.tensor(pd.DataFrame(values).to_numpy(), dtype=torch.float64)
    shown = torch.tensor(frame.to_numpy(), dtype=torch.float64)
    return shown.shape == expected.shape and torch.allclose(shown, expected, atol=atol)


def token_matrices(at) -> list[pd.DataFrame]:
    """(T, T) tables labelled by the lesson's tokens: the weights, then the scores softmax sees."""
    labels = list(lab_input(at).labels)
    return [f for f in frames(at) if list(f.index) == labels and list(f.columns) == labels]


def check_lesson_numbers(at, d_k: int = 16, seed: int = 0, scale: bool = True) -> None:
    """The weights, the scaled scores and the summary equal the core's on lab_input(at).X."""
    current = lab_input(at)
    W = random_projections(current.d_model, d_k, seed)
    steps = self_attention(current.X, W.W_q, W.W_k, W.W_v, scale=scale)
    weights, scores = token_matrices(at)[:2]
    assert close(weights, steps.weights)
    assert close(scores, steps.scaled_scores, atol=1e-4)
    table = next(f for f in frames(at) if list(f.columns) == [SERIES_UNSCALED, SERIES_SCALED])
    assert close(table, summary(steps.scores, d_k).to_numpy(), atol=1e-6)


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.key)
def test_every_preset(preset) -> None:
    at = open_page(PAGE, {"example": preset.name})
    assert_clean(at)
    assert lab_input(at).preset is preset
    check_lesson_numbers(at)
    assert len(chart_specs(at)) >= 5  # weights, scores, variance, three saturation charts


def test_003_every_step_beside_the_printout() -> None:
    at = open_page(PAGE)
    assert_clean(at)
    example = [f for f in frames(at) if list(f.index) == EXAMPLE]
    for key in ("scores", "scaled_scores", "weights", "context"):
        shown = [f for f in example if close(f, SCALING_EXAMPLE.printed[key], atol=1e-4)]
        assert len(shown) >= 2, key  # the lab's table and the printed one
    comparison = next(f for f in frames(at) if "largest |lab − printed|" in f.columns)
    assert len(comparison) == 4 and (comparison.iloc[:, 0] < 1e-4).all()
    text = " ".join(m.value for m in at.markdown)
    assert "(1.0463 × -1.1701) + (-1.2652 × -1.6579) = **0.8733**" in text
    assert "1.8543 + 0.6368 + 0.7336 = **3.2247** (unrounded: 3.2246)" in text  # the sum of the exps as printed
    assert all(f"/ 3.2247 = **{w}**" in text for w in ("0.5750", "0.1975", "0.2275"))  # over the sum as written
    assert "0.4905, 0.4635, 0.0460" in text and "another run" in text


def test_variance_chart_data_is_the_core_simulation() -> None:
    at = open_page(PAGE)
    variance_table = next(f for f in frames(at) if list(f.index[:2]) == ["d_k = 1", "d_k = 2"])
    expected = dot_product_variance((1, 2, 4, 8, 16, 32, 64, 128, 256), 2000, 0)
    assert close(variance_table[SERIES_UNSCALED].to_frame(), [[v] for v in expected[SERIES_UNSCALED]], atol=1e-9)
    specs = chart_specs(at)
    variance_spec = next(s for s in specs if s.get("title") == "Variance of the scores")
    assert variance_spec["layer"][0]["encoding"]["x"]["scale"]["type"] == "log"


def test_controls_change_d_k_seed_and_scaling() -> None:
    at = open_page(PAGE)
    at.slider(key="scaling_d_k").set_value(64)
    at.number_input(key="scaling_seed").set_value(5)
    at.toggle(key="scaling_scale").set_value(False)
    at.run()
    assert_clean(at)
    check_lesson_numbers(at, d_k=64, seed=5, scale=False)
    text = " ".join(m.value for m in at.markdown)
    assert "At your d_k = 64" in text and "scaling is **off**" in text


def test_typed_sentence_with_32_tokens_and_a_single_token() -> None:
    sentence = " ".join(f"w{i % 11}" for i in range(32))
    at = open_page(PAGE, sentence_params(sentence, d_model=16, seed=2))
    assert_clean(at)
    assert lab_input(at).T == 32
    check_lesson_numbers(at)
    at = open_page(PAGE, sentence_params("alone", d_model=2))
    assert_clean(at)
    check_lesson_numbers(at)


def test_gradient_reaching_q_is_compared_scaled_vs_unscaled() -> None:
    """Issue 9 (scaling): the same quantity, |dL/dq|, median and spread, scaled vs unscaled, per d_k."""
    from attention_core.saturation import gradient_to_query

    at = open_page(PAGE)
    assert_clean(at)
    grid = (1, 2, 4, 8, 16, 32, 64, 128, 256)
    expected = gradient_to_query(grid, 16, 200, 0)
    assert any(s.get("title") == "Gradient reaching q (median)" for s in chart_specs(at))
    table = next(f for f in frames(at) if f"90th percentile, {SERIES_UNSCALED}" in f.columns)
    for name in ("10th percentile", "median", "90th percentile"):
        for series in (SERIES_UNSCALED, SERIES_SCALED):
            assert table[f"{name}, {series}"].tolist() == pytest.approx(expected[name][series], rel=1e-9)
    text = " ".join(m.value for m in at.markdown)
    assert "same input q" in text and "gradient size ‖J‖" not in text
    assert "independent, with mean 0\nand variance 1" in text or "independent, with mean 0 and variance 1" in text
    assert "keeps the spread of the scores (the logits) from growing with d_k" in text


def test_on_your_input_explains_why_scaling_barely_matters_and_shows_d_k_256() -> None:
    """Issue 9 (scaling): the input part says why scaling matters little here, computed, and shows a large d_k."""
    from attention_core.saturation import projected_scores

    at = open_page(PAGE)
    assert_clean(at)
    current = lab_input(at)
    text = " ".join(m.value for m in at.markdown)
    assert "scaling barely changes the largest weights" in text  # journey, d_k = 16
    assert "**The same sentence with d_k = 256**" in text and "change the weights visibly" in text
    tables = [f for f in frames(at) if list(f.columns) == [SERIES_UNSCALED, SERIES_SCALED]]
    assert close(tables[1], summary(projected_scores(current.X, 256, 0), 256).to_numpy(), atol=1e-6)
    at = open_page(PAGE, {"example": PRESETS[2].name})  # 000's embeddings: larger scores at d_k = 16
    assert_clean(at)
    text = " ".join(m.value for m in at.markdown)
    assert "scaling barely changes" not in text.split("**The same sentence")[0]


def test_weights_and_scaled_scores_are_clickable_and_a_kept_score_shows_the_division():
    """Issue 11: the weights and the scores softmax sees are clickable with the query's row outlined; a kept
    scaled score shows q · k / √d_k with the core's numbers; exercises and the footer close the page."""
    from attention_core.projections import random_projections

    at = open_page(PAGE)
    assert_clean(at)
    lab = lab_input(at)
    specs = clickable_specs(at)
    assert len(specs) == 2 and all(outlined_rows(spec) == [lab.query_label] for spec in specs)
    assert has_footer(at, PAGE)
    labels = list(lab.labels)
    keep_cell(at, "scaling_scores_chart", labels[0], labels[1])
    keep_cell(at, "scaling_weights_chart", labels[1], labels[0])
    assert_clean(at)
    d_k, seed = int(at.session_state["scaling_d_k"]), int(at.session_state["scaling_seed"])
    params = random_projections(lab.d_model, d_k, seed)
    steps = ac.self_attention(lab.X, params.W_q, params.W_k, params.W_v, scale=True)
    text = markdown(at)
    assert f"= **{format_number(float(steps.scaled_scores[0, 1]))}**" in text
    assert f"**{format_number(float(steps.weights[1, 0]))}**" in text


def test_each_step_uses_the_d_k_seed_and_scaling_chosen_in_the_step_your_input() -> None:
    """Issue 24: the lesson is in steps; the controls live in the step "Your input" and every later step (the
    weights, d_k = 256, the simulations) uses what was chosen there, named in a caption, until it is changed."""
    bar = "stepbar:scaling"
    at = open_page(PAGE, {"step": "1"})
    names = at.segmented_control(key=bar).options
    mine = next(n for n, name in enumerate(names) if "Your input" in str(name))
    at.segmented_control(key=bar).set_value(mine + 1).run()
    at.slider(key="scaling_d_k").set_value(9)
    at.number_input(key="scaling_seed").set_value(5)
    at.toggle(key="scaling_scale").set_value(False)
    at.run()
    assert_clean(at)
    current = lab_input(at)
    W = random_projections(current.d_model, 9, 5)
    unscaled = self_attention(current.X, W.W_q, W.W_k, W.W_v, scale=False)
    for step in range(1, mine + 1):  # the steps before draw no controls and forget nothing
        at.segmented_control(key=bar).set_value(step).run()
        assert_clean(at)
    seen = ""
    for step in range(mine + 2, len(names) + 1):
        at.segmented_control(key=bar).set_value(step).run()
        assert_clean(at)
        assert any("d_k = 9, scaling off" in c.value for c in at.caption), step
        assert not [s for s in at.slider if s.key == "scaling_d_k"], step
        seen += " ".join(m.value for m in at.markdown)
        matrices = token_matrices(at)
        if matrices:  # the weights step: unscaled weights of the chosen W
            assert close(matrices[0], unscaled.weights)
    assert "At your d_k = 9" in seen and "seed 5" in seen
    at.segmented_control(key=bar).set_value(mine + 1).run()
    assert at.slider(key="scaling_d_k").value == 9 and at.toggle(key="scaling_scale").value is False
