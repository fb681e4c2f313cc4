"""The scores page (lesson 1): the tutorial's printed scores appear only for the tutorial's query."""

from __future__ import annotations

from attention_core.presets import JOURNEY, PRINTED, TRANSFORMER
from tests.apptest_helpers import assert_clean, open_page

PAGE = "app_pages/scores.py"


def test_printed_scores_caption_for_the_tutorials_query_only():
    at = open_page(PAGE, {"example": JOURNEY.name})
    assert_clean(at)
    printed = " ".join(f"{v:.4f}" for v in PRINTED["002"]["scores_starts"])
    assert any(printed in c.value for c in at.caption)
    at = open_page(PAGE, {"example": TRANSFORMER.name, "query": "How"})
    assert_clean(at)
    assert not any("Tutorial 000 prints" in c.value for c in at.caption)
