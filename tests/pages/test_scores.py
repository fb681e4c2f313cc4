"""The scores page (lesson 1): X first, labelled terms, the tutorial's printed scores, dot product vs cosine."""

from __future__ import annotations

import pandas as pd
import pytest
import torch

import attention_core as ac
from attention_core.presets import JOURNEY, TRANSFORMER
from tests.apptest_helpers import assert_clean, frames, lab_input, open_page
from tests.pages.cell_click_helpers import clickable_specs, has_footer, keep_cell, markdown, outlined_rows
from tests.pages.test_exercises_on_screen import open_answered
from ui.format import format_number

PAGE = "app_pages/scores.py"


def test_printed_scores_caption_for_the_tutorials_query_only():
    at = open_answered(PAGE, {"example": JOURNEY.name})
    assert_clean(at)
    printed = " ".join(f"{v:.4f}" for v in JOURNEY.printed["query_scores"])
    assert any(printed in c.value for c in at.caption)
    at = open_answered(PAGE, {"example": TRANSFORMER.name, "query": "How"})
    assert_clean(at)
    assert not any("Tutorial 000 prints" in c.value for c in at.caption)


def test_x_is_shown_before_the_scores_and_term_columns_say_what_they_are():
    """Issue 9 item 4: the embeddings X (table and heatmap) come first; headers read x_q,d · x_j,d for d = 1."""
    at = open_answered(PAGE)
    assert_clean(at)
    current = lab_input(at)
    shown = frames(at)
    x_at = next(i for i, f in enumerate(shown) if f.shape == tuple(current.X.shape) and f.columns[0] == "d1")
    assert torch.allclose(torch.tensor(shown[x_at].to_numpy()), current.X.double(), atol=1e-6)
    terms_at = next(i for i, f in enumerate(shown) if str(f.columns[0]).startswith("x_q,d"))
    assert x_at < terms_at
    columns = list(shown[terms_at].columns)
    assert columns[:3] == [f"x_q,d · x_j,d for d = {d}" for d in (1, 2, 3)]
    assert not any("x_q·x_j d" in str(c) for c in columns)
    heatmap_titles = [chart.proto.spec for chart in at.get("vega_lite_chart")]
    assert any("Embeddings X" in spec for spec in heatmap_titles)


def cosine_frame(at) -> pd.DataFrame:
    """The table of dot products beside lengths and cosines (revealed once the question on the top score is
    settled)."""
    return next(f for f in frames(at) if {"cosine cos θ", "dot product x_q · x_j"} <= set(f.columns))


def test_journey_beats_starts_against_starts_and_cosine_says_otherwise():
    """Issue 9 (scores): |a||b| cos θ; on the default example “journey” outscores “starts” against “starts”."""
    at = open_answered(PAGE)
    assert_clean(at)
    current = lab_input(at)
    assert current.query_label == "starts"
    table = cosine_frame(at)
    X = current.X.double()
    q = current.query_index
    expected = torch.nn.functional.cosine_similarity(X[q].unsqueeze(0), X, dim=-1)
    assert table["cosine cos θ"].tolist() == pytest.approx(expected.tolist(), abs=1e-6)
    assert table["dot product x_q · x_j"].tolist() == pytest.approx((X @ X[q]).tolist(), abs=1e-5)
    assert table.loc["journey", "dot product x_q · x_j"] > table.loc["starts", "dot product x_q · x_j"]
    assert table["cosine cos θ"].idxmax() == "starts"
    text = " ".join(m.value for m in at.markdown)
    assert "“journey” scores **1.4754**, more than “starts” itself (**1.4570**)" in text


def test_a_query_that_scores_highest_with_itself_says_so():
    at = open_answered(PAGE, {"example": JOURNEY.name, "query": "journey"})
    assert_clean(at)
    text = " ".join(m.value for m in at.markdown)
    assert "“journey” scores highest with itself" in text


def test_the_score_heatmap_is_clickable_outlines_the_query_and_explains_a_kept_cell():
    """Issue 11: Ω = X Xᵀ is clickable with the query's row outlined; a kept cell shows q · k with the core's
    numbers; exercises and the footer close the page."""
    at = open_page(PAGE)
    assert_clean(at)
    lab = lab_input(at)
    specs = clickable_specs(at)
    assert len(specs) == 1 and outlined_rows(specs[0]) == [lab.query_label]
    assert has_footer(at, PAGE)
    labels = list(lab.labels)
    keep_cell(at, "scores_scores_chart", labels[1], labels[2])
    assert_clean(at)
    score = ac.self_attention(lab.X, scale=False).scores[1, 2]
    text = markdown(at)
    assert f"**Score of query “{labels[1]}” with key “{labels[2]}”**" in text
    assert format_number(float(score)) in text


def test_the_intro_does_not_say_a_large_score_means_the_same_direction():
    """Issue 22 part 7: length counts too (the page's own next section shows it)."""
    at = open_page(PAGE)
    text = " ".join(" ".join(m.value for m in at.markdown).split())
    assert "Large and positive means the two vectors point the same way" not in text
    assert "grows with the vectors' lengths" in text
