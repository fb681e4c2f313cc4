"""SmolLM2 for the lesson page, by prompt: the model and its kept forwards come from ``ui.smol`` (loaded once per
server, forwards within its byte budget); here only what the lesson adds: the repeated prompt for induction,
the 270-head image and the exercises' material.

Everything returned is shared by every session that asks for the same prompt: read-only.
"""

from __future__ import annotations

import numpy as np
import streamlit as st
import torch

from attention_core import smollm2 as sm
from attention_core import smollm2_lesson as sl
from attention_core.exercises.smollm2 import SmolMaterial
from attention_core.tables import token_labels
from ui import charts, smol

FILE_VARIABLE = smol.FILE_VARIABLE  # the tests point it at a missing file to see the page explain itself
MOSAIC_HEAD_PX = 48  # one head's square in the all-heads image
REPEAT_TOKENS = 32  # the repeated prompt for induction heads: the first 32 tokens, twice
KEPT_PROMPT = "_smol_prompt"  # the learner's last prompt, kept while other pages run (not a widget's key)
DEFAULT_TOP_K = 10  # the next-token step's top-k as the page opens (the exercises read this setting)

model = smol.model
file_setting = smol.file_setting
forward = smol.forward  # the prompt through the model (ValueError if empty or too long)
next_token = smol.next_token
continuation = smol.generate
shift_check = smol.rope_shift_check
cache_check = smol.kv_cache_check


def repeated_ids(prompt: str) -> tuple[int, ...]:
    """The prompt's first REPEAT_TOKENS tokens twice: "A B C A B C"."""
    return sm.repeated_ids(smol.encode(prompt)[:REPEAT_TOKENS])


def repeated_forward(prompt: str) -> sm.Forward:
    """The repeated prompt through the model (kept by ui.smol like any forward)."""
    return smol.forward_ids(repeated_ids(prompt))


def patterns(prompt: str, repeated: bool = False) -> sm.HeadPatterns:
    """Sink, previous-token and induction figures of every head, on the prompt or its repeated form."""
    return smol.patterns_of(repeated_ids(prompt) if repeated else smol.encode(prompt))


def head_by_hand(prompt: str, layer: int, head: int, query: int) -> sm.HeadByHand:
    """One query of one head recomputed with the lab's own functions (checked against the forward). About 1 ms,
    so it runs on every rerun, as the code the page shows says (ui.smol.head_by_hand keeps results instead)."""
    return sm.head_by_hand(model(), forward(prompt), layer, head, query)


def independent_check(prompt: str, layer: int, head: int, query: int) -> sm.IndependentCheck:
    """The row of ``head_by_hand`` (and the forward's) against code that shares nothing with the lab's."""
    return smol.independent_check(smol.encode(prompt), layer, head, query)


def labels(result: sm.Forward) -> tuple[str, ...]:
    """Unique labels of the pieces, a space shown as · ('The (1)', '·cat (2)'): rows and columns everywhere."""
    return tuple(token_labels([sl.shown_piece(piece) for piece in result.pieces]))


@st.cache_data(max_entries=16, show_spinner=False)
def mosaic(prompt: str, _file: str = "") -> np.ndarray:
    """Every head's weights as one image: layers down, heads across (a few hundred kB)."""
    attentions = forward(prompt).attentions.numpy()  # (L, h, T, T)
    return charts.head_mosaic(attentions, pixels=max(1, MOSAIC_HEAD_PX // attentions.shape[-1]))


def next_logits(prompt: str) -> tuple[float, ...]:
    """The logits z of the next-token step's pieces (the most likely at temperature 1 and the default top-k), in
    that order: what their probabilities are the softmax of."""
    logits = forward(prompt).logits[-1]  # (V,)
    return tuple(float(logits[i]) for i in next_token(prompt, 1.0, DEFAULT_TOP_K).ids)


def first_piece_weights(prompt: str) -> torch.Tensor:
    """Every head's weight on the first piece from queries 2 .. T, (L, h, T - 1): the sink figure is their mean."""
    return forward(prompt).attentions[:, :, 1:, 0]


def induction_weights(prompt: str) -> tuple[torch.Tensor, list[tuple[int, int]]]:
    """On the repeated prompt, every head's weight from each query with an earlier copy on the piece after that copy,
    (L, h, Q), with the (query, key) pairs (0-based): the induction figure is their mean."""
    repeated = repeated_forward(prompt)
    pairs = sm.induction_targets(repeated.ids)
    queries = torch.tensor([q for q, _ in pairs], dtype=torch.long)  # (Q,)
    keys = torch.tensor([k for _, k in pairs], dtype=torch.long)  # (Q,)
    return repeated.attentions[:, :, queries, keys], pairs  # (L, h, Q)


def material(prompt: str, layer: int, head: int, query: int) -> SmolMaterial:
    """What the lesson's exercises are made from: the same for every step (its key: these four values)."""
    result = forward(prompt)
    config = model().config
    hand = head_by_hand(prompt, layer, head, query)
    return SmolMaterial(
        labels=labels(result),
        next_token=next_token(prompt, 1.0, DEFAULT_TOP_K),
        hand=hand,
        model_row=result.attentions[layer, head, query],
        patterns=patterns(prompt),
        repeated=patterns(prompt, repeated=True),
        num_heads=config.num_heads,
        num_kv_heads=config.num_kv_heads,
        rotation=sl.query_rotation(hand, config),
        weights_first=result.attentions[layer, head, 1:, 0],
        next_logits=next_logits(prompt),
        first_piece=first_piece_weights(prompt),
        induction_rows=induction_weights(prompt)[0],
    )
