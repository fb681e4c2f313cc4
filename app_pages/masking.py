"""Lesson 6: masking, which keys a query may attend to, and three ways to enforce it."""

from __future__ import annotations

import math
from dataclasses import replace

import pandas as pd
import streamlit as st
import torch

import attention_core as ac
from attention_core import i18n
from attention_core.exercises import MaskedShown
from attention_core.i18n import N_, _
from attention_core.masks import (
    MASK_TYPES,
    PAD,
    UNDERFLOW_GAP,
    MaskChoice,
    MaskedAttention,
    Padded,
    block_query_row,
    blocked_count,
    blocked_weight,
    fully_masked_rows,
    mask_by_kind,
    mask_phrase,
    masked_attention,
    masking_methods,
    method_differences,
    pad_to_length,
    softmax_after_constant,
    underflow_example,
)
from attention_core.normalization import softmax_row_steps
from attention_core.reference import agreement, sdpa_reference
from attention_core.tables import to_frame, token_labels
from ui import charts, page
from ui.page import (
    MAX_TERMS,
    exercises_section,
    format_number,
    lesson_steps,
    vector_text,
    weighted_vectors_text,
    written_sum,
)
from ui.widgets import inputs
from ui.widgets.inputs import Choice, LabInput, Number, Switch, keep, linked

METHOD_LABELS = {  # translated where shown
    "neg_inf": N_("−∞, then torch.softmax"),
    "minus_1e9": N_("−1e9, then softmax"),
    "minus_9e15": N_("−9e15, then softmax (as the scaled_dot_product tutorial)"),
    "multiply": N_("softmax, × mask, renormalise"),
    "lab": N_("the lab (= SDPA)"),
}
METHOD_SHORT = {
    "neg_inf": "1. −∞",
    "minus_1e9": "2. −1e9",
    "minus_9e15": "2. −9e15",
    "multiply": N_("3. × mask"),
    "lab": N_("lab"),
}
METHOD_ROWS = {  # the methods compared with the lab's weights, as the table's rows name them
    "neg_inf": N_("1. −∞, then torch.softmax"),
    "minus_1e9": N_("2. −1e9, then softmax"),
    "minus_9e15": N_("2. −9e15, then softmax"),
    "multiply": N_("3. softmax, × mask, renormalise"),
}
MASK_TYPE_LABELS = {  # the mask types (attention_core.masks.MASK_TYPES) as the radio and the URL show them
    "none": N_("None"),
    "causal": N_("Causal"),
    "padding": N_("Padding"),
    "sliding window": N_("Sliding window"),
}
MASK_KINDS = {  # the mask types inside a sentence ("the causal mask")
    "none": N_("none"),
    "causal": N_("causal"),
    "padding": N_("padding"),
    "sliding window": N_("sliding window"),
}
BLOCKED = N_("−∞ (blocked)")  # translated where shown
MAX_PADS = 8  # [PAD] tokens the learner may append
SIDE_BY_SIDE_TOKENS = 6  # up to this many tokens (padding included) the two mask conventions share a row
MASK_CODE = {  # the functions that build each mask type, shown only when that type runs
    "none": (ac.no_mask,),
    "causal": (ac.causal_mask,),
    "padding": (pad_to_length, ac.padding_mask),
    "sliding window": (ac.sliding_window_mask,),
}


def method_label(name: str) -> str:
    """A masking method's full name, as a table's column shows it."""
    return _(METHOD_LABELS[name])


def method_columns() -> dict:
    """Short headers (the full name on hover), so the methods side by side fit a step's width."""
    return {
        method_label(name): st.column_config.Column(_(short), help=method_label(name))
        for name, short in METHOD_SHORT.items()
    }


def mask_type_label(kind: str) -> str:
    """A mask type as the radio shows it (and the URL holds it), in the learner's language."""
    return _(MASK_TYPE_LABELS[kind])


def render(lab: LabInput) -> None:
    # the outline: the mask chosen (drawn in the step "Choose a mask", kept in the others), one core call, the steps
    page.lesson_title(__file__)
    choice = chosen_mask(lab)
    masked = masked_attention(lab.tokens, lab.X, choice, lab.query_index)  # padded X, the masks and every step
    padded = with_padding(lab, masked.padded)  # the [PAD] tokens get rows and columns like the words
    named: dict[str, bool] = {}  # whether a step has already said which mask runs (the whole lesson says it once)
    lesson_steps(
        __file__,
        {
            N_("Why mask"): lambda: intro(lab, keeping=True),
            N_("Choose a mask"): lambda: choose_step(lab, padded, masked, choice, named),
            N_("Two conventions"): lambda: conventions_step(padded, masked, choice, named),
            N_("Masked scores"): lambda: masked_scores_step(padded, masked, choice, named),
            N_("Masked weights"): lambda: masked_weights_step(padded, masked, choice, named),
            N_("Step by step"): lambda: step_by_step(padded, masked, choice, named),
            N_("Mask off"): lambda: mask_off_step(padded, masked, choice, named),
            N_("Three ways"): lambda: three_ways_step(padded, masked, choice, named),
            N_("Fully masked row"): lambda: fully_masked_step(padded, masked, choice, named),
        },
    )


CONTROLS = ("masking_type", "masking_pads", "masking_window", "masking_enabled", "masking_full_row")
MASK_DEFAULTS = {"masking_type": "causal", "masking_pads": 2, "masking_enabled": True, "masking_full_row": False}


def chosen_mask(lab: LabInput) -> MaskChoice:
    """The mask chosen in the step "Choose a mask": its widgets' values (kept by the other steps), or their
    defaults."""
    kind = linked("masking_type", MASK_DEFAULTS["masking_type"], Choice(MASK_TYPES, mask_type_label), _("Mask type"))
    window = 1
    if kind == "sliding window" and lab.T > 1:
        window = min(int(linked("masking_window", min(3, lab.T), Number(1, lab.T), _("Window w"))), lab.T)
        if st.session_state.get("masking_window", window) != window:  # a shorter sentence than the window
            st.session_state["masking_window"] = window
    pads = 0
    if kind == "padding":
        pads = int(linked("masking_pads", MASK_DEFAULTS["masking_pads"], Number(0, MAX_PADS), _("Append [PAD] tokens")))
    enabled = bool(linked("masking_enabled", MASK_DEFAULTS["masking_enabled"], Switch(), _("Apply the mask")))
    demo_row = bool(linked("masking_full_row", MASK_DEFAULTS["masking_full_row"], Switch(), _("Block every key")))
    return MaskChoice(kind, pads, window, enabled, demo_row)


def name_the_mask(choice: MaskChoice, named: dict[str, bool]) -> None:
    """One caption naming the mask the step uses and where to change it (once per run)."""
    if not named:
        keep(*CONTROLS)  # the mask's widgets are in the step "Choose a mask": a visit here forgets nothing
        st.caption(
            _("This step uses {mask}: change it in the step “Choose a mask”.", mask=mask_label(choice))
            if choice.enabled
            else _("The mask is switched off in the step “Choose a mask”: here every query sees every key.")
        )
        named["mask"] = True


def choose_step(
    lab: LabInput, padded: LabInput, masked: MaskedAttention, choice: MaskChoice, named: dict[str, bool]
) -> None:
    """The mask's controls, what they mean right now, and the mask itself."""
    controls(lab)  # the widgets hold the values chosen_mask read: drawn here, kept in the other steps
    named["mask"] = True
    with page.slot():
        status(padded.labels, choice.enabled, masked.empty_rows)
    mask_view(padded, masked.steps, masked.mask, choice)


def conventions_step(lab: LabInput, masked: MaskedAttention, choice: MaskChoice, named: dict[str, bool]) -> None:
    name_the_mask(choice, named)
    conventions(lab.labels, masked.mask, choice, masked.padded)


def masked_scores_step(lab: LabInput, masked: MaskedAttention, choice: MaskChoice, named: dict[str, bool]) -> None:
    """Masked scores, and the question on how many keys a row keeps."""
    name_the_mask(choice, named)
    masked_scores(lab, masked.steps, masked.active)
    masking_exercises(lab, masked, choice, ("non-zero",))


def masked_weights_step(lab: LabInput, masked: MaskedAttention, choice: MaskChoice, named: dict[str, bool]) -> None:
    """The query's masked scores, the questions on its weights, then (once they are answered) the weights."""
    name_the_mask(choice, named)
    query_masked_scores(lab, masked.steps)
    if masking_exercises(lab, masked, choice, ("masked-weight", "masked-top")):
        masked_weights(lab, masked.steps, masked.empty_rows)


def masking_exercises(lab: LabInput, masked: MaskedAttention, choice: MaskChoice, places: tuple[str, ...]) -> bool:
    """The lesson's questions on the masked attention, those of ``places``; whether they are settled."""
    return exercises_section(
        __file__,
        lab,
        material=MaskedShown(
            tuple(lab.labels), masked.active, masked.steps, mask_name(choice), lab.query_index, choice=choice
        ),
        places=places,
    )


def step_by_step(lab: LabInput, masked: MaskedAttention, choice: MaskChoice, named: dict[str, bool]) -> None:
    name_the_mask(choice, named)
    worked_example(lab, masked.steps, masked.active, masked.empty_rows)
    all_contexts(lab.labels, masked.steps, masked.active)


def mask_off_step(lab: LabInput, masked: MaskedAttention, choice: MaskChoice, named: dict[str, bool]) -> None:
    name_the_mask(choice, named)
    pitfall_mask_off(lab, masked.mask, choice)


def three_ways_step(lab: LabInput, masked: MaskedAttention, choice: MaskChoice, named: dict[str, bool]) -> None:
    name_the_mask(choice, named)
    methods_compared(lab, masked.steps, masked.mask)
    underflow_demo()


def fully_masked_step(lab: LabInput, masked: MaskedAttention, choice: MaskChoice, named: dict[str, bool]) -> None:
    """What each method does with a row that may attend to nothing, and the code of the lesson."""
    name_the_mask(choice, named)
    st.markdown(_("The methods also differ on a **fully masked row**:"))
    fully_masked_row_demo(lab, masked.steps, masked.mask)
    page.show_code(
        masked_attention,
        mask_by_kind,
        *MASK_CODE[choice.kind],
        ac.apply_mask,
        ac.softmax,
        masked_attention,
        masking_methods,
        ac.multiply_and_renormalize,
        blocked_weight,
    )


def mask_name(choice: MaskChoice) -> str:
    """The mask the weights use, as the exercises' material names it: in English, whatever the page's language (the
    exercises' ids hash it; they show it with ``mask_label``)."""
    with i18n.using(i18n.SOURCE_LANGUAGE):
        return mask_phrase(choice)


def mask_label(choice: MaskChoice) -> str:
    """The mask the weights use, as the page names it, in the learner's language."""
    return mask_phrase(choice)


def with_padding(lab: LabInput, padded: Padded) -> LabInput:
    """The input with the [PAD] tokens appended, for this page's computation only (the query stays)."""
    pad_labels = token_labels(padded.tokens)[lab.T :]
    return replace(lab, tokens=padded.tokens, labels=(*lab.labels, *pad_labels), X=padded.X)


def weight_text(value: float) -> str:
    """A weight as text: 4 decimals, NaN named as the 0/0 it comes from (this page demonstrates it)."""
    return "NaN (0/0)" if math.isnan(value) else format_number(value)


def masked_score_text(value: float) -> str:
    """A masked score as text: −∞ is labelled as a blocked cell, never a bare 'inf'."""
    return _(BLOCKED) if value == -math.inf else format_number(value)


def intro(lab: LabInput, *, keeping: bool = False) -> None:
    """Why mask, and the formula (``keeping``: the mask's widgets keep their values through it)."""
    if keeping:
        keep(*CONTROLS)
    st.markdown(
        _(
            """
So far every token could look at every other token. Often it must not:

* a **decoder** (GPT-style) generates text left to right, so while it is trained to predict the
  next word, a token must not look at the words after it: that would be reading the answer
  (**causal** mask);
* sentences of different lengths are batched together by appending **padding** tokens (`[PAD]`), which
  carry no meaning and must get no attention (**padding** mask, PyTorch's `key_padding_mask`);
* each token may only look at its neighbours (**sliding window**). That is cheaper only with a kernel
  that computes just the band (T · w scores); a dense mask, as on this page, still computes all T²
  scores and then blocks most of them, so it costs O(T²) like no mask at all.

A mask says, for every query *i* and key *j*, whether *i* may attend to *j*. Blocked scores are
set to −∞ before softmax; since e^−∞ = 0, a blocked key gets a weight of exactly 0 and the
remaining weights still add up to 1.
"""
        )
    )
    st.latex(
        r"\text{weights} = \operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}} + M\right),\qquad "
        r"M_{ij} = \begin{cases} 0 & \text{if } i \text{ may attend to } j \\ -\infty & \text{if blocked} \end{cases}"
    )
    page.lesson_caption(lab.description)
    st.caption(
        _(
            "This page uses the simplified attention of lessons 1 to 3 (Q = K = V = X) **with** the scaling of "
            "lesson 5 switched on: scores = X Xᵀ / √{d_model}. The mask is the only new step.",
            d_model=lab.d_model,
        )
    )


def controls(lab: LabInput) -> MaskChoice:
    st.subheader(_("Choose a mask"))
    left, right = st.columns(2)
    with left:
        kind = inputs.radio(
            _("Mask type"),
            MASK_TYPES,
            index=MASK_TYPES.index("causal"),
            key="masking_type",
            horizontal=True,
            format_func=mask_type_label,
            help=_(
                "Causal: each token sees itself and the tokens before it. Padding: [PAD] tokens appended to the "
                "sentence are hidden as keys. Sliding window: each token sees itself and the w − 1 tokens before it."
            ),
        )
        pads, window = mask_settings(kind, lab.T)
    with right:
        enabled = inputs.toggle(
            _("Apply the mask"),
            value=True,
            key="masking_enabled",
            help=_(
                "Switch it off to see how much attention goes where the mask would forbid it (e.g. into the future)."
            ),
        )
        demo_row = inputs.toggle(
            _("Block every key of “{query}” (fully masked row demo)", query=lab.query_label),
            value=False,
            key="masking_full_row",
            help=_("A query that may attend to nothing: softmax then has nothing to normalise."),
        )
    return MaskChoice(kind, pads, window, enabled, demo_row)


def mask_settings(kind: str, T: int) -> tuple[int, int]:
    """The number of [PAD] tokens and the sliding window's width, for the mask types that have them."""
    if kind == "padding":
        pads = inputs.slider(
            _("Append [PAD] tokens: pad the {T} tokens to length N = {T} + this", T=T),
            0,
            MAX_PADS,
            2,
            key="masking_pads",
            help=_(
                "As when this sentence is batched with a longer one. [PAD] gets a zero embedding and is hidden "
                "as a key from every query."
            ),
        )
        return pads, 1
    if kind == "sliding window":
        if T > 1:
            return 0, inputs.slider(
                _("Window w (the token itself and w − 1 before it)"), 1, T, min(3, T), key="masking_window"
            )
        st.caption(_("A one-token sentence has a window of 1: the token sees itself."))
    return 0, 1


def status(labels: tuple[str, ...], enabled: bool, empty_rows: torch.Tensor) -> None:
    """A warning when the mask is off, a note when some query may attend to nothing."""
    empty_labels = [label for label, empty in zip(labels, empty_rows.tolist(), strict=True) if empty]
    if not enabled:
        st.warning(
            _(
                "The mask is **off**: every query sees every key, including the ones the mask would block. "
                "Compare the weights below with the mask on."
            ),
            icon=":material/visibility:",
        )
    if empty_labels:
        st.info(
            _(
                "Fully masked row(s): {labels}. These queries may attend to nothing. The lab gives them weights of 0 "
                "everywhere and a zero context vector, as PyTorch's scaled_dot_product_attention does; see the last "
                "section for what the other masking methods do there.",
                labels=", ".join(f"“{label}”" for label in empty_labels[:MAX_TERMS])
                + (" …" if len(empty_labels) > MAX_TERMS else ""),
            ),
            icon=":material/info:",
        )


def mask_view(lab: LabInput, steps: ac.AttentionSteps, mask: torch.Tensor, choice: MaskChoice) -> None:
    st.subheader(_("The mask"))
    if choice.kind == "none":
        explanation = _("No mask: every cell is True.")
    elif choice.kind == "causal":
        explanation = _("Causal: the lower triangle, so a token never sees the tokens after it.")
    elif choice.kind == "padding" and choice.pads:
        explanation = _(
            "Padding: the {pad} **columns** are blocked, because a padding token is hidden as a key from every "
            "query. The {pads} {pad} rows still attend to the real tokens (their outputs are thrown away later).",
            pad=PAD,
            pads=choice.pads,
        )
    elif choice.kind == "padding":
        explanation = _(
            "Padding: the {pad} **columns** are blocked, because a padding token is hidden as a key from every "
            "query. No {pad} token appended yet, so nothing is blocked: move the slider.",
            pad=PAD,
        )
    else:
        explanation = _(
            "Sliding window w = {window}: a band of width {window} along the diagonal.", window=choice.window
        )
    st.markdown(
        _(
            "Row *i* is the query, column *j* the key. **Blue: may attend (True); grey: blocked (False).** "
            "{explanation}",
            explanation=explanation,
        )
    )
    page.heatmap(
        mask.float(),
        lab.labels,
        lab.labels,
        kind="mask",
        title=_("Mask ({kind}), True = may attend", kind=_(MASK_KINDS[choice.kind])),
        key="masking_mask_chart",
        explain=page.masked_scores_of(steps, mask),
        highlight_row=lab.query_label,
    )


def conventions(labels: tuple[str, ...], mask: torch.Tensor, choice: MaskChoice, padded: Padded) -> None:
    st.subheader(_("Two conventions for the same mask"))
    st.markdown(
        _(
            """
PyTorch uses **both** boolean conventions, so always check which one a function wants:

* `F.scaled_dot_product_attention(Q, K, V, attn_mask=mask)`: **True = may attend** (the lab's convention).
* `nn.MultiheadAttention(...)(x, x, x, attn_mask=~mask)` and its `key_padding_mask`: **True = blocked**.

The same mask, written both ways (False in faint type):
"""
        )
    )
    may, blocked = st.columns(2) if len(labels) <= SIDE_BY_SIDE_TOKENS else (st.container(), st.container())
    with may:
        st.markdown(_("**True = may attend** (SDPA `attn_mask`)"))
        page.frame_table(pd.DataFrame(mask.numpy(), index=list(labels), columns=list(labels)))
    with blocked:
        st.markdown(_("**True = blocked** (`nn.MultiheadAttention` `attn_mask` = `~mask`)"))
        page.frame_table(pd.DataFrame(ac.to_blocked(mask).numpy(), index=list(labels), columns=list(labels)))
    if choice.kind == "padding":
        st.markdown(
            _("For padding, PyTorch takes one flag per key instead of a matrix: `key_padding_mask` (True = padding).")
        )
        page.frame_table(
            pd.DataFrame([padded.key_padding_mask.tolist()], index=["key_padding_mask"], columns=list(labels))
        )


def masked_scores(lab: LabInput, steps: ac.AttentionSteps, active: torch.Tensor) -> None:
    labels = lab.labels
    st.subheader(_("Masked scores: −∞ where blocked"))
    st.markdown(
        _(
            "The scaled scores with every blocked cell replaced by −∞. In the heatmap a blocked cell is left empty; "
            "in the table it reads “{blocked}”.",
            blocked=_(BLOCKED),
        )
    )
    score_chart, score_table = st.tabs([_("Heatmap"), _("Table")])
    with score_chart:
        page.heatmap(
            steps.masked_scores,
            labels,
            labels,
            kind="scores",
            title=_("Masked scores"),
            key="masking_scores_chart",
            explain=page.masked_scores_of(steps, active),
            highlight_row=lab.query_label,
        )
    with score_table:
        page.frame_table(to_frame(steps.masked_scores, labels, labels).map(masked_score_text))


def query_masked_scores(lab: LabInput, steps: ac.AttentionSteps) -> None:
    """The query's row of masked scores: what its weights are computed from."""
    st.subheader(_("Weights: exactly 0 where blocked"))
    st.markdown(
        _(
            "Softmax of each row of the masked scores gives the weights. The row of the query “{query}” "
            "(from the step “Masked scores”):",
            query=lab.query_label,
        )
    )
    page.frame_table(
        to_frame(steps.masked_scores[lab.query_index].unsqueeze(0), [lab.query_label], lab.labels).map(
            masked_score_text
        )
    )


def masked_weights(lab: LabInput, steps: ac.AttentionSteps, empty_rows: torch.Tensor) -> None:
    st.markdown(
        _(
            "Every row's weights: every blocked cell is an exact 0 and each row still adds up to 1 (a fully masked "
            "row is all 0, see above)."
        )
        if bool(empty_rows.any())
        else _("Every row's weights: every blocked cell is an exact 0 and each row still adds up to 1.")
    )
    page.matrix(
        steps.weights,
        lab.labels,
        lab.labels,
        kind="weights",
        title=_("Masked attention weights"),
        key="masking_weights_chart",
        explain=page.weights_of(steps),
        download="masked_attention_weights.csv",
        highlight_row=lab.query_label,
    )


def worked_example(lab: LabInput, steps: ac.AttentionSteps, active: torch.Tensor, empty_rows: torch.Tensor) -> None:
    """The query's row: scaled and masked scores, exponentials, weights, then its context vector."""
    q, query = lab.query_index, lab.query_label
    st.subheader(_("Step by step for the query “{query}”", query=query))
    row = softmax_row_steps(steps.masked_scores[q])  # max, exps and their sum over the allowed keys
    row_max, exps = row.row_max, row.exps
    allowed = active[q].tolist()
    breakdown = pd.DataFrame(
        {
            _("may attend"): allowed,
            _("scaled score"): [weight_text(v) for v in steps.scaled_scores[q].tolist()],
            _("masked score"): [masked_score_text(v) for v in steps.masked_scores[q].tolist()],
            "e_j = exp(s_j − m)": [weight_text(v) for v in exps.tolist()],  # text: an exact 0 reads 0, not 0.0000
            _("weight"): [weight_text(v) for v in steps.weights[q].tolist()],
        },
        index=list(lab.labels),
    )
    page.frame_table(breakdown)
    if bool(empty_rows[q]):
        st.markdown(
            _(
                "Every key of “{query}” is blocked, so all its masked scores are −∞ and every e_j = e^−∞ = 0. Their "
                "sum is 0 and 0/0 is undefined: the lab returns weights of **0** and a **zero** context vector, as "
                "PyTorch's scaled_dot_product_attention does.",
                query=query,
            )
        )
    else:
        st.markdown(
            _(
                "m = largest allowed score = {row_max} (subtracted so exp cannot overflow); blocked keys give "
                "e^−∞ = **0**. Σ e_j = {sum} (the column above, added up), so weight_j = e_j / {sum}.",
                row_max=format_number(row_max),
                sum=written_sum(exps, len(exps)),
            )
        )
    keys = [j for j, ok in enumerate(allowed) if ok]
    written = weighted_vectors_text(steps.weights[q, keys], steps.V[keys], steps.context[q], limit=MAX_TERMS)
    st.markdown(
        _("context(“{query}”) = Σ_j weight_j v_j over the allowed keys = {written}", query=query, written=written)
    )


def all_contexts(labels: tuple[str, ...], steps: ac.AttentionSteps, active: torch.Tensor) -> None:
    st.markdown(_("**All context vectors** (weights @ V):"))
    page.table(ac.vector_frame(steps.context, labels), alt_text=_("Masked context vectors"))
    check = agreement(steps.context, sdpa_reference(steps.Q, steps.K, steps.V, mask=active, scale=True))
    st.caption(
        _(
            "Check: largest |context − F.scaled_dot_product_attention(Q, K, V, attn_mask=mask)| = {difference}: "
            "**{verdict}** (fully masked rows included).",
            difference=format_number(check.max_difference),
            verdict=_(check.verdict),
        )
    )


def pitfall_mask_off(lab: LabInput, mask: torch.Tensor, choice: MaskChoice) -> None:
    """How much attention each query puts on blocked keys when the mask is left out."""
    st.subheader(_("Switch the mask off: looking where it is forbidden"))
    unmasked = ac.self_attention(lab.X, scale=True)
    leak = blocked_weight(unmasked.weights, mask)  # (T,)
    query_column, leak_column = _("query"), _("weight on blocked keys")  # the chart's fields, named as shown
    leak_frame = pd.DataFrame({query_column: list(lab.labels), leak_column: leak.tolist()})
    values = {
        "kind": _(MASK_KINDS[choice.kind]),
        "query": lab.query_label,
        "share": format_number(float(leak[lab.query_index])),
    }
    st.markdown(
        _(
            "Without the mask, each query spreads its attention over **every** key. The bars show how much of it "
            "lands on keys the {kind} mask blocks. For “{query}” that is **{share}** of its attention — in a "
            "decoder, attention on the future: during training the model could read the very word it is supposed "
            "to predict.",
            **values,
        )
        if choice.kind == "causal" and not choice.demo_row
        else _(
            "Without the mask, each query spreads its attention over **every** key. The bars show how much of it "
            "lands on keys the {kind} mask blocks. For “{query}” that is **{share}** of its attention.",
            **values,
        )
    )
    if blocked_count(mask) == 0:
        st.info(_("This mask blocks nothing, so switching it off changes nothing. Choose another mask type above."))
    else:
        page.chart(
            charts.bars,
            leak_frame,
            x=query_column,
            y=leak_column,
            order=lab.labels,
            title=_("Attention on blocked keys without the mask"),
            st_width="stretch",
        )


def methods_frame(methods: dict[str, torch.Tensor], q: int, labels: tuple[str, ...]) -> pd.DataFrame:
    """Row q of each method's weights, one column per method, as text (NaN reads 'NaN (0/0)')."""
    return pd.DataFrame(
        {method_label(name): [weight_text(v) for v in weights[q].tolist()] for name, weights in methods.items()},
        index=list(labels),
    )


def methods_compared(lab: LabInput, steps: ac.AttentionSteps, mask: torch.Tensor) -> None:
    """−∞, a large negative constant and multiply-then-renormalise on the query's row, and where they differ."""
    st.subheader(_("Three ways to mask, side by side"))
    st.markdown(
        _(
            """
Tutorials mask in different ways. Here are the weights of “{query}” computed by each, with the chosen mask
(including the demo row if it is on); the table's columns carry the numbers of this list, and “lab” is the lab's own
weights (= PyTorch's SDPA):

1. **−∞ before softmax** (the PyTorch way): e^−∞ = 0 exactly.
2. **A large negative constant** before softmax: −1e9, or −9e15 as the “scaled_dot_product” tutorial writes
   `attn_logits.masked_fill(mask == 0, -9e15)`. e^(−1e9) underflows to exactly 0 in float32, so it works as long
   as the constant is far below every real score.
3. **Multiply by the mask, then renormalise**: softmax over all keys first, zero the blocked weights, then divide
   by what is left so the row adds up to 1 again.
""",
            query=lab.query_label,
        )
    )
    methods = masking_methods(steps.scaled_scores, mask)  # each (T, T)
    page.frame_table(methods_frame(methods, lab.query_index, lab.labels), column_config=method_columns())
    differences = method_differences(methods, mask)
    others = [name for name in differences if name != "lab"]
    if bool(fully_masked_rows(mask).all()):
        st.info(
            _("Every row is fully masked, so no row is left to compare the methods on: see the demonstration below.")
        )
    else:
        agreement = pd.DataFrame(
            {_("largest |w − lab| on rows with an allowed key"): [weight_text(differences[name]) for name in others]},
            index=[_(METHOD_ROWS[name]) for name in others],
        )
        page.frame_table(agreement)
    st.markdown(
        _(
            """
**When they agree:** on a row that may attend to at least one key, masking before softmax (−∞, −1e9, −9e15)
gives the same weights up to float32 rounding: a blocked key gets exactly 0 and the rest is renormalised.
Multiply-then-renormalise equals them **in exact arithmetic**, because e^(s_j) m_j / Σ_k e^(s_k) m_k is the
softmax over the allowed keys. **The exception:** it takes the softmax over *all* keys first, so when every
allowed key scores far below a blocked one (about 104 lower in float32), the allowed weights underflow to 0
and it divides 0 by 0 on a row that does have an allowed key (example below).
"""
        )
    )


def underflow_demo() -> None:
    """Multiply-then-renormalise on a row whose only allowed key scores UNDERFLOW_GAP below a blocked one."""
    scores, mask = underflow_example()  # (1, 2): key 0 blocked, key 1 allowed
    methods = masking_methods(scores, mask)
    gap = f"{UNDERFLOW_GAP:g}"
    keys = (_("blocked key (score {gap})", gap=gap), _("allowed key (score 0)"))
    st.markdown(
        _(
            "**Underflow:** one query, two keys, scores [{gap}, 0], the first key blocked. Softmax over both keys "
            "gives the allowed one e^−{gap}, far below float32's smallest positive number (about 1.4e-45), so it is "
            "stored as 0:",
            gap=gap,
        )
    )
    page.frame_table(methods_frame(methods, 0, keys), column_config=method_columns())


def fully_masked_row_demo(lab: LabInput, steps: ac.AttentionSteps, mask: torch.Tensor) -> None:
    """The query's row with every key blocked: NaN, uniform, NaN, or the lab's zeros."""
    q, query = lab.query_index, lab.query_label
    demo_mask = block_query_row(mask, q)  # query row q may attend to nothing
    demo = masking_methods(steps.scaled_scores, demo_mask)
    st.markdown(_("**Demonstration: a fully masked row.** The row of “{query}” with every key blocked:", query=query))
    page.frame_table(methods_frame(demo, q, lab.labels), column_config=method_columns())
    sdpa_context = sdpa_reference(steps.Q, steps.K, steps.V, mask=demo_mask, scale=True)
    uniform = softmax_after_constant(steps.scaled_scores, demo_mask)[q]
    st.markdown(
        _(
            """
* **−∞ then torch.softmax → NaN.** Every entry is e^−∞ = 0, so softmax computes 0/0. NaN then spreads into the
  context vector and, in training, into every gradient. (This NaN is the demonstration, as in lesson 2's overflow table:
  the lab's own weights never hold one.)
* **−1e9 or −9e15 → uniform.** Every score becomes the same constant, and softmax of equal numbers is uniform:
  {uniform} = 1/{T} each. The query silently attends to everything it was told to ignore
  (padding included) and its context is the plain average of V.
* **Multiply and renormalise → NaN.** The weights left after multiplying by the mask are all 0, and dividing by
  their sum is again 0/0.
* **The lab → 0.** A row with nothing to attend to gets weights of 0 and a zero context vector, as
  `F.scaled_dot_product_attention` does in PyTorch 2.5 and later: its context for “{query}” here is
  {context}. `nn.MultiheadAttention` returns NaN for such a row when
  `need_weights=True` (its default: it then computes the weights itself and gives 0/0); with
  `need_weights=False` it calls scaled_dot_product_attention and returns 0 (PyTorch 2.13; lesson 7 compares).
""",
            uniform=format_number(float(uniform[0])),
            T=lab.T,
            query=query,
            context=vector_text(sdpa_context[q]),
        )
    )


render(inputs.current())
