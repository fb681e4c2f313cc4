"""Page tests of lesson 6 (masking): it runs for every preset and mask type, and shows the core's numbers."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

import attention_core as ac
from attention_core.masks import MASK_TYPES, block_query_row, build_mask
from tests.apptest_helpers import assert_clean, chart_specs, charts, frames, lab_input, open_page, sentence_params

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
        widget = {"masking_padding": at.multiselect, "masking_window": at.slider}.get(key, at.toggle)(key=key)
        widget.set_value(value).run()
    return at


def expected_steps(at, kind: str, padded=(), window: int = 3, demo: bool = False):
    """The core's attention for the lesson the page ran on."""
    current = lab_input(at)
    mask = build_mask(kind, current.T, padded=padded, window=min(window, current.T))
    if demo:
        mask = block_query_row(mask, current.query_index)
    return mask, ac.self_attention(current.X, mask=mask, scale=True)


# every preset once, each with a different mask type
CASES = list(zip(ac.PRESETS, [*MASK_TYPES, "causal"], strict=True))


@pytest.mark.parametrize(("preset", "kind"), CASES, ids=[f"{p.key}-{k}" for p, k in CASES])
def test_each_preset_and_mask_type_shows_the_core_numbers(preset, kind):
    at = open_page(PAGE, {"example": preset.name})
    at = set_mask(at, kind)
    assert_clean(at)
    current = lab_input(at)
    assert current.preset == preset
    padded = [current.T - 1] if kind == "padding" else []
    mask, steps = expected_steps(at, kind, padded=padded)
    weights = numeric_square(at, current.labels)[0]
    assert np.allclose(weights.to_numpy(), steps.weights.numpy(), atol=1e-6)
    assert (weights.to_numpy()[~mask.numpy()] == 0).all()  # blocked weights are an exact 0
    assert np.allclose(context_table(at, current.labels).to_numpy(), steps.context.numpy(), atol=1e-6)
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


def test_padding_every_token_of_a_typed_sentence():
    at = open_page(PAGE, sentence_params(SENTENCE_32, d_model=8))
    current = lab_input(at)
    assert current.T == 32
    at = set_mask(at, "padding", masking_padding=list(current.labels))
    assert_clean(at)
    weights = numeric_square(at, current.labels)[0]
    assert (weights.to_numpy() == 0).all()
    assert np.allclose(context_table(at, current.labels).to_numpy(), 0)
    key_padding = next(f for f in frames(at) if list(f.index) == ["key_padding_mask"])
    assert key_padding.to_numpy().all()


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
    [("sliding window", {}, 1.0), ("padding", {}, 1.0), ("padding", {"masking_padding": ["hello"]}, 0.0)],
)
def test_a_one_token_sentence(kind, widgets, expected):
    at = open_page(PAGE, sentence_params("hello", d_model=3))
    at = set_mask(at, kind, **widgets)
    assert_clean(at)
    assert lab_input(at).T == 1
    weights = numeric_square(at, ["hello"])[0]
    assert weights.iloc[0, 0] == pytest.approx(expected)


def test_a_128_token_sentence_runs():
    at = open_page(PAGE, sentence_params(" ".join(f"t{i}" for i in range(128)), d_model=16))
    assert_clean(at)
    current = lab_input(at)
    assert current.T == 128
    weights = numeric_square(at, current.labels)[0]
    expected = ac.self_attention(current.X, mask=ac.causal_mask(128), scale=True).weights
    assert torch.allclose(torch.tensor(weights.to_numpy(), dtype=torch.float32), expected, atol=1e-6)
