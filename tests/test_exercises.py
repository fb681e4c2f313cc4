"""Exercises: three kinds per lesson, answers from the core, deterministic per input, new for a new input."""

from __future__ import annotations

import math

import pytest
import torch

import attention_core as ac
from attention_core import exercises as ex
from ui import lessons

LESSON_PATHS = [lesson.path for lesson in lessons.numbered()]


def input_of(preset=ac.DEFAULT_PRESET, query: int | None = None, seed: int = 0) -> ex.ExerciseInput:
    """The exercise input of a preset, as the sidebar would give it."""
    labels = tuple(ac.token_labels(preset.tokens))
    return ex.ExerciseInput(labels, preset.matrix(), preset.query_index if query is None else query, seed)


def typed_input(sentence: str, d_model: int, seed: int) -> ex.ExerciseInput:
    """A typed sentence with seeded random embeddings."""
    tokens = ac.tokenize(sentence)
    return ex.ExerciseInput(
        tuple(ac.token_labels(tokens)), ac.random_embeddings(tokens, d_model, seed), min(1, len(tokens) - 1), seed
    )


INPUTS = [input_of(preset) for preset in ac.PRESETS] + [
    typed_input("the cat sat on the mat", 6, 11),
    typed_input("one", 4, 0),
    typed_input("a b c d e f g", 5, 2),
]


def test_every_numbered_lesson_has_a_generator():
    assert set(LESSON_PATHS) <= set(ex.GENERATORS)
    assert set(ex.GENERATORS) <= set(lessons.BY_PATH)


@pytest.mark.parametrize("path", LESSON_PATHS)
@pytest.mark.parametrize("inp", INPUTS, ids=lambda inp: " ".join(inp.labels)[:20])
def test_three_kinds_with_valid_answers(path, inp):
    items = ex.exercises_for(path, inp)
    assert len(items) >= 3
    assert {item.kind for item in items} == set(ex.KINDS), "numeric, choice and what-if in every lesson"
    assert len({item.id for item in items}) == len(items)
    for item in items:
        assert item.prompt and item.hint and item.solution
        if item.is_choice:
            assert item.answer in item.options and len(set(item.options)) == len(item.options)
            assert ex.check_answer(item, item.answer).status == "correct"
        else:
            assert math.isfinite(float(item.answer))
            assert ex.check_answer(item, f"{float(item.answer):.6f}").status == "correct"
            assert ex.check_answer(item, str(float(item.answer) + 1)).status == "wrong"
            if item.tolerance:
                assert ex.check_answer(item, f"{float(item.answer):.2f}").status == "correct", "2 decimals are enough"
        given_away = f"“{item.answer}”" if item.is_choice else f"{float(item.answer):.4f}"
        assert given_away not in item.hint, "the hint never gives the answer"


@pytest.mark.parametrize("path", LESSON_PATHS)
def test_deterministic_for_one_input_and_new_for_another(path):
    first, again = ex.exercises_for(path, input_of()), ex.exercises_for(path, input_of())
    assert first == again
    other = ex.exercises_for(path, typed_input("the cat sat on the mat", 4, 1))
    assert [item.id for item in first] != [item.id for item in other]
    assert [item.prompt for item in first] != [item.prompt for item in other]


def test_the_seed_is_a_stable_hash_not_pythons_hash():
    inp = input_of()
    assert ex.input_seed(inp.labels, inp.X, "app_pages/softmax.py") == ex.input_seed(
        inp.labels, inp.X.clone(), "app_pages/softmax.py"
    )
    assert ex.input_seed(inp.labels, inp.X, "app_pages/softmax.py") == 4059997117229370373
    assert ex.input_seed(inp.labels, inp.X, "app_pages/scores.py") != ex.input_seed(
        inp.labels, inp.X, "app_pages/softmax.py"
    )


def by_id(items, prefix: str) -> ex.Exercise:
    return next(item for item in items if item.id.startswith(prefix + "-"))


def test_softmax_answers_are_the_cores_weights():
    inp = input_of()
    items = ex.exercises_for("app_pages/softmax.py", inp)
    steps = ac.self_attention(inp.X, scale=False)
    row = steps.weights[inp.query_index]
    assert float(by_id(items, "weight").answer) in [pytest.approx(float(w)) for w in row]
    top = int(torch.argmax(row))
    assert by_id(items, "top-weight").answer == inp.labels[top]
    hot = ac.softmax(steps.scores[inp.query_index], temperature=0.1)
    assert float(by_id(items, "temperature").answer) == pytest.approx(float(hot[top]))
    assert by_id(items, "shift").answer == "stay exactly the same"


def test_masking_multi_head_and_pipeline_counts_are_the_cores():
    inp = input_of()
    T = len(inp.labels)
    masking = ex.exercises_for("app_pages/masking.py", inp)
    causal = ac.self_attention(inp.X, mask=ac.causal_mask(T))
    i = inp.query_index
    assert float(by_id(masking, "non-zero").answer) == int((causal.weights[i] > 0).sum()) == i + 1
    heads = ex.exercises_for("app_pages/multi_head.py", inp)
    assert float(by_id(heads, "head-size").answer) == ac.head_size(inp.X.shape[1], 3)
    pipeline = ex.exercises_for("app_pages/pipeline.py", inp)
    assert float(by_id(pipeline, "causal-count").answer) == T * (T + 1) / 2


def test_context_and_score_answers_are_the_cores():
    inp = input_of()
    steps = ac.self_attention(inp.X, scale=False)
    context = ex.exercises_for("app_pages/context_vectors.py", inp)
    entry = float(by_id(context, "context-entry").answer)
    assert entry in [pytest.approx(float(v)) for v in steps.context[inp.query_index]]
    scores = ex.exercises_for("app_pages/scores.py", inp)
    score = float(by_id(scores, "score").answer)
    assert score in [pytest.approx(float(v)) for v in steps.scores[inp.query_index]]
    assert float(by_id(scores, "double-key").answer) == pytest.approx(2 * score)


def test_a_lesson_without_exercises_yet_gives_none():
    assert ex.exercises_for("app_pages/overview.py", input_of()) == ()
    assert ex.lesson_key("/somewhere/app_pages/softmax.py") == "app_pages/softmax.py"


@pytest.mark.parametrize(
    ("text", "value", "note"),
    [
        ("0.25", 0.25, ""),
        (" -1.5 ", -1.5, ""),
        ("0,25", 0.25, "comma"),
        ("−0.5", -0.5, ""),
        ("1e-3", 0.001, ""),
        ("21", 21.0, ""),
    ],
)
def test_numbers_are_read_with_a_dot_or_a_comma(text, value, note):
    parsed, message = ex.parse_number(text)
    assert parsed == pytest.approx(value)
    assert note in message


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "Type a number"),
        ("   ", "Type a number"),
        (None, "Type a number"),
        ("abc", "not a number"),
        ("0.2.5", "not a number"),
        ("1,000.5", "not a number"),
        ("1,2,3", "not a number"),
        ("nan", "NaN"),
        ("inf", "too large"),
        ("-Infinity", "too large"),
        ("1e400", "too large"),
        ("9" * 40, "too large"),
    ],
)
def test_malformed_answers_are_explained_not_judged(text, reason):
    parsed, message = ex.parse_number(text)
    assert parsed is None and reason in message
    item = ex.Exercise("x", "numeric", "?", 0.5, "hint", "solution", tolerance=0.01)
    check = ex.check_answer(item, text)
    assert check.status == "invalid" and reason in check.message


def test_tolerance_and_choices_are_checked_as_stated():
    item = ex.Exercise("x", "numeric", "?", 0.2369, "hint", "solution", tolerance=0.01)
    assert ex.check_answer(item, "0.24").status == "correct"
    assert ex.check_answer(item, "0,23").status == "correct"
    assert "comma" in ex.check_answer(item, "0,23").message
    assert ex.check_answer(item, "0.25").status == "wrong"
    exact = ex.Exercise("y", "what-if", "?", 21.0, "hint", "solution")
    assert ex.check_answer(exact, "21").status == "correct"
    assert ex.check_answer(exact, "21.4").status == "wrong"
    choice = ex.Exercise("z", "choice", "?", "b", "hint", "solution", options=("a", "b"))
    assert ex.check_answer(choice, None).status == "invalid"
    assert ex.check_answer(choice, "c").status == "invalid"
    assert ex.check_answer(choice, "a").status == "wrong"
    assert ex.check_answer(choice, "b").status == "correct"
