"""Lesson 4 page: queries, keys and values from seeded, edited or 002's recovered weights."""

from __future__ import annotations

import pandas as pd
import pytest
import torch

import attention_core as ac
from attention_core.attention import attention_scores, self_attention
from attention_core.presets import JOURNEY, PRESETS
from attention_core.projections import random_projections, recovered_002_projections
from tests.apptest_helpers import assert_clean, chart_specs, frames, lab_input, open_page, sentence_params
from tests.pages.cell_click_helpers import clickable_specs, has_footer, keep_cell, markdown, outlined_rows
from ui.format import format_number

PAGE = "app_pages/qkv_projections.py"


def matrices(at, labels) -> list[pd.DataFrame]:
    """The (T, T) tables of the page, in page order: Q K^T, X X^T, weights."""
    return [f for f in frames(at) if list(f.index) == list(labels) and list(f.columns) == list(labels)]


def table_with_columns(at, prefix: str) -> pd.DataFrame:
    """The first token-labelled table whose columns are prefix1, prefix2, ... (Q: "q", context: "c")."""
    labels = list(lab_input(at).labels)
    return next(
        f
        for f in frames(at)
        if list(f.index) == labels and len(f.columns) and all(str(c).startswith(prefix) for c in f.columns)
    )


def close(frame: pd.DataFrame, tensor: torch.Tensor, atol: float = 1e-5) -> bool:
    return torch.allclose(torch.tensor(frame.to_numpy(), dtype=torch.float64), tensor.to(torch.float64), atol=atol)


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.key)
def test_every_preset_shows_the_core_numbers(preset) -> None:
    at = open_page(PAGE, {"example": preset.name})
    assert_clean(at)
    current = lab_input(at)
    assert current.preset is preset
    W = random_projections(current.d_model, 2, 0)
    steps = self_attention(current.X, W.W_q, W.W_k, W.W_v, scale=True)
    assert close(table_with_columns(at, "q"), steps.Q)
    W_q_table = next(f for f in frames(at) if list(f.columns) == ["q1", "q2"] and f.index[0] == "d1")
    assert close(W_q_table, W.W_q)
    scores, xx, weights = matrices(at, current.labels)[:3]
    assert close(scores, steps.scores)
    assert close(xx, attention_scores(current.X, current.X))
    assert close(weights, steps.weights)
    assert close(table_with_columns(at, "c"), steps.context)
    assert len(chart_specs(at)) >= 4  # Q K^T, X X^T, weights, context
    assert at.radio(key="qkv_source").options[-1].startswith("The journey tutorial") == (current.d_model == 3)


def test_typed_sentence_with_32_tokens() -> None:
    sentence = " ".join(f"w{i % 20}" for i in range(32))
    at = open_page(PAGE, sentence_params(sentence, d_model=8, seed=3))
    assert_clean(at)
    current = lab_input(at)
    assert current.T == 32 and current.d_model == 8
    W = random_projections(8, 2, 0)
    steps = self_attention(current.X, W.W_q, W.W_k, W.W_v)
    assert close(matrices(at, current.labels)[2], steps.weights)
    assert [o for o in at.radio(key="qkv_source").options] == ["Seeded random", "Edit by hand"]


def test_single_token_does_not_crash() -> None:
    at = open_page(PAGE, sentence_params("alone", d_model=2))
    assert_clean(at)
    assert matrices(at, ["alone"])[2].iloc[0, 0] == pytest.approx(1.0)


def test_d_k_seed_and_scale_controls() -> None:
    at = open_page(PAGE)
    at.slider(key="qkv_d_k").set_value(5)
    at.number_input(key="qkv_seed").set_value(7)
    at.toggle(key="qkv_scale_random").set_value(False)
    at.run()
    assert_clean(at)
    current = lab_input(at)
    W = random_projections(current.d_model, 5, 7)
    steps = self_attention(current.X, W.W_q, W.W_k, W.W_v, scale=False)
    assert list(table_with_columns(at, "q").columns) == ["q1", "q2", "q3", "q4", "q5"]
    assert close(table_with_columns(at, "q"), steps.Q)
    assert close(matrices(at, current.labels)[2], steps.weights)
    assert "(6, 3) @ (3, 5) → (6, 5)" in " ".join(m.value for m in at.markdown)


def test_002_weights_reproduce_the_printout() -> None:
    at = open_page(PAGE)
    at.radio(key="qkv_source").set_value("002").run()
    assert_clean(at)
    assert at.toggle(key="qkv_scale_002").value is False  # 002 did not scale
    comparison = next(f for f in frames(at) if "largest |lab − printed|" in f.columns)
    assert len(comparison) == 6 and (comparison.iloc[:, 0] < 5e-4).all()
    current = lab_input(at)
    weights = matrices(at, current.labels)
    printed_weights = torch.tensor(JOURNEY.printed["projected_weights"], dtype=torch.float64)
    assert any(close(f, printed_weights, atol=0) for f in weights)  # the printed table is shown
    W, _ = recovered_002_projections()
    steps = self_attention(current.X, W.W_q, W.W_k, W.W_v, scale=False)
    assert close(weights[-1], steps.weights)
    assert close(weights[-1], printed_weights, atol=5e-4)
    text = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert "journey sentence" in text and "returns X itself" in text


def test_002_weights_on_another_3d_preset_say_where_they_come_from() -> None:
    at = open_page(PAGE, {"example": PRESETS[1].name})
    at.radio(key="qkv_source").set_value("002").run()
    assert_clean(at)
    assert any("recovered for the journey sentence" in i.value for i in at.info)
    assert not any("largest |lab − printed|" in f.columns for f in frames(at))


def test_edited_weights_bad_cell_keeps_the_last_good_matrix() -> None:
    at = open_page(PAGE)
    at.radio(key="qkv_source").set_value("edited").run()
    assert_clean(at)
    assert len(at.data_editor) == 3
    current = lab_input(at)
    W = random_projections(current.d_model, 2, 0)
    at.session_state["qkv_editor_W_q"] = {"edited_rows": {0: {"q1": "oops"}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert_clean(at)
    assert any("W_q: The cell at row 1, column 1" in e.value and "last valid W_q" in e.value for e in at.error)
    assert close(table_with_columns(at, "q"), current.X @ W.W_q, atol=1e-4)  # editor shows 4 decimals
    at.session_state["qkv_editor_W_q"] = {"edited_rows": {0: {"q1": "2"}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert_clean(at)
    assert not at.error
    W_q = W.W_q.clone()
    W_q[0, 0] = 2.0
    assert close(table_with_columns(at, "q"), current.X @ W_q, atol=1e-4)


@pytest.mark.parametrize(
    ("example", "source", "expected"),
    [
        (None, "edited", "validate_projection_matrix"),
        (None, "002", "reproduce_002"),
        (PRESETS[1].name, "002", "recover_projection"),
    ],
)
def test_code_shown_in_every_branch_is_code_that_runs(example, source, expected, monkeypatch) -> None:
    """Issue 8 item 5 beyond the default input: each source shows only the functions its branch calls."""
    import sys
    import threading

    import streamlit as st

    from tests.test_show_code import _codes, _name
    from ui import drawing, page

    recorded: list = []
    original = drawing.show_code

    def recording_show_code(*functions, **kwargs) -> None:
        recorded.extend(functions)
        original(*functions, **kwargs)

    for module in (drawing, page):  # the page API re-exports it; widgets call it in ui.drawing
        monkeypatch.setattr(module, "show_code", recording_show_code)
    at = open_page(PAGE, {"example": example} if example else None)
    st.cache_data.clear()
    recorded.clear()
    called: set = set()

    def profiler(frame, event, arg) -> None:
        if event == "call":
            called.add(frame.f_code)

    threading.setprofile(profiler)
    sys.setprofile(profiler)
    try:
        at.radio(key="qkv_source").set_value(source).run()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    assert_clean(at)
    names = [_name(f) for f in recorded]
    assert any(name.endswith(expected) for name in names), names
    assert [name for f, name in zip(recorded, names, strict=True) if not _codes(f) & called] == []
    if source == "002" and example:
        assert not any(name.endswith("reproduce_002") for name in names)


def test_self_attention_is_explained_against_cross_attention_and_002s_pitfall_names_w_k() -> None:
    """Issue 9: what “self” means (Q, K, V from the same X); 2.2.4 multiplies by the key weight matrix W_kᵀ."""
    at = open_page(PAGE)
    assert_clean(at)
    text = " ".join(m.value for m in at.markdown)
    assert "**same X**" in text and "cross-attention" in text and "K = Z W_k" in text
    assert "transposed key weight matrix W_kᵀ" in text and "transposed key matrix" not in text


def test_q_k_v_scores_weights_and_context_are_clickable_and_explain_kept_cells():
    """Issue 11: Q, K, V, both score matrices, the weights and the context are clickable, the square ones
    outline the query; a kept K entry and a kept score show the core's numbers; exercises and footer close."""
    from attention_core.projections import random_projections

    at = open_page(PAGE)
    assert_clean(at)
    lab = lab_input(at)
    specs = clickable_specs(at)
    assert len(specs) == 7
    assert sorted(len(outlined_rows(spec)) for spec in specs) == [0, 0, 0, 0, 1, 1, 1]
    assert all(outlined_rows(spec) in ([], [lab.query_label]) for spec in specs)
    assert has_footer(at, PAGE)
    labels = list(lab.labels)
    keep_cell(at, "qkv_k_chart", labels[1], "k2")
    keep_cell(at, "qkv_scores_chart", labels[2], labels[0])
    assert_clean(at)
    params = random_projections(lab.d_model, int(at.session_state["qkv_d_k"]), int(at.session_state["qkv_seed"]))
    steps = ac.self_attention(lab.X, params.W_q, params.W_k, params.W_v, scale=True)
    text = markdown(at)
    assert f"**Entry “k2” of “{labels[1]}”**" in text and format_number(float(steps.K[1, 1])) in text
    assert f"**Score of query “{labels[2]}” with key “{labels[0]}”**" in text
    assert format_number(float(steps.scores[2, 0])) in text


def test_each_step_uses_the_weights_chosen_in_the_step_that_draws_them():
    """Issue 24: the lesson is in steps; d_k, the seed, the scaling and edited cells chosen in the step
    "W_q, W_k, W_v" hold in every other step (which names them in a caption) and are still there on return."""
    at = open_page(PAGE, {"step": "2"})
    bar = "stepbar:qkv_projections"
    names = at.segmented_control(key=bar).options
    assert len(names) >= 5 and at.segmented_control(key=bar).value == 2
    at.slider(key="qkv_d_k").set_value(5).run()
    at.number_input(key="qkv_seed").set_value(3).run()
    at.toggle(key="qkv_scale_random").set_value(False).run()
    lab = lab_input(at)
    params = random_projections(lab.d_model, 5, 3)
    steps = self_attention(lab.X, params.W_q, params.W_k, params.W_v, scale=False)
    at.segmented_control(key=bar).set_value(1).run()  # the step before: it draws no weights, forgets nothing
    assert_clean(at)
    at.segmented_control(key=bar).set_value(2).run()
    assert at.slider(key="qkv_d_k").value == 5
    at.button(key="stepnext:qkv_projections").click().run()  # "One token": W_q and the query's q, k, v
    assert_clean(at)
    assert at.query_params["step"] == "3"
    assert any("d_k = 5" in c.value and "not scaled" in c.value for c in at.caption)
    assert any(close(f, params.W_q) for f in frames(at) if f.shape == params.W_q.shape)
    for step in range(4, len(names) + 1):  # every later step: the chosen weights, no widget of step 2
        at.segmented_control(key=bar).set_value(step).run()
        assert_clean(at)
        assert any("d_k = 5" in c.value for c in at.caption), step
        assert not [s for s in at.slider if s.key == "qkv_d_k"], step
        if "Attention weights" in str(names[step - 1]):  # the query's row, unscaled, with the chosen weights
            row = next(f for f in frames(at) if "weight" in f.columns)
            assert close(row[["weight"]].T, steps.weights[lab.query_index].unsqueeze(0))
    at.segmented_control(key=bar).set_value(2).run()
    assert at.slider(key="qkv_d_k").value == 5 and at.number_input(key="qkv_seed").value == 3
    assert at.toggle(key="qkv_scale_random").value is False


def test_edited_weights_survive_a_visit_to_another_step():
    """An edited cell of W_q is used by the later steps and is still in the editor after coming back."""
    at = open_page(PAGE, {"step": "2"})
    at.radio(key="qkv_source").set_value("edited").run()
    lab = lab_input(at)
    edited = random_projections(lab.d_model, 2, 0).W_q.clone()
    edited[0, 0] = 2.5
    at.session_state["qkv_last_good"] = {**at.session_state["qkv_last_good"], "W_q": edited}  # as an edit leaves it
    at.segmented_control(key="stepbar:qkv_projections").set_value(3).run()
    assert_clean(at)
    assert any("your edited weights" in c.value for c in at.caption)
    assert any(close(f, edited) for f in frames(at) if f.shape == edited.shape)
    at.segmented_control(key="stepbar:qkv_projections").set_value(2).run()
    assert_clean(at)
    cells = [str(v) for f in (d.value for d in at.dataframe) for v in f.to_numpy().reshape(-1)]  # the editors
    assert "2.5000" in cells  # the W_q editor starts from the edit, not from the seeded weights
