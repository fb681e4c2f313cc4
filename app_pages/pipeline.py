"""Lesson 9: the whole attention block for the current input, step by step, checked against PyTorch."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
import torch

import attention_core as ac
from attention_core.exercises import MultiHeadShown
from attention_core.export import (
    csv_zip,
    intermediate_frames,
    npz_bytes,
    query_trace,
    reproduction_code,
)
from attention_core.heads import Block, attention_cost, head_columns, pipeline_block
from attention_core.i18n import N_, _
from attention_core.projections import random_output_projection, random_projections
from attention_core.reference import check_block
from attention_core.tables import dimension_labels, to_frame
from ui import charts, page
from ui.page import (
    exercises_section,
    format_number,
    lesson_steps,
    vector_text,
    weighted_vectors_text,
    whole_lesson,
)
from ui.widgets import diagrams, inputs
from ui.widgets.inputs import LabInput

MASKS = {"none": N_("none"), "causal": N_("causal")}  # the mask choice: English values (URL, logic), shown translated
# attention_core's words shown on this page, translated where they are shown (the core keeps them in English)
VERDICTS = (
    N_("exactly equal"),
    N_("equal up to float32 rounding"),
    N_("equal up to float64 rounding"),
    N_("different"),
)
TRACE_COLUMNS = {"score q·k": N_("score q·k"), "scaled ÷ √d_k": N_("scaled ÷ √d_k"), "weight": N_("weight")}
WEIGHTED_VALUE = "weight × v "  # attention_core.export.query_trace's columns 'weight × v d1', 'weight × v d2', ...


def render(lab: LabInput) -> None:
    """The lesson's outline: the block's controls (every step's numbers depend on them), then one step per stage
    or two, in the order the block runs them."""
    page.lesson_title(__file__)
    wanted_heads, mask_kind, seed = controls()
    with page.slot():  # the error shows only while h does not divide d_model
        num_heads = heads_or_one(lab.d_model, wanted_heads)
    block = pipeline_block(lab.X, num_heads, mask_kind, seed)  # W_q, W_k, W_v, W_o, the mask and every step
    with page.slot():  # the head choice shows only with several heads
        head_index = head_to_follow(num_heads, block.d_k)
    settings_caption(lab, num_heads, block.d_k, mask_kind, seed)
    stages = stages_of(lab, block, mask_kind, head_index)
    lesson_steps(
        __file__,
        {
            N_("The block"): lambda: block_step(lab, num_heads, mask_kind),
            N_("Input"): lambda: input_step(stages),
            N_("Queries, keys, values"): lambda: projections_step(stages),
            N_("Scores"): lambda: scores_step(stages),
            N_("Mask"): lambda: mask_step(stages),
            N_("Weights"): lambda: weights_step(stages),
            N_("Context"): lambda: context_step(stages),
            N_("Heads and output"): lambda: output_step(stages),
            N_("One query"): lambda: one_query(lab, stages.head, block.steps.output, stages.head_name, block.d_k),
            N_("Who attends to whom"): lambda: who_attends_to_whom(lab, stages.head, stages.head_name),
            N_("In a transformer"): lambda: in_a_transformer(lab.T, lab.d_model),
            N_("Cost"): lambda: cost(lab.T, num_heads),
            N_("Check against PyTorch"): lambda: check_step(lab, block.steps, block.params, block.mask),
            N_("Take the numbers"): lambda: downloads(lab, block.steps, block.params, block.mask, num_heads),
        },
    )


@dataclass(frozen=True)
class Stages:
    """What the nine stages of the block draw: the input, the block's steps, the followed head and the mask."""

    lab: LabInput
    steps: ac.MultiHeadSteps
    params: dict[str, torch.Tensor]
    mask: torch.Tensor | None
    mask_kind: str
    head_index: int
    head_name: str
    d_k: int
    opened: bool  # the stages start open (in the stepped view, where a step holds only its own stages)
    shown: MultiHeadShown  # what the exercises are made from

    @property
    def head(self) -> ac.AttentionSteps:
        return self.steps.heads[self.head_index]


def stages_of(lab: LabInput, block: Block, mask_kind: str, head_index: int) -> Stages:
    """The stages of this block, following the head ``head_index``; open in a step, closed on the whole page."""
    return Stages(
        lab,
        block.steps,
        block.params,
        block.mask,
        mask_kind,
        head_index,
        head_name(head_index, len(block.steps.heads)),
        block.d_k,
        stages_open(),
        MultiHeadShown(block.steps, block.W_o, mask_kind == "causal", followed_head=head_index),
    )


def stages_open() -> bool:
    """Whether the stages start open: yes in a step (it holds one or two), no on the whole lesson's page."""
    return not whole_lesson()


def block_step(lab: LabInput, num_heads: int, mask_kind: str) -> None:
    """The idea and the formula, and the block as a flow chart."""
    intro(lab.description)
    flow_diagram(lab.T, lab.d_model, num_heads, mask_kind)


def input_step(stages: Stages) -> None:
    """Stage 1: the input."""
    st.subheader(_("Stage by stage"))
    st.caption(_("Each stage computes and draws its numbers while it is open (closed stages cost nothing)."))
    step_input(stages.lab, stages.opened)


def projections_step(stages: Stages) -> None:
    """Stage 2: the queries, keys and values of the followed head, and the four weight matrices."""
    num_heads = len(stages.steps.heads)
    column_note = _(
        " {head} uses {columns} of each W.",  # after the summary's sentence, with its space
        head=stages.head_name.capitalize(),
        columns=column_range(stages.head_index, stages.d_k),
    )
    step_projections(
        stages.lab,
        stages.head,
        stages.params,
        stages.head_index,
        stages.head_name,
        stages.d_k,
        column_note if num_heads > 1 else "",
        stages.opened,
    )


def scores_step(stages: Stages) -> None:
    """Stages 3 and 4: scores and scaled scores."""
    step_scores(stages.lab, stages.head, stages.head_name, stages.d_k, stages.opened)


def mask_step(stages: Stages) -> None:
    """Stage 5: the masked scores, and the what-if on a causal mask."""
    step_masked_scores(stages.lab, stages.head, stages.mask, stages.mask_kind, stages.head_name, stages.opened)
    exercises_section(__file__, stages.lab, material=stages.shown, places=("causal-count",))


def weights_step(stages: Stages) -> None:
    """The masked scores softmax reads, the question on the largest self-weight, then (once it is answered) stage 6:
    the weights."""
    softmax_input(stages.lab, stages.head, stages.head_name)
    if exercises_section(__file__, stages.lab, material=stages.shown, places=("self-attention",)):
        step_weights(stages.lab, stages.head, stages.head_name, True)  # open: it answers the question above


def context_step(stages: Stages) -> None:
    """Stage 7: the context."""
    step_context(stages.lab, stages.head, stages.head_name, stages.d_k, stages.opened)


def output_step(stages: Stages) -> None:
    """Stages 8 and 9: the heads side by side and W_o, the question on one output entry, then (once it is answered)
    the output."""
    num_heads = len(stages.steps.heads)
    # stage 8 starts open in every view: its row is what the question computes from
    step_heads_and_w_o(stages.lab, stages.steps, stages.params["W_o"], num_heads, stages.d_k, True)
    if exercises_section(__file__, stages.lab, material=stages.shown, places=("output-entry",)):
        step_output(stages.lab, stages.steps, stages.params["W_o"])


def check_step(
    lab: LabInput,
    steps: ac.MultiHeadSteps,
    params: dict[str, torch.Tensor],
    mask: torch.Tensor | None,
) -> None:
    """The block against PyTorch, and the code behind the page."""
    pytorch_check(lab, steps, params, mask)
    page.show_code(
        pipeline_block,
        random_projections,
        random_output_projection,
        ac.multi_head_attention,
        ac.split_heads,
        ac.attention,
        ac.merge_heads,
        query_trace,
        attention_cost,
        check_block,
    )


def column_range(h: int, d_k: int) -> str:
    """'columns 3–4' of head h, or 'column 3' when d_k = 1."""
    first, last = h * d_k + 1, (h + 1) * d_k
    return _("column {n}", n=first) if first == last else _("columns {first}–{last}", first=first, last=last)


def counted(n: int, one: str, many: str) -> str:
    """'1 head' or '4 heads' in the current language: ``one`` and ``many`` are marked msgids, ``many`` has {n}."""
    return _(one) if n == 1 else _(many, n=n)


def tolerance_words(tolerance: float) -> str:
    """attention_core.reference.tolerance_text in the learner's language."""
    return _(
        "|ours − reference| ≤ {tolerance} × the largest |reference| in every cell", tolerance=format(tolerance, "g")
    )


def trace_column(name: str) -> str:
    """A column of query_trace's table in the learner's language."""
    if name in TRACE_COLUMNS:
        return _(TRACE_COLUMNS[name])
    if name.startswith(WEIGHTED_VALUE):
        return _("weight × v {dimension}", dimension=name.removeprefix(WEIGHTED_VALUE))
    return name


def full_vector(values: torch.Tensor) -> str:
    """A row of numbers as [a, b, c] with 4 decimals, every entry written out."""
    return vector_text(values, limit=len(values))


def intro(description: str) -> None:
    st.markdown(
        _(
            """
Every lesson so far looked at one step. Here is the whole self-attention block for the current
input, in the order a transformer runs it: project the inputs into queries, keys and values,
score every query against every key, scale, mask, turn each row into weights with softmax, mix
the values, and, with several heads, put the heads side by side and project them back with W_o.
Open any stage to see its numbers; at the end, PyTorch recomputes the same block as a check.
"""
        )
    )
    st.latex(
        r"\text{head}_h = \operatorname{softmax}\!\Big(\frac{Q_h K_h^\top}{\sqrt{d_k}} + M\Big) V_h,"
        r"\quad Q_h = X W_q^{(h)},\; K_h = X W_k^{(h)},\; V_h = X W_v^{(h)}"
    )
    st.latex(r"\text{output} = \operatorname{Concat}(\text{head}_1, \dots, \text{head}_h)\, W_o")
    page.lesson_caption(description)


def controls() -> tuple[int, str, int]:
    """The number of heads wanted, the mask and the seed of W_q, W_k, W_v, W_o."""
    left, middle, right = st.columns(3)
    wanted_heads = inputs.number_input(
        _("Number of heads h"),
        min_value=1,
        max_value=64,
        value=1,
        step=1,
        key="pipeline_heads",
        container=left,
        help=_("d_k = d_model / h: the number of heads must divide d_model."),
    )
    mask_kind = inputs.radio(
        _("Mask"),
        list(MASKS),
        format_func=lambda option: _(MASKS[option]),
        horizontal=True,
        key="pipeline_mask",
        container=middle,
        help=_("causal: a token sees itself and earlier tokens."),
    )
    seed = inputs.seed_input(_("Seed for W_q, W_k, W_v, W_o"), key="pipeline_seed", container=right)
    return int(wanted_heads), mask_kind, seed


def heads_or_one(d_model: int, wanted_heads: int) -> int:
    """The wanted number of heads, or a single head with an error while h does not divide d_model."""
    try:
        ac.head_size(d_model, wanted_heads)
    except ValueError:  # the widget keeps h >= 1: the only error left is an h that does not divide d_model
        st.error(
            _(
                "d_model = {d_model} cannot be split into {heads} equal heads: choose a number of heads that divides "
                "{d_model}. The page shows a single head (h = 1) until then.",
                d_model=d_model,
                heads=wanted_heads,
            ),
            icon=":material/error:",
        )
        return 1
    return wanted_heads


def head_to_follow(num_heads: int, d_k: int) -> int:
    """Which head the steps show (a choice only when there are several)."""
    if num_heads == 1:
        return 0
    return inputs.selectbox(
        _("Head to follow through the steps"),
        range(num_heads),
        format_func=lambda h: _("head {n} ({columns} of W_q, W_k, W_v)", n=h + 1, columns=column_range(h, d_k)),
        key="pipeline_head",
    )


def head_name(head_index: int, num_heads: int) -> str:
    """How the steps name the followed head: 'head 2', or 'the head' when there is only one."""
    # TRANSLATORS: a head named inside a sentence ("the scores of head 2"); lesson 7's tables say "head {n}".
    return _("head {number}", number=head_index + 1) if num_heads > 1 else _("the head")


def settings_caption(lab: LabInput, num_heads: int, d_k: int, mask_kind: str, seed: int) -> None:
    st.caption(
        _(
            "T = {T} tokens, d_model = {d_model}, h = {heads} of d_k = {d_k}, mask: {mask}, weights drawn with seed "
            "{seed} (W ~ N(0, 1/d_model)).",
            T=lab.T,
            d_model=lab.d_model,
            heads=counted(num_heads, N_("1 head"), N_("{n} heads")),
            d_k=d_k,
            mask=_(MASKS[mask_kind]),
            seed=seed,
        )
    )


def flow_diagram(T: int, d_model: int, num_heads: int, mask_kind: str) -> None:
    """The block as a flow chart, each arrow labelled with the live shape of its tensor."""
    st.graphviz_chart(
        diagrams.block_flow(T, d_model, num_heads, mask_kind),
        alt=_(
            "Flow of the attention block with the shapes of the tensors for T = {T}, d_model = {d_model}",
            T=T,
            d_model=d_model,
        ),
    )
    st.caption(_("Each arrow carries the shape of the tensor flowing along it (heads × rows × columns)."))


def step(title: str, key: str, summary: str, *, shape: str, expanded: bool = False):
    """One collapsible stage of the block; its heavy content runs only while it is open. The title is fixed text
    (translated, so it changes with the language only; the expander's key keeps it):
    an expander that reruns on a click is identified by its label too, so a title naming the live shape would
    make a new expander (closed again, everything in it drawn anew) whenever T, d_k or the mask changes. The
    shape goes first in the caption instead."""
    box = st.expander(title, expanded=expanded, key=f"pipeline_step_{key}", type="step", on_change="rerun")
    box.caption(_("{shape}. {summary}", shape=shape, summary=summary))
    return box


def step_input(lab: LabInput, opened: bool) -> None:
    dims = dimension_labels(lab.d_model)
    with step(
        _("1. Input X"),
        "x",
        _("One row per token, one column per embedding dimension: the sidebar's input."),
        shape=f"{lab.T} × {lab.d_model}",
        expanded=opened,
    ) as box:
        if box.open:
            page.matrix(
                lab.X,
                lab.labels,
                dims,
                kind="values",
                title=_("Input X"),
                row_title=_("token"),
                col_title=_("dimension"),
            )


def step_projections(
    lab: LabInput,
    head: ac.AttentionSteps,
    params: dict[str, torch.Tensor],
    head_index: int,
    head_name: str,
    d_k: int,
    note: str,
    opened: bool,
) -> None:
    dims, dims_k = dimension_labels(lab.d_model), dimension_labels(d_k)
    with step(
        _("2. Queries, keys, values"),
        "qkv",
        _("Q = X W_q, K = X W_k, V = X W_v, each W of shape {d_model} × {d_model}.", d_model=lab.d_model) + note,
        shape=_("{T} × {d_k} each", T=lab.T, d_k=d_k),
        expanded=opened,
    ) as box:
        if box.open:
            for tab, name, tensor in zip(st.tabs(["Q", "K", "V"]), "QKV", (head.Q, head.K, head.V), strict=True):
                with tab:
                    W = head_columns(
                        params[f"W_{name.lower()}"], head_index, d_k
                    )  # (d_model, d_k): this head's columns
                    page.matrix(
                        tensor,
                        lab.labels,
                        dims_k,
                        kind="values",
                        title=_("{matrix} of {head}", matrix=name, head=head_name),
                        row_title=_("token"),
                        col_title=_("dimension"),
                        key=f"pipeline_cell_{name}",
                        explain=page.projection_of(lab.X, W),
                    )
            st.markdown(_("The weight matrices (rows: input dimension, columns: output dimension):"))
            for tab, (name, W) in zip(st.tabs(list(params)), params.items(), strict=True):
                with tab:
                    page.table(W, dims, dims, alt_text=name)


def step_scores(lab: LabInput, head: ac.AttentionSteps, head_name: str, d_k: int, opened: bool) -> None:
    """Stages 3 and 4: scores, scaled scores."""
    T, labels = lab.T, lab.labels
    with step(
        _("3. Scores Q Kᵀ"),
        "scores",
        _("scores[i, j] = q_i · k_j: how well query i matches key j."),
        shape=f"{T} × {T}",
        expanded=opened,
    ) as box:
        if box.open:
            page.matrix(
                head.scores,
                labels,
                labels,
                kind="scores",
                title=_("Scores Q Kᵀ"),
                caption=_("Scores Q Kᵀ of {head}", head=head_name),  # a fixed title: h 1 <-> 2 keeps the chart
                key="pipeline_cell_scores",
                explain=page.scores_of(head),
                highlight_row=lab.query_label,
            )
    with step(
        _("4. Scaled scores ÷ √d_k"),
        "scaled",
        _(
            "Every score is divided by √{d_k}. For entries that are independent with mean 0, q · k has a variance "
            "d_k times theirs; the division stops the scores' spread growing with d_k, so softmax does not saturate.",
            d_k=d_k,
        ),
        shape=f"{T} × {T}",
        expanded=opened,
    ) as box:
        if box.open:
            page.matrix(
                head.scaled_scores,
                labels,
                labels,
                kind="scores",
                title=_("Scaled scores"),
                caption=_("Scaled scores of {head}", head=head_name),  # a fixed title: h 1 <-> 2 keeps the chart
                key="pipeline_cell_scaled",
                explain=page.scores_of(head, scaled=True),
                highlight_row=lab.query_label,
            )


def step_masked_scores(
    lab: LabInput,
    head: ac.AttentionSteps,
    mask: torch.Tensor | None,
    mask_kind: str,
    head_name: str,
    opened: bool,
) -> None:
    """Stage 5: masked scores (and the mask)."""
    T, labels = lab.T, lab.labels
    mask_note = (
        _("No mask: every query may attend to every key, so the masked scores equal the scaled scores.")
        if mask is None
        else _(
            "The causal mask blocks every key after the query: those cells become −∞ (drawn empty in the heatmap, "
            "“-inf” in the table), so softmax gives them weight exactly 0."
        )
    )
    shape = _("{T} × {T}, mask: {mask}", T=T, mask=_(MASKS[mask_kind]))
    with step(_("5. Masked scores"), "masked", mask_note, shape=shape, expanded=opened) as box:
        if box.open:
            if mask is not None:
                page.heatmap(
                    mask.to(lab.X.dtype),
                    labels,
                    labels,
                    kind="mask",
                    title=_("Causal mask (True = may attend)"),
                    key="pipeline_cell_mask",
                    explain=page.masked_scores_of(head, mask),
                    highlight_row=lab.query_label,
                )
            page.matrix(
                head.masked_scores,
                labels,
                labels,
                kind="scores",
                title=_("Masked scores"),
                caption=_("Masked scores of {head}", head=head_name),  # a fixed title: h 1 <-> 2 keeps the chart
                key="pipeline_cell_masked",
                explain=page.masked_scores_of(head, mask),
                highlight_row=lab.query_label,
            )


def softmax_input(lab: LabInput, head: ac.AttentionSteps, head_name: str) -> None:
    """The masked scores of the followed head (stage 5), what softmax turns into weights row by row."""
    st.markdown(_("Softmax reads the masked scores of {head} (stage 5), row by row:", head=head_name))
    page.frame_table(  # as text: a blocked cell reads −∞
        to_frame(head.masked_scores, lab.labels, lab.labels).map(format_number),
        alt=_("Masked scores of {head}", head=head_name),
    )


def step_weights(lab: LabInput, head: ac.AttentionSteps, head_name: str, opened: bool) -> None:
    """Stage 6: softmax rows."""
    T, labels = lab.T, lab.labels
    with step(
        _("6. Weights = softmax of each row"),
        "weights",
        _("Each row is a probability distribution over the keys: non-negative, summing to 1."),
        shape=f"{T} × {T}",
        expanded=opened,
    ) as box:
        if box.open:
            page.matrix(
                head.weights,
                labels,
                labels,
                kind="weights",
                title=_("Attention weights"),
                caption=_("Attention weights of {head}", head=head_name),  # a fixed title: h 1 <-> 2 keeps the chart
                key="pipeline_cell_weights",
                explain=page.weights_of(head),
                download="pipeline_weights.csv",
                highlight_row=lab.query_label,
            )


def step_context(lab: LabInput, head: ac.AttentionSteps, head_name: str, d_k: int, opened: bool) -> None:
    """Stage 7: weights V."""
    T, labels = lab.T, lab.labels
    with step(
        _("7. Context = weights V"),
        "context",
        _("context_i = Σ_j weights[i, j] v_j: each token's new vector is a weighted mix of the values."),
        shape=f"{T} × {d_k}",
        expanded=opened,
    ) as box:
        if box.open:
            page.matrix(
                head.context,
                labels,
                dimension_labels(d_k),
                kind="values",
                title=_("Context of {head}", head=head_name),
                col_title=_("entry"),
                key="pipeline_cell_context",
                explain=page.context_of(head),
            )


def step_heads_and_w_o(
    lab: LabInput, steps: ac.MultiHeadSteps, W_o: torch.Tensor, num_heads: int, d_k: int, opened: bool
) -> None:
    """Stages 8 and 9: the heads side by side, then W_o (the output follows the question on it)."""
    T, d_model, labels = lab.T, lab.d_model, lab.labels
    dims = dimension_labels(d_model)
    concat_note = (
        _(
            "The {h} context matrices of {T} × {d_k} side by side, {columns} per head, head 1 first.",
            h=num_heads,
            T=T,
            d_k=d_k,
            columns=counted(d_k, N_("1 column"), N_("{n} columns")),
        )
        if num_heads > 1
        else _("With a single head the concatenation is the head's context itself.")
    )
    with step(
        _("8. Heads side by side: concat"), "concat", concat_note, shape=f"{T} × {d_model}", expanded=opened
    ) as box:
        if box.open:
            page.matrix(
                steps.concat, labels, dims, kind="values", title=_("Concatenated heads"), col_title=_("dimension")
            )
    with step(
        _("9. Output = concat W_o"),
        "output",
        _("W_o mixes the heads' columns back into one d_model-wide vector per token: the block's output."),
        shape=f"{T} × {d_model}",
        expanded=True,
    ) as box:
        if box.open:
            page.matrix(
                W_o, dims, dims, kind="values", title="W_o", row_title=_("concat column"), col_title=_("output")
            )


def step_output(lab: LabInput, steps: ac.MultiHeadSteps, W_o: torch.Tensor) -> None:
    """Stage 9's result: the block's output, concat W_o, every cell clickable for its sum."""
    dims = dimension_labels(lab.d_model)
    st.markdown(_("**The output of the block**, concat W_o (click a cell for its sum):"))
    page.matrix(
        steps.output,
        lab.labels,
        dims,
        title=_("Output of the block"),
        key="pipeline_cell_output",
        download="pipeline_output.csv",
        **page.output_options(steps, W_o),
    )


def one_query(lab: LabInput, head: ac.AttentionSteps, output: torch.Tensor, head_name: str, d_k: int) -> None:
    """The query's row key by key, its context as a weighted sum of values, and its output row."""
    q, query, labels = lab.query_index, lab.query_label, lab.labels
    st.subheader(_("One query through the block: “{query}”", query=query))
    st.markdown(
        _(
            "Row “{query}” of {head}, key by key: the score q · k_j, divided by √{d_k}, then the weight after "
            "softmax (0 where the mask blocks the key), and the weight times the value.",
            query=query,
            head=head_name,
            d_k=d_k,
        )
    )
    trace = query_trace(head, q, labels).rename(columns=trace_column)
    page.table(trace, alt_text=_("Scores, scaled scores and weights of the query {query}", query=query))
    keys = [j for j, w in enumerate(head.weights[q].tolist()) if w != 0]  # the keys the mask lets through
    d_v = head.V.shape[-1]
    written = weighted_vectors_text(head.weights[q, keys], head.V[keys], head.context[q], entries=d_v)
    st.markdown(
        _(
            "context(“{query}”) = Σ_j weight_j · v_j (the rows v_j of V) = {written} (row “{query}” of stage 7), "
            "and its output row is **{output}**.",
            query=query,
            written=written,
            output=full_vector(output[q]),
        )
    )


def who_attends_to_whom(lab: LabInput, head: ac.AttentionSteps, head_name: str) -> None:
    """Every query joined to every key by a line as strong as its weight (the query's lines only when long)."""
    st.subheader(_("Who attends to whom"))
    focus = lab.query_label if lab.T > charts.MAX_LINE_TOKENS else None
    st.markdown(
        _(
            "The weights of {head}: queries on the left, keys on the right; the stronger the weight, the darker "
            "and thicker the line. Hover a word on the left to keep only its lines, or a word on the right to see "
            "who attends to it.",
            head=head_name,
        )
    )
    if focus is not None:
        st.caption(
            _(
                "{T} tokens make {T}² lines: only the lines of the query “{focus}” are drawn (change it in the "
                "sidebar).",
                T=lab.T,
                focus=focus,
            )
        )
    page.line_view(head.weights, lab.labels, title=_("Attention weights as lines"), focus=focus)


def in_a_transformer(T: int, d_model: int) -> None:
    """Where this block sits in a transformer layer: residual stream, layer norm, feed-forward."""
    st.subheader(_("Where attention sits in a transformer"))
    st.markdown(
        _(
            """
A transformer layer is this attention block plus a feed-forward network, each wrapped the same way
(GPT-2 style, "pre-norm"): **layer norm** rescales each token's vector, the sublayer computes, and its output
is **added** back to its input, the **residual stream** x:

`x = x + attention(layer_norm(x))`, then `x = x + feed_forward(layer_norm(x))`.

That addition is why W_o maps back to d_model = {d_model} numbers per token. Attention is the only step that
mixes tokens; the feed-forward network works on each token alone. The original transformer put the layer norm
after each addition instead (post-norm). A model stacks many such layers.
""",
            d_model=d_model,
        )
    )
    st.graphviz_chart(
        diagrams.transformer_block(T, d_model),
        width="content",
        alt=_("A transformer layer: layer norm, multi-head attention, add the residual; layer norm, feed-forward, add"),
    )


def cost(T: int, num_heads: int) -> None:
    """O(T²) time and memory: the score matrices for this T and for longer inputs."""
    st.subheader(_("The cost of attention: O(T²)"))
    st.markdown(
        _(
            "Every query is scored against every key, so each head computes and stores a T × T matrix of scores and "
            "of weights: time and memory grow with the **square** of the length (a dense mask changes nothing: the "
            "blocked cells are computed too). Here T = {T}; the same matrices for longer inputs:",
            T=T,
        )
    )
    costs = attention_cost((T, 1_024, 8_192, 32_768), num_heads)  # one row per T: cells and float32 bytes
    shown = [
        "T",
        _("cells T² per head"),
        _("bytes per head (float32)"),
        counted(num_heads, N_("bytes, 1 head"), N_("bytes, {n} heads")),
    ]  # attention_cost's columns, in its order, as the learner reads them
    costs = costs.rename(columns=dict(zip(costs.columns, shown, strict=True)))
    config = {column: st.column_config.NumberColumn(column, format="localized") for column in costs.columns}
    page.frame_table(costs, column_config=config, hide_index=True)
    st.caption(
        _(
            "Bytes of one float32 score matrix (4 bytes per cell); training keeps the weights as well, for every "
            "layer. Memory-efficient kernels (FlashAttention) avoid storing the T × T matrix, but still do O(T²) work."
        )
    )


def pytorch_check(
    lab: LabInput, steps: ac.MultiHeadSteps, params: dict[str, torch.Tensor], mask: torch.Tensor | None
) -> None:
    """The block recomputed by F.scaled_dot_product_attention and nn.MultiheadAttention."""
    st.subheader(_("Checked against PyTorch"))
    check = check_block(steps, lab.X, params["W_q"], params["W_k"], params["W_v"], params["W_o"], mask=mask)
    precision = check.output.precision
    tolerance = _(
        "equal when {tolerance}, the {precision} error measured on these sizes",
        tolerance=tolerance_words(check.output.tolerance),
        precision=precision,
    )
    compared = (
        (_("Context vs F.scaled_dot_product_attention"), check.contexts, _("all heads")),
        (_("Weights vs nn.MultiheadAttention"), check.weights, _("all heads")),
        (_("Output vs nn.MultiheadAttention"), check.output, _("the block")),
    )
    for column, (label, result, over) in zip(st.columns(3), compared, strict=True):
        column.metric(
            label,
            format_number(result.max_difference),
            help=_("max |difference| over {over}; {tolerance}", over=over, tolerance=tolerance),
        )
        column.caption(f"**{_(result.verdict)}**")
    counts = {"rows": check.fully_masked_rows, "T": lab.T}
    masked_rows = (
        _(
            "With no mask every query sees every key: {rows} fully masked rows here, all {T} rows compared with both.",
            **counts,
        )
        if mask is None
        else _(
            "With the causal mask every query sees at least itself: {rows} fully masked rows here, all {T} rows "
            "compared with both.",
            **counts,
        )
    )
    st.markdown(
        _(
            """
Each head's context is recomputed by `torch.nn.functional.scaled_dot_product_attention` on the same Q, K, V
and mask, and the whole block by `torch.nn.MultiheadAttention` with our W_q, W_k, W_v, W_o copied in (no biases).
Each verdict compares cell by cell with a tolerance relative to the values ({tolerance}): a gap within it
is {precision} rounding (the sums run in another order), not disagreement.

Why fully masked rows are compared with SDPA only: a query that may attend to nothing has no valid softmax.
`nn.MultiheadAttention` called with `need_weights=True` (its default, used here to get the weights) returns
NaN for such a row; SDPA, like the lab, returns zeros. So those rows are left out of the
`nn.MultiheadAttention` comparison and checked against SDPA. {masked_rows}
""",
            tolerance=tolerance,
            precision=precision,
            masked_rows=masked_rows,
        )
    )


def downloads(
    lab: LabInput,
    steps: ac.MultiHeadSteps,
    params: dict[str, torch.Tensor],
    mask: torch.Tensor | None,
    num_heads: int,
) -> None:
    """Every intermediate as a zip of CSVs or an .npz (built on click), and code that reproduces them."""
    st.subheader(_("Take the numbers with you"))
    st.markdown(
        _(
            "Every intermediate above (X, the four W, the mask, each head's Q, K, V, scores, scaled, masked scores, "
            "weights and context, the concatenation and the output) in one file: a zip of CSVs with the token "
            "labels, or a NumPy .npz (load it with `numpy.load(path)`, no pickle needed)."
        )
    )

    def frames() -> dict:
        return intermediate_frames(lab.tokens, lab.X, params, steps, mask)

    d1, d2 = st.columns(2)
    d1.download_button(
        _("Download every step as CSVs (zip)"),
        lambda: csv_zip(frames()),
        file_name="attention_pipeline.zip",
        mime="application/zip",
        icon=":material/folder_zip:",
        on_click="ignore",
        key="pipeline_zip",
    )
    d2.download_button(
        _("Download every step as .npz"),
        lambda: npz_bytes(frames(), lab.tokens),
        file_name="attention_pipeline.npz",
        mime="application/octet-stream",
        icon=":material/download:",
        on_click="ignore",
        key="pipeline_npz",
    )
    box = st.expander(
        _("Code that reproduces these numbers in a plain Python session"),
        icon=":material/terminal:",
        key="code reproduction",
        on_change="rerun",  # drawn only while open, as page.show_code (a closed block is highlighted on every load)
    )
    if not box.open:
        return
    with box:
        st.markdown(
            _(
                "The current X and weights as full-precision literals, then plain PyTorch with "
                "`F.scaled_dot_product_attention`. Paste it into Python with torch installed."
            )
        )
        st.code(reproduction_code(lab.tokens, lab.X, params, num_heads=num_heads, mask=mask), language="python")


render(inputs.current())
