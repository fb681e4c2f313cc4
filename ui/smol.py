"""SmolLM2 for the app: loaded when a page asks for it, forwards kept per prompt within a byte budget.

Importing this module imports neither gguf nor tokenizers; the first call to ``model()`` does. The GGUF
file is the installed package's, or ``ATTENTION_LAB_SMOLLM2_FILE`` (the fault tests point it at a broken
copy). Every function here takes the prompt's text (or ids) and returns objects of attention_core.smollm2,
which the pages only read: a Forward, a HeadByHand... are shared by every session that asks for the same
prompt, so a page must never write into their tensors.

The model and its kept forwards are let go when no connected session is on a page that used them
(``ui.memory``): the next page that asks loads it again.
"""

from __future__ import annotations

import os

import streamlit as st

from attention_core import smollm2 as sm
from ui import _drawing, memory

FILE_VARIABLE = "ATTENTION_LAB_SMOLLM2_FILE"
# A 32-token forward holds 5.7 MB (every layer's T x T weights, contexts, normed inputs); at the 128-token limit
# 35.5 MB, so the budget, not the count, bounds how many long prompts stay. 40 MB keeps one forward at the limit
# or seven of 32 tokens: at 96 MB, ten sessions' prompts held 75 MB of a server that has 690 MB (issue 37).
FORWARD_BYTES = 40 * _drawing.MB
FORWARD_ENTRIES = 12


def file_setting() -> str:
    """The GGUF file to use: the environment override, or '' for the installed package's."""
    return os.environ.get(FILE_VARIABLE, "")


LIFETIME = "SmolLM2"  # its name in ui.memory


@st.cache_resource(show_spinner="Loading SmolLM2-135M…", max_entries=1)
def _load(path: str) -> sm.SmolModel | str:
    """The loaded model, or the reason it cannot be used (cached either way: no retry storm)."""
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


@_drawing.kept(FORWARD_ENTRIES, FORWARD_BYTES)
def forward_ids(ids: tuple[int, ...]) -> sm.Forward:
    """The token ids through the model, kept per ids within FORWARD_BYTES (read-only: shared by sessions)."""
    return sm.forward(model(), ids)


def forward(prompt: str) -> sm.Forward:
    """The prompt through the model (ValueError if refused)."""
    return forward_ids(encode(prompt))


def repeated_forward(prompt: str, copies: int = 2) -> sm.Forward:
    """The prompt's tokens repeated (for induction heads) through the model; ValueError if too long."""
    ids = sm.repeated_ids(encode(prompt), copies)
    if len(ids) > sm.MAX_TOKENS:
        raise ValueError(f"The repeated prompt has {len(ids)} tokens; this lesson runs at most {sm.MAX_TOKENS}.")
    return forward_ids(ids)


@_drawing.kept(64, 4 * _drawing.MB)
def head_by_hand(ids: tuple[int, ...], layer: int, head: int, query: int) -> sm.HeadByHand:
    """One head's row for one query recomputed by hand, with its agreement verdicts (0-based indices)."""
    return sm.head_by_hand(model(), forward_ids(ids), layer, head, query)


@st.cache_data(max_entries=64, show_spinner=False)
def independent_check(ids: tuple[int, ...], layer: int, head: int, query: int) -> sm.IndependentCheck:
    """One query's row by hand and from the forward against attention_core.independent (a few hundred bytes)."""
    return sm.independent_check(model(), forward_ids(ids), head_by_hand(ids, layer, head, query))


@st.cache_data(max_entries=64, show_spinner=False)
def next_token(prompt: str, temperature: float = 1.0, top_k: int | None = None) -> sm.NextToken:
    """The TOP_K_SHOWN most likely next tokens after the prompt, with temperature and top-k."""
    return sm.next_token(model(), forward(prompt).logits[-1], temperature, top_k)


@st.cache_data(max_entries=64, show_spinner="Generating token by token…")
def generate(
    prompt: str, steps: int, greedy: bool = True, temperature: float = 1.0, top_k: int | None = None, seed: int = 0
) -> tuple[sm.GeneratedToken, ...]:
    """A continuation with the KV cache: greedy, or sampled with the seed."""
    return sm.generate(model(), encode(prompt), steps, greedy=greedy, temperature=temperature, top_k=top_k, seed=seed)


@st.cache_data(max_entries=16, show_spinner="Checking the KV cache against recomputing…")
def kv_cache_check(prompt: str, steps: int = 4) -> sm.CacheCheck:
    """Cached decoding against a full recompute at every step, on the real model."""
    return sm.kv_cache_check(model(), encode(prompt), steps)


@st.cache_data(max_entries=16, show_spinner="Shifting every position…")
def rope_shift_check(prompt: str, offset: int = 100) -> sm.ShiftCheck:
    """RoPE's relative property on the real model: the prompt's scores at positions 0.. and offset..."""
    return sm.rope_shift_check(model(), encode(prompt), offset)


@_drawing.kept(32, 2 * _drawing.MB)
def patterns_of(ids: tuple[int, ...]) -> sm.HeadPatterns:
    """Sink, previous-token and induction figures per head on these ids."""
    return sm.head_patterns(forward_ids(ids))


def patterns(prompt: str) -> sm.HeadPatterns:
    """The figures per head on the prompt."""
    return patterns_of(encode(prompt))


def repeated_patterns(prompt: str, copies: int = 2) -> sm.HeadPatterns:
    """The figures per head on the prompt repeated (induction needs an earlier copy)."""
    return patterns_of(repeated_forward(prompt, copies).ids)


def cache_bytes_per_token() -> tuple[int, int]:
    """(this model's KV cache per token, the same with full multi-head attention), float16 numbers."""
    config = model().config
    return sm.kv_cache_bytes_per_token(config), sm.mha_cache_bytes_per_token(config)


def release() -> None:
    """Let SmolLM2 go, with the forwards and figures it made (ui.memory calls this when no session holds it)."""
    _load.clear()
    for kept in (forward_ids, head_by_hand, patterns_of):
        memory.forget(kept.store)


memory.lifetime(LIFETIME, release)
