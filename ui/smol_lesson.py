"""SmolLM2 for the lesson pages: the model loaded once per server, one forward per prompt kept in a store
bounded in bytes, and the small results each step draws cached per prompt.

The model file is the installed package's (``attention_core.smollm2.gguf_path``), or ``ATTENTION_LAB_SMOL_FILE``
(the tests point it at a missing file to see the page explain itself). Everything returned is read-only.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict

import numpy as np
import streamlit as st

from attention_core import smollm2 as sm
from attention_core import smollm2_lesson as sl
from attention_core.exercises.smollm2 import SmolMaterial
from attention_core.tables import token_labels
from ui import charts

FILE_VARIABLE = "ATTENTION_LAB_SMOL_FILE"
STORE_BYTES = 64 * 2**20  # forwards kept in memory, all sessions together (a 64-token forward holds ~13 MB)
MOSAIC_HEAD_PX = 48  # one head's square in the all-heads image
REPEAT_TOKENS = 32  # the repeated prompt for induction heads: the first 32 tokens, twice
DEFAULT_TOP_K = 10  # the next-token step's top-k as the page opens (the exercises read this setting)


def file_setting() -> str:
    """The model file to use: the environment override, or '' for the installed package's."""
    return os.environ.get(FILE_VARIABLE, "")


@st.cache_resource(show_spinner="Loading SmolLM2-135M (once per server)…", max_entries=2)
def _load(path: str) -> sm.SmolModel | str:
    """The loaded model, or the reason it cannot be used (cached either way: no retry storm)."""
    try:
        return sm.load_model(path or None)
    except sm.ModelUnavailable as error:
        return str(error)


def model() -> sm.SmolModel:
    """The loaded model (read-only); raises sm.ModelUnavailable with the reason if it cannot load."""
    loaded = _load(file_setting())
    if isinstance(loaded, str):
        raise sm.ModelUnavailable(loaded)
    return loaded


class ForwardStore:
    """Forwards by (file, ids, offset), least recently used dropped first once their bytes pass ``budget``."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.items: OrderedDict[tuple, sm.Forward] = OrderedDict()
        self.lock = threading.Lock()

    def nbytes(self) -> int:
        return sum(item.nbytes() for item in self.items.values())

    def get(self, key: tuple, compute) -> sm.Forward:
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key]
        result = compute()
        with self.lock:
            self.items[key] = result
            while len(self.items) > 1 and self.nbytes() > self.budget:
                self.items.popitem(last=False)
        return result


@st.cache_resource(max_entries=1)
def _store() -> ForwardStore:
    return ForwardStore(STORE_BYTES)


def prompt_ids(prompt: str) -> tuple[int, ...]:
    """The prompt's token ids; ValueError with a learner's sentence if empty or longer than the lesson runs."""
    return sm.encode(model(), prompt, max_tokens=sl.PAGE_MAX_TOKENS)


def forward_of(ids: tuple[int, ...], logits: str = "last") -> sm.Forward:
    """The forward of these ids (from the store when it holds it)."""
    key = (file_setting(), ids, logits)
    return _store().get(key, lambda: sm.forward(model(), ids, logits=logits))


def forward(prompt: str) -> sm.Forward:
    """The prompt through the model (ValueError if refused), kept per prompt."""
    return forward_of(prompt_ids(prompt))


def repeated_forward(prompt: str) -> sm.Forward:
    """The prompt's first REPEAT_TOKENS tokens twice ("A B C A B C"), through the model: induction heads."""
    return forward_of(sm.repeated_ids(prompt_ids(prompt)[:REPEAT_TOKENS]), logits="none")


def labels(result: sm.Forward) -> tuple[str, ...]:
    """Unique labels of the pieces, a space shown as · ('The (1)', '·cat (2)'): rows and columns everywhere."""
    return tuple(token_labels([sl.shown_piece(piece) for piece in result.pieces]))


@st.cache_resource(max_entries=32, show_spinner=False)
def patterns(prompt: str, repeated: bool = False, _file: str = "") -> sm.HeadPatterns:
    """Sink, previous-token and induction figures of every head, on the prompt or its repeated form."""
    return sm.head_patterns(repeated_forward(prompt) if repeated else forward(prompt))


@st.cache_data(max_entries=16, show_spinner=False)
def mosaic(prompt: str, _file: str = "") -> np.ndarray:
    """Every head's weights as one image: layers down, heads across."""
    attentions = forward(prompt).attentions.numpy()  # (L, h, T, T)
    return charts.head_mosaic(attentions, pixels=max(1, MOSAIC_HEAD_PX // attentions.shape[-1]))


@st.cache_resource(max_entries=64, show_spinner=False)
def head_by_hand(prompt: str, layer: int, head: int, query: int, _file: str = "") -> sm.HeadByHand:
    """One query of one head recomputed with the lab's own functions (checked against the forward)."""
    return sm.head_by_hand(model(), forward(prompt), layer, head, query)


@st.cache_resource(max_entries=32, show_spinner=False)
def next_token(prompt: str, temperature: float, top_k: int | None, _file: str = "") -> sm.NextToken:
    """The 10 most likely next tokens after the prompt under this temperature and top-k."""
    return sm.next_token(model(), forward(prompt).logits[-1], temperature, top_k)


@st.cache_data(max_entries=32, show_spinner="Generating token by token…")
def continuation(
    prompt: str, steps: int, greedy: bool, temperature: float, top_k: int | None, seed: int, _file: str = ""
) -> tuple[sm.GeneratedToken, ...]:
    """The continuation, token by token with the KV cache (greedy, or sampled with this seed)."""
    return sm.generate(
        model(), prompt_ids(prompt), steps, greedy=greedy, temperature=temperature, top_k=top_k, seed=seed
    )


@st.cache_data(max_entries=16, show_spinner="Running the prompt again at shifted positions…")
def shift_check(prompt: str, offset: int = 100, _file: str = "") -> sm.ShiftCheck:
    """RoPE's relative property on the real model: every score with every position shifted by ``offset``."""
    return sm.rope_shift_check(model(), prompt_ids(prompt), offset)


@st.cache_data(max_entries=16, show_spinner="Decoding with the cache and without it…")
def cache_check(prompt: str, steps: int = 4, _file: str = "") -> sm.CacheCheck:
    """Cached decoding against recomputing everything, on the real model."""
    return sm.kv_cache_check(model(), prompt_ids(prompt), steps)


def material(prompt: str, layer: int, head: int, query: int) -> SmolMaterial:
    """What the lesson's exercises are made from: the same for every step (its key: these four values)."""
    result = forward(prompt)
    config = model().config
    return SmolMaterial(
        labels=labels(result),
        next_token=next_token(prompt, 1.0, DEFAULT_TOP_K),
        hand=head_by_hand(prompt, layer, head, query),
        model_row=result.attentions[layer, head, query],
        patterns=patterns(prompt),
        repeated=patterns(prompt, repeated=True),
        num_heads=config.num_heads,
        num_kv_heads=config.num_kv_heads,
        rotation=sl.query_rotation(head_by_hand(prompt, layer, head, query), config),
        weights_first=result.attentions[layer, head, 1:, 0],
    )


def forward_bytes() -> int:
    """Bytes the forward store holds now (for the benchmarks and tests)."""
    return _store().nbytes()
