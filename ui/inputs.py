"""The shared sidebar: which sentence and embeddings every page works on.

The sidebar is drawn once per run by ``streamlit_app.py`` before the page runs, so its
widgets keep their values across pages. The input-defining widgets are bound to the
URL (``bind="query-params"``): a copied link opens the same input with the same numbers.
Bad input shows an error and the last good input stays.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st
import torch

import attention_core as ac
from attention_core.embeddings import MAX_TOKENS, parse_seed
from attention_core.presets import PRESETS_BY_KEY, Preset
from ui import trained
from ui.format import plural

OWN = "own"
DEFAULT_SENTENCE = "the cat sat on the mat"
EMBEDDING_MODES = {
    "printed": "As printed in the tutorial",
    "random": "Random (seeded)",
    "one-hot": "One-hot",
    "edited": "Edit by hand",
    "trained": "Trained (all-MiniLM-L6-v2)",
}
D_MODEL_RANGE = (2, 16)
DEFAULT_D_MODEL = 4
DEFAULT_SEED = 0
EDITOR_KEY = "embedding_editor"
INPUT_KEY = "_lab_input"
PROBLEM_KEY = "_input_problem"
LINK_NOTE_KEY = "_link_note"
URL_KEYS = ("example", "sentence", "embedding", "seed", "d_model", "query")


@dataclass(frozen=True)
class LabInput:
    """Everything a page needs about the current input."""

    tokens: tuple[str, ...]
    labels: tuple[str, ...]  # unique, readable token labels for tables and charts
    X: torch.Tensor  # (T, d_model)
    query_index: int
    preset: Preset | None
    embedding_mode: str
    seed: int
    description: str

    @property
    def T(self) -> int:
        return len(self.tokens)

    @property
    def d_model(self) -> int:
        return int(self.X.shape[1])

    @property
    def query_label(self) -> str:
        return self.labels[self.query_index]


def _example_label(key: str) -> str:
    return "Your own sentence" if key == OWN else f"{PRESETS_BY_KEY[key].name}"


def _modes_for(example: str) -> list[str]:
    return [m for m in EMBEDDING_MODES if example != OWN or m != "printed"]


def _on_example_change() -> None:
    """A new example starts at its own defaults: its embeddings and the tutorial's query token."""
    example = st.session_state.get("example")
    st.session_state["embedding"] = "random" if example == OWN else "printed"
    st.session_state.pop("query", None)


def reset() -> None:
    """Back to the default input: every bound widget to its default, edits dropped."""
    st.session_state["example"] = ac.DEFAULT_PRESET.key
    st.session_state["sentence"] = DEFAULT_SENTENCE
    st.session_state["embedding"] = "printed"
    st.session_state["seed"] = str(DEFAULT_SEED)
    st.session_state["d_model"] = DEFAULT_D_MODEL
    st.session_state.pop("query", None)
    st.session_state.pop(EDITOR_KEY, None)
    st.session_state.pop("_editor_signature", None)


def _base_matrix(example: str, tokens: list[str], mode: str, seed: int, d_model: int) -> torch.Tensor:
    """The embeddings before any hand edits: (T, d_model)."""
    if mode == "one-hot":
        return ac.one_hot_embeddings(tokens)
    if mode == "trained":
        return trained.sidebar_embeddings(tuple(tokens), d_model)
    if example != OWN and mode in ("printed", "edited"):
        return PRESETS_BY_KEY[example].matrix()
    return ac.random_embeddings(tokens, d_model, seed)


def _edited_matrix(base: torch.Tensor, labels: list[str]) -> torch.Tensor:
    """Show the matrix in st.data_editor and return the validated edit (ValueError if bad)."""
    signature = (tuple(labels), tuple(base.reshape(-1).tolist()))
    if st.session_state.get("_editor_signature") != signature:
        st.session_state.pop(EDITOR_KEY, None)  # a new base matrix starts without old edits
        st.session_state["_editor_signature"] = signature
    with st.sidebar:
        st.caption("Type a number in any cell; the pages update when you leave the cell.")
        edited = matrix_editor(ac.vector_frame(base, labels), key=EDITOR_KEY, digits="{:.4g}")
    return ac.validate_embedding_matrix(edited, len(labels), base.shape[1])


def _read_tokens(example: str) -> list[str]:
    if example != OWN:
        return list(PRESETS_BY_KEY[example].tokens)
    sentence = st.sidebar.text_input(
        "Your sentence",
        value=DEFAULT_SENTENCE,
        key="sentence",
        bind="query-params",
        max_chars=60_000,
        help=f"Words are split at spaces; punctuation stays with its word. 1 to {MAX_TOKENS:,} tokens.",
    )
    st.sidebar.caption("A shared link contains the sentence you type here.")
    return ac.tokenize(sentence)


def _build_input() -> LabInput:
    """Draw the input widgets and build the LabInput; ValueError carries a learner-readable reason."""
    options = [*PRESETS_BY_KEY, OWN]
    example = st.sidebar.selectbox(
        "Example",
        options,
        format_func=_example_label,
        key="example",
        bind="query-params",
        on_change=_on_example_change,
    )
    tokens = _read_tokens(example)
    modes = _modes_for(example)
    mode = st.sidebar.radio("Embeddings", modes, format_func=EMBEDDING_MODES.get, key="embedding", bind="query-params")
    seed, d_model = DEFAULT_SEED, DEFAULT_D_MODEL
    if mode in ("random", "trained") or (mode == "edited" and example == OWN):
        d_model = st.sidebar.slider(
            "d_model (embedding size)", *D_MODEL_RANGE, DEFAULT_D_MODEL, key="d_model", bind="query-params"
        )
    if mode == "trained":
        st.sidebar.caption(trained.EXPLANATION)
    if mode == "random" or (mode == "edited" and example == OWN):
        seed_text = st.sidebar.text_input(
            "Seed",
            str(DEFAULT_SEED),
            key="seed",
            bind="query-params",
            max_chars=30,
            help="A whole number: the same seed always gives the same random embeddings.",
        )
        seed = parse_seed(seed_text)
    labels = ac.token_labels(tokens)
    X = _base_matrix(example, tokens, mode, int(seed), int(d_model))
    if mode == "edited":
        X = _edited_matrix(X, labels)
    preset = PRESETS_BY_KEY.get(example)
    default_query = preset.query_index if preset else 0
    query = st.sidebar.selectbox(
        "Query token",
        labels,
        index=default_query,
        key="query",
        bind="query-params",
        help="The word whose attention the pages work out in detail.",
    )
    source = preset.name if preset else "your sentence"
    return LabInput(
        tokens=tuple(tokens),
        labels=tuple(labels),
        X=X,
        query_index=labels.index(query),
        preset=preset,
        embedding_mode=mode,
        seed=int(seed),
        description=" · ".join(
            (source, EMBEDDING_MODES[mode].lower(), f"{plural(len(tokens), 'token')} × d_model {X.shape[1]}")
        ),
    )


def _link_values() -> dict[str, str]:
    """The input parameters a link arrived with (first run of a session only)."""
    if st.session_state.get("_link_checked"):
        return {}
    st.session_state["_link_checked"] = True
    return {key: st.query_params.get(key, "") for key in URL_KEYS if key in st.query_params}


def _shown_value(key: str) -> str:
    """What a bound widget holds now, written as its URL parameter would be."""
    value = st.session_state.get(key)
    if key == "example":
        return _example_label(value) if value in PRESETS_BY_KEY or value == OWN else ""
    if key == "embedding":
        return EMBEDDING_MODES.get(value, "")
    return "" if value is None else str(value)


def ignored_link_values(arrived: dict[str, str]) -> list[str]:
    """Link parameters Streamlit refused (invalid option, out of range) and replaced by defaults."""
    return [key for key, raw in arrived.items() if key in st.session_state and _shown_value(key) != raw]


def sidebar() -> LabInput:
    """Draw the shared sidebar and return the LabInput every page uses (the last good one on bad input)."""
    st.sidebar.header("Input")
    arrived = _link_values()
    try:
        lab = _build_input()
    except ValueError as error:
        st.session_state[PROBLEM_KEY] = str(error)
        lab = st.session_state.get(INPUT_KEY) or default_input()
        st.session_state[INPUT_KEY] = lab
    else:
        st.session_state.pop(PROBLEM_KEY, None)
        st.session_state[INPUT_KEY] = lab
    ignored = ignored_link_values(arrived)
    if ignored:
        st.session_state[LINK_NOTE_KEY] = (
            "This link had values the lab cannot use ("
            + ", ".join(f"{key} = {arrived[key][:40]!r}" for key in ignored)
            + "); the defaults are used instead."
        )
    st.sidebar.button("Reset to the default input", on_click=reset, icon=":material/restart_alt:")
    return lab


def link_note() -> str | None:
    """A note about link parameters that were replaced by defaults (shown once), or None."""
    return st.session_state.pop(LINK_NOTE_KEY, None)


def default_input() -> LabInput:
    """The default preset with its printed embeddings."""
    preset = ac.DEFAULT_PRESET
    labels = ac.token_labels(preset.tokens)
    return LabInput(
        preset.tokens,
        tuple(labels),
        preset.matrix(),
        preset.query_index,
        preset,
        "printed",
        DEFAULT_SEED,
        f"{preset.name} · as printed in the tutorial · {plural(len(labels), 'token')} × d_model {preset.d_model}",
    )


def current() -> LabInput:
    """The LabInput drawn by the sidebar in this run (pages call this)."""
    return st.session_state.get(INPUT_KEY) or default_input()


def problem() -> str | None:
    """Why the last input was refused, or None."""
    return st.session_state.get(PROBLEM_KEY)


# --- widgets the pages share ---------------------------------------------------------------------


def seed_input(label: str, key: str, container=st) -> int:
    """A seed for a page's own random matrices: a whole number, 0 by default."""
    return int(container.number_input(label, 0, 2**31 - 1, 0, step=1, key=key))


def scale_toggle(key: str, label: str = "Divide the scores by √d_k", container=st) -> bool:
    """Whether the scores are scaled by 1/√d_k (on by default)."""
    return bool(container.toggle(label, value=True, key=key))


def matrix_editor(frame: pd.DataFrame, *, key: str, digits: str = "{:.4f}") -> pd.DataFrame:
    """One editable matrix (st.data_editor with text cells, so a typo reaches the validator); returns the edit."""
    shown = frame.map(digits.format)
    return st.data_editor(
        shown,
        key=key,
        width="stretch",
        column_config={column: st.column_config.TextColumn(column) for column in shown.columns},
    )
