"""SmolLM2 for the app: loaded when a page asks for it, forwards kept per prompt within a byte budget, and what its
lesson adds (the repeated prompt for induction heads, the 270-head image, the exercises' material).

Importing this module imports neither gguf nor tokenizers; the first call to ``model()`` does. The GGUF
file is the installed package's, or ``ATTENTION_LAB_SMOLLM2_FILE`` (the fault tests point it at a broken
copy). Every function here takes the prompt's text (or ids) and returns objects of attention_core.smollm2,
which the pages only read: a Forward, a HeadByHand... are shared by every session that asks for the same
prompt, so a page must never write into their tensors.

The model and its kept forwards are let go when no connected session is on a page that used them
(``runtime.memory``): the next page that asks loads it again.
"""

from __future__ import annotations

import os

import numpy as np
import streamlit as st
import torch

from attention_core import smollm2 as sm
from attention_core import smollm2_lesson as sl
from attention_core.i18n import _
from attention_core.smollm2_lesson import SmolMaterial
from attention_core.tables import token_labels
from runtime import memory
from runtime.cache import MB, process_cache
from ui import charts

FILE_VARIABLE = "ATTENTION_LAB_SMOLLM2_FILE"
# A 32-token forward holds 5.7 MB (every layer's T x T weights, contexts, normed inputs); at the 128-token limit
# 35.5 MB, so the budget, not the count, bounds how many long prompts stay. 40 MB keeps one forward at the limit
# or seven of 32 tokens: at 96 MB, ten sessions' prompts held 75 MB of a server that has 690 MB (issue 37).
FORWARD_BYTES = 40 * MB
FORWARD_ENTRIES = 12
MOSAIC_HEAD_PX = 48  # one head's square in the all-heads image
REPEAT_TOKENS = 32  # the repeated prompt for induction heads: the first 32 tokens, twice
KEPT_PROMPT = "_smol_prompt"  # the learner's last prompt, kept while other pages run (not a widget's key)
DEFAULT_TOP_K = 10  # the next-token step's top-k as the page opens (the exercises read this setting)


def file_setting() -> str:
    """The GGUF file to use: the environment override, or '' for the installed package's."""
    return os.environ.get(FILE_VARIABLE, "")


LIFETIME = "SmolLM2"  # its name in runtime.memory

# The spinners of the cached functions below are drawn by the functions' bodies, which run only on a miss: a
# decorator's show_spinner text is fixed when the module is imported, so it could not follow the learner's language.


@st.cache_resource(show_spinner=False, max_entries=1)
def _load(path: str) -> sm.SmolModel | str:
    """The loaded model, or the reason it cannot be used (cached either way: no retry storm)."""
    with st.spinner(_("Loading SmolLM2-135M…")):
        try:
            return sm.load_model(path or None)
        except sm.ModelUnavailable as error:
            return str(error)


def model() -> sm.SmolModel:
    """The loaded model (read-only); raises sm.ModelUnavailable with the reason if it cannot load."""
    memory.held(LIFETIME)  # before loading: a session's hold keeps another session's run end from letting it go
    loaded = _load(file_setting())
    if isinstance(loaded, str):
        raise sm.ModelUnavailable(loaded)
    return loaded


def load_problem() -> str | None:
    """Why SmolLM2 cannot be used here (package absent, file corrupt), as text for the page, or None."""
    try:
        model()
    except sm.ModelUnavailable as error:
        return str(error)
    return None


def encode(prompt: str) -> tuple[int, ...]:
    """The prompt's token ids (ValueError with the reason if empty or too long)."""
    return _encode(prompt)


@st.cache_data(max_entries=64, show_spinner=False)
def _encode(prompt: str) -> tuple[int, ...]:
    return sm.encode(model(), prompt)


@process_cache(FORWARD_ENTRIES, FORWARD_BYTES)
def forward_ids(ids: tuple[int, ...]) -> sm.Forward:
    """The token ids through the model, kept per ids within FORWARD_BYTES (read-only: shared by sessions)."""
    return sm.forward(model(), ids)


def forward(prompt: str) -> sm.Forward:
    """The prompt through the model (ValueError if refused)."""
    return forward_ids(encode(prompt))


@st.cache_data(max_entries=64, show_spinner=False)
def next_token(prompt: str, temperature: float = 1.0, top_k: int | None = None) -> sm.NextToken:
    """The TOP_K_SHOWN most likely next tokens after the prompt, with temperature and top-k."""
    return sm.next_token(model(), forward(prompt).logits[-1], temperature, top_k)


@st.cache_data(max_entries=64, show_spinner=False)
def generate(
    prompt: str, steps: int, greedy: bool = True, temperature: float = 1.0, top_k: int | None = None, seed: int = 0
) -> tuple[sm.GeneratedToken, ...]:
    """A continuation with the KV cache: greedy, or sampled with the seed."""
    with st.spinner(_("Generating token by token…")):
        ids = encode(prompt)
        return sm.generate(model(), ids, steps, greedy=greedy, temperature=temperature, top_k=top_k, seed=seed)


def cuts_characters(result: sm.Forward) -> bool:
    """Whether the prompt has a character split between two pieces (its pieces then show "…")."""
    return sm.cuts_characters(model(), result.ids)


def continuation_text(tokens: tuple[sm.GeneratedToken, ...]) -> str:
    """The generated pieces as one text (decoded together: a character cut between two pieces is whole here)."""
    return sm.decode(model(), [token.id for token in tokens])


@st.cache_data(max_entries=16, show_spinner=False)
def kv_cache_check(prompt: str, steps: int = 4) -> sm.CacheCheck:
    """Cached decoding against a full recompute at every step, on the real model."""
    with st.spinner(_("Checking the KV cache against recomputing…")):
        return sm.kv_cache_check(model(), encode(prompt), steps)


@st.cache_data(max_entries=16, show_spinner=False)
def rope_shift_check(prompt: str, offset: int = 100) -> sm.ShiftCheck:
    """RoPE's relative property on the real model: the prompt's scores at positions 0.. and offset..."""
    with st.spinner(_("Shifting every position…")):
        return sm.rope_shift_check(model(), encode(prompt), offset)


@process_cache(32, 2 * MB)
def patterns_of(ids: tuple[int, ...]) -> sm.HeadPatterns:
    """Sink, previous-token and induction figures per head on these ids."""
    return sm.head_patterns(forward_ids(ids))


def cache_bytes_per_token() -> tuple[int, int]:
    """(this model's KV cache per token, the same with full multi-head attention), float16 numbers."""
    config = model().config
    return sm.kv_cache_bytes_per_token(config), sm.mha_cache_bytes_per_token(config)


# --- what the SmolLM2 lesson adds: the repeated prompt, the all-heads image, the exercises' material -----------


def repeated_ids(prompt: str) -> tuple[int, ...]:
    """The prompt's first REPEAT_TOKENS tokens twice: "A B C A B C"."""
    return sm.repeated_ids(encode(prompt)[:REPEAT_TOKENS])


def repeated_forward(prompt: str) -> sm.Forward:
    """The repeated prompt through the model (kept like any forward)."""
    return forward_ids(repeated_ids(prompt))


def patterns(prompt: str, repeated: bool = False) -> sm.HeadPatterns:
    """Sink, previous-token and induction figures of every head, on the prompt or its repeated form."""
    return patterns_of(repeated_ids(prompt) if repeated else encode(prompt))


def head_by_hand(prompt: str, layer: int, head: int, query: int) -> sm.HeadByHand:
    """One query of one head recomputed with the lab's own functions (checked against the forward). About 1 ms,
    so it runs on every rerun, as the code the page shows says."""
    return sm.head_by_hand(model(), forward(prompt), layer, head, query)


@st.cache_data(max_entries=64, show_spinner=False)
def _independent_check(ids: tuple[int, ...], layer: int, head: int, query: int) -> sm.IndependentCheck:
    """One query's row by hand and from the forward against attention_core.independent (a few hundred bytes)."""
    result = forward_ids(ids)
    return sm.independent_check(model(), result, sm.head_by_hand(model(), result, layer, head, query))


def independent_check(prompt: str, layer: int, head: int, query: int) -> sm.IndependentCheck:
    """The row of ``head_by_hand`` (and the forward's) against code that shares nothing with the lab's."""
    return _independent_check(encode(prompt), layer, head, query)


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
    queries = torch.tensor([q for q, _key in pairs], dtype=torch.long)  # (Q,)
    keys = torch.tensor([k for _query, k in pairs], dtype=torch.long)  # (Q,)
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


def release() -> None:
    """Let SmolLM2 go, with the forwards and figures it made (runtime.memory calls this when no session holds it)."""
    _load.clear()
    for kept in (forward_ids, patterns_of):
        memory.forget(kept.store)


memory.lifetime(LIFETIME, release)
