"""What the numbers of lessons 1-3 mean on trained embeddings: scores, weights and context vectors of real words.

The vectors are a trained model's word vectors (all-MiniLM-L6-v2's input embeddings, each word's pieces
averaged: ``trained_model.word_vectors``), normalised to length 1, so the score x_i · x_j is their cosine
similarity. Every function here is pure: it takes those vectors (T, D) and the sentence's tokens and returns
the figures a page states, so a claim on screen is computed from the numbers on screen, never written in
advance. Two tokens spelled alike (ignoring case) have the same vector and a cosine of 1: pairs are counted
between *different* words only.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import torch

from attention_core.attention import context_vectors, softmax

CLEAR_GAP = 0.2  # a pair "stands out" when its cosine beats the typical pair's by at least this much
CLEAR_RATIO = 3.0  # a word "gets clearly more" weight when it gets at least this many times the median other word's
MEANING_TEMPERATURE = 0.2  # the temperature the weights of meaning are taken at (cosines lie in [-1, 1])
# A sentence whose related words show (measured: “cats” and “dogs” 0.49, “bread” and “cheese” 0.38, the
# median pair of different words about 0.1); tests/test_meaning.py checks the claim on it with the model.
SUGGESTED_SENTENCE = "cats chase dogs while cows eat bread and cheese"


def median(values: torch.Tensor) -> float:
    """The median of a 1-D tensor (the mean of the two middle values when their count is even)."""
    return float(torch.quantile(values.double(), 0.5))


def unit_rows(vectors: torch.Tensor) -> torch.Tensor:
    """Each row divided by its length: (T, D) -> (T, D) of unit rows (a zero row stays zero)."""
    return vectors / vectors.norm(dim=-1, keepdim=True).clamp_min(1e-12)  # (T, D) / (T, 1)


def cosine_scores(vectors: torch.Tensor) -> torch.Tensor:
    """Ω = X̂ X̂ᵀ for the unit rows X̂: the cosine similarity of every pair, (T, D) -> (T, T)."""
    unit = unit_rows(vectors)  # (T, D)
    return unit @ unit.T  # (T, D) @ (D, T) -> (T, T)


def different_words(tokens: tuple[str, ...] | list[str]) -> torch.Tensor:
    """(T, T) bool: True where the two tokens are different words (not the same spelling, ignoring case)."""
    words = [token.lower() for token in tokens]
    return torch.tensor([[a != b for b in words] for a in words], dtype=torch.bool)


@dataclass(frozen=True)
class Pair:
    """Two tokens (indices, first < second) and their score."""

    first: int
    second: int
    score: float


@dataclass(frozen=True)
class ScoresMeaning:
    """What the cosine scores of a sentence show: the top pair of different words, against the typical pair."""

    top: Pair | None  # None when the sentence has fewer than two different words
    typical: float  # the median score over pairs of different words (0 when there are none)
    clear: bool  # top.score - typical >= CLEAR_GAP: one pair stands out
    query_best: int | None  # the different word the query scores highest with (None if none)


def scores_meaning(scores: torch.Tensor, tokens: tuple[str, ...] | list[str], query: int) -> ScoresMeaning:
    """The highest score between two different words, the median such score, and the query's best partner."""
    T = len(tokens)
    other = different_words(tokens)  # (T, T)
    upper = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1) & other  # each pair once
    if not bool(upper.any()):
        return ScoresMeaning(None, 0.0, False, None)
    masked = scores.masked_fill(~upper, float("-inf"))  # (T, T)
    flat = int(masked.argmax())
    first, second = divmod(flat, T)
    top = Pair(first, second, float(scores[first, second]))
    typical = median(scores[upper])
    row = scores[query].masked_fill(~other[query], float("-inf"))  # (T,)
    query_best = int(row.argmax()) if bool(other[query].any()) else None
    return ScoresMeaning(top, typical, top.score - typical >= CLEAR_GAP, query_best)


@dataclass(frozen=True)
class WeightsMeaning:
    """The query's row of weights on meaning: at t = 1 and at the lesson's temperature t."""

    plain: torch.Tensor  # (T,) softmax of the query's cosines
    sharp: torch.Tensor  # (T,) softmax of the query's cosines / t
    temperature: float
    best: int | None  # the different word the query gives the most weight (at t; the same at t = 1)
    typical: float  # the median weight (at t) over the query's other different words; 0 if none
    ratio: float  # sharp[best] / typical (inf when typical is 0); 0 when there is no best

    @property
    def uniform(self) -> float:
        """1/T: every weight of a perfectly flat row."""
        return 1.0 / self.plain.shape[0]

    @property
    def clear(self) -> bool:
        """Whether the best different word gets at least CLEAR_RATIO times the median other word's weight."""
        return self.best is not None and self.ratio >= CLEAR_RATIO


def weights_meaning(
    scores: torch.Tensor, tokens: tuple[str, ...] | list[str], query: int, temperature: float = MEANING_TEMPERATURE
) -> WeightsMeaning:
    """softmax of the query's cosine scores at t = 1 and at ``temperature``, and which different word gains most."""
    row = scores[query].unsqueeze(0)  # (1, T)
    plain = softmax(row)[0]  # (T,)
    sharp = softmax(row, temperature=temperature)[0]  # (T,)
    other = different_words(tokens)[query]  # (T,)
    if not bool(other.any()):
        return WeightsMeaning(plain, sharp, temperature, None, 0.0, 0.0)
    best = int(sharp.masked_fill(~other, -1.0).argmax())
    rest = other.clone()
    rest[best] = False
    typical = median(sharp[rest]) if bool(rest.any()) else 0.0
    ratio = float(sharp[best]) / typical if typical > 0 else float("inf")
    return WeightsMeaning(plain, sharp, temperature, best, typical, ratio)


def meaning_weights(scores: torch.Tensor, temperature: float = MEANING_TEMPERATURE) -> torch.Tensor:
    """softmax(Ω / t) along each row: (T, T)."""
    return softmax(scores, temperature=temperature)


@dataclass(frozen=True)
class ContextMeaning:
    """How the query's context vector moved: its cosine with its best partner before and after mixing."""

    partner: int | None  # the different word the query mixes in most (None if none)
    share: float  # that word's weight in the mix
    own_share: float  # the query's own weight in the mix
    before: float  # cos(x_query, x_partner)
    after: float  # cos(c_query, x_partner)

    @property
    def closer(self) -> bool:
        """Whether the context vector is closer to the partner than the input was."""
        return self.partner is not None and self.after > self.before


def context_meaning(
    vectors: torch.Tensor, tokens: tuple[str, ...] | list[str], query: int, temperature: float = MEANING_TEMPERATURE
) -> tuple[torch.Tensor, torch.Tensor, ContextMeaning]:
    """(C, closeness, meaning): the context vectors C = softmax(X̂ X̂ᵀ / t) X̂ of the unit vectors (T, D), the
    cosine of every context vector with every input word (T, T), and the query's move towards its partner."""
    unit = unit_rows(vectors)  # (T, D)
    weights = meaning_weights(unit @ unit.T, temperature)  # (T, T)
    context = context_vectors(weights, unit)  # (T, T) @ (T, D) -> (T, D)
    closeness = unit_rows(context) @ unit.T  # (T, D) @ (D, T) -> (T, T): cos(c_i, x_j)
    other = different_words(tokens)[query]  # (T,)
    if not bool(other.any()):
        return context, closeness, ContextMeaning(None, 0.0, float(weights[query, query]), 0.0, 0.0)
    partner = int(weights[query].masked_fill(~other, -1.0).argmax())
    meaning = ContextMeaning(
        partner,
        float(weights[query, partner]),
        float(weights[query, query]),
        float(unit[query] @ unit[partner]),
        float(closeness[query, partner]),
    )
    return context, closeness, meaning


def blend_frame(
    vectors: torch.Tensor,
    tokens: tuple[str, ...] | list[str],
    labels: tuple[str, ...] | list[str],
    temperature: float = MEANING_TEMPERATURE,
) -> pd.DataFrame:
    """One row per token: the different word it mixes in most, that word's weight and its own, and its cosine
    with that word before (x) and after (c) the mixing; '' and NaN where a token has no different word."""
    rows = []
    for query in range(len(tokens)):
        _, _, found = context_meaning(vectors, tokens, query, temperature)
        none = found.partner is None
        rows.append(
            {
                "mixes in most": "" if none else labels[found.partner],
                "its weight": float("nan") if none else found.share,
                "own weight": found.own_share,
                "cos before (x)": float("nan") if none else found.before,
                "cos after (c)": float("nan") if none else found.after,
            }
        )
    return pd.DataFrame(rows, index=list(labels))


def closer_count(frame: pd.DataFrame) -> tuple[int, int]:
    """(tokens whose context vector is closer to the word it mixes in most than its input was, tokens with such a
    word) from ``blend_frame``."""
    has = frame["cos before (x)"].notna()
    return int((frame["cos after (c)"][has] > frame["cos before (x)"][has]).sum()), int(has.sum())
