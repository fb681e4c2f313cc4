"""The generation lesson's SmolLM2 steps (ui.models.generation), drawn alone: the cache's bytes per token with
grouped-query attention beside full multi-head attention, cached equals recomputed, and the absent package."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from attention_core import smollm2 as sm
from attention_core.exercises.models import CACHE_TOKENS
from tests.apptest_helpers import assert_clean, frames, open_page
from ui.models import smol
from ui.widgets.exercises import answer_key, place_name


def gqa():
    from ui.models.generation import gqa_answers, gqa_cache_step

    material = gqa_cache_step()
    if material is not None:  # the step, then what it draws once its questions are settled
        gqa_answers(material)


def check():
    import streamlit as st

    from ui.models.generation import cache_check_step

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
    table, asked = frames(at)
    assert table.iloc[0].tolist() == [23_040, 69_120]
    assert asked.iloc[0].tolist() == [23_040 * CACHE_TOKENS[0], 69_120 * CACHE_TOKENS[0]]


def test_cached_decoding_equals_recomputing_on_the_real_model(installed):
    at = AppTest.from_function(check, default_timeout=600).run()
    assert_clean(at)
    text = " ".join(m.value for m in at.markdown)
    assert "equal up to float32 rounding" in text and "“The cat sat”" in text


def test_without_the_model_package_both_steps_explain_themselves(monkeypatch, tmp_path):
    monkeypatch.setenv(smol.FILE_VARIABLE, str(tmp_path / "missing.gguf"))
    for step in (gqa, check):
        at = AppTest.from_function(step, default_timeout=60).run()
        assert_clean(at)
        assert any("is missing" in i.value for i in at.info)


def both():
    from ui.models.generation import real_model_step
    from ui.widgets import inputs

    real_model_step("app_pages/generation.py", inputs.default_input())


def test_the_real_model_step_draws_both(installed):
    at = AppTest.from_function(both, default_timeout=600).run()
    assert_clean(at)
    assert [s.value for s in at.subheader] == [
        "Grouped-query attention shrinks the cache",
        "Check yourself",
        "Cached equals recomputed, on the real model",
    ]


GENERATION = "app_pages/generation.py"
GQA_STEP = "8"  # "GQA and the KV cache", before the lesson's last step (the check on SmolLM2)
GQA_PLACES = {"gqa-tokens", "gqa-group", "gqa-what-if"}


def step_texts(at) -> str:
    """What the step writes (markdown, LaTeX and its table), where the questions' numbers must be read."""
    parts = [str(e.value) for kind in ("markdown", "latex") for e in at.get(kind)]
    parts += [f"{value:,}" for frame in frames(at) for value in frame.to_numpy().reshape(-1).tolist()]
    return "\n".join(parts)


def whole_numbers(text: str) -> set[int]:
    """Every whole number written in ``text`` (23,040 reads 23040)."""
    return {int(raw.replace(",", "")) for raw in re.findall(r"\d+(?:,\d{3})*", text)}


def test_the_real_model_step_asks_what_it_shows_and_marks_answers(installed):
    at = open_page(GENERATION, {"step": GQA_STEP}, timeout=600)
    assert_clean(at)
    items = {place_name(item): item for item in at.session_state["_exercises_shown:generation"]}
    assert set(items) == GQA_PLACES
    assert {item.kind for item in items.values()} == {"numeric", "choice", "what-if"}
    assert all(item.tolerance == 0 for item in items.values()), "whole numbers, exact"
    shown = whole_numbers(step_texts(at))
    assert {23_040, 69_120, 30, 3, 9, 64, 2} <= shown, "the collector reads the step"
    for item in items.values():  # every number a solution reads is the question's own, its answer or on screen
        read = whole_numbers(item.solution) - whole_numbers(item.prompt) - {int(float(item.answer))}
        assert read <= shown, (item.id, read - shown)
    tokens = items["gqa-tokens"]
    at.text_input(key=answer_key(GENERATION, tokens)).set_value(str(int(tokens.answer) + 1))
    at = form_button(at, tokens).click().run()
    assert any("Not quite" in e.value for e in at.error)
    at.text_input(key=answer_key(GENERATION, tokens)).set_value(str(int(tokens.answer)))
    at = form_button(at, tokens).click().run()
    assert any(f"Right: **{int(tokens.answer):,}**" in s.value for s in at.success), "the count written whole"
    group = items["gqa-group"]
    at.radio(key=answer_key(GENERATION, group)).set_value("3")
    at = form_button(at, group).click().run()
    assert sum("Right: **3**" in s.value for s in at.success) == 1


def form_button(at, item):
    return next(b for b in at.button if b.proto.form_id == f"exf:generation:{place_name(item)}")


def test_the_whole_lesson_asks_the_toy_heads_and_smollm2s_questions_once(installed):
    """Several steps ask with different material: the lesson asks all of it, each question once, run after run."""
    at = open_page(GENERATION, {}, timeout=600)
    asked = at.session_state["_exercises:generation"]
    places = [place_name(item) for item in asked]
    assert set(places) >= GQA_PLACES and "cache-numbers" in places and "running-sum" in places
    assert len(set(places)) == len(places)
    again = at.run().session_state["_exercises:generation"]
    assert [item.id for item in again] == [item.id for item in asked], "a rerun neither loses nor doubles"


def test_without_the_model_the_step_asks_nothing_and_works(monkeypatch, tmp_path):
    monkeypatch.setenv(smol.FILE_VARIABLE, str(tmp_path / "missing.gguf"))
    at = open_page(GENERATION, {"step": GQA_STEP}, timeout=120)
    assert_clean(at)
    assert any("is missing" in i.value for i in at.info)
    for key in ("_exercises_shown:generation", "_exercises:generation"):  # nothing asked, nothing left over
        assert key not in at.session_state or not at.session_state[key]


def test_in_steps_the_gqa_step_asks_and_the_check_on_smollm2_is_the_last_step(installed):
    """Issue 24: the real model's part of lesson 13 in two steps (each lighter): the cache sizes with their
    questions, then cached equals recomputed on SmolLM2, which ends the lesson."""
    at = open_page(GENERATION, {"step": GQA_STEP}, timeout=600)
    assert_clean(at)
    assert [s.value for s in at.subheader] == ["Grouped-query attention shrinks the cache", "Check yourself"]
    at.button(key="stepnext:generation").click().run()
    assert_clean(at)
    assert at.query_params["step"] == str(int(GQA_STEP) + 1)
    assert next(s.value for s in at.subheader) == "Cached equals recomputed, on the real model"
    assert "_exercises_shown:generation" not in at.session_state
    assert not any(b.key == "stepnext:generation" for b in at.button), "the lesson's last step"
