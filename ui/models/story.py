"""The 15-minute path's numbers for the page: the worked example on the learner's input, and the two real models'
stops, each computed once per input (the path page only draws them).

The toy story is ``attention_core.story.tell`` on the sidebar's X. The trained-model stop runs all-MiniLM-L6-v2 on
the sentence (``ui.models.trained``), picks the head where the query looks hardest at one other word, and
recomputes that head's row with the lab's own functions; the GPT-style stop runs SmolLM2 on the sentence
(``ui.models.smol``) and keeps the last position's most likely next tokens.
"""

from __future__ import annotations

import streamlit as st
import torch

from attention_core import smollm2 as sm
from attention_core import story
from attention_core import trained_model as tm
from ui.models import smol, trained

SHOWN_NEXT = 5  # the most likely next tokens the path shows


@st.cache_data(max_entries=32, show_spinner=False)
def _told(values: tuple[float, ...], shape: tuple[int, int], dtype: str, query: int) -> story.Story:
    X = torch.tensor(values, dtype=getattr(torch, dtype)).reshape(shape)  # (T, d_model)
    return story.tell(X, query)


def told(lab) -> story.Story:
    """The path's worked example on the sidebar's input, following its query (computed once per input)."""
    X = lab.X.detach().to("cpu")
    return _told(tuple(X.reshape(-1).tolist()), tuple(X.shape), str(X.dtype).removeprefix("torch."), lab.query_index)


def sentence_of(lab) -> str:
    """The sentence both real models read: the sidebar's tokens joined by spaces."""
    return " ".join(lab.tokens)


@st.cache_data(max_entries=32, show_spinner=False)
def trained_stop(words: tuple[str, ...], query_index: int) -> story.TrainedStop:
    """The trained-model stop on the sentence (tm.ModelUnavailable or ValueError with the reason)."""
    sentence = " ".join(words)
    forward = trained.forward(sentence)
    query = trained.query_piece(words, query_index).index
    layer, head = story.focused_head(forward.attentions, query)
    _, steps = trained.head_steps(sentence, layer, head)
    row = forward.attentions[layer, head, query]  # (T,)
    return story.TrainedStop(
        pieces=forward.pieces,
        layer=layer,
        head=head,
        query=query,
        row=row,
        by_hand=steps.weights[query],
        gap=float((row - steps.weights[query]).abs().max()),
    )


@st.cache_data(max_entries=32, show_spinner=False)
def next_stop(prompt: str) -> story.NextStop:
    """SmolLM2's most likely next tokens after the prompt (ModelUnavailable or ValueError with the reason)."""
    top = smol.next_token(prompt)
    return story.NextStop(prompt, top.pieces[:SHOWN_NEXT], top.probabilities[:SHOWN_NEXT])


def trained_problem() -> str | None:
    """Why all-MiniLM-L6-v2 cannot run here, or None."""
    return trained.load_problem()


def smol_problem() -> str | None:
    """Why SmolLM2 cannot run here, or None."""
    return smol.load_problem()


Unavailable = (tm.ModelUnavailable, sm.ModelUnavailable, ValueError)  # what a model stop says instead of drawing
