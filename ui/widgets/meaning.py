"""The "what it means" steps of lessons 1-3: the lesson's computation on trained word vectors of the learner's
sentence (all-MiniLM-L6-v2's input embeddings, loaded lazily through ``ui.models.trained``), and the one-click
sentence where related words show.

The figures come from ``attention_core.meaning``; this module draws them. When the model cannot be used, a
step says so in one sentence and the rest of the lesson works as before.
"""

from __future__ import annotations

import streamlit as st
import torch

from attention_core import meaning
from attention_core import trained_model as tm
from ui.format import format_number
from ui.models import trained
from ui.widgets import inputs
from ui.widgets.inputs import LabInput

SUGGEST_KEY = "meaning_suggest"


@st.cache_data(max_entries=32, show_spinner="Looking the words up in all-MiniLM-L6-v2…")
def _word_vectors(tokens: tuple[str, ...], folder: str) -> torch.Tensor:
    """(T, 384) trained word vectors of the tokens (each word's pieces averaged), cached per sentence."""
    return tm.word_vectors(trained.model(), list(tokens))


def word_vectors(lab: LabInput) -> torch.Tensor | None:
    """The sentence's trained word vectors, or None after saying in one sentence why the model is unavailable."""
    try:
        return _word_vectors(tuple(lab.tokens), trained.folder_setting())
    except tm.ModelUnavailable as error:
        st.info(
            f"This step needs the trained model all-MiniLM-L6-v2, which cannot be used here ({error}); the rest of "
            "the lesson works without it.",
            icon=":material/cloud_off:",
        )
        return None


def vectors_note() -> None:
    """Where the vectors come from, and why the scores are cosines."""
    st.caption(
        "Each word's vector is all-MiniLM-L6-v2's own input embedding (384 numbers learned in training; a word the "
        "tokenizer splits into pieces gets the average of its pieces), divided by its length so it has length 1. "
        "Then x_i · x_j is the cosine of the angle between the two words: 1 for the same word, near 0 for "
        "unrelated ones."
    )


def suggest_sentence(lab: LabInput, key: str) -> None:
    """One click to a sentence where related words show (measured in attention_core.meaning)."""
    if " ".join(lab.tokens) == meaning.SUGGESTED_SENTENCE:
        return
    st.button(
        f"Try it on “{meaning.SUGGESTED_SENTENCE}”",
        key=f"{SUGGEST_KEY}:{key}",
        on_click=inputs.apply,
        args=((("example", "own"), ("sentence", meaning.SUGGESTED_SENTENCE)),),
        icon=":material/science:",
        help="Animals and foods: see which words score high with which.",
    )


def scores_claim(lab: LabInput, scores: torch.Tensor, found: meaning.ScoresMeaning) -> str:
    """The sentence the scores support: the top pair of different words against the typical pair, or no pair."""
    labels = lab.labels
    if found.top is None:
        return "The sentence has no two different words, so there is no pair to compare."
    top = found.top
    pair = f"“{labels[top.first]}” and “{labels[top.second]}”"
    if found.clear:
        text = (
            f"The highest score between two different words is between {pair}: **{format_number(top.score)}**, "
            f"against {format_number(found.typical)} for the median pair of different words: this pair stands out."
        )
    else:
        text = (
            f"No pair stands out here: the highest score between two different words, {pair} "
            f"({format_number(top.score)}), is close to the median pair's {format_number(found.typical)}."
        )
    if found.query_best is not None:
        text += (
            f" The query “{lab.query_label}” scores highest with “{labels[found.query_best]}” "
            f"({format_number(float(scores[lab.query_index, found.query_best]))})."
        )
    return text


def weights_claim(lab: LabInput, found: meaning.WeightsMeaning) -> str:
    """What the query's weights show at t = 1 and at t: flat, then the related word's share, or no clear one."""
    labels, q = lab.labels, lab.query_index
    t = f"{found.temperature:g}"
    largest, smallest = format_number(float(found.plain.max())), format_number(float(found.plain.min()))
    text = (
        f"At t = 1 the weights of “{lab.query_label}” are flat: the largest is {largest} and the smallest "
        f"{smallest}, against 1/T = {format_number(found.uniform)}, because cosines differ by at most 2. At t = {t} "
        f"the query keeps {format_number(float(found.sharp[q]))} for itself (its cosine with itself is 1, the "
        "largest possible)."
    )
    if found.best is None:
        return text + " The sentence has no other word to share the rest with."
    best = f"“{labels[found.best]}” ({format_number(float(found.sharp[found.best]))})"
    if found.clear:
        return text + (
            f" Of the other words, {best} gets the most, {format_number(found.ratio, 2)} times the median other "
            f"word's {format_number(found.typical)}: the word whose vector is closest receives the most weight."
        )
    return text + (
        f" Of the other words, {best} gets the most, but only {format_number(found.ratio, 2)} times the median other "
        f"word's {format_number(found.typical)}: no other word clearly stands out here."
    )


def blend_claim(lab: LabInput, found: meaning.ContextMeaning, closer: tuple[int, int]) -> str:
    """What the query's context vector took in and where it moved, and how many tokens moved the same way."""
    query = lab.query_label
    if found.partner is None:
        return f"“{query}” has no different word to mix in: its context vector is its own vector."
    partner = lab.labels[found.partner]
    moved = "rises" if found.closer else "does not rise"
    text = (
        f"c(“{query}”) keeps {format_number(found.own_share)} of “{query}” and mixes in the most of “{partner}”: "
        f"{format_number(found.share)}. Its cosine with “{partner}” {moved} from {format_number(found.before)} "
        f"(the input x) to {format_number(found.after)} (the context vector c)."
    )
    count, total = closer
    return text + f" Over the sentence, {count} of {total} context vectors moved closer to the word they mix in most."
