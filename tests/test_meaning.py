"""attention_core.meaning: lessons 1-3 on trained word vectors, and the claims their figures support."""

from __future__ import annotations

import statistics

import pytest
import torch
import torch.nn.functional as F

from attention_core import meaning
from attention_core import trained_model as tm
from attention_core.attention import softmax

TOKENS = ("cat", "dog", "rice", "Cat", "bread")


def vectors(T: int = len(TOKENS), D: int = 8, seed: int = 0) -> torch.Tensor:
    rows = torch.randn(T, D, generator=torch.Generator().manual_seed(seed))  # (T, D)
    if T > 3:
        rows[3] = rows[0] * 2.5  # "Cat" is "cat" spelt otherwise: same direction, another length
    return rows


def test_cosine_scores_equal_torch_cosine_similarity():
    X = vectors()
    expected = F.cosine_similarity(X.unsqueeze(1), X.unsqueeze(0), dim=-1)  # (T, 1, D) vs (1, T, D) -> (T, T)
    assert torch.allclose(meaning.cosine_scores(X), expected, atol=1e-6)
    assert torch.allclose(meaning.unit_rows(X).norm(dim=-1), torch.ones(len(TOKENS)))


def test_different_words_ignores_case_and_the_diagonal():
    other = meaning.different_words(TOKENS)
    assert not other.diagonal().any()
    assert not other[0, 3] and not other[3, 0]  # cat and Cat: the same word
    assert other[0, 1]


def brute_top_pair(scores: torch.Tensor, tokens) -> tuple[int, int, float]:
    best = None
    for i in range(len(tokens)):
        for j in range(i + 1, len(tokens)):
            if tokens[i].lower() != tokens[j].lower() and (best is None or scores[i, j] > best[2]):
                best = (i, j, float(scores[i, j]))
    return best


@pytest.mark.parametrize("seed", range(5))
def test_the_claim_names_the_real_top_pair_of_different_words(seed):
    X = vectors(seed=seed)
    scores = meaning.cosine_scores(X)
    found = meaning.scores_meaning(scores, TOKENS, query=0)
    assert (found.top.first, found.top.second) == brute_top_pair(scores, TOKENS)[:2]
    assert found.top.score == pytest.approx(brute_top_pair(scores, TOKENS)[2])
    pairs = [float(scores[i, j]) for i in range(5) for j in range(i + 1, 5) if TOKENS[i].lower() != TOKENS[j].lower()]
    assert found.typical == pytest.approx(statistics.median(pairs))
    assert found.clear == (found.top.score - found.typical >= meaning.CLEAR_GAP)
    assert found.query_best not in (0, 3)  # never the query itself nor its repeat


def test_no_pair_when_every_word_is_the_same():
    found = meaning.scores_meaning(meaning.cosine_scores(vectors(3)), ("a", "A", "a"), query=1)
    assert found.top is None and found.query_best is None and not found.clear


def test_weights_meaning_is_softmax_at_one_and_at_t():
    X = vectors()
    scores = meaning.cosine_scores(X)
    found = meaning.weights_meaning(scores, TOKENS, query=1, temperature=0.2)
    assert torch.allclose(found.plain, softmax(scores[1:2])[0])
    assert torch.allclose(found.sharp, torch.softmax(scores[1] / 0.2, dim=-1), atol=1e-6)
    others = [j for j in range(5) if j != 1]
    best = max(others, key=lambda j: float(found.sharp[j]))
    assert found.best == best
    rest = [float(found.sharp[j]) for j in others if j != best]
    assert found.typical == pytest.approx(statistics.median(rest))
    assert found.ratio == pytest.approx(float(found.sharp[best]) / found.typical)


def test_context_meaning_mixes_the_unit_vectors_and_measures_the_move():
    X = vectors()
    context, closeness, found = meaning.context_meaning(X, TOKENS, query=2, temperature=0.2)
    unit = X / X.norm(dim=-1, keepdim=True)
    weights = torch.softmax(unit @ unit.T / 0.2, dim=-1)
    assert torch.allclose(context, weights @ unit, atol=1e-6)
    assert torch.allclose(closeness, F.cosine_similarity(context.unsqueeze(1), unit.unsqueeze(0), dim=-1), atol=1e-6)
    partner = max((j for j in range(5) if j != 2), key=lambda j: float(weights[2, j]))
    assert found.partner == partner
    assert found.share == pytest.approx(float(weights[2, partner]))
    assert found.before == pytest.approx(float(F.cosine_similarity(X[2], X[partner], dim=0)), abs=1e-6)
    assert found.after == pytest.approx(float(closeness[2, partner]))


@pytest.fixture(scope="module")
def trained() -> tm.TrainedModel:
    return tm.load_model()


def test_on_the_suggested_sentence_related_words_stand_out(trained):
    tokens = tuple(meaning.SUGGESTED_SENTENCE.split())
    scores = meaning.cosine_scores(tm.word_vectors(trained, list(tokens)))
    found = meaning.scores_meaning(scores, tokens, query=0)
    assert found.clear
    assert {tokens[found.top.first], tokens[found.top.second]} == {"cats", "dogs"}
    weights = meaning.weights_meaning(scores, tokens, query=0)  # the query "cats"
    assert tokens[weights.best] == "dogs" and weights.ratio > 2
    _, _, moved = meaning.context_meaning(tm.word_vectors(trained, list(tokens)), tokens, query=0)
    assert tokens[moved.partner] == "dogs" and moved.after > moved.before


def test_blend_frame_has_one_row_per_token_from_context_meaning():
    X = vectors()
    labels = ("cat", "dog", "rice", "Cat (2)", "bread")
    frame = meaning.blend_frame(X, TOKENS, labels, temperature=0.2)
    assert list(frame.index) == list(labels)
    for query, label in enumerate(labels):
        _, _, found = meaning.context_meaning(X, TOKENS, query, temperature=0.2)
        assert frame.loc[label, "mixes in most"] == labels[found.partner]
        assert frame.loc[label, "its weight"] == pytest.approx(found.share)
        assert frame.loc[label, "cos after (c)"] == pytest.approx(found.after)
        assert found.closer == (found.after > found.before)
    closer = sum(frame.loc[label, "cos after (c)"] > frame.loc[label, "cos before (x)"] for label in labels)
    assert meaning.closer_count(frame) == (closer, len(labels))
    alone = meaning.blend_frame(X[:2], ("a", "A"), ("a", "A (2)"))
    assert (alone["mixes in most"] == "").all() and meaning.closer_count(alone) == (0, 0)
