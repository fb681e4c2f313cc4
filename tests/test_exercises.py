"""Exercises: three kinds per lesson, answers from the core, deterministic per input, new for a new input."""

from __future__ import annotations

import dataclasses
import functools
import math
import re

import pytest
import torch

import attention_core as ac
from attention_core import exercises as ex
from attention_core import generation as gen
from attention_core import smollm2 as sm
from attention_core import trained_model as tm
from attention_core import training as tr
from ui import registry

# The lessons whose page state these tests build (PAGE_MATERIAL, with_material); a new lesson's exercises are
# checked from its page by tests/pages/test_exercises_on_screen.py, which reads the registry.
LESSON_PATHS = [f"app_pages/{name}.py" for name in (
    "scores", "softmax", "context_vectors", "qkv_projections", "scaling", "masking",
    "multi_head", "positions", "pipeline", "trained_model", "training", "generation",
)]  # fmt: skip


SEED = 3  # the seed of the pages' random W_q, W_k, W_v, W_o in these tests


def input_of(preset=ac.DEFAULT_PRESET, query: int | None = None) -> ex.ExerciseInput:
    """The exercise input of a preset, as the sidebar would give it."""
    labels = tuple(ac.token_labels(preset.tokens))
    return ex.ExerciseInput(labels, preset.matrix(), preset.query_index if query is None else query)


def typed_input(sentence: str, d_model: int, seed: int) -> ex.ExerciseInput:
    """A typed sentence with seeded random embeddings."""
    tokens = ac.tokenize(sentence)
    return ex.ExerciseInput(
        tuple(ac.token_labels(tokens)), ac.random_embeddings(tokens, d_model, seed), min(1, len(tokens) - 1)
    )


INPUTS = [input_of(preset) for preset in ac.PRESETS] + [
    typed_input("the cat sat on the mat", 6, 11),
    typed_input("one", 4, 0),
    typed_input("a b c d e f g", 5, 2),
]


@functools.cache
def trained_model() -> tm.TrainedModel:
    """all-MiniLM-L6-v2, loaded once for this module."""
    return tm.load_model()


@functools.cache
def forward_of(sentence: str) -> tm.Forward:
    return tm.run_forward(trained_model(), sentence)


def training_settings(inp: ex.ExerciseInput) -> tr.TrainingSettings:
    """Lesson 11's input is its settings: a task and a seed that follow the test input."""
    digest = sum(len(label) for label in inp.labels)
    return tr.TrainingSettings(("previous", "reverse", "induction")[digest % 3], seed=digest)


@functools.cache
def short_run(settings: tr.TrainingSettings) -> tr.TrainingRun:
    """A 20-step run: enough for snapshots at step 0 and at the end."""
    return tr.train(dataclasses.replace(settings, steps=20, learning_rate=0.01))


def with_material(path: str, inp: ex.ExerciseInput, trained: bool = False) -> ex.ExerciseInput:
    """The input as lessons 10-12 give it: with the forward pass, the training snapshots, or the generation head."""
    if path == "app_pages/trained_model.py":
        sentence = " ".join(inp.labels)
        material = ex.TrainedMaterial(forward_of(sentence), trained_model().model)
        return replace_input(inp, material, (sentence,))
    if path == "app_pages/training.py":
        settings = training_settings(inp)
        example, snapshot = tr.untrained_snapshot(settings)
        snapshots = tuple(short_run(settings).snapshots) if trained else (snapshot,)
        return replace_input(inp, ex.TrainingMaterial(settings, example, snapshots), (settings, trained))
    if path in PAGE_MATERIAL:
        return replace_input(inp, PAGE_MATERIAL[path](inp), ())
    if path == "app_pages/generation.py":
        params = ac.random_projections(inp.X.shape[1], inp.X.shape[1], SEED)
        T = len(inp.labels)
        material = ex.GenerationMaterial(inp.X, params.W_q, params.W_k, params.W_v, inp.labels, T - 1, T // 2, 3)
        return replace_input(inp, material, ("sidebar",))
    return inp


def projected(inp: ex.ExerciseInput, d_k: int = 3, scale: bool = True) -> ex.ProjectedShown:
    """Lessons 4 and 5 as their pages draw them: seeded random W_q, W_k, W_v of size d_k."""
    params = ac.random_projections(inp.X.shape[1], d_k, SEED)
    return ex.projected_shown(inp.X, params, scale, "the seeded random W_q, W_k, W_v above")


def masked(inp: ex.ExerciseInput) -> ex.MaskedShown:
    """Lesson 6 with its default causal mask."""
    mask = ac.causal_mask(len(inp.labels))
    return ex.MaskedShown(inp.labels, mask, ac.self_attention(inp.X, mask=mask), "the causal mask", inp.query_index)


def multi_head(inp: ex.ExerciseInput, wanted: int = 2, causal: bool = False) -> ex.MultiHeadShown:
    """Lessons 7 and 9: seeded heads over the input's own width (as many heads as divide it, up to ``wanted``)."""
    d_model = inp.X.shape[1]
    h = max(n for n in range(1, wanted + 1) if d_model % n == 0)
    params = ac.random_projections(d_model, d_model, SEED)
    W_o = ac.random_output_projection(d_model, SEED)
    mask = ac.causal_mask(len(inp.labels)) if causal else None
    steps = ac.multi_head_attention(inp.X, params.W_q, params.W_k, params.W_v, W_o, num_heads=h, mask=mask)
    return ex.MultiHeadShown(steps, W_o, causal)


def positions(inp: ex.ExerciseInput) -> ex.PositionsShown:
    """Lesson 8: the seeded projections, the weights of X and of X + E."""
    from attention_core.positions import add_positions, sinusoidal_encoding

    P = ac.random_projections(inp.X.shape[1], inp.X.shape[1], SEED)
    E = sinusoidal_encoding(*inp.X.shape)
    plain = ac.self_attention(inp.X, P.W_q, P.W_k, P.W_v)
    placed = ac.self_attention(add_positions(inp.X, E), P.W_q, P.W_k, P.W_v)
    return ex.PositionsShown(plain, placed, E)


PAGE_MATERIAL = {
    "app_pages/qkv_projections.py": projected,
    "app_pages/scaling.py": projected,
    "app_pages/masking.py": masked,
    "app_pages/multi_head.py": multi_head,
    "app_pages/positions.py": positions,
    "app_pages/pipeline.py": multi_head,
}


def replace_input(inp: ex.ExerciseInput, material: object, key: tuple) -> ex.ExerciseInput:
    return ex.ExerciseInput(inp.labels, inp.X, inp.query_index, material, key)


def lesson_exercises(path: str, inp: ex.ExerciseInput) -> tuple[ex.Exercise, ...]:
    """The exercises of the lesson at ``path`` on this input, with the generator the registry names."""
    lesson = registry.lesson_for(path)
    return ex.exercises_for(lesson.name, lesson.exercises, inp)


def test_every_numbered_lesson_has_a_generator():
    assert all(lesson.exercises is not None for lesson in registry.numbered())


@pytest.mark.parametrize("path", LESSON_PATHS)
@pytest.mark.parametrize("inp", INPUTS, ids=lambda inp: " ".join(inp.labels)[:20])
def test_three_kinds_with_valid_answers(path, inp):
    items = lesson_exercises(path, with_material(path, inp))
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
                assert ex.check_answer(item, f"{float(item.answer):.3f}").status == "correct", "3 decimals are enough"
                assert item.tolerance < 0.005, "a guess to 2 decimals is not enough"
        given_away = f"“{item.answer}”" if item.is_choice else f"{float(item.answer):.4f}"
        assert given_away not in item.hint, "the hint never gives the answer"


@pytest.mark.parametrize("path", LESSON_PATHS)
def test_deterministic_for_one_input_and_new_for_another(path):
    first = lesson_exercises(path, with_material(path, input_of()))
    again = lesson_exercises(path, with_material(path, input_of()))
    assert first == again
    other = lesson_exercises(path, with_material(path, typed_input("the cat sat on the mat", 4, 1)))
    assert [item.id for item in first] != [item.id for item in other]
    assert [item.prompt for item in first] != [item.prompt for item in other]


def test_another_query_keeps_the_questions_that_are_not_about_it():
    """A question's id is its content's: another query changes the id of exactly the questions that changed,
    and the others (shapes, counts, what the lesson's settings decide) keep theirs, and the learner's answer."""
    kept = {}
    for path in LESSON_PATHS:
        inp = input_of()
        first = lesson_exercises(path, with_material(path, inp))
        other = input_of(query=(inp.query_index + 1) % len(inp.labels))
        second = lesson_exercises(path, with_material(path, other))
        assert [item.id.rsplit("-", 1)[0] for item in first] == [item.id.rsplit("-", 1)[0] for item in second]
        for a, b in zip(first, second, strict=True):
            assert (a.id == b.id) == (a == b), (path, a.id, b.id)
        kept[path] = sum(a == b for a, b in zip(first, second, strict=True))
    assert sum(kept.values()) >= 5, kept
    assert any(count < len(lesson_exercises(path, with_material(path, input_of()))) for path, count in kept.items())


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
    items = lesson_exercises("app_pages/softmax.py", inp)
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
    masking = lesson_exercises("app_pages/masking.py", with_material("app_pages/masking.py", inp))
    causal = ac.self_attention(inp.X, mask=ac.causal_mask(T))
    i = inp.query_index
    assert float(by_id(masking, "non-zero").answer) == int((causal.weights[i] > 0).sum()) == i + 1
    heads = lesson_exercises("app_pages/multi_head.py", with_material("app_pages/multi_head.py", inp))
    assert float(by_id(heads, "head-size").answer) == ac.head_size(inp.X.shape[1], 1)
    pipeline = lesson_exercises("app_pages/pipeline.py", with_material("app_pages/pipeline.py", inp))
    assert float(by_id(pipeline, "causal-count").answer) == T * (T + 1) / 2


def test_context_and_score_answers_are_the_cores():
    inp = input_of()
    steps = ac.self_attention(inp.X, scale=False)
    context = lesson_exercises("app_pages/context_vectors.py", inp)
    entry = float(by_id(context, "context-entry").answer)
    assert entry in [pytest.approx(float(v)) for v in steps.context[inp.query_index]]
    scores = lesson_exercises("app_pages/scores.py", inp)
    score = float(by_id(scores, "score").answer)
    assert score in [pytest.approx(float(v)) for v in steps.scores[inp.query_index]]
    assert float(by_id(scores, "double-key").answer) == pytest.approx(2 * score)


def test_a_lesson_without_exercises_yet_gives_none():
    assert lesson_exercises("app_pages/overview.py", input_of()) == ()
    assert registry.lesson_for("/somewhere/app_pages/softmax.py") is registry.lesson_for("softmax")


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


# --- lessons 10-12: answers from the trained model, the toy task and generation ----------------------------


def where(item: ex.Exercise) -> tuple[int, int]:
    """(layer, head), 0-based, named in a lesson-10 prompt."""
    layer, head = re.search(r"layer (\d+), head (\d+)", item.prompt, re.IGNORECASE).groups()
    return int(layer) - 1, int(head) - 1


def test_lessons_without_what_their_page_shows_give_none():
    for path in LESSON_PATHS[3:]:  # lessons 4-12 are made from the page's own state
        assert lesson_exercises(path, input_of()) == ()


def test_trained_model_answers_are_the_models():
    inp = with_material("app_pages/trained_model.py", input_of())
    forward = inp.material.forward
    pieces = ac.token_labels(forward.pieces)
    items = lesson_exercises("app_pages/trained_model.py", inp)
    top, label, entropy, no_bias = (by_id(items, name) for name in ("trained-top", "trained-label",
                                                                     "trained-entropy", "trained-no-bias"))  # fmt: skip
    layer, head = where(top)
    weights = forward.attentions[layer, head]  # (T, T), the model's own output_attentions
    i = next(n for n, piece in enumerate(pieces) if f"query “{piece}”" in top.prompt)
    assert top.answer == pieces[int(torch.argmax(weights[i]))]
    assert label.answer == tm.head_label(weights)
    assert float(entropy.answer) == pytest.approx(float(ac.row_entropy(weights[i : i + 1])[0]), abs=1e-5)
    params = tm.head_params(trained_model().model, layer, head)
    X = forward.hidden_states[layer]
    without = tm.head_by_hand(X, tm.HeadParams(params.W_q, params.b_q, params.W_k, params.b_k * 0, params.W_v,
                                               params.b_v))  # fmt: skip
    assert torch.allclose(without.weights, weights, atol=1e-5), "dropping b_k leaves every row's softmax as it was"
    assert no_bias.answer == "stay the same"


def test_training_answers_are_the_tasks_and_the_runs():
    inp = with_material("app_pages/training.py", input_of(), trained=True)
    settings, example = inp.material.settings, inp.material.example
    labels = tr.position_labels(settings.task, example)
    keys = tr.ideal_keys(settings.task, example)
    items = lesson_exercises("app_pages/training.py", inp)
    ideal_key = by_id(items, "ideal-key")
    q = next(n for n, label in enumerate(labels) if f"query “{label}”" in ideal_key.prompt)
    assert ideal_key.answer == labels[int(keys[q])]
    scored = [n for n in range(len(labels)) if keys[n] >= 0]
    assert float(by_id(items, "uniform-closeness").answer) == pytest.approx(
        sum(1 / (n + 1) for n in scored) / len(scored)
    )
    assert float(by_id(items, "batch-scored").answer) == tr.BATCH * len(scored)
    assert by_id(items, "causal-future").answer == "no: the key is in its future"
    closer = by_id(items, "closer")
    run = short_run(settings)
    layer, head = where(closer)
    ideal = tr.ideal_pattern(settings.task, example)
    start = tr.closeness(run.snapshots[0].weights[layer, head], ideal)
    end = tr.closeness(run.snapshots[-1].weights[layer, head], ideal)
    assert closer.answer == (f"step {run.snapshots[-1].step}" if end > start else "step 0")
    untrained = lesson_exercises("app_pages/training.py", with_material("app_pages/training.py", input_of()))
    assert not any(item.id.startswith("closer-") for item in untrained), "one snapshot: nothing to compare"


def test_generation_answers_are_the_caches_and_the_counts():
    inp = with_material("app_pages/generation.py", input_of())
    m = inp.material
    T, d_model = m.X.shape
    items = lesson_exercises("app_pages/generation.py", inp)
    numbers = by_id(items, "cache-numbers")
    t = int(re.search(r"After step (\d+)", numbers.prompt).group(1)) - 1  # steps count from 1
    assert t == m.step, "the step the page shows"
    steps = gen.cached_attention(m.X, m.W_q, m.W_k, m.W_v)
    assert float(numbers.answer) == steps[t].K.numel() + steps[t].V.numel() == (t + 1) * 2 * d_model
    assert by_id(items, "step-top").answer == m.labels[int(torch.argmax(steps[t].weights))]
    frame = gen.multiply_add_frame(2 * T, d_model, d_model, d_model)
    assert float(by_id(items, "double-length").answer) == frame["without cache"].sum()
    running = by_id(items, "running-sum")
    row_label, size, block = re.search(r"query “(.+)”'s row in blocks of (\d+) keys .* block (\d+) holds",
                                       running.prompt).groups()  # fmt: skip
    row = gen.masked_scores(m.X, m.W_q, m.W_k)[m.labels.index(row_label)]
    seen = row[: int(size) * int(block)]  # every key up to the query's own block
    assert float(running.answer) == pytest.approx(float(torch.exp(seen - seen.max()).sum()), rel=1e-5)
    assert by_id(items, "cache-unchanged").answer == "none: earlier rows never change"


@pytest.mark.parametrize("path", LESSON_PATHS)
@pytest.mark.parametrize("inp", INPUTS, ids=lambda inp: " ".join(inp.labels)[:20])
def test_every_written_sum_of_a_solution_checks_by_hand(path, inp):
    """The solutions follow the lab's one rule for written arithmetic (issue 22 part 4): the parser of the page
    test recomputes every sum, product sum, quotient and e^(a − b) from its printed operands."""
    from tests.test_written_sums import written_arithmetic

    items = lesson_exercises(path, with_material(path, inp))
    found, problems = written_arithmetic("\n".join(item.solution for item in items))
    assert not problems, problems
    if path in ("app_pages/scores.py", "app_pages/context_vectors.py", "app_pages/qkv_projections.py"):
        assert sum(found.values()) >= 1, "the parser reads the solutions"
    assert not re.search(r"(?<![\d.])-?0\.0000(?![\d])", " ".join(item.solution for item in items)), "0.0000"


# --- lesson 13's step on the real model: SmolLM2's cache (no model file needed: the architecture is enough) --------

SMOLLM2 = sm.Config(30, 9, 3, 64, 576, 1536, 49_152, 100_000.0, 1e-5, 8192)  # as its GGUF metadata gives it


def smol_cache_input(config: sm.Config = SMOLLM2, bytes_per_number: int = 2) -> ex.ExerciseInput:
    """The generation lesson's input with the material of its step "GQA and the KV cache"."""
    material = ex.SmolCacheMaterial(config, bytes_per_number)
    return replace_input(input_of(), material, ("smollm2", *dataclasses.astuple(material)))


def test_the_real_model_steps_questions_are_smollm2s_cache_sizes_exact():
    items = lesson_exercises("app_pages/generation.py", smol_cache_input())
    assert sorted(item.id.rsplit("-", 1)[0] for item in items) == ["gqa-group", "gqa-tokens", "gqa-what-if"]
    assert {item.kind for item in items} == {"numeric", "choice", "what-if"}
    tokens = by_id(items, "gqa-tokens")
    n = int(re.search(r"of ([\d,]+) tokens", tokens.prompt).group(1).replace(",", ""))
    assert tokens.answer == 2 * 30 * 3 * 64 * 2 * n and tokens.tolerance == 0, "23,040 bytes a token, exact"
    assert "23,040 bytes per token" in tokens.solution
    group = by_id(items, "gqa-group")
    assert group.answer == "3" and group.answer in group.options and len(group.options) >= 3
    what_if = by_id(items, "gqa-what-if")
    expected = {"float32": 2 * 30 * 3 * 64 * 4, "one key/value head": 2 * 30 * 1 * 64 * 2, "full multi": 69_120 * 2}
    (change,) = [key for key in expected if key in what_if.prompt]
    assert what_if.answer == expected[change] and what_if.tolerance == 0
    assert ex.check_answer(what_if, str(expected[change])).status == "correct"
    assert ex.check_answer(what_if, "23040").status == "wrong", "the model's own figure is not the what-if's"
    assert ex.check_answer(tokens, str(int(tokens.answer) + 1)).status == "wrong", "exact: one byte off is wrong"


def test_the_real_model_steps_questions_follow_the_architecture():
    other = dataclasses.replace(SMOLLM2, num_layers=32, num_heads=32, num_kv_heads=8, head_dim=128)
    items = lesson_exercises("app_pages/generation.py", smol_cache_input(other, bytes_per_number=4))
    assert by_id(items, "gqa-group").answer == "4"
    tokens = by_id(items, "gqa-tokens")
    n = int(re.search(r"of ([\d,]+) tokens", tokens.prompt).group(1).replace(",", ""))
    assert tokens.answer == 2 * 32 * 8 * 128 * 4 * n
    seen = {by_id(lesson_exercises("app_pages/generation.py", smol_cache_input(SMOLLM2, b)), "gqa-tokens").id
            for b in (2, 4)}  # fmt: skip
    assert len(seen) == 2, "another cache, another question"


def test_the_toy_heads_material_asks_nothing_about_smollm2():
    items = lesson_exercises("app_pages/generation.py", with_material("app_pages/generation.py", input_of()))
    assert items and not any(item.id.startswith("gqa-") for item in items)
