"""The context-vectors page (lesson 3): runs for every input and shows the core's numbers."""

from __future__ import annotations

import pandas as pd
import pytest
import torch

import attention_core as ac
from attention_core.presets import JOURNEY, ONE_HOT, PRESETS, TRANSFORMER
from tests.apptest_helpers import assert_clean, chart_specs, charts, frames, lab_input, open_page, sentence_params
from tests.pages.cell_click_helpers import clickable_specs, has_footer, keep_cell, markdown, outlined_rows
from tests.pages.test_exercises_on_screen import open_answered
from ui.format import format_number

PAGE = "app_pages/context_vectors.py"


def context_frames(at, current) -> list[pd.DataFrame]:
    """Tables with one row per token and one column per dimension d1..d_model."""
    dims = [f"d{i + 1}" for i in range(current.d_model)]
    return [f for f in frames(at) if list(f.index) == list(current.labels) and list(f.columns) == dims]


def as_tensor(frame: pd.DataFrame) -> torch.Tensor:
    return torch.tensor(frame.to_numpy(dtype=float))


def check_numbers(at) -> None:
    """Every context table equals the core's context; the weighted-sum table ends with [1, c_q]."""
    current = lab_input(at)
    steps = ac.self_attention(current.X, scale=False)
    tables = context_frames(at, current)
    assert len(tables) == 3  # the context matrix, then loops and matrices side by side
    for table in tables:
        assert torch.allclose(as_tensor(table), steps.context.double(), atol=1e-5)
    weighted = next(f for f in frames(at) if "weight w_j" in f.columns)
    assert weighted.index[-1] == "sum"
    q = current.query_index
    assert torch.allclose(as_tensor(weighted.iloc[:-1, :1]).squeeze(1), steps.weights[q].double(), atol=1e-7)
    assert torch.allclose(as_tensor(weighted.iloc[-1:, 1:]).squeeze(0), steps.context[q].double(), atol=1e-6)
    assert weighted.iloc[-1, 0] == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.key)
def test_every_preset_shows_the_core_numbers(preset):
    at = open_answered(PAGE, {"example": preset.name})
    assert_clean(at)
    assert at.title[0].value.startswith("3. Context vectors")
    assert lab_input(at).tokens == preset.tokens
    assert len(charts(at)) >= 3
    check_numbers(at)
    differences = [m.value for m in at.metric if m.label.startswith("Largest |loops − matrices|")]
    assert len(differences) == 2
    assert all(v == "0" or float(v) < 1e-5 for v in differences)


def test_transformer_query_self_matches_000():
    at = open_answered(PAGE, {"example": TRANSFORMER.name})
    weighted = next(f for f in frames(at) if "weight w_j" in f.columns)
    assert weighted.iloc[-1, 1:].tolist() == pytest.approx(TRANSFORMER.printed["query_context"], abs=2e-4)
    assert any("c(“self”) = 0.0972 × [-0.3178, -0.8048, 0.7659]" in m.value for m in at.markdown)


def test_one_hot_preset_outputs_resemble_inputs():
    at = open_page(PAGE, {"example": ONE_HOT.name})
    one_hot = next(f for f in frames(at) if "context c(Self)" in f.index)
    assert one_hot.loc["input x(Self)"].tolist() == [1.0, 0.0, 0.0, 0.0]
    assert one_hot.loc["context c(Self)"].tolist() == pytest.approx([0.4754, 0.1749, 0.1749, 0.1749], abs=1e-4)
    text = " ".join(m.value for m in at.markdown)
    assert "0.4754" in text and "0.1749" in text


def test_projection_switch_to_first_two_dimensions():
    at = open_page(PAGE, {"example": TRANSFORMER.name})
    scatter = [s for s in chart_specs(at) if "Inputs and their context vectors" in str(s.get("title", ""))]
    assert scatter and "principal direction 1" in str(scatter[0])
    at.radio(key="context_vectors_projection").set_value("first two").run()
    assert_clean(at)
    scatter = [s for s in chart_specs(at) if "Inputs and their context vectors" in str(s.get("title", ""))]
    assert scatter and "principal direction" not in str(scatter[0]) and "d1" in str(scatter[0])


@pytest.mark.parametrize(
    "params",
    [
        sentence_params("hello"),
        sentence_params("the cat sat on the mat", d_model=2),
        sentence_params("the cat sat on the mat", embedding="one-hot"),
        sentence_params(" ".join(f"w{i}" for i in range(128)), d_model=16, seed=5),
    ],
    ids=["one-token", "d_model-2", "one-hot-repeats", "128-tokens"],
)
def test_typed_sentences_run_clean(params):
    at = open_answered(PAGE, params)
    assert_clean(at)
    check_numbers(at)
    current = lab_input(at)
    if current.d_model == 2:
        assert not [r for r in at.radio if r.key == "context_vectors_projection"]
    if current.T == 1:
        assert any("attend to itself" in i.value for i in at.info)
    if current.T == 128:
        assert any("cannot be shown one-hot" in i.value for i in at.info)


def test_tutorial_captions_follow_the_query():
    at = open_answered(PAGE, {"example": TRANSFORMER.name, "query": "How"})
    assert_clean(at)
    captions = " ".join(c.value for c in at.caption)
    assert "0.1540" not in captions and "pick it as the query to compare" in captions
    at = open_answered(PAGE, {"example": JOURNEY.name})
    captions = " ".join(c.value for c in at.caption)
    assert "[0.4431, 0.6496, 0.5671]" in captions


def test_loop_gap_is_called_precision_with_a_relative_tolerance():
    """Issue 9 (context vectors) and item 10: the loop runs in float64; the verdict depends on a relative gap."""
    at = open_page(PAGE)
    assert_clean(at)
    text = " ".join(m.value for m in at.markdown)
    helps = " ".join(str(m.proto.help) for m in at.metric)
    assert "different order" not in text + helps
    verdict = next(m.value for m in at.markdown if m.value.startswith("Relative gap"))
    assert "float64" in verdict and "context **equal up to float32 rounding**" in verdict
    assert "weights **equal up to float32 rounding**" in verdict and "the gap is that rounding" in verdict
    assert "non-negative weights that sum to 1" in text and "positive and sum to 1" not in text


def test_context_and_weights_are_clickable_and_a_kept_entry_shows_its_weighted_sum():
    """Issue 11: the context vectors and the weights are clickable (weights outline the query); a kept entry
    shows Σ_j w_ij v_j with the core's numbers; exercises and the footer close the page."""
    at = open_page(PAGE)
    assert_clean(at)
    lab = lab_input(at)
    specs = clickable_specs(at)
    assert len(specs) == 2
    assert sorted(len(outlined_rows(spec)) for spec in specs) == [0, 1]
    assert [lab.query_label] in [outlined_rows(spec) for spec in specs]
    assert has_footer(at, PAGE)
    labels = list(lab.labels)
    keep_cell(at, "context_vectors_context_chart", labels[1], "d2")
    keep_cell(at, "context_vectors_weights_chart", labels[0], labels[2])
    assert_clean(at)
    steps = ac.self_attention(lab.X, scale=False)
    text = markdown(at)
    assert f"**Entry “d2” of the context vector of “{labels[1]}”**" in text
    assert format_number(float(steps.context[1, 1])) in text
    assert f"**{format_number(float(steps.weights[0, 2]))}**" in text


NEAR_100 = "100_100_100_100~99.999_100_99.999_100~99.998_99.999_100_99.998~99.997_99.999_99.998_99.999"


@pytest.mark.parametrize("page", ["app_pages/softmax.py", PAGE])
def test_hand_edits_near_100_show_every_digit_right(page):
    """Issue 22 item 5a: edits of about 100 that differ by 0.001 are computed in float64, so the weights and
    context vectors shown equal a float64 reference to every printed digit (float32 showed 0.2795 for 0.2802),
    and lesson 3's two sentences agree with the verdict."""
    params = {"example": "Your own sentence", "sentence": "a b c d", "embedding": "Edit by hand", "edits": NEAR_100}
    at = open_page(page, params)
    assert_clean(at)
    X = torch.tensor([[float(v) for v in row.split("_")] for row in NEAR_100.split("~")], dtype=torch.float64)
    assert torch.equal(lab_input(at).X, X)
    exact = torch.softmax(X @ X.T, dim=-1)  # (T, T) float64 reference
    expected = {"weights": [[f"{w:.4f}" for w in row] for row in exact.tolist()]}
    expected["context"] = [[f"{c:.4f}" for c in row] for row in (exact @ X).tolist()]
    assert "0.2802" in expected["weights"][0]
    shown = [
        [[f"{v:.4f}" if isinstance(v, float) else v for v in row] for row in df.to_numpy().tolist()]
        for df in frames(at)
    ]
    tokens = ["a", "b", "c", "d"]
    frames_shown = list(zip(shown, frames(at), strict=True))
    weights_tables = [t for t, df in frames_shown if list(df.columns)[:4] == list(df.index)[:4] == tokens]
    transposed = [list(column) for column in zip(*expected["weights"], strict=True)]  # the column-sums view
    assert weights_tables and all(
        [row[:4] for row in table[:4]] in (expected["weights"], transposed) for table in weights_tables
    )
    if page == PAGE:
        contexts = [table for table, df in frames_shown if list(df.columns)[:1] == ["d1"]]
        assert expected["context"] in contexts
        verdict = next(m.value for m in at.markdown if m.value.startswith("Relative gap"))
        assert "computes in float64" in verdict and "**different**" not in verdict  # the gap may be 0 or 1 ulp
        assert "more than" not in verdict and "float32" not in verdict
