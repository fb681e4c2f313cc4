"""Page tests of lesson 6 (masking): it runs for every preset and mask type, and shows the core's numbers."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

import attention_core as ac
from attention_core.masks import MASK_TYPES, PAD, block_query_row, mask_by_kind, pad_to_length
from tests.apptest_helpers import (
    assert_clean,
    chart_specs,
    charts,
    frames,
    lab_input,
    open_code,
    open_page,
    sentence_params,
)
from tests.pages.answered import answered  # noqa: F401  (the fixture)
from tests.pages.cell_click_helpers import clickable_specs, has_footer, keep_cell, markdown, outlined_rows
from ui.format import format_number

pytestmark = pytest.mark.usefixtures("answered")  # the tests read each step as once its questions are answered

PAGE = "app_pages/masking.py"
SENTENCE_32 = " ".join(f"w{i}" for i in range(32))


def numeric_square(at, labels) -> list[pd.DataFrame]:
    """The float (T, T) tables labelled by tokens on both axes, in page order."""
    return [
        f
        for f in frames(at)
        if list(f.index) == list(labels) and list(f.columns) == list(labels) and all(f.dtypes == np.float64)
    ]


def context_table(at, labels) -> pd.DataFrame:
    """The table of all context vectors: token rows, d1..dd columns."""
    return next(f for f in frames(at) if list(f.index) == list(labels) and str(f.columns[0]) == "d1")


def text_tables(at) -> list[pd.DataFrame]:
    """The tables whose cells are text (masked scores, the method comparisons)."""
    return [f for f in frames(at) if len(f.columns) and all(isinstance(v, str) for v in f.iloc[0])]


def set_mask(at, kind: str, **widgets):
    """Choose a mask type on the page, then set page-local widgets by key, and rerun."""
    at.radio(key="masking_type").set_value(kind).run()
    for key, value in widgets.items():
        widget = {"masking_pads": at.slider, "masking_window": at.slider}.get(key, at.toggle)(key=key)
        widget.set_value(value).run()
    return at


def expected_steps(at, kind: str, pads: int = 0, window: int = 3, demo: bool = False):
    """The core's attention for the input the page ran on (with ``pads`` [PAD] tokens appended)."""
    current = lab_input(at)
    padded = pad_to_length(current.tokens, current.X, current.T + pads)
    T = len(padded.tokens)
    mask = mask_by_kind(kind, T, padded=padded.padded, window=min(window, T))
    if demo:
        mask = block_query_row(mask, current.query_index)
    return mask, ac.self_attention(padded.X, mask=mask, scale=True)


def padded_labels(at, pads: int) -> list[str]:
    """The page's row and column labels: the sidebar's labels, then the [PAD] tokens."""
    current = lab_input(at)
    return [*current.labels, *([PAD] if pads == 1 else [f"{PAD} ({i + 1})" for i in range(pads)])]


# every preset once, each with a different mask type
CASES = list(zip(ac.PRESETS, [*MASK_TYPES, "causal"], strict=True))


@pytest.mark.parametrize(("preset", "kind"), CASES, ids=[f"{p.key}-{k}" for p, k in CASES])
def test_each_preset_and_mask_type_shows_the_core_numbers(preset, kind):
    at = open_page(PAGE, {"example": preset.name})
    at = set_mask(at, kind)
    assert_clean(at)
    current = lab_input(at)
    assert current.preset == preset
    pads = 2 if kind == "padding" else 0  # the slider's default
    mask, steps = expected_steps(at, kind, pads=pads)
    labels = padded_labels(at, pads)
    weights = numeric_square(at, labels)[0]
    assert np.allclose(weights.to_numpy(), steps.weights.numpy(), atol=1e-6)
    assert (weights.to_numpy()[~mask.numpy()] == 0).all()  # blocked weights are an exact 0
    assert np.allclose(context_table(at, labels).to_numpy(), steps.context.numpy(), atol=1e-6)
    specs = chart_specs(at)
    assert len(specs) >= 3  # mask, masked scores, weights (+ leak bars when something is blocked)
    assert len(specs) == (3 if kind == "none" else 4)


def test_masked_scores_table_labels_blocked_cells_and_never_shows_a_bare_inf():
    at = open_page(PAGE)  # default preset, causal mask by default
    assert_clean(at)
    current = lab_input(at)
    scores = text_tables(at)[0]
    assert list(scores.index) == list(current.labels)
    assert scores.iloc[0, 1] == "−∞ (blocked)"  # first token may not see the second
    cells = scores.to_numpy().ravel().tolist()
    assert not any("inf" in cell.lower() or cell == "NaN" for cell in cells)
    _, steps = expected_steps(at, "causal")
    assert scores.iloc[-1, 0] == f"{steps.masked_scores[-1, 0].item():.4f}"
    # the boolean tables: the same mask in both conventions
    bools = [f for f in frames(at) if len(f.columns) > 1 and all(map(pd.api.types.is_bool_dtype, f.dtypes))]
    assert np.array_equal(bools[0].to_numpy(), ac.causal_mask(current.T).numpy())
    assert np.array_equal(bools[1].to_numpy(), ~ac.causal_mask(current.T).numpy())


def test_switching_the_mask_off_shows_unmasked_weights_and_the_leak():
    at = open_page(PAGE, {"example": "I can't find the light switch"})
    at.toggle(key="masking_enabled").set_value(False).run()
    assert_clean(at)
    current = lab_input(at)
    unmasked = ac.self_attention(current.X, scale=True)
    weights = numeric_square(at, current.labels)[0]
    assert np.allclose(weights.to_numpy(), unmasked.weights.numpy(), atol=1e-6)
    assert any("mask is **off**" in w.value for w in at.warning)
    bars = charts(at)[-1]
    assert json.loads(bars.proto.spec)["mark"]["type"] == "bar"
    leak = convert_arrow_bytes_to_pandas_df(bars.proto.datasets[0].data.data)
    expected = 1 - unmasked.weights.tril().sum(dim=-1)  # weight on future keys, by hand
    assert list(leak["query"]) == list(current.labels)
    assert np.allclose(leak["weight on blocked keys"], expected.numpy(), atol=1e-6)


def test_fully_masked_row_demo_gives_zeros_and_labels_nan_as_the_demonstration():
    at = open_page(PAGE)
    at.toggle(key="masking_full_row").set_value(True).run()
    assert_clean(at)
    current = lab_input(at)
    q = current.query_index
    _, steps = expected_steps(at, "causal", demo=True)
    weights = numeric_square(at, current.labels)[0]
    assert np.allclose(weights.to_numpy(), steps.weights.numpy(), atol=1e-6)
    assert (weights.iloc[q] == 0).all()
    assert not weights.isna().any().any()
    assert np.allclose(context_table(at, current.labels).iloc[q].to_numpy(), 0)
    demo = text_tables(at)[-1]
    assert (demo["−∞, then torch.softmax"] == "NaN (0/0)").all()
    assert (demo["softmax, × mask, renormalise"] == "NaN (0/0)").all()
    assert (demo["−1e9, then softmax"] == f"{1 / current.T:.4f}").all()
    assert (demo["the lab (= SDPA)"] == "0").all()
    assert any("Fully masked row" in i.value for i in at.info)


@pytest.mark.parametrize("pads", [1, 3])
def test_padding_appends_pad_tokens_and_blocks_exactly_them(pads):
    """Issue 9 item 8: padding is [PAD] tokens the learner appends, never a real word; only they are blocked."""
    at = open_page(PAGE, sentence_params("the cat sat", d_model=4))
    at = set_mask(at, "padding", masking_pads=pads)
    assert_clean(at)
    current = lab_input(at)
    assert current.T == 3  # the sidebar's input is unchanged
    labels = padded_labels(at, pads)
    mask, steps = expected_steps(at, "padding", pads=pads)
    assert not mask[:, 3:].any() and mask[:, :3].all()  # the mask blocks exactly the [PAD] keys
    weights = numeric_square(at, labels)[0]
    assert np.allclose(weights.to_numpy(), steps.weights.numpy(), atol=1e-6)
    assert (weights.iloc[:, 3:].to_numpy() == 0).all()  # every [PAD] key gets weight 0
    assert (weights.iloc[:, :3].to_numpy() > 0).all()  # every real word keeps its attention
    key_padding = next(f for f in frames(at) if list(f.index) == ["key_padding_mask"])
    assert list(key_padding.columns) == labels
    assert key_padding.iloc[0].tolist() == [False] * 3 + [True] * pads


def test_pad_to_length_gives_zero_rows_and_the_key_padding_mask():
    X = torch.arange(6.0).reshape(2, 3)
    padded = pad_to_length(("a", "b"), X, 4)
    assert padded.tokens == ("a", "b", PAD, PAD) and padded.padded == (2, 3)
    assert torch.equal(padded.X[:2], X) and torch.equal(padded.X[2:], torch.zeros(2, 3))
    assert padded.key_padding_mask.tolist() == [False, False, True, True]
    fixed = pad_to_length(("a", "b"), X, 3, pad_vector=torch.ones(3))
    assert torch.equal(fixed.X[2], torch.ones(3))
    with pytest.raises(ValueError, match="shorter"):
        pad_to_length(("a", "b"), X, 1)


def test_sliding_window_on_a_typed_sentence():
    at = open_page(PAGE, sentence_params(SENTENCE_32, d_model=5, query="w10"))
    at = set_mask(at, "sliding window", masking_window=4)
    assert_clean(at)
    current = lab_input(at)
    _, steps = expected_steps(at, "sliding window", window=4)
    weights = numeric_square(at, current.labels)[0]
    assert np.allclose(weights.to_numpy(), steps.weights.numpy(), atol=1e-6)
    row = weights.loc["w10"]
    assert (row[["w7", "w8", "w9", "w10"]] > 0).all() and (row.drop(["w7", "w8", "w9", "w10"]) == 0).all()


@pytest.mark.parametrize(
    ("kind", "widgets", "expected"),
    [("sliding window", {}, 1.0), ("padding", {"masking_pads": 0}, 1.0), ("padding", {}, 1.0)],
)
def test_a_one_token_sentence(kind, widgets, expected):
    at = open_page(PAGE, sentence_params("hello", d_model=3))
    at = set_mask(at, kind, **widgets)
    assert_clean(at)
    assert lab_input(at).T == 1
    pads = widgets.get("masking_pads", 2 if kind == "padding" else 0)
    weights = numeric_square(at, ["hello", *padded_labels(at, pads)[1:]])[0]
    assert weights.iloc[0, 0] == pytest.approx(expected)


def test_a_128_token_sentence_runs():
    at = open_page(PAGE, sentence_params(" ".join(f"t{i}" for i in range(128)), d_model=16))
    assert_clean(at)
    current = lab_input(at)
    assert current.T == 128
    weights = numeric_square(at, current.labels)[0]
    expected = ac.self_attention(current.X, mask=ac.causal_mask(128), scale=True).weights
    assert torch.allclose(torch.tensor(weights.to_numpy(), dtype=torch.float32), expected, atol=1e-6)


def test_multiply_then_renormalise_underflow_is_stated_and_shown():
    """Issue 9 item 12: a row WITH an allowed key where multiply-then-renormalise gives 0/0."""
    at = open_page(PAGE)
    assert_clean(at)
    text = " ".join(m.value for m in at.markdown)
    assert "The exception:" in text and "underflow" in text
    assert "all methods give the same weights" not in text
    demo = next(f for f in text_tables(at) if f.index[0].startswith("blocked key"))
    assert demo.loc["allowed key (score 0)", "−∞, then torch.softmax"] == "1.0000"
    assert demo.loc["allowed key (score 0)", "the lab (= SDPA)"] == "1.0000"
    assert (demo["softmax, × mask, renormalise"] == "NaN (0/0)").all()


def test_only_the_running_mask_builders_are_shown_and_dense_sliding_window_is_not_called_cheaper():
    at = open_code(open_page(PAGE))
    code = " ".join(c.value for c in at.code)
    assert "def causal_mask" in code and "def padding_mask" not in code and "def sliding_window_mask" not in code
    at = set_mask(at, "padding")
    code = " ".join(c.value for c in at.code)
    assert "def padding_mask" in code and "def pad_to_length" in code and "def causal_mask" not in code
    text = " ".join(m.value for m in at.markdown)
    assert "dense mask" in text and "O(T²)" in text


def test_mha_gives_nan_on_a_fully_masked_row_only_with_need_weights():
    """Issue 9: nn.MultiheadAttention's NaN comes only with need_weights=True (its default); the page says so."""
    from attention_core.reference import mha_reference

    X = torch.randn(4, 4, generator=torch.Generator().manual_seed(0))
    W = ac.random_head_params(4, 0)
    mask = block_query_row(ac.causal_mask(4), 2)
    with_weights, weights = mha_reference(X, W.W_q, W.W_k, W.W_v, W.W_o, num_heads=2, mask=mask)
    without, none = mha_reference(X, W.W_q, W.W_k, W.W_v, W.W_o, num_heads=2, mask=mask, need_weights=False)
    assert torch.isnan(with_weights[2]).all() and torch.isnan(weights[:, 2]).all()
    assert none is None and torch.equal(without[2], torch.zeros(4))
    assert not torch.isnan(with_weights[[0, 1, 3]]).any()
    assert torch.allclose(without[[0, 1, 3]], with_weights[[0, 1, 3]], atol=1e-6)
    at = open_page(PAGE)
    text = " ".join(m.value for m in at.markdown)
    assert "`need_weights=True` (its default" in text and "`need_weights=False`" in text


def test_every_square_heatmap_is_clickable_and_outlines_the_query_then_explains_a_kept_cell():
    """Issue 11: mask, masked scores and weights are clickable with the query's row outlined; a blocked cell
    explains its −∞, a weight its softmax with the core's numbers; exercises and the footer close the page."""
    at = set_mask(open_page(PAGE), "causal")
    assert_clean(at)
    query = lab_input(at).query_label
    specs = clickable_specs(at)
    assert len(specs) == 3 and all(outlined_rows(spec) == [query] for spec in specs)
    assert has_footer(at, PAGE)
    labels = list(lab_input(at).labels)
    keep_cell(at, "masking_scores_chart", labels[0], labels[2])  # key 3 after query 1: blocked
    keep_cell(at, "masking_weights_chart", labels[2], labels[1])
    assert_clean(at)
    _, steps = expected_steps(at, "causal")
    text = markdown(at)
    assert "Causal mask: key 3 comes after query 1" in text
    shown = format_number(float(steps.weights[2, 1]))
    assert f"**{shown}**" in text or f"(unrounded: {shown})" in text  # the written operands' result, or beside it


def test_no_sentence_claims_the_lab_never_shows_nan_elsewhere():
    """Issue 22 part 7: lesson 2's overflow table shows NaN too; the sentence says so instead."""
    at = open_page(PAGE)
    text = " ".join(m.value for m in at.markdown)
    assert "never shows\n  one elsewhere" not in text and "never shows one elsewhere" not in text
    assert "lesson 2's overflow table" in text


@pytest.mark.parametrize(
    ("kind", "widgets", "pads", "window", "named"),
    [
        ("padding", {"masking_pads": 3}, 3, 3, "the padding mask (3 [PAD])"),
        ("sliding window", {"masking_window": 2, "masking_full_row": True}, 0, 2, "w = 2) and the row of the query"),
    ],
)
def test_each_step_uses_the_mask_chosen_in_the_step_choose_a_mask(kind, widgets, pads, window, named):
    """Issue 24: the lesson is in steps; the mask's widgets live in the step "Choose a mask" and every other step
    runs on the mask chosen there (named in a caption), with the [PAD] rows; coming back finds the widgets as left."""
    bar = "stepbar:masking"
    at = open_page(PAGE, {"step": "2"})
    names = [str(name) for name in at.segmented_control(key=bar).options]
    set_mask(at, kind, **widgets)
    assert_clean(at)
    _, steps = expected_steps(at, kind, pads=pads, window=window, demo=bool(widgets.get("masking_full_row")))
    labels = padded_labels(at, pads)
    for step in (1, *range(3, len(names) + 1)):  # the first step too: it draws no widget and forgets nothing
        at.segmented_control(key=bar).set_value(step).run()
        assert_clean(at)
        assert not [r for r in at.radio if r.key == "masking_type"], step
        assert step == 1 or any(named in c.value for c in at.caption), (step, [c.value for c in at.caption])
        if "Masked weights" in names[step - 1]:  # the masked weights of the chosen mask, [PAD] rows included
            weights = numeric_square(at, labels)[0]
            assert np.allclose(weights.to_numpy(), steps.weights.numpy(), atol=1e-6)
            assert at.session_state["_exercises_shown:masking"], "the questions sit with the weights"
    at.segmented_control(key=bar).set_value(2).run()
    assert at.radio(key="masking_type").value == kind
    for key, value in widgets.items():
        assert ({"masking_pads": at.slider, "masking_window": at.slider}.get(key, at.toggle))(key=key).value == value
