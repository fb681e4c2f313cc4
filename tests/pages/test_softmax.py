"""The softmax page (lesson 2): runs for every input and shows the core's numbers."""

from __future__ import annotations

import pandas as pd
import pytest
import torch

import attention_core as ac
from attention_core.normalization import first_overflow_offset, with_sums
from attention_core.presets import JOURNEY, NUMPY_SEED_4, PRESETS, PRESETS_BY_KEY, TRANSFORMER
from tests.apptest_helpers import assert_clean, charts, frames, lab_input, open_page, sentence_params
from tests.pages.cell_click_helpers import clickable_specs, has_footer, keep_cell, markdown, outlined_rows
from tests.pages.test_exercises_on_screen import open_answered, show_every_answer
from ui.format import format_number

PAGE = "app_pages/softmax.py"


def frame_with(at, column: str) -> pd.DataFrame:
    """The first table on the page that has this column."""
    found = [f for f in frames(at) if column in f.columns]
    assert found, f"no table with column {column!r}"
    return found[0]


def square_frames(at, labels) -> list[pd.DataFrame]:
    """Tables whose rows and columns are exactly the tokens."""
    return [f for f in frames(at) if list(f.index) == list(labels) and list(f.columns) == list(labels)]


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.key)
def test_every_preset_shows_the_core_numbers(preset):
    at = open_answered(PAGE, {"example": preset.name})
    assert_clean(at)
    assert at.title[0].value.startswith("2. Softmax")
    assert len(charts(at)) >= 4
    current = lab_input(at)
    assert current.tokens == preset.tokens
    steps = ac.self_attention(current.X, scale=False)
    q = current.query_index
    worked = frame_with(at, "weight w_j")
    assert torch.allclose(torch.tensor(worked["weight w_j"].to_numpy()), steps.weights[q].double(), atol=1e-7)
    assert torch.allclose(torch.tensor(worked["score s_j"].to_numpy()), steps.scores[q].double(), atol=1e-6)
    main = square_frames(at, current.labels)[0]  # the table tab of the weights matrix
    assert torch.allclose(torch.tensor(main.to_numpy()), steps.weights.double(), atol=1e-7)
    sums = [f for f in frames(at) if "row sum" in f.columns]
    assert len(sums) == 2  # right axis, then the pitfall
    assert torch.allclose(torch.tensor(sums[0].to_numpy()), with_sums(steps.weights).double(), atol=1e-6)
    assert torch.allclose(
        torch.tensor(sums[1].to_numpy()), with_sums(ac.column_softmax(steps.scores)).double(), atol=1e-6
    )
    assert sums[0]["row sum"].iloc[:-1].tolist() == pytest.approx([1.0] * len(preset.tokens), abs=1e-6)
    assert sums[1].loc["column sum"].iloc[:-1].tolist() == pytest.approx([1.0] * len(preset.tokens), abs=1e-6)


def test_transformer_pitfall_shows_000s_numbers():
    at = open_answered(PAGE, {"example": TRANSFORMER.name})
    assert lab_input(at).query_label == "self"
    pitfall = frame_with(at, "s_j / Σ s (pitfall)")
    assert pitfall["s_j / Σ s (pitfall)"].tolist() == pytest.approx(
        TRANSFORMER.printed["query_naive_weights"], abs=2e-3
    )
    assert pitfall["softmax w_j"].tolist() == pytest.approx(TRANSFORMER.printed["query_weights"], abs=1e-4)
    captions = " ".join(c.value for c in at.caption)
    assert "1.1195" in captions and "0.3694" in captions


def test_numpy_seed_4_pitfall_is_004s_axis_0_matrix():
    at = open_page(PAGE, {"example": NUMPY_SEED_4.name})
    assert_clean(at)
    pitfall = [f for f in frames(at) if "row sum" in f.columns][1]
    printed = torch.tensor(NUMPY_SEED_4.printed["wrong_axis_weights"], dtype=torch.float64)
    assert torch.allclose(torch.tensor(pitfall.iloc[:-1, :-1].to_numpy()), printed, atol=1e-6)


def test_temperature_slider_changes_entropy_and_max_weight():
    at = open_page(PAGE, {"example": TRANSFORMER.name})
    at.slider(key="softmax_temperature").set_value(0.5).run()
    assert_clean(at)
    current = lab_input(at)
    hot = ac.softmax(ac.self_attention(current.X, scale=False).scores, temperature=0.5)[current.query_index]
    metrics = {m.label: m.value for m in at.metric}
    entropy = next(v for k, v in metrics.items() if k.startswith("Entropy"))
    assert entropy == f"{ac.row_entropy(hot).item():.4f} nats"
    largest = next(v for k, v in metrics.items() if k.startswith("Largest weight"))
    assert largest == f"{hot.max().item():.4f}"


def offset_slider(at):
    """The stability demo's select_slider of c."""
    return next(s for s in at.select_slider if s.key == "softmax_offset")


@pytest.mark.parametrize("example", [TRANSFORMER.name, JOURNEY.name, NUMPY_SEED_4.name])
def test_overflow_demo_starts_where_overflow_begins_not_at_a_wall_of_infinities(example):
    """Issue 22 part 7: the first table seen shows the largest exponential overflowing, the rest finite."""
    at = open_answered(PAGE, {"example": example})
    demo = frame_with(at, "naive exp(s_j + c)")
    assert "∞" in set(demo["naive exp(s_j + c)"])
    assert set(demo["naive exp(s_j + c)"]) != {"∞"} and set(demo["naive weight"]) != {"NaN"}
    assert "NaN" not in set(demo["stable weight"])


def test_another_query_brings_its_own_first_overflowing_c_and_the_slider_stays_in_place():
    """One key for every row (the slider is not drawn anew on each pick), but a new row still starts at its own c."""
    at = open_answered(PAGE, {"example": TRANSFORMER.name})
    offset_slider(at).set_value(1000.0).run()
    query = at.sidebar.selectbox(key="query")
    other = next(option for option in query.options if option != query.value)
    query.set_value(other).run()
    at = show_every_answer(at, PAGE)  # the new query's questions, settled: the demonstration follows them
    assert_clean(at)
    current = lab_input(at)
    row = ac.self_attention(current.X, scale=False).scores[current.query_index]
    assert offset_slider(at).value == first_overflow_offset(row)


def test_overflow_demo_shows_nan_only_when_it_overflows():
    at = open_answered(PAGE, {"example": TRANSFORMER.name})
    offset_slider(at).set_value(1000.0).run()
    demo = frame_with(at, "naive weight")
    assert set(demo["naive weight"]) == {"NaN"}
    assert set(demo["naive exp(s_j + c)"]) == {"∞"}
    offset_slider(at).set_value(0.0).run()
    demo = frame_with(at, "naive weight")
    assert "NaN" not in set(demo["naive weight"])
    assert demo["naive weight"].tolist() == demo["stable weight"].tolist()


def test_overflow_verdict_is_the_labs_agreement_and_the_table_is_exact():
    """Issue 22 items 5c and 6: s + c is exact, so the stable weight reads 0.1329 and the verdict is the one test."""
    at = open_answered(
        PAGE, {"example": PRESETS_BY_KEY["transformer"].name}
    )  # the first tutorial's sentence, query "is"
    for offset in (1000, 0):
        offset_slider(at).set_value(float(offset)).run()
        verdict = next(m.value for m in at.markdown if m.value.startswith("Naive sum of exponentials"))
        assert "**equal up to float32 rounding**" in verdict and "4e-06 × the largest" in verdict
        table = next(df for df in frames(at) if "stable weight" in df.columns)
        assert list(table["stable weight"])[3] == "0.1329"  # tutorial 000's printed 0.1329, not 0.1330


@pytest.mark.parametrize(
    "params",
    [
        sentence_params("hello"),
        sentence_params("the cat sat on the mat", embedding="one-hot"),
        sentence_params(" ".join(f"w{i % 20}" for i in range(128)), d_model=16, seed=7),
        sentence_params("tiny sentence here", d_model=2),
    ],
    ids=["one-token", "one-hot", "128-tokens", "d_model-2"],
)
def test_typed_sentences_run_clean(params):
    at = open_page(PAGE, params)
    assert_clean(at)
    current = lab_input(at)
    steps = ac.self_attention(current.X, scale=False)
    main = square_frames(at, current.labels)[0]
    assert torch.allclose(torch.tensor(main.to_numpy()), steps.weights.double(), atol=1e-7)
    assert len(charts(at)) >= 4
    if current.T == 1:
        assert main.to_numpy().tolist() == [[1.0]]


def test_tutorial_captions_only_for_the_tutorials_query():
    at = open_answered(PAGE, {"example": TRANSFORMER.name, "query": "How"})
    assert_clean(at)
    assert lab_input(at).query_label == "How"
    captions = " ".join(c.value for c in at.caption)
    assert "0.3694" not in captions and "1.1195" not in captions  # 000 printed the row of "self"
    assert "pick it as the query to compare" in captions
    at = open_answered(PAGE, {"example": JOURNEY.name})
    captions = " ".join(c.value for c in at.caption)
    assert " ".join(f"{v:.4f}" for v in JOURNEY.printed["query_weights"]) in captions


def test_divide_by_sum_pitfall_is_visible_on_the_default_example():
    """Issue 9 item 6: journey's “starts” has only positive scores, so 000's “self” is shown beside it, live."""
    at = open_page(PAGE)
    assert_clean(at)
    current = lab_input(at)
    assert current.preset is JOURNEY and current.query_label == "starts"
    pitfalls = [f for f in frames(at) if "s_j / Σ s (pitfall)" in f.columns]
    assert [list(f.index) for f in pitfalls] == [list(current.labels), list(ac.token_labels(TRANSFORMER.tokens))]
    steps = ac.self_attention(TRANSFORMER.matrix(), scale=False)
    q = TRANSFORMER.query_index
    naive = pitfalls[1]["s_j / Σ s (pitfall)"]
    assert naive.tolist() == pytest.approx(ac.naive_normalize(steps.scores)[q].tolist(), abs=1e-5)
    assert naive.tolist() == pytest.approx(TRANSFORMER.printed["query_naive_weights"], abs=2e-3)
    assert (naive < 0).any() and (pitfalls[0]["s_j / Σ s (pitfall)"] >= 0).all()
    assert pitfalls[1]["softmax w_j"].tolist() == pytest.approx(steps.weights[q].tolist(), abs=1e-6)


def test_weights_are_called_non_negative_and_softmax_is_motivated():
    """Issue 9: non-negative (not positive) weights; why softmax (smooth, order-keeping, differentiable)."""
    at = open_page(PAGE)
    text = " ".join(m.value for m in at.markdown)
    assert "non-negative" in text and "every exponential is positive" not in text
    for word in ("argmax", "smooth", "keeps the order", "differentiable"):
        assert word in text, word


def test_weight_heatmaps_are_clickable_outline_the_query_and_explain_a_kept_cell():
    """Issue 11: the weights and the temperature heatmap are clickable with the query's row outlined; a kept
    cell at t = 0.1 shows the softmax of scores / t with the core's numbers; exercises and footer close the page."""
    at = open_page(PAGE)
    assert_clean(at)
    lab = lab_input(at)
    specs = clickable_specs(at)
    assert len(specs) == 2 and all(outlined_rows(spec) == [lab.query_label] for spec in specs)
    assert has_footer(at, PAGE)
    labels = list(lab.labels)
    at.slider(key="softmax_temperature").set_value(0.1).run()
    keep_cell(at, "softmax_weights_chart", labels[0], labels[1])
    keep_cell(at, "softmax_temperature_chart", labels[2], labels[0])
    assert_clean(at)
    scores = ac.self_attention(lab.X, scale=False).scores
    text = markdown(at)
    assert f"**{format_number(float(ac.softmax(scores)[0, 1]))}**" in text
    assert f"**{format_number(float(ac.softmax(scores, temperature=0.1)[2, 0]))}**" in text


def test_the_numpy_tutorial_is_quoted_as_printed_and_by_name():
    """Issue 22 part 7: its row is quoted with the 8 decimals it prints, and the tutorial named by its example."""
    at = open_page(PAGE, {"example": NUMPY_SEED_4.name})
    captions = " ".join(c.value for c in at.caption)
    assert "0.41676423 0.03317058 0.02581661 0.36795706 0.03431829 0.02264204" in captions
    assert "The “Self Attention is good” tutorial prints" in captions and "Tutorial 004" not in captions


def test_no_sentence_says_no_other_table_shows_nan():
    at = open_page(PAGE)
    assert not any("No other table" in block.value for block in at.info)


def test_the_temperature_caption_names_t_once_at_t_1():
    at = open_page(PAGE, {"example": JOURNEY.name})
    caption = next(c.value for c in at.caption if c.value.startswith("Bars: the weights of"))
    assert "at t = 1 and at t = 1" not in caption and "“starts” at t = 1" in caption
    at.slider(key="softmax_temperature").set_value(2.0).run()
    caption = next(c.value for c in at.caption if c.value.startswith("Bars: the weights of"))
    assert caption == "Bars: the weights of “starts” at t = 1 and at t = 2."


def test_the_query_row_chart_shows_the_learners_query_beside_the_first_tutorials_table():
    """On an all-positive query the pitfall shows the tutorial's “self” as a table; the bars are the learner's."""
    at = open_page(PAGE, {"example": JOURNEY.name})
    spec = next(c.proto.spec for c in charts(at) if "The query's row: divide by the sum vs softmax" in c.proto.spec)
    tokens = set(JOURNEY.tokens)
    assert "starts" in spec and "journey" in spec
    assert not (set(TRANSFORMER.tokens) - tokens) & {t for t in TRANSFORMER.tokens if f'"{t}"' in spec}
