"""Lesson 4: queries, keys and values, three learned projections of the same embeddings."""

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd
import streamlit as st
import torch

import attention_core as ac
from attention_core.attention import AttentionSteps
from attention_core.exercises import ProjectedShown, projected_shown
from attention_core.i18n import N_, _
from attention_core.presets import JOURNEY
from attention_core.projections import (
    Projections,
    matches_002_inputs,
    projection_parameter_count,
    random_projections,
    recover_projection,
    recovered_002_projections,
    reproduce_002,
    tutorial_002_pitfall,
    validate_projection_matrix,
)
from attention_core.reference import max_abs_difference, sdpa_agreement, tolerance_text
from attention_core.similarity import asymmetry
from attention_core.tables import dimension_labels, to_frame
from ui import page
from ui.page import exercises_section, format_number, learner_text, lesson_steps, numbers_text, products_sum_text
from ui.widgets import inputs
from ui.widgets.inputs import LabInput, keep, kept

SOURCES = {  # shown with source_label(): translated where shown, written in the URL as shown
    "random": N_("Seeded random"),
    "edited": N_("Edit by hand"),
    "002": N_("The journey tutorial's weights (recovered)"),
}
NAMES = ("W_q", "W_k", "W_v")
PREFIXES = {"W_q": "q", "W_k": "k", "W_v": "v"}
D_K = inputs.Number(1, 16)  # what the d_k slider (and a link's qkv_d_k=) takes
CONTROLS = ("qkv_source", "qkv_seed", "qkv_d_k", *(f"qkv_scale_{source}" for source in SOURCES))  # step 2's widgets
SIDE_BY_SIDE_D_K = 3  # up to this d_k, W_q, W_k and W_v share a row; wider ones get the full width each
ORIGINS = {  # the weights as the exercises name them (English in the exercises' material, translated where shown)
    "random": N_("the seeded random W_q, W_k, W_v above"),
    "edited": N_("your edited W_q, W_k, W_v above"),
    "002": N_("the journey tutorial's recovered W_q, W_k, W_v above"),
}


def source_label(source: str) -> str:
    """Where the weights come from, as the radio (and the URL) shows it, in the learner's language."""
    return _(SOURCES[source])


def render(lab: LabInput) -> None:
    """The lesson's outline: one function per step."""
    page.lesson_title(__file__)
    chosen: dict[str, Chosen] = {}  # the weights drawn in the step "W_q, W_k, W_v" this run (the whole lesson)
    lesson_steps(
        __file__,
        {
            N_("Three roles"): lambda: roles_step(lab),
            N_("W_q, W_k, W_v"): lambda: weights_step(lab, chosen),
            N_("One token"): lambda: one_token_step(lab, chosen_weights(lab, chosen)),
            N_("Shapes"): lambda: shapes_step(lab, chosen_weights(lab, chosen)),
            N_("All tokens"): lambda: all_tokens_step(lab, chosen_weights(lab, chosen)),
            N_("Keys and values"): lambda: keys_and_values(lab, chosen_weights(lab, chosen)),
            N_("Scores Q Kᵀ"): lambda: scores_not_symmetric(lab, chosen_weights(lab, chosen).shown.steps),
            N_("Attention weights"): lambda: attention_weights_step(lab, chosen_weights(lab, chosen)),
            N_("Context vectors"): lambda: context_vectors_step(lab, chosen_weights(lab, chosen)),
            N_("Two kinds of weights"): lambda: two_kinds_step(lab, chosen_weights(lab, chosen)),
            N_("Journey printout"): lambda: journey_step(lab, chosen_weights(lab, chosen)),
            N_("Journey pitfall"): lambda: journey_pitfall_step(lab, chosen_weights(lab, chosen)),
        },
    )


def roles_step(lab: LabInput) -> None:
    """Three roles for one embedding, and self- against cross-attention."""
    keep(*CONTROLS)  # the weights' widgets are in the next step: a visit here forgets nothing
    intro(lab)
    what_self_means()


@dataclass(frozen=True)
class Chosen:
    """The weights the learner chose in the step "W_q, W_k, W_v", and what the lesson computes from them."""

    source: str  # a key of SOURCES
    shown: ProjectedShown  # the params, the scaling choice and the attention steps

    @property
    def params(self) -> Projections:
        return self.shown.params


def weights_step(lab: LabInput, chosen: dict[str, Chosen]) -> None:
    """Where W_q, W_k, W_v come from (the lesson's controls) and the matrices."""
    source, params = projection_matrices(lab)
    scale = scale_choice(source)
    chosen["weights"] = Chosen(source, projected_shown(lab.X, params, scale, ORIGINS[source]))


def shapes_step(lab: LabInput, chosen: Chosen) -> None:
    """From one token to all of them: the shapes of X and W, and the questions on the shape of Q and the number of
    learned entries."""
    d_k = chosen.params.W_q.shape[1]
    st.subheader(_("Shapes and sizes"))
    st.markdown(
        _(
            "X holds one row of d_model = {d_model} numbers per token ({T} × {d_model}). Each of W_q, W_k "
            "and W_v has one row per embedding dimension and one column per entry of q, k or v "
            "({d_model} × {d_k}). One token's row gave one q; before stacking all the tokens, predict what comes "
            "out and how many numbers training has to learn.",
            d_model=lab.d_model,
            T=lab.T,
            d_k=d_k,
        )
    )
    if exercises_section(__file__, lab, material=chosen.shown, places=("shape-q", "parameters")):
        shapes_answer(lab, d_k)


def shapes_answer(lab: LabInput, d_k: int) -> None:
    """The shape of Q and the count of learned numbers, once the questions on them are settled."""
    st.markdown(
        _(
            "Q = X W_q is ({T}, {d_model}) @ ({d_model}, {d_k}) → **({T}, {d_k})**: one query row per "
            "token, and so are K and V. W_q, W_k and W_v hold 3 × {d_model} × {d_k} = "
            "**{count}** learned numbers, however long the sentence.",
            T=lab.T,
            d_model=lab.d_model,
            d_k=d_k,
            count=f"{projection_parameter_count(lab.d_model, d_k):,}",
        )
    )


def chosen_weights(lab: LabInput, chosen: dict[str, Chosen]) -> Chosen:
    """The weights chosen in the step "W_q, W_k, W_v": drawn this run (the whole lesson), or, in a step of their
    own, the values kept from that step, named in one caption."""
    if "weights" in chosen:
        return chosen["weights"]
    keep(*CONTROLS)
    source = kept(
        "qkv_source", "random", inputs.Choice(sources(lab.d_model), source_label), _("Where the weights come from")
    )
    if source == "002" and lab.d_model != 3:
        source = "random"  # the journey tutorial's weights are 3 × 3 (the step's radio drops them too)
    if source == "002":
        params, _residuals = recovered_002_projections(lab.X.dtype)
        scale = bool(kept("qkv_scale_002", False, inputs.Switch(), _("Divide the scores by √d_k")))
        made = _("the journey tutorial's weights (recovered)")
    else:
        seed = int(kept("qkv_seed", 0, inputs.SEED, _("Seed for W_q, W_k, W_v")))
        d_k = int(kept("qkv_d_k", 2, D_K, _("d_k (size of each query, key and value)")))
        params = random_projections(lab.d_model, d_k, seed, lab.X.dtype)
        if source == "edited" and st.session_state.get("qkv_editor_signature") == (lab.d_model, d_k, seed):
            params = Projections(**st.session_state["qkv_last_good"])
        scale = bool(kept(f"qkv_scale_{source}", True, inputs.Switch(), _("Divide the scores by √d_k")))
        made = (
            _("your edited weights (seed {seed})", seed=seed)
            if source == "edited"
            else _("seeded random weights (seed {seed})", seed=seed)
        )
    st.caption(
        _(
            "W_q, W_k, W_v: {made}, d_k = {d_k}; the scores are divided by √d_k. Change them in the step "
            "“W_q, W_k, W_v”.",
            made=made,
            d_k=params.W_q.shape[1],
        )
        if scale
        else _(
            "W_q, W_k, W_v: {made}, d_k = {d_k}; the scores are not scaled. Change them in the step “W_q, W_k, W_v”.",
            made=made,
            d_k=params.W_q.shape[1],
        )
    )
    chosen["weights"] = Chosen(source, projected_shown(lab.X, params, scale, ORIGINS[source]))
    return chosen["weights"]


def one_token_step(lab: LabInput, chosen: Chosen) -> None:
    """The query token's x and W_q, the question on one entry of q, then q, k and v (they answer it)."""
    one_token(lab, chosen.params, chosen.shown.steps)
    if exercises_section(__file__, lab, material=chosen.shown, places=("query-entry",)):
        one_token_result(lab, chosen.params, chosen.shown.steps)


def all_tokens_step(lab: LabInput, chosen: Chosen) -> None:
    """Q, K and V of every token, and the question on K = Q (it reads the query's row of Q)."""
    all_tokens(lab, chosen.params, chosen.shown.steps)
    exercises_section(__file__, lab, material=chosen.shown, places=("same-q-k",))


def attention_weights_step(lab: LabInput, chosen: Chosen) -> None:
    attention_weights(lab, chosen.shown.steps, chosen.shown.scale)


def context_vectors_step(lab: LabInput, chosen: Chosen) -> None:
    """Context = weights × V, PyTorch's check, and the code of this run."""
    context_step(lab, chosen.shown.steps, chosen.shown.scale)
    reproduced = chosen.source == "002" and matches_002_inputs(lab.X)
    page.show_code(*code_run(chosen.source, chosen.shown.scale, reproduced))


def two_kinds_step(lab: LabInput, chosen: Chosen) -> None:
    """Weight parameters against attention weights."""
    two_kinds_of_weights(lab.T, lab.d_model, chosen.params.W_q.shape[1])


def journey_step(lab: LabInput, chosen: Chosen) -> None:
    """The journey tutorial's printed numbers reproduced with its recovered weights (on its sentence)."""
    if chosen.source == "002" and matches_002_inputs(lab.X):
        reproduced_002(lab, chosen.params)
    else:
        st.subheader(_("The journey tutorial's printed numbers"))
        st.markdown(
            _(
                "The “Your journey starts with one step” tutorial prints Q, K, V, the scores, the weights and the "
                "context vectors of its sentence. The lab reproduces every one of them here when the journey "
                "sentence (the example “Your journey starts with one step” in the sidebar) runs with the tutorial's "
                "recovered weights, chosen in the step “W_q, W_k, W_v”."
            )
        )


def journey_pitfall_step(lab: LabInput, chosen: Chosen) -> None:
    """Where the journey tutorial goes wrong, run on the current input when its weights are chosen."""
    pitfall_002(lab, chosen.params if chosen.source == "002" else None)


def code_run(source: str, scale: bool, reproduced: bool) -> tuple[Callable, ...]:
    """The core functions this run calls: the attention steps, then where W_q, W_k, W_v came from."""
    steps = (ac.project_qkv, ac.attention_scores, *((ac.scale_scores,) if scale else ()), ac.softmax)
    if source == "002":
        origin = (recovered_002_projections, recover_projection, *((reproduce_002,) if reproduced else ()))
    else:
        origin = (random_projections, *((validate_projection_matrix,) if source == "edited" else ()))
    return (*steps, ac.context_vectors, *origin)


def params_frame(W: torch.Tensor, name: str) -> pd.DataFrame:
    """A projection matrix labelled by input dimension (rows) and output dimension (columns)."""
    return to_frame(W, dimension_labels(W.shape[0], "d"), dimension_labels(W.shape[1], PREFIXES[name]))


def intro(lab: LabInput) -> None:
    """Three roles, three learned matrices, and the formula."""
    st.markdown(
        _(
            """
So far every token used its own embedding three times: to ask (the query), to be compared
(the key) and to be mixed in (the value). A transformer gives each role its own **learned weight
matrix**: W_q, W_k and W_v turn the same embedding x into a query q, a key k and a value v.
The query of “{q}” can now look for something different from what the key of “{q}” offers,
so attention no longer has to favour words that merely resemble each other.
""",
            q=learner_text(lab.query_label),
        )
    )
    st.latex(
        r"Q = X W_q,\quad K = X W_k,\quad V = X W_v \qquad"
        r"\text{context} = \operatorname{softmax}\!\Big(\frac{Q K^\top}{\sqrt{d_k}}\Big)\, V"
    )
    page.lesson_caption(lab.description)


def what_self_means() -> None:
    """Self-attention against cross-attention."""
    st.markdown(
        _(
            """
**Why “self”-attention?** Q, K and V are all computed from the **same X**: the sentence attends to itself,
each token's query is compared with the keys of the tokens of its own sequence. In **cross-attention**
(for example a translation model's decoder reading the encoder's output) the queries come from one sequence
and the keys and values from another, Z: Q = X W_q but K = Z W_k and V = Z W_v, so each token of X gathers
information from Z, and the scores are (tokens of X) × (tokens of Z).
"""
        )
    )


def projection_matrices(lab: LabInput) -> tuple[str, Projections]:
    """The section on W_q, W_k, W_v: where they come from, and the matrices; returns (source, params)."""
    st.subheader(_("The weight matrices W_q, W_k, W_v"))
    source = params_source(lab.d_model)
    if source == "002":
        params, residuals = recovered_params(lab.X)
    else:
        params, residuals = random_params(lab.d_model, source, lab.X.dtype), {}
    if source != "edited":
        params_tables(params, residuals)
    return source, params


def sources(d_model: int) -> tuple[str, ...]:
    """Where W_q, W_k, W_v may come from: the journey tutorial's weights are 3 × 3, for 3-dimensional embeddings."""
    return ("random", "edited", *(["002"] if d_model == 3 else []))


def params_source(d_model: int) -> str:
    """Where W_q, W_k, W_v come from: seeded random, edited by hand, or the journey tutorial's (for 3-dimensional embeddings)."""
    return inputs.radio(
        _("Where the weights come from"),
        sources(d_model),
        format_func=source_label,
        horizontal=True,
        key="qkv_source",
        help=_(
            "The journey tutorial's weights are 3 × 3, so they are offered when the embeddings have 3 columns "
            "(d_model = 3)."
        ),
    )


def recovered_params(X: torch.Tensor) -> tuple[Projections, dict[str, float]]:
    """The journey tutorial's W_q, W_k, W_v recovered by least squares, and how they were found."""
    params, residuals = recovered_002_projections(X.dtype)
    st.markdown(
        _(
            """
The “Your journey starts with one step” tutorial draws its weights with unseeded `torch.rand(3, 3)` and never prints them, but it
does print Q = X W_q, K = X W_k and V = X W_v for **the journey sentence** (“Your journey starts with
one step”). Six tokens give six equations per column for three unknowns, so each W can be
**recovered by least squares**, W = argmin ‖X W − P‖, from X and the printed matrix P.
"""
        )
    )
    if not matches_002_inputs(X):
        st.info(
            _(
                "These weights were recovered for the journey sentence. They work on any 3-dimensional "
                "embeddings, but only the journey sentence with its printed embeddings has the tutorial's numbers "
                "to compare with."
            ),
            icon=":material/info:",
        )
    return params, residuals


def random_params(d_model: int, source: str, dtype: torch.dtype) -> Projections:
    """Seeded random W_q, W_k, W_v of a chosen d_k (in the input's precision), edited by hand when asked."""
    seed_column, d_k_column = st.columns(2)
    seed = inputs.seed_input(_("Seed for W_q, W_k, W_v"), key="qkv_seed", container=seed_column)
    d_k = int(
        inputs.slider(
            _("d_k (size of each query, key and value)"),
            D_K.low,
            D_K.high,
            2,
            container=d_k_column,
            key="qkv_d_k",
            help=_("The number of columns of each W: queries, keys and values get d_k numbers per token."),
        )
    )
    params = random_projections(d_model, d_k, seed, dtype)
    st.caption(
        _(
            "Random weights stand in for learned ones: entries ~ N(0, 1) / √d_model, drawn in the order "
            "W_q, W_k, W_v from one generator seeded with the number above."
        )
    )
    if source == "edited":
        return edited_params(params, (d_model, d_k, seed))
    return params


def edited_params(base: Projections, signature: tuple) -> Projections:
    """Three editable matrices; a bad cell shows why and the last good matrix is kept."""
    if st.session_state.get("qkv_editor_signature") != signature:
        for name in NAMES:  # new random weights start without old edits
            st.session_state.pop(f"qkv_editor_{name}", None)
        st.session_state["qkv_last_good"] = {name: getattr(base, name) for name in NAMES}
        st.session_state["qkv_editor_signature"] = signature
    last_good = st.session_state["qkv_last_good"]
    if not any(f"qkv_editor_{name}" in st.session_state for name in NAMES):
        # the editors start afresh (first time, or back from another step): from the last good edit, not from base
        st.session_state["qkv_editor_start"] = dict(last_good)
    start = st.session_state["qkv_editor_start"]
    st.caption(_("Type a number in any cell; everything below updates when you leave the cell."))
    good, problems = {}, []
    for column, name in zip(matrix_places(start["W_q"].shape[1]), NAMES, strict=True):
        W = start[name]
        with column:
            st.markdown(f"**{name}** ({W.shape[0]} × {W.shape[1]})")
            edited = inputs.matrix_editor(params_frame(W, name), key=f"qkv_editor_{name}")
        try:
            good[name] = validate_projection_matrix(edited, W.shape[0], W.shape[1], name, W.dtype)
        except ValueError as error:
            problems.append(_("{error} The numbers below still use the last valid {name}.", error=error, name=name))
            good[name] = last_good[name]
    for problem in problems:
        st.error(learner_text(problem), icon=":material/error:")
    st.session_state["qkv_last_good"] = good
    return Projections(**good)


def matrix_places(d_k: int) -> list:
    """Where W_q, W_k and W_v go: three columns when they are narrow, else one under the other at full width (a
    table with d_k columns in a third of the page, or on a phone, would scroll sideways)."""
    return st.columns(3) if d_k <= SIDE_BY_SIDE_D_K else [st.container() for _name in NAMES]


def params_tables(params: Projections, residuals: dict[str, float]) -> None:
    """W_q, W_k, W_v side by side (with the journey tutorial's residuals when they were recovered)."""
    for column, name in zip(matrix_places(params.W_q.shape[1]), NAMES, strict=True):
        with column:
            W = getattr(params, name)
            st.markdown(f"**{name}** ({W.shape[0]} × {W.shape[1]})")
            page.table(params_frame(W, name), alt_text=_("Weight matrix {name}", name=name))
            if name in residuals:
                st.caption(
                    _(
                        "Recovered from the journey tutorial's printed {printed}: largest residual "
                        "max|X {name} − {printed}| = {residual}",
                        printed=name[-1].upper(),
                        name=name,
                        residual=format_number(residuals[name]),
                    )
                )
    if residuals:
        st.caption(
            _(
                "The residuals are tiny but not 0 because the journey tutorial prints Q, K and V rounded to 4 "
                "decimals; the entries all lie in [0, 1), as torch.rand's do."
            )
        )


def scale_choice(source: str) -> bool:
    """Whether the scores are divided by √d_k (off by default for 002, which does not scale)."""
    if source != "002":
        return inputs.scale_toggle(f"qkv_scale_{source}", _("Divide the scores by √d_k"))
    scale = inputs.toggle(
        _("Divide the scores by √d_k"),
        value=False,
        key="qkv_scale_002",
        help=_("The journey tutorial does not scale: its printed scores and weights are unscaled, so this starts off."),
    )
    st.caption(
        _(
            "The journey tutorial computes softmax(Q Kᵀ) without dividing by √d_k. Switch scaling on to see what it "
            "changes (lesson 5 explains why transformers scale)."
        )
    )
    return scale


def reproduced_002(lab: LabInput, params: Projections) -> None:
    """Every matrix of the journey tutorial's section 2.3 recomputed with the recovered weights, beside the printout."""
    labels = lab.labels
    st.subheader(_("The journey tutorial's printed numbers, reproduced"))
    comparisons = reproduce_002(params, lab.X)
    st.markdown(
        _(
            "With the recovered weights the lab recomputes the journey tutorial's section 2.3 (unscaled, as the "
            "tutorial does) and compares every matrix with the printout:"
        )
    )
    page.table(
        pd.DataFrame(
            {_("largest |lab − printed|"): [c.max_difference for c in comparisons]},
            index=[_(c.name) for c in comparisons],  # named as ui.drawing.printed_beside_ours names them
        ),
        alt_text=_("Largest difference between the lab and the journey tutorial's printed matrices"),
    )
    st.caption(_("Differences below 0.0005 are rounding: the journey tutorial prints 4 decimals."))
    for tab, comparison in zip(st.tabs([_(c.name) for c in comparisons[3:]]), comparisons[3:], strict=True):
        columns = labels if comparison.ours.shape[1] == lab.T else dimension_labels(comparison.ours.shape[1], "c")
        with tab:
            page.printed_beside_ours(comparison, labels, columns, page.tutorial_name("002"))
            st.caption(_("Largest difference: {difference}", difference=format_number(comparison.max_difference)))


def one_token(lab: LabInput, params: Projections, steps: AttentionSteps) -> None:
    """The query token's embedding x and W_q: what each entry of its q is computed from."""
    q, d_model, d_k = lab.query_index, lab.d_model, steps.Q.shape[1]
    st.subheader(_("The query, key and value of “{query}”", query=lab.query_label))
    x_row = lab.X[q]  # (d_model,)
    st.markdown(
        _(
            "The embedding x of “{query}” is multiplied by each weight matrix: "
            "(1, d_model) @ (d_model, d_k) → (1, d_k), here (1, {d_model}) @ ({d_model}, {d_k}) → (1, {d_k}).",
            query=lab.query_label,
            d_model=d_model,
            d_k=d_k,
        )
    )
    page.table(ac.vector_frame(x_row.unsqueeze(0), [lab.query_label]), alt_text=_("The query token's embedding x"))
    st.markdown(_("**W_q** ({d_model} × {d_k}), one column per entry of q:", d_model=d_model, d_k=d_k))
    page.table(params_frame(params.W_q, "W_q"), alt_text=_("Weight matrix {name}", name="W_q"))
    st.markdown(_("Answer the question below first: q, k and v of this token appear after."))


def one_token_result(lab: LabInput, params: Projections, steps: AttentionSteps) -> None:
    """q, k and v of the query token, and one entry written out."""
    q, d_k = lab.query_index, steps.Q.shape[1]
    x_row = lab.X[q]  # (d_model,)
    entries = dimension_labels(d_k, _("entry "))
    page.table(
        torch.stack([steps.Q[q], steps.K[q], steps.V[q]]),  # (3, d_k)
        ["q = x W_q", "k = x W_k", "v = x W_v"],
        entries,
        alt_text=_("Query, key and value of the query token"),
    )
    st.markdown(
        _(
            "Each entry is a dot product of x with one column of W. The first entry of q: {sum}",
            sum=products_sum_text(x_row.tolist(), params.W_q[:, 0].tolist(), steps.Q[q, 0].item()),
        )
    )


def all_tokens(lab: LabInput, params: Projections, steps: AttentionSteps) -> None:
    """Q for every token at once; each entry explains its dot product with a column of W_q."""
    d_model, d_k, T = lab.d_model, steps.Q.shape[1], lab.T
    st.subheader(_("Q, K and V for all tokens"))
    st.markdown(
        _(
            "Stacking the tokens as rows does all of them at once: (T, d_model) @ (d_model, d_k) → (T, d_k), "
            "here ({T}, {d_model}) @ ({d_model}, {d_k}) → ({T}, {d_k}) for each of Q, K and V. The queries first:",
            T=T,
            d_model=d_model,
            d_k=d_k,
        )
    )
    projection_matrix(lab, "q", steps.Q, params.W_q, d_k)


def keys_and_values(lab: LabInput, chosen: Chosen) -> None:
    """K and V for every token at once, the same products with W_k and W_v."""
    params, steps = chosen.params, chosen.shown.steps
    d_k = steps.Q.shape[1]
    st.subheader(_("K and V for all tokens"))
    st.markdown(
        _(
            "The keys and the values are the same product with W_k and W_v: ({T}, {d_model}) @ "
            "({d_model}, {d_k}) → ({T}, {d_k}) each.",
            T=lab.T,
            d_model=lab.d_model,
            d_k=d_k,
        )
    )
    tabs = st.tabs(["K = X W_k", "V = X W_v"])
    for tab, (name, matrix, W) in zip(tabs, (("k", steps.K, params.W_k), ("v", steps.V, params.W_v)), strict=True):
        with tab:
            projection_matrix(lab, name, matrix, W, d_k)


def projection_matrix(lab: LabInput, name: str, matrix: torch.Tensor, W: torch.Tensor, d_k: int) -> None:
    """One of Q, K, V for all tokens (heatmap and table); a clicked entry shows its dot product with W's column."""
    page.matrix(
        matrix,
        lab.labels,
        dimension_labels(d_k, name),
        kind="values",
        title=_("{matrix} for all tokens", matrix=name.upper()),
        key=f"qkv_{name}_chart",
        explain=page.projection_of(lab.X, W),
        row_title=_("token"),
        col_title=_("entry"),
    )


def scores_not_symmetric(lab: LabInput, steps: AttentionSteps) -> None:
    """Q Kᵀ beside lesson 1's X Xᵀ: no longer symmetric."""
    labels, q, T, scores = lab.labels, lab.query_index, lab.T, steps.scores
    st.subheader(_("Scores Q Kᵀ, no longer symmetric"))
    plain = ac.self_attention(lab.X, scale=False)  # lesson 1's scores X Xᵀ, for comparison
    xx = plain.scores  # (T, d_model) @ (d_model, T) -> (T, T)
    left, right = (st.container(), st.container()) if T > 10 else st.columns(2)
    with left:
        st.markdown(
            _("**Q Kᵀ** ({T} × {T}); largest |S_ij − S_ji| = {value}", T=T, value=format_number(asymmetry(scores)))
        )
        page.matrix(
            scores,
            labels,
            labels,
            kind="scores",
            title=_("Scores Q Kᵀ"),
            key="qkv_scores_chart",
            explain=page.scores_of(steps),
            download="qk_scores.csv",
            highlight_row=lab.query_label,
        )
    with right:
        st.markdown(_("**X Xᵀ** (lesson 1); largest |S_ij − S_ji| = {value}", value=format_number(asymmetry(xx))))
        page.matrix(
            xx,
            labels,
            labels,
            kind="scores",
            title=_("Scores X Xᵀ"),
            key="qkv_xx_scores_chart",
            explain=page.scores_of(plain),
            highlight_row=lab.query_label,
        )
    if T > 1:
        other = (q + 1) % T
        st.markdown(
            _(
                "Query “{query}” against key “{other}” scores {score}, but query “{other}” against key “{query}” "
                "scores {swapped}: q_i · k_j uses the query of one token and the key of the other, so swapping them "
                "changes the number.",
                query=lab.query_label,
                other=labels[other],
                score=format_number(scores[q, other].item()),
                swapped=format_number(scores[other, q].item()),
            )
        )


def attention_weights(lab: LabInput, steps: AttentionSteps, scale: bool) -> None:
    """(scaled) scores to attention weights, the query's row and the whole matrix."""
    labels, q, d_k = lab.labels, lab.query_index, steps.Q.shape[1]
    st.subheader(_("Attention weights"))
    if scale:
        st.markdown(
            _(
                "Each score is divided by √d_k = √{d_k}, then softmax turns every row into weights that sum to 1.",
                d_k=d_k,
            )
        )
    else:
        st.markdown(_("Scaling is off: softmax turns every row of Q Kᵀ directly into weights that sum to 1."))
    row = pd.DataFrame(
        {
            _("score q·k_j"): steps.scores[q].tolist(),
            **({f"÷ √{d_k}": steps.scaled_scores[q].tolist()} if scale else {}),
            _("weight"): steps.weights[q].tolist(),
        },
        index=list(labels),
    )
    st.markdown(_("The row of “{query}”, key by key:", query=lab.query_label))
    page.table(row, alt_text=_("Scores and weights of the query token"))
    page.matrix(
        steps.weights,
        labels,
        labels,
        kind="weights",
        title=_("Attention weights"),
        key="qkv_weights_chart",
        explain=page.weights_of(steps),
        download="qkv_attention_weights.csv",
        highlight_row=lab.query_label,
    )


def context_step(lab: LabInput, steps: AttentionSteps, scale: bool) -> None:
    """context = weights @ V, one entry written out, and PyTorch's check."""
    q, T, d_k = lab.query_index, lab.T, steps.Q.shape[1]
    st.subheader(_("Context vectors = weights × V"))
    st.markdown(
        _(
            "The context vector of a token mixes the **values** (not the embeddings) with its weights: "
            "(T, T) @ (T, d_k) → (T, d_k), here ({T}, {T}) @ ({T}, {d_k}) → ({T}, {d_k}).",
            T=T,
            d_k=d_k,
        )
    )
    st.markdown(
        _(
            "First entry for “{query}”: {sum}",
            query=lab.query_label,
            sum=products_sum_text(steps.weights[q].tolist(), steps.V[:, 0].tolist(), steps.context[q, 0].item()),
        )
    )
    page.matrix(
        steps.context,
        lab.labels,
        dimension_labels(d_k, "c"),
        kind="values",
        title=_("Context vectors"),
        key="qkv_context_chart",
        explain=page.context_of(steps),
        row_title=_("token"),
        col_title=_("entry"),
        download="qkv_context.csv",
    )
    check = sdpa_agreement(steps, mask=None, scale=scale)
    st.caption(
        _(
            "Check: the context vectors against PyTorch's torch.nn.functional.scaled_dot_product_attention on the "
            "same Q, K, V: largest difference {difference}, **{verdict}** ({tolerance}).",
            difference=format_number(check.max_difference),
            verdict=_(check.verdict),
            tolerance=tolerance_text(check.tolerance),
        )
    )


def two_kinds_of_weights(T: int, d_model: int, d_k: int) -> None:
    """Weight parameters W_q, W_k, W_v versus attention weights."""
    st.subheader(_("Weight parameters are not attention weights"))
    st.markdown(
        _(
            """
Two different things are both called “weights”:

| | weight parameters W_q, W_k, W_v | attention weights |
|---|---|---|
| what | matrices that project x to q, k, v | softmax of the scores, one row per query |
| shape here | 3 matrices of {d_model} × {d_k} ({count} numbers) | {T} × {T} |
| where from | learned by gradient descent during training | computed from Q and K |
| when they change | fixed after training: the same for every sentence | recomputed for every input, every time |

Change the sentence in the sidebar (with the same d_model): the tables of W above stay the same, the attention weights change.
""",
            d_model=d_model,
            d_k=d_k,
            count=projection_parameter_count(d_model, d_k),
            T=T,
        )
    )


def pitfall_002(lab: LabInput, recovered: Projections | None) -> None:
    """Where the journey tutorial goes wrong in 2.2.4-2.2.6, run on the current input when its weights are chosen."""
    with st.expander(
        _("Pitfall: where the journey tutorial goes wrong in sections 2.2.4–2.2.6"),
        icon=":material/warning:",
        expanded=True,
    ):
        st.markdown(
            _(
                """
After computing q, k and v for “journey” correctly (2.2.2–2.2.3), the tutorial goes off track:

* **2.2.4** computes `inputs @ Wk.T` and calls it the scores of “journey”. It never uses the query and
  multiplies the inputs by the transposed key weight matrix W_kᵀ: a (6, 3) table, not 6 scores. The
  scores of “journey” are `query_1 @ keys.T`, the “journey” row of Q Kᵀ.
* **2.2.5** takes `softmax(..., dim=0)`: down the **columns**, so columns, not rows, sum to 1.
* **2.2.6** computes `(attn_weights_1.unsqueeze(1) * inputs).sum(dim=0)`: broadcasting makes it
  (6, 6, 3), and because every column of the weights sums to 1 the “context vector” it prints is
  **the inputs again**, unchanged.
"""
            )
        )
        if recovered is not None:
            pitfall_002_on_input(lab, recovered.W_k)
        if matches_002_inputs(lab.X):
            journey = JOURNEY.tokens.index("journey")
            st.markdown(
                _(
                    "The right scores for “journey” (the journey tutorial's own section 2.3.3, row “journey”): "
                    "{scores}",
                    scores=numbers_text(JOURNEY.printed["projected_scores"][journey], ", "),
                )
            )


def pitfall_002_on_input(lab: LabInput, W_k: torch.Tensor) -> None:
    """The journey tutorial's three wrong steps on the current input with the recovered W_k."""
    wrong_scores, column_weights, fake_context = tutorial_002_pitfall(lab.X, W_k)
    st.markdown(_("The same three steps on the current input with the recovered W_k (labelled wrong on purpose):"))
    wrong_columns = dimension_labels(W_k.shape[1], _("entry "))
    page.table(wrong_scores, lab.labels, wrong_columns, alt_text=_("Wrong: X W_k transposed"))
    st.caption(
        _("Wrong: X W_kᵀ (the journey tutorial's 2.2.4); with the journey sentence these are its printed numbers.")
    )
    page.table(column_weights, lab.labels, wrong_columns, alt_text=_("Wrong: softmax down columns"))
    st.caption(_("Wrong: softmax down columns (the journey tutorial's 2.2.5): each column sums to 1."))
    st.markdown(
        _(
            "The journey tutorial's 2.2.6 then returns X itself: largest |result − X| = {difference}.",
            difference=format_number(max_abs_difference(fake_context, lab.X)),
        )
    )


render(inputs.current())
