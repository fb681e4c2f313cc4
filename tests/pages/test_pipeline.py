"""Page 9 (the full pipeline): runs for every input, shows the core's numbers, checks against PyTorch."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

import attention_core as ac
from attention_core.presets import PRESETS, PRESETS_BY_KEY
from tests import apptest_helpers
from tests.apptest_helpers import assert_clean, chart_specs, charts, frames, lab_input, open_page, sentence_params
from tests.pages.answered import answered  # noqa: F401  (the fixture)
from tests.pages.cell_click_helpers import clickable_specs, has_footer, keep_cell, markdown, outlined_rows
from ui.format import format_number

pytestmark = pytest.mark.usefixtures("answered")  # the tests read each step as once its questions are answered

preset_names = {p.key: p.name for p in PRESETS}
PAGE = "app_pages/pipeline.py"
STEPS = ("x", "qkv", "scores", "scaled", "masked", "weights", "context", "concat", "output")


def has_frame(shown: list[pd.DataFrame], values: torch.Tensor, index: list[str] | None = None) -> bool:
    """True if one of the page's tables holds these numbers (finite cells compared, -inf where -inf)."""
    expected = values.detach().double().numpy()
    for frame in shown:
        if not all(pd.api.types.is_numeric_dtype(t) for t in frame.dtypes):  # a table of text (−∞ written out)
            continue
        got = frame.to_numpy(dtype=float)
        same = got.shape == expected.shape and np.allclose(got, expected, atol=1e-6, equal_nan=False)
        if same and (index is None or list(frame.index) == list(index)):
            return True
    return False


def core_steps(at, num_heads: int = 1, mask_kind: str = "none", seed: int = 0) -> ac.MultiHeadSteps:
    """The block computed by the core for the page's lesson and controls."""
    X = lab_input(at).X
    d_model = X.shape[1]
    P = ac.random_projections(d_model, d_model, seed)
    W_o = ac.random_output_projection(d_model, seed)
    mask = ac.causal_mask(X.shape[0]) if mask_kind == "causal" else None
    return ac.multi_head_attention(X, P.W_q, P.W_k, P.W_v, W_o, num_heads=num_heads, mask=mask)


def open_all_steps(at) -> None:
    for key in STEPS:
        at.session_state[f"pipeline_step_{key}"] = True
    at.run()


@pytest.mark.parametrize("preset", [p.key for p in PRESETS])
def test_every_preset_shows_the_output_and_agrees_with_pytorch(preset):
    """No exception; the output table equals the core's; the PyTorch differences are rounding-small."""
    at = open_page(PAGE, {"example": preset_names[preset]})
    assert_clean(at)
    assert lab_input(at).preset.key == preset
    assert at.title[0].value.startswith("9.")
    labels = list(lab_input(at).labels)
    assert has_frame(frames(at), core_steps(at).output, labels)
    metrics = [float(m.value) for m in at.metric]
    assert len(metrics) == 3 and all(0 <= value < 1e-5 for value in metrics)
    assert len(at.get("graphviz_chart")) == 2  # the block's flow and the transformer layer around it
    assert len(at.get("download_button")) >= 3  # output CSV, zip, npz


def test_all_steps_with_two_causal_heads():
    """Every step's table equals the core's, for the followed head, with h = 2 and a causal mask."""
    at = open_page(PAGE, {"example": PRESETS_BY_KEY["numpy-seed-4"].name})  # d_model = 4
    at.number_input(key="pipeline_heads").set_value(2).run()
    at.radio(key="pipeline_mask").set_value("causal").run()
    at.selectbox(key="pipeline_head").set_value(1).run()
    open_all_steps(at)
    assert_clean(at)
    steps = core_steps(at, num_heads=2, mask_kind="causal")
    head = steps.heads[1]
    labels = list(lab_input(at).labels)
    shown = frames(at)
    for tensor in (
        lab_input(at).X,
        head.Q,
        head.K,
        head.V,
        head.scores,
        head.scaled_scores,
        head.weights,
        head.context,
        steps.concat,
        steps.output,
    ):
        assert has_frame(shown, tensor, labels)
    numeric = [f for f in shown if all(pd.api.types.is_numeric_dtype(t) for t in f.dtypes)]
    masked = [f for f in numeric if f.shape == (6, 6) and np.isinf(f.to_numpy(dtype=float)).any()]
    assert masked and np.array_equal(masked[0].to_numpy(dtype=float), head.masked_scores.double().numpy())
    assert len(charts(at)) >= 10
    assert not at.error


def test_heads_that_do_not_divide_d_model_show_a_clear_error():
    """h = 3 with d_model = 4: st.error says why, the page still shows the single-head numbers."""
    at = open_page(PAGE, {"example": PRESETS_BY_KEY["numpy-seed-4"].name})
    at.number_input(key="pipeline_heads").set_value(3).run()
    assert_clean(at)
    assert at.error and "cannot be split into 3 equal heads" in at.error[0].value
    assert has_frame(frames(at), core_steps(at, num_heads=1).output)


def test_seed_changes_the_weights():
    """Another seed gives the core's numbers for that seed."""
    at = open_page(PAGE)
    at.number_input(key="pipeline_seed").set_value(7).run()
    assert_clean(at)
    assert has_frame(frames(at), core_steps(at, seed=7).output)
    assert not has_frame(frames(at), core_steps(at, seed=0).output)


def test_query_trace_and_line_view():
    """The query's key-by-key table and the hoverable line view (two hover selections)."""
    at = open_page(PAGE)
    head = core_steps(at).heads[0]
    q = lab_input(at).query_index
    trace = next(f for f in frames(at) if "weight" in f.columns)
    assert trace["weight"].tolist() == pytest.approx(head.weights[q].tolist(), abs=1e-6)
    line_specs = [spec for spec in chart_specs(at) if "lines" in str(spec.get("title", ""))]
    assert line_specs
    params = line_specs[0]["params"]  # Altair lifts layer selections to the top level
    assert len(params) == 2 and all(p["select"]["on"] == "pointerover" for p in params)
    assert sorted(p["select"]["fields"][0] for p in params) == ["col", "row"]  # hover a query or a key


def test_reproduction_code_on_screen_gives_the_shown_output():
    """The st.code block, executed, recomputes the output the page shows."""
    at = open_page(PAGE, sentence_params("the cat sat on the mat again", d_model=6))
    at.number_input(key="pipeline_heads").set_value(3).run()
    assert not any("scaled_dot_product_attention(q, k, v" in c.value for c in at.code), "drawn only when opened"
    at = apptest_helpers.open_code(at)  # the code is drawn only while its expander is open
    assert_clean(at)
    code = next(c.value for c in at.code if "scaled_dot_product_attention(q, k, v" in c.value)
    namespace: dict = {}
    exec(compile(code, "<page code>", "exec"), namespace)  # the page's own generated code
    steps = core_steps(at, num_heads=3)
    assert torch.allclose(namespace["output"], steps.output, atol=1e-6)
    assert has_frame(frames(at), namespace["output"])


@pytest.mark.parametrize(
    ("sentence", "d_model"),
    [("solo", 2), (" ".join(f"w{i}" for i in range(32)), 16), (" ".join(f"t{i}" for i in range(100)), 8)],
)
def test_typed_sentences_of_1_32_and_100_tokens(sentence, d_model):
    """T = 1, 32 and 100 run cleanly; beyond 64 tokens the line view draws only the query's lines."""
    at = open_page(PAGE, sentence_params(sentence, d_model=d_model))
    assert_clean(at)
    T = len(sentence.split())
    assert has_frame(frames(at), core_steps(at).output)
    chart = next(c for c in charts(at) if "lines" in json.loads(c.proto.spec).get("title", ""))
    rules = next(layer for layer in json.loads(chart.proto.spec)["layer"] if layer["mark"]["type"] == "rule")
    dataset = next(d for d in chart.proto.datasets if d.name == rules["data"]["name"])
    lines = convert_arrow_bytes_to_pandas_df(dataset.data.data)
    assert len(lines) == (T if T > 64 else T * T)


def test_scaling_sentence_transformer_block_and_verdicts():
    """Issue 9: the scaling step stops the spread growing with d_k; where attention sits; verdicts by tolerance."""
    at = open_page(PAGE)
    assert_clean(at)
    text = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert "near 1 whatever d_k" not in text
    assert "stops the scores' spread growing with d_k" in text and "independent with mean 0" in text
    assert "residual stream" in text and "layer norm" in text and "feed-forward" in text
    dots = [chart.proto.spec for chart in at.get("graphviz_chart")]
    assert any("layer norm" in dot and "residual" in dot for dot in dots)
    verdicts = [c.value for c in at.caption if c.value in {"**exactly equal**", "**equal up to float32 rounding**"}]
    assert len(verdicts) == 3
    assert "Differences around 10⁻⁷ are float32 rounding" not in text
    assert "`need_weights=True`" in text


def test_cost_table_shows_t_squared_cells_and_float32_bytes():
    """Issue 9: the cost of attention, O(T²) time and memory, as a live table from a pure core function."""
    from attention_core.heads import attention_cost

    frame = attention_cost((6, 1024, 6), num_heads=2)
    assert frame["T"].tolist() == [6, 1024]
    assert frame["cells T² per head"].tolist() == [36, 1024**2]
    assert frame["bytes per head (float32)"].tolist() == [144, 4 * 1024**2]
    assert frame["bytes, 2 heads"].tolist() == [288, 8 * 1024**2]
    at = open_page(PAGE, sentence_params("a b c d e f g", d_model=4))
    at.number_input(key="pipeline_heads").set_value(2).run()
    assert_clean(at)
    shown = next(f for f in frames(at) if "cells T² per head" in f.columns)
    assert shown.iloc[0].tolist() == [7, 49, 196, 392]  # T = 7 first, then longer inputs
    assert shown["T"].tolist() == [7, 1024, 8192, 32768]


def test_every_step_heatmap_is_clickable_and_kept_cells_show_the_cores_arithmetic():
    """Issue 11: Q, K, V, scores, scaled, mask, masked, weights, context and output are clickable, every T × T
    one outlines the query's row; kept cells (a blocked one, head 2's Q and context) explain themselves with
    the core's numbers; exercises and the footer close the page."""
    at = open_page(PAGE, {"example": PRESETS_BY_KEY["numpy-seed-4"].name})  # d_model = 4
    at.number_input(key="pipeline_heads").set_value(2).run()
    at.radio(key="pipeline_mask").set_value("causal").run()
    at.selectbox(key="pipeline_head").set_value(1).run()
    open_all_steps(at)
    assert_clean(at)
    query = lab_input(at).query_label
    specs = clickable_specs(at)
    assert len(specs) == 10
    assert sum(outlined_rows(spec) == [query] for spec in specs) == 5  # scores, scaled, mask, masked, weights
    assert has_footer(at, PAGE)
    labels = list(lab_input(at).labels)
    keep_cell(at, "pipeline_cell_masked", labels[1], labels[3])  # key 4 after query 2: blocked
    keep_cell(at, "pipeline_cell_Q", labels[2], "d2")
    keep_cell(at, "pipeline_cell_context", labels[3], "d1")
    keep_cell(at, "pipeline_cell_weights", labels[3], labels[2])
    assert_clean(at)
    head = core_steps(at, num_heads=2, mask_kind="causal").heads[1]
    text = markdown(at)
    assert "Causal mask: key 4 comes after query 2" in text
    for value in (head.Q[2, 1], head.context[3, 0], head.weights[3, 2]):
        shown = format_number(float(value))  # the result, or beside it where the written operands round apart
        assert f"**{shown}**" in text or f"(unrounded: {shown})" in text
