"""Page tests of lesson 7 (multi-head attention): every head count once, every preset once, the torch check."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

import attention_core as ac
from attention_core.heads import head_column_labels, lift_embeddings, lift_matrix, random_head_params, split_cost
from attention_core.masks import block_query_row
from tests.apptest_helpers import assert_clean, charts, frames, lab_input, open_page, sentence_params
from tests.pages.answered import answered  # noqa: F401  (the fixture)
from tests.pages.cell_click_helpers import clickable_specs, colour_range, has_footer, keep_cell, markdown, outlined_rows
from ui.format import format_number

pytestmark = pytest.mark.usefixtures("answered")  # the tests read each step as once its questions are answered

PAGE = "app_pages/multi_head.py"


def run_with(at, *, width: str | None = None, heads: int | None = None, **toggles):
    """Set the page's own widgets (by key) and rerun."""
    if width is not None:
        at.selectbox(key="multi_head_width").set_value(width).run()
    if heads is not None:
        at.number_input(key="multi_head_heads").set_value(heads).run()
    for key, value in toggles.items():
        at.toggle(key=f"multi_head_{key}").set_value(value).run()
    return at


def expected(at, width: str, heads: int, *, causal: bool = False, full_row: bool = False, seed: int = 0):
    """The core's multi-head attention for the lesson and the page settings."""
    current = lab_input(at)
    X = current.X
    if width != "sidebar":
        X = lift_embeddings(X, lift_matrix(current.d_model, int(width), seed))
    W = random_head_params(X.shape[1], seed)
    mask = ac.causal_mask(current.T) if causal else None
    if full_row:
        mask = block_query_row(ac.no_mask(current.T) if mask is None else mask, current.query_index)
    return X, ac.multi_head_attention(X, W.W_q, W.W_k, W.W_v, W.W_o, num_heads=heads, mask=mask)


def labelled(at, rows, columns) -> list[pd.DataFrame]:
    """Every table with exactly these row and column labels, in page order."""
    return [f for f in frames(at) if list(f.index) == list(rows) and list(f.columns) == list(columns)]


def check_table(at) -> dict[str, float]:
    """The 'Check against PyTorch' st.table as {compared: difference}."""
    table = at.table[-1].value
    return {row["compared"]: float(row["max |difference|"]) for _, row in table.iterrows()}


def assert_page_matches_core(at, width: str, heads: int, **mask_options):
    """The head table, the concatenation and the output on the page equal the core's."""
    current = lab_input(at)
    X, steps = expected(at, width, heads, **mask_options)
    d_model = X.shape[1]
    dims = [f"d{i + 1}" for i in range(d_model)]
    head_table = labelled(at, current.labels, current.labels)[0]  # the selected head (head 1)
    assert np.allclose(head_table.to_numpy(), steps.heads[0].weights.numpy(), atol=1e-6)
    concat = labelled(at, current.labels, head_column_labels(d_model, heads))[-1]
    assert np.allclose(concat.to_numpy(), steps.concat.numpy(), atol=1e-6)
    output = labelled(at, current.labels, dims)[-1]
    assert np.allclose(output.to_numpy(), steps.output.numpy(), atol=1e-6)
    by_head = {f.attrs["alt"]: f for f in labelled(at, [f"head {h + 1}" for h in range(heads)], current.labels)}
    query_rows = by_head["The query's weights in every head"]
    assert np.allclose(query_rows.to_numpy(), steps.weights[:, current.query_index].numpy(), atol=1e-6)
    scores = by_head[f"Scaled scores of “{current.query_label}” in every head"]  # before the question on a weight
    expected_scores = torch.stack([head.masked_scores[current.query_index] for head in steps.heads]).numpy()
    assert scores.to_numpy().tolist() == [[format_number(v) for v in row] for row in expected_scores.tolist()]
    differences = check_table(at)
    assert len(differences) == 2 + heads
    assert max(differences.values()) < 1e-5
    verdicts = at.table[-1].value["verdict"].tolist()
    assert set(verdicts) <= {"exactly equal", "equal up to float64 rounding"}, verdicts  # the page runs in float64
    return steps


# every head count 1..8 once; 5 and 7 divide none of the widths, so they show the error
HEAD_CASES = [("8", 1), ("8", 2), ("12", 3), ("16", 4), ("12", 6), ("16", 8)]


@pytest.mark.parametrize(("width", "heads"), HEAD_CASES, ids=[f"d{w}-h{h}" for w, h in HEAD_CASES])
def test_every_head_count_matches_the_core_and_torch(width, heads):
    at = run_with(open_page(PAGE), width=width, heads=heads)
    assert_clean(at)
    assert not at.error
    assert_page_matches_core(at, width, heads)
    assert len(charts(at)) == heads + 3  # one heatmap per head, the concatenation, W_o and the output
    assert any(f"d_k = {width} / {heads}" in m.value for m in at.markdown)


@pytest.mark.parametrize("heads", [5, 7])
def test_a_head_count_that_does_not_divide_shows_an_error(heads):
    at = run_with(open_page(PAGE), width="12", heads=heads)
    assert_clean(at)
    assert len(at.error) == 1
    message = at.error[0].value
    assert f"cannot be split into {heads} equal heads" in message
    assert "1, 2, 3, 4, 6" in message
    assert not charts(at)


# every preset once, with its own 3- or 4-dimensional embeddings or lifted
PRESET_CASES = [
    ("journey", "sidebar", 3),
    ("light", "sidebar", 1),
    ("transformer", "16", 2),
    ("one-hot", "sidebar", 2),
    ("numpy-seed-4", "sidebar", 4),
]


@pytest.mark.parametrize(("key", "width", "heads"), PRESET_CASES, ids=[c[0] for c in PRESET_CASES])
def test_every_preset(key, width, heads):
    preset = ac.PRESETS_BY_KEY[key]
    at = run_with(open_page(PAGE, {"example": preset.name}), width=width, heads=heads, causal=True)
    assert_clean(at)
    assert lab_input(at).preset == preset
    steps = assert_page_matches_core(at, width, heads, causal=True)
    assert torch.triu(steps.weights, diagonal=1).eq(0).all()


def test_parameter_counts_are_shown_with_the_current_d_model_and_768():
    at = run_with(open_page(PAGE), width="12", heads=3)
    latex = " ".join(element.value for element in at.latex)
    for count in ("576", "588", "624", "2{,}359{,}296", "2{,}360{,}064", "2{,}362{,}368"):  # 4*12², +12, +48; BERT
        assert count in latex  # {,} keeps KaTeX from spacing the thousands separators as punctuation
    assert any("2,359,296 parameters with bias=False" in c.value for c in at.caption)


def test_a_typed_sentence_with_a_fully_masked_row():
    params = sentence_params(" ".join(f"w{i}" for i in range(32)), d_model=16, query="w5")
    at = run_with(open_page(PAGE, params), width="sidebar", heads=8, causal=True, full_row=True)
    assert_clean(at)
    steps = assert_page_matches_core(at, "sidebar", 8, causal=True, full_row=True)
    assert steps.output[5].eq(0).all()
    output = labelled(at, lab_input(at).labels, [f"d{i + 1}" for i in range(16)])[-1]
    assert not output.isna().any().any()
    assert any("fully masked rows here: 1" in m.value for m in at.markdown)


def test_a_one_token_sentence():
    at = run_with(open_page(PAGE, sentence_params("alone", d_model=4)), width="sidebar", heads=2)
    assert_clean(at)
    steps = assert_page_matches_core(at, "sidebar", 2)
    assert steps.weights.eq(1).all()


def test_a_long_sentence_draws_heads_as_images():
    params = sentence_params(" ".join(f"t{i}" for i in range(64)), d_model=8)
    at = open_page(PAGE, params)
    assert at.selectbox(key="multi_head_width").value == "sidebar"  # already 8 wide: no lift by default
    at = run_with(at, heads=4)
    assert_clean(at)
    assert len(at.get("image")) == 4
    assert len(charts(at)) == 3  # the concatenation, W_o and the output stay charts
    assert_page_matches_core(at, "sidebar", 4)


def test_splitting_costs_state_equal_parameters_and_flops_but_h_times_the_scores():
    """Issue 9: 'splitting costs nothing extra' holds for parameters and matmul FLOPs, not for the h·T² scores."""
    for T, d_model in ((6, 8), (100, 16)):
        one = split_cost(T, d_model, 1)
        for h in (2, 4, 8):
            split = split_cost(T, d_model, h)
            assert split["parameters"] == one["parameters"] == 4 * d_model**2
            assert split["matmul FLOPs"] == one["matmul FLOPs"]
            assert split["scores (h T²)"] == h * one["scores (h T²)"] == h * T * T
    at = run_with(open_page(PAGE), width="8", heads=4)
    assert_clean(at)
    T = lab_input(at).T
    text = " ".join(m.value for m in at.markdown)
    assert "Splitting costs nothing extra:" not in text
    assert f"h · T² = {4 * T * T:,} numbers instead of T² = {T * T:,}" in text
    costs = next(t.value for t in at.table if "cost" in t.value.columns)
    assert costs.loc[costs["cost"] == "parameters", "4 heads"].item() == f"{4 * 8**2:,}"
    assert "What W_o is for" in text and "residual stream" in text


def test_need_weights_is_named_where_nn_multihead_attention_gives_nan():
    at = run_with(open_page(PAGE), width="8", heads=2, full_row=True)
    assert_clean(at)
    text = " ".join(m.value for m in at.markdown)
    assert "`need_weights=True` (its default" in text and "`need_weights=False`" in text


def test_every_head_panel_is_clickable_on_a_shared_scale_and_explains_a_kept_cell():
    """Issue 11: one clickable compact heatmap per head (key head{h}), the query's row outlined, one shared
    colour range; a kept cell shows that head's softmax with the core's numbers; exercises and the footer."""
    at = run_with(open_page(PAGE), width="8", heads=4)
    assert_clean(at)
    query = lab_input(at).query_label
    panels = [spec for spec in clickable_specs(at) if outlined_rows(spec) == [query]]
    assert len(panels) == 4
    assert len({colour_range(spec) for spec in panels}) == 1, "every head panel shares one colour range"
    assert any("shared by every panel" in caption.value for caption in at.caption)
    assert has_footer(at, PAGE)
    labels = list(lab_input(at).labels)
    keep_cell(at, "head2", labels[1], labels[3])
    assert_clean(at)
    _, steps = expected(at, "8", 4)
    assert f"**{format_number(float(steps.heads[2].weights[1, 3]))}**" in markdown(at)


def test_near_zero_outputs_show_only_right_digits():
    """Issue 22 item 5b: the layer runs in float64, so a near-zero output cell reads as nn.MultiheadAttention in
    float64 computes it (weight seed 127: -2.8015e-06; float32 showed -2.8163e-06)."""
    from attention_core.reference import mha_reference

    at = open_page(PAGE)
    at.number_input(key="multi_head_seed").set_value(127).run()
    assert_clean(at)
    X = lab_input(at).X.to(torch.float64)
    W_in = lift_matrix(X.shape[1], 8, 127, torch.float64)
    params = random_head_params(8, 127, torch.float64)
    output, _ = mha_reference(lift_embeddings(X, W_in), params.W_q, params.W_k, params.W_v, params.W_o, num_heads=2)
    labels = lab_input(at).labels
    expected = {
        (labels[i], f"d{j + 1}"): format_number(v) for i, row in enumerate(output.tolist()) for j, v in enumerate(row)
    }
    assert expected[(labels[5], "d6")] == "-2.8015e-06"
    shown = [
        {
            (r, c): e
            for r, c, e in zip(
                spec["data_frame"]["row"], spec["data_frame"]["col"], spec["data_frame"]["exact"], strict=True
            )
        }
        for spec in clickable_specs(at)
    ]
    assert expected in shown
