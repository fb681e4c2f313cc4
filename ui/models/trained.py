"""The trained model for the app: loaded when a page asks for it, one forward pass cached per sentence.

Importing this module does not import safetensors or tokenizers; the first call to ``model()`` does (the app
never imports transformers: ``attention_core.bert`` runs the published weights). The model
folder is the installed package's, or ``ATTENTION_LAB_MODEL_DIR`` (the fault tests point it at a
folder with a broken file).

The model (its mapped weights and tokenizer) and its vocabulary PCA are let go when no connected session is on a
page that used them (``runtime.memory``); the next page that asks loads them again.
"""

from __future__ import annotations

import dataclasses
import os

import altair as alt
import streamlit as st
import torch

from attention_core import i18n
from attention_core import trained_model as tm
from attention_core.i18n import N_, _
from runtime import memory
from runtime.cache import process_cache
from ui import charts
from ui.format import format_number

FOLDER_VARIABLE = "ATTENTION_LAB_MODEL_DIR"
EXPLANATION = N_(  # shown in the sidebar through _()
    "Trained embeddings: each word gets all-MiniLM-L6-v2's own input embedding (384 numbers learned in "
    "training; a word the tokenizer splits into pieces gets the average of its pieces). A principal component "
    "analysis fitted once on the model's whole 30,522-piece vocabulary keeps the d_model directions along which "
    "those embeddings vary most (each direction's sign fixed, scaled so the first has spread 1), so related "
    "words such as river, water and bank get vectors pointing the same way and the scores mean something. "
    "The first load takes a few seconds."
)


def folder_setting() -> str:
    """The model folder to use: the environment override, or '' for the installed package's."""
    return os.environ.get(FOLDER_VARIABLE, "")


LIFETIME = "all-MiniLM-L6-v2"  # its name in runtime.memory

# The spinners of the cached functions below are drawn by the functions' bodies, which run only on a miss: a
# decorator's show_spinner text is fixed when the module is imported, so it could not follow the learner's language.


@st.cache_resource(show_spinner=False, max_entries=2)
def _load(folder: str) -> tm.TrainedModel | str:
    """The loaded model, or the reason it cannot be used (cached either way: no retry storm)."""
    with st.spinner(_("Loading all-MiniLM-L6-v2…")):
        try:
            return tm.load_model(folder or None)
        except tm.ModelUnavailable as error:
            return str(error)


def model() -> tm.TrainedModel:
    """The loaded model (read-only); raises tm.ModelUnavailable with the reason if it cannot load."""
    memory.held(LIFETIME)  # before loading: a session's hold keeps another session's run end from letting it go
    loaded = _load(folder_setting())
    if isinstance(loaded, str):
        raise tm.ModelUnavailable(loaded)
    return loaded


@st.cache_resource(show_spinner=False, max_entries=2)
def _pca(folder: str) -> tm.VocabularyPCA:
    """The vocabulary PCA of the loaded model's input word embeddings."""
    embeddings = model().model.word_embeddings
    with st.spinner(_("Fitting a PCA on the model's vocabulary…")):
        return tm.fit_vocabulary_pca(embeddings)


@st.cache_data(max_entries=128, show_spinner=False)
def embeddings(tokens: tuple[str, ...], d_model: int) -> torch.Tensor:
    """Trained (T, d_model) embeddings of the sidebar's tokens (ModelUnavailable if the model cannot load)."""
    return tm.trained_embeddings(model(), _pca(folder_setting()), list(tokens), d_model)


def load_problem() -> str | None:
    """Why the trained model cannot be used here (the sidebar falls back to other embeddings), or None."""
    try:
        model()
    except tm.ModelUnavailable as error:
        return str(error)
    return None


def sidebar_embeddings(tokens: tuple[str, ...], d_model: int) -> torch.Tensor:
    """Trained embeddings for the sidebar; ValueError with the reason if the model cannot be used."""
    try:
        return embeddings(tokens, d_model)
    except tm.ModelUnavailable as error:
        raise ValueError(_("Trained embeddings are unavailable: {reason}", reason=error)) from error


# A forward of 128 pieces holds about 6 MB (72 heads of 128 x 128 weights and the hidden states): 8 sentences
# are 50 MB; the other caches below hold a few kilobytes per sentence.
@st.cache_data(max_entries=8, show_spinner=False)
def forward(sentence: str) -> tm.Forward:
    """The sentence through the model (ValueError if refused), cached per sentence."""
    loaded = model()
    with st.spinner(_("Running the sentence through the model…")):
        return tm.run_forward(loaded, sentence)


@st.cache_data(max_entries=32, show_spinner=False)
def independent_check(sentence: str) -> tm.IndependentCheck:
    """All 72 heads by hand, and the lab's forward, against attention_core.independent (a few kilobytes)."""
    loaded, result = model().model, forward(sentence)
    with st.spinner(_("Checking every head against independent code…")):
        return tm.independent_check(loaded, result)


# the lesson's step with the grid of every head (a step name: ui.registry's "Try this" opens it by this name)
EXPLORER_STEP = N_("All 72 heads")
assert f"All {tm.ALL_HEADS} heads" == EXPLORER_STEP, "the step name follows the model's size"

# how a pattern's key reads in a sentence ("put most weight on the next piece")
PATTERN_WORDS = {  # shown through _()
    "CLS": "[CLS]",
    "SEP": "[SEP]",
    "previous": N_("the previous piece"),
    "next": N_("the next piece"),
    "same": N_("the piece itself"),
}
CLAIM_PATTERNS = ("previous", "next", "CLS")  # the heads the "Try this" box opens


@st.cache_data(max_entries=32, show_spinner=False)
def head_summaries(sentence: str) -> list[list[tm.HeadSummary]]:
    """Every head's measured figures on this sentence: (layers, heads) of HeadSummary."""
    return tm.head_summary_grid(forward(sentence).attentions)


SHORT_NAMES = {"previous": "prev"}  # a grid label has about 14 characters of room


def label_text(summary: tm.HeadSummary) -> str:
    """A head's short label with the figure behind it: 'next 0.62' (mean share), 'weak CLS 0.37', 'broad CLS 0.18'."""
    figure = f"{SHORT_NAMES.get(summary.pattern, summary.pattern)} {format_number(summary.share, 2)}"
    if summary.label == summary.pattern:
        return figure
    return f"{'broad' if summary.label == 'broad' else 'weak'} {figure}"


@st.cache_data(max_entries=32, show_spinner=False)
def head_labels(sentence: str) -> list[list[str]]:
    """Every head's label text on this sentence (label_text): (layers, heads) of strings."""
    return [[label_text(summary) for summary in row] for row in head_summaries(sentence)]


def label_names(sentence: str) -> list[list[str]]:
    """Every head's label name (one of tm.HEAD_LABELS) on this sentence."""
    return [[summary.label for summary in row] for row in head_summaries(sentence)]


@st.cache_data(max_entries=32, show_spinner=False)
def claims(sentence: str) -> list[tuple[str, int, int, tm.RowsOn]]:
    """For each of CLAIM_PATTERNS: (pattern, layer, head, rows on it), the head (0-based) that follows it most."""
    attentions = forward(sentence).attentions
    return [(pattern, *tm.strongest_head(attentions, pattern)) for pattern in CLAIM_PATTERNS]


@st.cache_data(max_entries=32, show_spinner=False)
def word_pieces(words: tuple[str, ...]) -> list[tuple[int, ...]]:
    """Each sidebar word's pieces (indices into the forward's pieces) in the sentence " ".join(words)."""
    return tm.word_pieces(model().tokenizer, words)


def query_piece(words: tuple[str, ...], query_index: int) -> tm.QueryPiece:
    """The piece that stands for the sidebar's query word."""
    return tm.query_piece(word_pieces(words), query_index)


@st.cache_data(max_entries=64, show_spinner=False)
def heads_linking(sentence: str, query: int, key: int):
    """Every head ranked by the weight piece ``query`` puts on piece ``key``: layer, head (1-based), weight."""
    return tm.heads_linking(forward(sentence).attentions, query, key)


@st.cache_data(max_entries=32, show_spinner=False)
def head_steps(sentence: str, layer: int, head: int) -> tuple[tm.HeadParams, tm.HeadSteps]:
    """One head's parameters and its recomputation on this sentence."""
    params = tm.head_params(model().model, layer, head)
    return own_storage(params), tm.head_by_hand(forward(sentence).hidden_states[layer], params)


def own_storage(params: tm.HeadParams) -> tm.HeadParams:
    """The head's slices, each with a storage of its own (same numbers, same strides): st.cache_data pickles a
    tensor's whole storage, and a slice shares its layer's, so each kept head held three 384 x 384 weights (1.7 MB,
    issue 37) where it needs three 384 x 64."""
    return tm.HeadParams(**{field.name: getattr(params, field.name).clone() for field in dataclasses.fields(params)})


@st.cache_resource(show_spinner=False)
def published() -> tuple[torch.Tensor, float]:
    """The published similarities reproduced by the loaded model, and the largest difference."""
    return tm.published_check(model())


GRID_CELLS, HIGHLIGHT_DATA = "cells", "highlight"  # the grid's named datasets: its cells, the frame's one row


@process_cache(16)
def grid_spec(sentence: str, pick: str, labelled: bool = True, language: str = i18n.SOURCE_LANGUAGE) -> dict:
    """The all-heads grid's Vega-Lite spec, built once per sentence and language (its description and tooltips
    are in the learner's language, ``language``: i18n.current()): the cells in the named dataset GRID_CELLS as
    Arrow bytes (converted once, not per rerun), the label layers inline (``labelled`` False: blank, while a
    question asks for a head's label)."""
    forward_result = forward(sentence)
    cells = tm.grid_frame(forward_result.attentions)
    cells = cells.astype({"layer": "int8", "head": "int8", "row_pos": "int16", "col_pos": "int16", "value": "float32"})
    texts = head_labels(sentence) if labelled else [["" for _label in row] for row in head_labels(sentence)]
    labels = tm.label_frame(texts)  # the label texts, with their figures
    chart = charts.all_heads_grid(cells, labels, len(forward_result.pieces), pick=pick)
    with alt.data_transformers.enable("default", max_rows=None):  # validated in tests/test_pages.py, not per build
        spec = chart.to_dict(validate=False)
    spec, _data = charts.split_data(spec)  # the label layers inline; the cells layers read the top-level data
    return {**spec, "data": {"name": GRID_CELLS}, "datasets": {GRID_CELLS: charts.arrow_bytes(cells)}}


@process_cache(1)
def highlight_layer() -> dict:
    """The orange frame around a head, as a layer to add to ``grid_spec``'s spec. It reads the named dataset
    HIGHLIGHT_DATA, so the spec is the same for every head: the browser puts that one row into the drawn grid
    instead of drawing the 72-head chart anew."""
    return charts.named_layer(charts.grid_highlight(1, 1), HIGHLIGHT_DATA)  # a fixed 1-row layer, tested once


def grid_with_highlight(sentence: str, pick: str, layer: int, head: int, labelled: bool = True) -> dict:
    """The grid's spec with the chosen head framed; only the frame's dataset differs from head to head."""
    spec = grid_spec(sentence, pick, labelled, i18n.current())
    frame = charts.arrow_bytes(charts.grid_highlight_frame(layer, head))
    datasets = {**spec["datasets"], HIGHLIGHT_DATA: frame}
    return {**spec, "layer": [*spec["layer"], highlight_layer()], "datasets": datasets}


def release() -> None:
    """Let the model go, with its vocabulary PCA and published check (runtime.memory calls this when no session
    holds it)."""
    for cached in (_load, _pca, published):
        cached.clear()


memory.lifetime(LIFETIME, release)
