"""What the SmolLM2 lesson computes beside the model (attention_core.smollm2_lesson, attention_core.rope_lesson),
its exercises (beside it, in attention_core.smollm2_lesson) and the byte-bounded forward store (ui.models.smol)."""

from __future__ import annotations

import random

import pytest
import torch

from attention_core import smollm2 as sm
from attention_core import smollm2_lesson as sl
from attention_core.exercises import ExerciseInput, check_answer, exercises_for
from attention_core.rope import apply_rope, pair_norms
from attention_core.rope_lesson import SHIFT, rope_rows, toy_rope
from attention_core.smollm2_lesson import smollm2_exercises

CONFIG = sm.Config(30, 9, 3, 64, 576, 1536, 49152, 100_000.0, 1e-5, 8192)


@pytest.fixture(scope="module")
def model() -> sm.SmolModel:
    """The real model, loaded once for this module (skipped where the package is not installed)."""
    try:
        return sm.load_model()
    except sm.ModelUnavailable as error:
        pytest.skip(str(error))


def test_the_cache_of_smollm2_is_a_third_of_full_multi_head_attention():
    size = sl.cache_size(CONFIG)
    assert size.gqa_bytes == 2 * 30 * 3 * 64 * 2 == 23_040
    assert size.mha_bytes == 2 * 30 * 9 * 64 * 2 == 69_120
    assert size.saving == 3
    table = sl.cache_table(size)
    assert table.iloc[2].tolist() == [23_040 * 8192, 69_120 * 8192]


def test_the_cache_verdict_can_fail():
    same = sm.CacheCheck((1, 2), 3e-5, 2e-5, 23.7)
    assert sl.cache_agreement(same).close
    off = sm.CacheCheck((1, 2), 0.1, 2e-5, 23.7)
    assert sl.cache_agreement(off).verdict == "different"


def test_sharing_heads_are_the_query_heads_of_one_key_value_head():
    assert sl.sharing_heads(4, CONFIG) == (3, 4, 5)
    assert sl.sharing_heads(0, CONFIG) == (0, 1, 2)


def test_ranked_heads_are_largest_first_and_skip_nan():
    figure = torch.tensor([[0.1, float("nan")], [0.9, 0.5]])
    assert sl.ranked_heads(figure, 5) == [(1, 0, pytest.approx(0.9)), (1, 1, 0.5), (0, 0, pytest.approx(0.1))]


def test_toy_rope_keeps_lengths_and_depends_on_distance_only():
    X = torch.randn(5, 6, generator=torch.Generator().manual_seed(0))
    rope = toy_rope(X)
    assert torch.allclose(pair_norms(rope.rotated), pair_norms(X), atol=1e-5)  # a turn keeps each pair's length
    assert rope.shift.close  # every position moved by SHIFT: the same scores
    assert torch.allclose(rope.rope_scores.diagonal(), rope.plain_scores.diagonal(), atol=1e-4)
    assert not torch.allclose(rope.rope_scores, rope.plain_scores, atol=1e-3)  # positions changed the rest
    assert torch.allclose(rope.rotated, apply_rope(X, torch.arange(5)))
    assert SHIFT > 0


def test_toy_rope_leaves_an_odd_last_dimension_alone():
    X = torch.randn(4, 3, generator=torch.Generator().manual_seed(1))
    turned = rope_rows(X)
    assert torch.equal(turned[:, 2], X[:, 2]) and not torch.allclose(turned[1:, :2], X[1:, :2])
    assert toy_rope(X).angles.shape == (4, 1)


def test_the_real_model_by_hand_row_rope_rotation_and_exercises(model):
    result = sm.forward(model, sm.encode(model, sm.PUBLISHED_PROMPT))
    hand = sm.head_by_hand(model, result, 5, 4, 8)
    table = sl.head_row_table(hand, tuple(result.pieces), result.attentions[5, 4, 8])
    assert torch.allclose(
        torch.tensor(table["weight (by hand)"].values, dtype=torch.float32), result.attentions[5, 4, 8], atol=1e-5
    )
    rotation = sl.query_rotation(hand, model.config)
    assert sl.rotation_gap(rotation) < 1e-4 and torch.allclose(rotation.norm_before, rotation.norm_after, atol=1e-4)
    patterns = sm.head_patterns(result)
    repeated = sm.head_patterns(sm.forward(model, sm.repeated_ids(result.ids), logits="none"))
    material = sm_material(model, result, hand, rotation, patterns, repeated)
    items = exercises_for("smollm2", smollm2_exercises, ExerciseInput(("x",), torch.zeros(1, 1), 0, material, ("k",)))
    assert {item.kind for item in items} == {"numeric", "choice", "what-if"}
    for item in items:
        assert check_answer(item, item.answer).status == "correct"
        if item.kind == "numeric":
            assert check_answer(item, float(item.answer) + 3 * item.tolerance).status == "wrong"
    assert smollm2_exercises(ExerciseInput(("x",), torch.zeros(1, 1)), random.Random(0)) == []


def sm_material(model, result, hand, rotation, patterns, repeated):
    from attention_core.smollm2_lesson import SmolMaterial

    return SmolMaterial(
        labels=tuple(result.pieces),
        next_token=sm.next_token(model, result.logits[-1], 1.0, 10),
        hand=hand,
        model_row=result.attentions[5, 4, 8],
        patterns=patterns,
        repeated=repeated,
        num_heads=9,
        num_kv_heads=3,
        rotation=rotation,
        weights_first=result.attentions[5, 4, 1:, 0],
    )
