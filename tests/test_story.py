"""The 15-minute path's worked example (attention_core.story) against PyTorch's own attention, and its questions
against answers recomputed here from the numbers each stop shows."""

from __future__ import annotations

import math
import random

import pytest
import torch
import torch.nn.functional as F

from attention_core import DEFAULT_PRESET, random_embeddings, row_entropy
from attention_core import story as sty
from attention_core.exercises import ExerciseInput, check_answer, exercises_for
from attention_core.exercises.story import ORDER_OPTIONS, TOY_PLACES, story_questions
from attention_core.tables import token_labels

SENTENCE = ["the", "chef", "who", "ran", "the", "kitchen", "tasted", "the", "soup"]
INPUTS = {
    "default": (DEFAULT_PRESET.matrix(), DEFAULT_PRESET.query_index, list(DEFAULT_PRESET.tokens)),
    "typed": (random_embeddings(SENTENCE, 6, 4), 5, SENTENCE),
    "float64": (random_embeddings(SENTENCE, 4, 1).double(), 8, SENTENCE),
}


@pytest.fixture(params=list(INPUTS))
def told(request):
    X, query, tokens = INPUTS[request.param]
    return sty.tell(X, query), X, query, tokens


def test_the_weights_are_stated_once_and_seeded():
    a, b = sty.story_weights(3), sty.story_weights(3)
    for name in ("W_q", "W_k", "W_v", "W_o"):
        assert torch.equal(getattr(a, name), getattr(b, name))
    assert a.W_q.shape == (3, sty.HEADS * sty.D_K) and a.W_o.shape == (sty.HEADS * sty.D_K, 3)
    assert not torch.equal(sty.story_weights(3, seed=1).W_q, a.W_q)


def test_every_step_matches_pytorch(told):
    s, X, _, _ = told
    w = s.weights_
    Q, K, V = X @ w.W_q[:, :2], X @ w.W_k[:, :2], X @ w.W_v[:, :2]
    tol = {"atol": 1e-6, "rtol": 1e-5}
    assert torch.allclose(s.Q, Q, **tol) and torch.allclose(s.K, K, **tol) and torch.allclose(s.V, V, **tol)
    assert torch.allclose(s.scores, Q @ K.T, **tol)
    assert torch.allclose(s.scaled, Q @ K.T / math.sqrt(2), **tol)
    assert torch.allclose(s.attn, torch.softmax(Q @ K.T / math.sqrt(2), dim=-1), **tol)
    assert torch.allclose(s.context, F.scaled_dot_product_attention(Q, K, V), **tol)
    causal = torch.ones(len(X), len(X), dtype=torch.bool).tril()
    reference = torch.softmax((Q @ K.T / math.sqrt(2)).masked_fill(~causal, -math.inf), dim=-1)
    assert torch.allclose(s.masked_attn, reference, **tol)
    assert s.one_line_gap < 1e-5


def test_the_heads_split_the_same_projections_and_w_o_mixes_them(told):
    """Head 1 is the head the path follows; both heads against PyTorch's sdpa on (h, T, d_k), then concat @ W_o."""
    s, X, _, _ = told
    w = s.weights_
    T = len(X)
    q, k, v = ((X @ W).reshape(T, sty.HEADS, sty.D_K).transpose(0, 1) for W in (w.W_q, w.W_k, w.W_v))
    heads = F.scaled_dot_product_attention(q, k, v)  # (h, T, d_k)
    concat = heads.transpose(0, 1).reshape(T, sty.HEADS * sty.D_K)
    tol = {"atol": 1e-6, "rtol": 1e-5}
    assert torch.allclose(heads[0], s.context, **tol), "head 1 is the path's head"
    assert torch.allclose(s.concat, concat, **tol)
    assert torch.allclose(s.output, concat @ w.W_o, **tol)


def test_reversing_the_sentence_only_moves_the_rows(told):
    s, _, _, _ = told
    assert torch.allclose(sty.reorder_back(s.reordered_output, s.order), s.output, atol=1e-6)


def test_each_failure_shows_on_the_same_numbers(told):
    s, X, query, _ = told
    assert sty.asymmetry(s.plain_scores) < 1e-5, "Q = K = X gives a symmetric score matrix (up to rounding)"
    assert sty.asymmetry(s.scores) > 1e-3
    row = s.scaled[query]
    assert torch.allclose(s.shifted_softmax, s.attn[query], atol=1e-6), "softmax ignores a shift"
    assert math.isclose(float((row + s.shift).sum()), sty.SHIFTED_SUM, abs_tol=1e-5)
    assert float(s.shifted_divided.min()) < 0 or float(s.shifted_divided.max()) > 1, "dividing by the sum breaks"
    sat = s.saturation
    entropy = [float(row_entropy(torch.softmax(sty.grown_scores(s.scores[query], d), dim=-1))) for d in sat.d_ks]
    assert entropy == sorted(entropy, reverse=True) and entropy[-1] < 0.5 * entropy[0], "saturation as d_k grows"
    assert sat.unscaled[-1] > sat.unscaled[0]
    assert all(math.isclose(w, float(s.attn[query].max()), rel_tol=1e-5) for w in sat.scaled), "√d_k undoes it"
    assert s.mask_query < len(X) - 1, "the mask stop follows a query the mask changes"
    assert not torch.allclose(s.masked_attn[s.mask_query], s.attn[s.mask_query])
    visible = sty.visible_share(s.attn[s.mask_query], s.causal[s.mask_query])
    assert torch.allclose(visible, s.masked_attn[s.mask_query], atol=1e-6), "masking renormalizes what is visible"


def test_the_last_token_as_query_moves_the_mask_stop_to_the_one_before():
    X, _, _ = INPUTS["typed"]
    assert sty.tell(X, len(X) - 1).mask_query == len(X) - 2
    assert sty.mask_query_for(0, 1) == 0


def questions(s, X, tokens):
    inp = ExerciseInput(tuple(token_labels(tokens)), X, s.query, s, ("story", sty.SEED))
    return {item.id.rsplit("-", 1)[0]: item for item in exercises_for("path", story_questions, inp)}


def test_one_question_per_toy_stop_with_answers_recomputed(told):
    s, X, query, tokens = told
    asked = questions(s, X, tokens)
    assert tuple(asked) == TOY_PLACES
    w = s.weights_
    q = X[query] @ w.W_q[:, :2]
    Q, K, V = X @ w.W_q[:, :2], X @ w.W_k[:, :2], X @ w.W_v[:, :2]
    attn = torch.softmax(Q @ K.T / math.sqrt(2), dim=-1)
    for place, item in asked.items():
        if item.kind == "choice":
            assert item.answer == ORDER_OPTIONS[0] and item.options == ORDER_OPTIONS
            continue
        assert check_answer(item, f"{float(item.answer):.3f}").status == "correct", place
        assert check_answer(item, f"{float(item.answer) + 0.01:.3f}").status == "wrong", place
    assert math.isclose(float(asked["q-entry"].answer), float(q[int(asked["q-entry"].prompt[7]) - 1]), abs_tol=1e-5)
    assert float(asked["one-line"].answer) == len(X) * sty.D_K
    weights = {float(a) for a in attn[query].tolist()}
    assert any(math.isclose(float(asked["weight"].answer), a, abs_tol=1e-6) for a in weights)
    contexts = (attn @ V)[query].tolist()
    assert any(math.isclose(float(asked["context"].answer), c, abs_tol=1e-6) for c in contexts)


def test_a_question_does_not_give_its_answer_in_its_operands(told):
    s, X, _, tokens = told
    for place, item in questions(s, X, tokens).items():
        shown = {f"{u:.4f}" for u in item.uses}
        assert not shown & {f"{g:.4f}" for g in item.given_away_by}, place


def test_the_trained_stop_picks_a_head_that_looks_at_another_word():
    attentions = torch.softmax(torch.randn(6, 12, 7, 7, generator=torch.Generator().manual_seed(0)), dim=-1)
    attentions[2, 5, 3] = torch.tensor([0.05, 0.0, 0.9, 0.05, 0.0, 0.0, 0.0])
    assert sty.focused_head(attentions, 3) == (2, 5)
    assert sty.top_word_piece(attentions[2, 5, 3], 3) == 2
    m = sty.TrainedStop(
        ("[CLS]", "a", "b", "c", "d", "e", "[SEP]"), 2, 5, 3, attentions[2, 5, 3], attentions[2, 5, 3], 0.0
    )
    (item,) = story_questions(ExerciseInput(("a",), torch.zeros(1, 1), 0, m, ()), random.Random(0))
    assert item.answer == "b (piece 3)" and item.answer in item.options


def test_the_next_token_stop_asks_which_token_comes_first():
    m = sty.NextStop("the cat", (" sat", " is", " was"), (0.5, 0.2, 0.1))
    (item,) = story_questions(ExerciseInput(("a",), torch.zeros(1, 1), 0, m, ()), random.Random(0))
    assert item.answer == "“ sat”" and sorted(item.options) == list(item.options)
    assert check_answer(item, "“ sat”").status == "correct" and check_answer(item, "“ is”").status == "wrong"
