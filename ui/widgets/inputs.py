"""The shared sidebar: which sentence and embeddings every page works on, and the widgets pages share.

Drawn once per run by ``lab.py`` before the page, so its widgets keep their values
across pages. Input widgets are bound to the URL (``bind="query-params"``), hand edits travel in
``edits=`` (up to 256 numbers): a copied link opens the same numbers. A bound widget is changed
only through session state (so the box shows what is computed). Bad input shows an error and
the last good input stays. The weights colour scale is a view setting, not in the URL.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st
import torch

import attention_core as ac
from attention_core.embeddings import MAX_ABS_VALUE, MAX_TOKENS, parse_seed, value_limit_text
from attention_core.i18n import N_, _
from attention_core.presets import PRESETS_BY_KEY, Preset
from ui import charts
from ui.format import LearnerText
from ui.models import trained
from ui.widgets import url_controls
from ui.widgets.url_controls import (  # noqa: F401  (re-exported: a page's controls are inputs too)
    Choice,
    Number,
    Switch,
    Text,
    keep,
    kept,
    linked,
    number_input,
    radio,
    select_slider,
    selectbox,
    slider,
    text_area,
    text_input,
    toggle,
)

OWN = "own"
DEFAULT_SENTENCE = "the cat sat on the mat"
EMBEDDING_MODES = {  # shown with embedding_label(): translated where shown
    "printed": N_("As printed in the tutorial"),
    "random": N_("Random (seeded)"),
    "one-hot": N_("One-hot"),
    "edited": N_("Edit by hand"),
    "trained": N_("Trained (all-MiniLM-L6-v2)"),
}
D_MODEL_RANGE = (2, 16)
DEFAULT_D_MODEL = 4
DEFAULT_SEED = 0
EDITOR_KEY = "embedding_editor"
EDITS_KEY = "edits"  # URL parameter holding hand-edited embeddings
SOURCE_KEY = "_edit_source"  # the embeddings shown before "Edit by hand": the editor starts from them
MAX_LINK_NUMBERS = 256  # a link holds hand edits up to T × d_model = 256 numbers
MAX_EDIT_ABS = MAX_ABS_VALUE  # the one limit on hand edits, stated by value_limit_text (scores then pass 10^5)
EDIT_DTYPE = torch.float64  # hand edits are computed in float64: in float32, edits of about 100 that differ by
# 0.001 give scores of about 4e4 rounded to 0.004, and weights off in the 4th decimal (0.2795 for 0.2802)
INPUT_KEY = "_lab_input"
PROBLEM_KEY = "_input_problem"
LINK_NOTE_KEY = "_link_note"
REPEAT_NOTE_KEY = "_link_repeat_note"
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

    def __post_init__(self) -> None:
        """Labels are the learner's text: formatted into a caption or a message, they escape themselves."""
        object.__setattr__(self, "labels", tuple(LearnerText(label) for label in self.labels))

    @property
    def T(self) -> int:
        return len(self.tokens)

    @property
    def d_model(self) -> int:
        return int(self.X.shape[1])

    @property
    def query_label(self) -> str:
        return self.labels[self.query_index]

    @property
    def printed_preset(self) -> Preset | None:
        """The preset when its embeddings are as printed (so its tutorial's numbers apply), else None."""
        return self.preset if self.embedding_mode == "printed" else None


def _example_label(key: str) -> str:
    return _("Your own sentence") if key == OWN else f"{PRESETS_BY_KEY[key].name}"


def embedding_label(mode: str) -> str:
    """An embedding mode as the sidebar shows it, in the learner's language."""
    return _(EMBEDDING_MODES[mode])


def mode_text(mode: str) -> str:
    """The embedding mode inside a sentence: 'random (seeded)', but 'trained (all-MiniLM-L6-v2)' keeps its name."""
    label = embedding_label(mode)
    return label[0].lower() + label[1:]


def tokens_text(n: int) -> str:
    """'1 token', '6 tokens' (one whole phrase per form: a language without plurals writes both alike)."""
    return _("{n} token", n=n) if n == 1 else _("{n} tokens", n=n)


def input_description(source: str, mode: str, n_tokens: int, d_model: int) -> str:
    """'the cat sat … · random (seeded) · 6 tokens × d_model 4': which input the numbers come from."""
    return _(
        "{source} · {mode} · {tokens} × d_model {d_model}",
        source=source,
        mode=mode_text(mode),
        tokens=tokens_text(n_tokens),
        d_model=d_model,
    )


def _modes_for(example: str) -> list[str]:
    return [m for m in EMBEDDING_MODES if example != OWN or m != "printed"]


def default_query_label(example: str, sentence: str) -> str | None:
    """The query token an example starts with (the tutorial's query, or a sentence's first token); None if none."""
    if example in PRESETS_BY_KEY:
        preset = PRESETS_BY_KEY[example]
        return ac.token_labels(preset.tokens)[preset.query_index]
    try:
        return ac.token_labels(ac.tokenize(sentence))[0]
    except ValueError:
        return None


def _set_default_query(example: str) -> None:
    """Select the example's default query token through session state, so the bound box shows it too.

    Popping the key is not enough: the widget keeps its id (its key), so the browser would keep
    showing the old token while Python computes the default one.
    """
    label = default_query_label(example, st.session_state.get("sentence", DEFAULT_SENTENCE))
    if label is None:
        st.session_state.pop("query", None)
    else:
        st.session_state["query"] = label


def on_example_change() -> None:
    """A new example starts at its own defaults: its embeddings and the tutorial's query token."""
    example = st.session_state.get("example")
    st.session_state["embedding"] = st.session_state[SOURCE_KEY] = "random" if example == OWN else "printed"
    _set_default_query(example)


def reset() -> None:
    """Back to the default input: every bound widget to its default, edits dropped."""
    st.session_state["example"] = ac.DEFAULT_PRESET.key
    st.session_state["sentence"] = DEFAULT_SENTENCE
    st.session_state["embedding"] = "printed"
    st.session_state["seed"] = str(DEFAULT_SEED)
    st.session_state["d_model"] = DEFAULT_D_MODEL
    _set_default_query(ac.DEFAULT_PRESET.key)
    st.session_state[SOURCE_KEY] = "printed"
    st.session_state.pop(EDITOR_KEY, None)
    st.session_state.pop("_editor_signature", None)


def _base_matrix(example: str, tokens: list[str], mode: str, seed: int, d_model: int) -> torch.Tensor:
    """The embeddings before any hand edits: (T, d_model)."""
    if mode == "one-hot":
        return ac.one_hot_embeddings(tokens)
    if mode == "trained":
        return trained.sidebar_embeddings(tuple(tokens), d_model)
    if example != OWN and mode == "printed":
        return PRESETS_BY_KEY[example].matrix()
    return ac.random_embeddings(tokens, d_model, seed)


def _edit_source(example: str, mode: str) -> str:
    """The embeddings the editor starts from: the ones shown before "Edit by hand" was chosen."""
    if mode != "edited":
        st.session_state[SOURCE_KEY] = mode
        return mode
    source = st.session_state.get(SOURCE_KEY, "printed")
    return "random" if example == OWN and source == "printed" else source


def float32_text(x: float) -> str:
    """The shortest text that reads back as the same float32 ('0.1', '-2.5', '1e-07'): no rounding shown."""
    text = str(np.float32(x))
    return text[:-2] if text.endswith(".0") else text


def number_text(x: float) -> str:
    """The shortest text that reads back as the same float64 ('0.1', '99.999', '-2.5'): what the learner typed."""
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text


def encode_edits(X: torch.Tensor) -> str:
    """A matrix as compact URL text: values '_'-separated, rows '~'-separated, each in its shortest form."""
    text = float32_text if X.dtype == torch.float32 else number_text
    return "~".join("_".join(text(v) for v in row) for row in X.tolist())


def decode_edits(text: str, n_tokens: int, d_model: int) -> torch.Tensor:
    """The matrix a link's ``edits`` holds, validated like a typed edit (ValueError if it does not fit)."""
    if len(text) > 24 * MAX_LINK_NUMBERS:
        raise ValueError(_("The link's edits are too long."))
    rows = [row.split("_") for row in text.split("~")]
    if len({len(row) for row in rows}) != 1:
        raise ValueError(_("The link's edits do not form a table."))
    return ac.validate_embedding_matrix(rows, n_tokens, d_model, dtype=EDIT_DTYPE)  # refuses values past ±MAX_EDIT_ABS


def _editor_start(base: torch.Tensor, link_edits: str | None) -> torch.Tensor:
    """What the editor shows at first (float64): a link's edits when they fit this input, else the base embeddings
    as the numbers their shortest text reads (0.1234567, not float32's 0.12345670163...), so what is shown is
    exactly what is computed."""
    if link_edits:
        try:
            return decode_edits(link_edits, base.shape[0], base.shape[1])
        except ValueError as error:
            st.session_state[LINK_NOTE_KEY] = _(
                "This link's hand-edited embeddings cannot be used ({error}); the embeddings start from the "
                "example's own instead.",
                error=error,
            )
    shown = [[float(float32_text(v)) for v in row] for row in base.tolist()]
    return torch.tensor(shown, dtype=EDIT_DTYPE)  # (T, d_model)


def _edited_matrix(base: torch.Tensor, labels: list[str], link_edits: str | None) -> torch.Tensor:
    """Show the matrix in st.data_editor and return the validated edit (ValueError if bad)."""
    signature = (tuple(labels), tuple(base.reshape(-1).tolist()))
    if st.session_state.get("_editor_signature") != signature:
        st.session_state.pop(EDITOR_KEY, None)  # a new base matrix starts without old edits
        st.session_state["_editor_signature"] = signature
        st.session_state["_editor_start"] = _editor_start(base, link_edits)
    start = st.session_state["_editor_start"]
    with st.sidebar:
        limit = value_limit_text()
        st.caption(
            _(
                "Type a number in any cell; the pages update when you leave the cell. {limit} Scroll sideways for "
                "more columns.",
                limit=limit[0].upper() + limit[1:],
            )
        )
        edited = matrix_editor(ac.vector_frame(start, labels), key=EDITOR_KEY, digits=None)
    X = ac.validate_embedding_matrix(edited, len(labels), base.shape[1], dtype=EDIT_DTYPE)
    _link_edits(X, base)
    return X


def _link_edits(X: torch.Tensor, base: torch.Tensor) -> None:
    """Put the edits in the URL (so a copied link holds them) up to MAX_LINK_NUMBERS numbers; say so."""
    if torch.equal(X.to(base.dtype), base):
        st.query_params.pop(EDITS_KEY, None)
    elif X.numel() <= MAX_LINK_NUMBERS:
        st.query_params[EDITS_KEY] = encode_edits(X)
        st.sidebar.caption(_("A copied link holds these edited embeddings."))
    else:
        st.query_params.pop(EDITS_KEY, None)
        st.sidebar.warning(
            _(
                "A copied link does not hold these edits: links hold at most {most} numbers (T × d_model), this "
                "matrix has {count}.",
                most=MAX_LINK_NUMBERS,
                count=X.numel(),
            ),
            icon=":material/link_off:",
        )


def _read_tokens(example: str) -> list[str]:
    if example != OWN:
        return list(PRESETS_BY_KEY[example].tokens)
    sentence = st.sidebar.text_input(
        _("Your sentence"),
        value=DEFAULT_SENTENCE,
        key="sentence",
        bind="query-params",
        help=_(
            "Words are split at spaces; punctuation stays with its word. In Chinese (or Japanese, Korean) each "
            "character is a token and punctuation is dropped. 1 to {most} tokens.",
            most=f"{MAX_TOKENS:,}",
        ),
    )
    st.sidebar.caption(_("A shared link contains the sentence you type here."))
    return ac.tokenize(sentence)


def _build_input(link_edits: str | None = None) -> LabInput:
    """Draw the input widgets and build the LabInput; ValueError carries a learner-readable reason."""
    options = [*PRESETS_BY_KEY, OWN]
    example_choice = url_controls.Choice(tuple(options), _example_label)
    url_controls.register("example", example_choice, options[0])  # written again in a new language
    url_controls.translate_arrived("example", example_choice)  # a link's value in another language
    example = st.sidebar.selectbox(
        _("Example"),
        options,
        format_func=_example_label,
        key="example",
        bind="query-params",
        on_change=on_example_change,
    )
    tokens = _read_tokens(example)
    modes = _modes_for(example)
    mode_choice = url_controls.Choice(tuple(EMBEDDING_MODES), embedding_label)
    url_controls.register("embedding", mode_choice, modes[0])
    url_controls.translate_arrived("embedding", mode_choice)
    mode = st.sidebar.radio(_("Embeddings"), modes, format_func=embedding_label, key="embedding", bind="query-params")
    source = _edit_source(example, mode)
    if mode != "edited":
        st.query_params.pop(EDITS_KEY, None)
        if link_edits:
            st.session_state[LINK_NOTE_KEY] = _(
                "This link's hand-edited embeddings (edits=) were left out: they apply only with Embeddings "
                "“{edited}”, and the link asks for “{asked}”.",
                edited=embedding_label("edited"),
                asked=embedding_label(mode),
            )
    seed, d_model = DEFAULT_SEED, DEFAULT_D_MODEL
    if source in ("random", "trained"):  # random or trained embeddings, or an edit of them
        d_model = st.sidebar.slider(
            _("d_model (embedding size)"), *D_MODEL_RANGE, DEFAULT_D_MODEL, key="d_model", bind="query-params"
        )
    if source == "trained":
        reason = trained.load_problem()
        if reason is None:
            st.sidebar.caption(_(trained.EXPLANATION))
        else:  # fall back to random embeddings of the same sentence, and say so
            st.sidebar.warning(
                _(
                    "Trained embeddings are unavailable: {reason} The pages use random (seeded) embeddings instead; "
                    "the other embeddings all work.",
                    reason=reason,
                ),
                icon=":material/warning:",
            )
            source = "random"
            if mode == "trained":
                mode = "random"
    if source == "random":
        seed_text = st.sidebar.text_input(
            _("Seed"),
            str(DEFAULT_SEED),
            key="seed",
            bind="query-params",
            help=_("A whole number: the same seed always gives the same random embeddings."),
        )
        seed = parse_seed(seed_text)
    labels = ac.token_labels(tokens)
    X = _base_matrix(example, tokens, source, int(seed), int(d_model))
    if mode == "edited":
        X = _edited_matrix(X, labels, link_edits)
    preset = PRESETS_BY_KEY.get(example)
    default_query = preset.query_index if preset else 0
    query = st.sidebar.selectbox(
        _("Query token"),
        labels,
        index=default_query,
        key="query",
        bind="query-params",
        help=_("The word whose attention the pages work out in detail."),
    )
    source = preset.name if preset else _("your sentence")
    return LabInput(
        tokens=tuple(tokens),
        labels=tuple(labels),
        X=X,
        query_index=labels.index(query),
        preset=preset,
        embedding_mode=mode,
        seed=int(seed),
        description=input_description(source, mode, len(tokens), int(X.shape[1])),
    )


def _link_values() -> dict[str, str]:
    """The input parameters a link arrived with (first run of a session only); a repeated one is noted."""
    if st.session_state.get("_link_checked"):
        return {}
    st.session_state["_link_checked"] = True
    keys = [key for key in (*URL_KEYS, EDITS_KEY) if key in st.query_params]
    repeated = [key for key in keys if len(st.query_params.get_all(key)) > 1]
    if repeated:
        repeats = [_("{key}= {count} times", key=key, count=len(st.query_params.get_all(key))) for key in repeated]
        st.session_state[REPEAT_NOTE_KEY] = _(
            "This link gives {repeats}; the lab uses the last one ({used}).",
            repeats=", ".join(repeats),
            used=", ".join(f"{key} = {st.query_params.get(key, '')[:40]!r}" for key in repeated),
        )
    return {key: st.query_params.get(key, "") for key in keys}


def _shown_value(key: str) -> str:
    """What a bound widget holds now, written as its URL parameter would be."""
    value = st.session_state.get(key)
    if key == "example":
        return _example_label(value) if value in PRESETS_BY_KEY or value == OWN else ""
    if key == "embedding":
        return embedding_label(value) if value in EMBEDDING_MODES else ""
    return "" if value is None else str(value)


def ignored_link_values(arrived: dict[str, str]) -> list[str]:
    """Link parameters Streamlit refused (invalid option, out of range) and replaced by defaults."""
    return [key for key, raw in arrived.items() if key in st.session_state and _shown_value(key) != raw]


def sidebar() -> LabInput:
    """Draw the shared sidebar and return the LabInput every page uses (the last good one on bad input)."""
    url_controls.new_run()  # the lesson controls' notes on a link's values may be drawn again
    st.sidebar.header(_("Input"))
    arrived = _link_values()
    try:
        lab = _build_input(arrived.pop(EDITS_KEY, None))
    except ValueError as error:
        st.session_state[PROBLEM_KEY] = str(error)
        lab = st.session_state.get(INPUT_KEY) or default_input()
        st.session_state[INPUT_KEY] = lab
    else:
        st.session_state.pop(PROBLEM_KEY, None)
        st.session_state[INPUT_KEY] = lab
    ignored = ignored_link_values(arrived)
    if ignored:
        earlier = st.session_state.get(LINK_NOTE_KEY)
        st.session_state[LINK_NOTE_KEY] = (f"{earlier} " if earlier else "") + _(
            "This link had values the lab cannot use ({values}); the defaults are used instead.",
            values=", ".join(f"{key} = {arrived[key][:40]!r}" for key in ignored),
        )
    st.sidebar.button(_("Reset to the default input"), on_click=reset, icon=":material/restart_alt:")
    weights_scale_choice()
    return lab


def weights_scale_choice() -> None:
    """How weight heatmaps colour their cells (a view setting: not part of the input, not in the URL)."""
    st.sidebar.radio(
        _("Weights colour scale"),
        list(charts.WEIGHTS_SCALES),
        format_func=lambda scale: _(charts.WEIGHTS_SCALES[scale]),
        key=charts.WEIGHTS_SCALE_KEY,
        horizontal=True,
        help=_(
            "Stretch: the darkest and brightest colours are the smallest and largest weight shown, so weights "
            "of 0.10 and 0.25 look clearly different. Fixed: 0 is dark and 1 is yellow on every chart."
        ),
    )


def link_note() -> str | None:
    """A note about link parameters that were repeated, left out or replaced by defaults (shown once), or None."""
    notes = [st.session_state.pop(key, None) for key in (REPEAT_NOTE_KEY, LINK_NOTE_KEY)]
    return " ".join(note for note in notes if note) or None


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
        input_description(preset.name, "printed", len(labels), preset.d_model),
    )


def current() -> LabInput:
    """The LabInput drawn by the sidebar in this run (pages call this)."""
    return st.session_state.get(INPUT_KEY) or default_input()


def problem() -> str | None:
    """Why the last input was refused, or None."""
    return st.session_state.get(PROBLEM_KEY)


# --- widgets the pages share ---------------------------------------------------------------------


SEED = url_controls.Number(0, 2**31 - 1)  # what a page's seed takes (a link's seed= is checked against it)


def seed_input(label: str, key: str, container=st, help: str | None = None) -> int:
    """A seed for a page's own random matrices: a whole number, 0 by default, in the URL as ``key``."""
    seed = url_controls.number_input(label, SEED.low, SEED.high, 0, step=1, key=key, help=help, container=container)
    return int(seed)


def scale_toggle(key: str, label: str = N_("Divide the scores by √d_k"), container=st) -> bool:
    """Whether the scores are scaled by 1/√d_k (on by default), in the URL as ``key``; ``label`` in the learner's
    language (the default, or a page's label, translated here)."""
    return url_controls.toggle(_(label), value=True, key=key, container=container)


def matrix_editor(frame: pd.DataFrame, *, key: str, digits: str | None = "{:.4f}") -> pd.DataFrame:
    """One editable matrix (st.data_editor with text cells, so a typo reaches the validator); returns the edit.

    ``digits=None`` shows each number in full (its shortest form), so nothing is rounded on entry.
    Every column keeps a readable width; a wide matrix scrolls sideways.
    """
    shown = frame.map(number_text if digits is None else digits.format)
    return st.data_editor(
        shown,
        key=key,
        width="stretch",
        column_config={column: st.column_config.TextColumn(column, width=72) for column in shown.columns},
    )


# --- an experiment's settings (the lessons' 'Set it up' buttons) -------------------------------------------------


def open_step_key(lesson: str) -> str:
    """The session key of the step a 'Set it up' button asks its lesson to open next (a step's name)."""
    return f"_open_step:{lesson}"


def apply(settings: tuple[tuple[str, object], ...], lesson: str = "", step: str = "") -> None:
    """Set the widget values of an experiment (runs as a button callback, before any widget is drawn); when the
    widgets live in one step of the lesson, open that step so the learner sees what changed."""
    if lesson and step:
        st.session_state[open_step_key(lesson)] = step
    for key, value in settings:
        st.session_state[key] = value
        if key == "example":
            on_example_change()  # a new example starts at its own embeddings and query
