"""The generation lesson's SmolLM2 steps (ui.smol_generation), drawn alone: the cache's bytes per token with
grouped-query attention beside full multi-head attention, cached equals recomputed, and the absent package."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from attention_core import smollm2 as sm
from tests.apptest_helpers import assert_clean
from ui import smol_lesson


def gqa():
    from ui.smol_generation import gqa_cache_step

    gqa_cache_step()


def check():
    import streamlit as st

    from ui.smol_generation import cache_check_step

    st.session_state.setdefault("_smol_prompt", "The cat sat")  # as lesson 11 keeps the learner's prompt
    cache_check_step()


@pytest.fixture
def installed():
    try:
        sm.gguf_path()
    except sm.ModelUnavailable as error:
        pytest.skip(str(error))


def test_the_cache_step_gives_smollm2s_bytes_per_token_beside_full_mha(installed):
    at = AppTest.from_function(gqa, default_timeout=300).run()
    assert_clean(at)
    text = " ".join(m.value for m in at.markdown)
    assert "23,040 bytes" in text and "69,120 bytes" in text and "3 times as much" in text
    table = at.dataframe[0].value
    assert table.iloc[0].tolist() == [23_040, 69_120]


def test_cached_decoding_equals_recomputing_on_the_real_model(installed):
    at = AppTest.from_function(check, default_timeout=600).run()
    assert_clean(at)
    text = " ".join(m.value for m in at.markdown)
    assert "equal up to float32 rounding" in text and "“The cat sat”" in text


def test_without_the_model_package_both_steps_explain_themselves(monkeypatch, tmp_path):
    monkeypatch.setenv(smol_lesson.FILE_VARIABLE, str(tmp_path / "missing.gguf"))
    for step in (gqa, check):
        at = AppTest.from_function(step, default_timeout=60).run()
        assert_clean(at)
        assert any("is missing" in i.value for i in at.info)


def both():
    from ui.smol_generation import real_model_step

    real_model_step()


def test_the_real_model_step_draws_both(installed):
    at = AppTest.from_function(both, default_timeout=600).run()
    assert_clean(at)
    assert [s.value for s in at.subheader] == [
        "Grouped-query attention shrinks the cache",
        "Cached equals recomputed, on the real model",
    ]
