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
from attention_core.i18n import _
from ui.format import format_number
from ui.models import trained
from ui.widgets import inputs
from ui.widgets.inputs import LabInput

SUGGEST_KEY = "meaning_suggest"


@st.cache_data(max_entries=32, show_spinner=False)  # the spinner is the caller's: in the learner's language
def _word_vectors(tokens: tuple[str, ...], folder: str) -> torch.Tensor:
    """(T, 384) trained word vectors of the tokens (each word's pieces averaged), cached per sentence."""
    return tm.word_vectors(trained.model(), list(tokens))


def word_vectors(lab: LabInput) -> torch.Tensor | None:
    """The sentence's trained word vectors, or None after saying in one sentence why the model is unavailable."""
    try:
        with st.spinner(_("Looking the words up in all-MiniLM-L6-v2…")):
            return _word_vectors(tuple(lab.tokens), trained.folder_setting())
    except tm.ModelUnavailable as error:
        st.info(
            _(
                "This step needs the trained model all-MiniLM-L6-v2, which cannot be used here ({error}); the rest "
                "of the lesson works without it.",
                error=error,
            ),
            icon=":material/cloud_off:",
        )
        return None


def vectors_note() -> None:
    """Where the vectors come from, and why the scores are cosines."""
    st.caption(
        _(
            "Each word's vector is all-MiniLM-L6-v2's own input embedding (384 numbers learned in training; a word the "
            "tokenizer splits into pieces gets the average of its pieces), divided by its length so it has length 1. "
            "Then x_i · x_j is the cosine of the angle between the two words: 1 for the same word, near 0 for "
            "unrelated ones."
        )
    )


def suggest_sentence(lab: LabInput, key: str) -> None:
    """One click to a sentence where related words show (measured in attention_core.meaning)."""
    if " ".join(lab.tokens) == meaning.SUGGESTED_SENTENCE:
        return
    st.button(
        _("Try it on “{sentence}”", sentence=meaning.SUGGESTED_SENTENCE),
        key=f"{SUGGEST_KEY}:{key}",
        on_click=inputs.apply,
        args=((("example", "own"), ("sentence", meaning.SUGGESTED_SENTENCE)),),
        icon=":material/science:",
        help=_("Animals and foods: see which words score high with which."),
    )


def scores_claim(lab: LabInput, scores: torch.Tensor, found: meaning.ScoresMeaning) -> str:
    """The sentence the scores support: the top pair of different words against the typical pair, or no pair."""
    labels = lab.labels
    if found.top is None:
        return _("The sentence has no two different words, so there is no pair to compare.")
    top = found.top
    values = {
        "first": labels[top.first],
        "second": labels[top.second],
        "score": format_number(top.score),
        "typical": format_number(found.typical),
    }
    if found.clear:
        text = _(
            "The highest score between two different words is between “{first}” and “{second}”: **{score}**, "
            "against {typical} for the median pair of different words: this pair stands out.",
            **values,
        )
    else:
        text = _(
            "No pair stands out here: the highest score between two different words, “{first}” and “{second}” "
            "({score}), is close to the median pair's {typical}.",
            **values,
        )
    if found.query_best is not None:
        text += " " + _(
            "The query “{query}” scores highest with “{best}” ({score}).",
            query=lab.query_label,
            best=labels[found.query_best],
            score=format_number(float(scores[lab.query_index, found.query_best])),
        )
    return text


def weights_claim(lab: LabInput, found: meaning.WeightsMeaning) -> str:
    """What the query's weights show at t = 1 and at t: flat, then the related word's share, or no clear one."""
    labels, q = lab.labels, lab.query_index
    text = _(
        "At t = 1 the weights of “{query}” are flat: the largest is {largest} and the smallest {smallest}, against "
        "1/T = {uniform}, because cosines differ by at most 2. At t = {t} the query keeps {own} for itself (its "
        "cosine with itself is 1, the largest possible).",
        query=lab.query_label,
        largest=format_number(float(found.plain.max())),
        smallest=format_number(float(found.plain.min())),
        uniform=format_number(found.uniform),
        t=f"{found.temperature:g}",
        own=format_number(float(found.sharp[q])),
    )
    if found.best is None:
        return text + " " + _("The sentence has no other word to share the rest with.")
    values = {
        "best": labels[found.best],
        "share": format_number(float(found.sharp[found.best])),
        "ratio": format_number(found.ratio, 2),
        "typical": format_number(found.typical),
    }
    if found.clear:
        return (
            text
            + " "
            + _(
                "Of the other words, “{best}” ({share}) gets the most, {ratio} times the median other word's "
                "{typical}: the word whose vector is closest receives the most weight.",
                **values,
            )
        )
    return (
        text
        + " "
        + _(
            "Of the other words, “{best}” ({share}) gets the most, but only {ratio} times the median other word's "
            "{typical}: no other word clearly stands out here.",
            **values,
        )
    )


def blend_claim(lab: LabInput, found: meaning.ContextMeaning, closer: tuple[int, int]) -> str:
    """What the query's context vector took in and where it moved, and how many tokens moved the same way."""
    query = lab.query_label
    if found.partner is None:
        return _("“{query}” has no different word to mix in: its context vector is its own vector.", query=query)
    values = {
        "query": query,
        "partner": lab.labels[found.partner],
        "own": format_number(found.own_share),
        "share": format_number(found.share),
        "before": format_number(found.before),
        "after": format_number(found.after),
    }
    if found.closer:
        text = _(
            "c(“{query}”) keeps {own} of “{query}” and mixes in the most of “{partner}”: {share}. Its cosine with "
            "“{partner}” rises from {before} (the input x) to {after} (the context vector c).",
            **values,
        )
    else:
        text = _(
            "c(“{query}”) keeps {own} of “{query}” and mixes in the most of “{partner}”: {share}. Its cosine with "
            "“{partner}” does not rise from {before} (the input x) to {after} (the context vector c).",
            **values,
        )
    count, total = closer
    return (
        text
        + " "
        + _(
            "Over the sentence, {count} of {total} context vectors moved closer to the word they mix in most.",
            count=count,
            total=total,
        )
    )
