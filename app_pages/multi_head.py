"""Lesson 7: multi-head attention, h smaller heads side by side, concatenated and projected by W_o."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
import torch

import attention_core as ac
from attention_core.exercises import MultiHeadShown
from attention_core.heads import (
    LIFT_WIDTHS,
    MAX_HEADS,
    MultiHeadLayer,
    head_column_labels,
    head_output_parts,
    head_shapes,
    multi_head_layer,
    parameter_counts,
    split_cost,
    valid_head_counts,
)
from attention_core.i18n import N_, _
from attention_core.reference import (
    BlockCheck,
    agreement,
    check_block,
    mha_reference,
    torch_parameter_count,
)
from attention_core.tables import dimension_labels, to_frame
from ui import charts, page
from ui.page import exercises_section, format_number, latex_int, lesson_steps
from ui.widgets import diagrams, inputs
from ui.widgets.inputs import LabInput

SIDEBAR = "sidebar"
WIDTH_OPTIONS = (SIDEBAR, *(str(w) for w in LIFT_WIDTHS))
GRID_CHART_TOKENS = 48  # above this, each head is drawn as an image (8 charts of 128² cells are too heavy)
BERT_D_MODEL, BERT_HEADS = 768, 12
PRECISION = torch.float64  # the heads' outputs are sums that cancel to near 0 (1e-6): float32 gets their 3rd digit
# wrong (-5.2447e-06 for -5.2539e-06), float64 gets every digit shown right
# attention_core's words shown on this page, translated where they are shown (the core keeps them in English)
VERDICTS = (
    N_("exactly equal"),
    N_("equal up to float32 rounding"),
    N_("equal up to float64 rounding"),
    N_("different"),
)
SHAPE_STEPS = (
    N_("Q = X W_q (also K, V)"),
    N_("split into heads"),
    N_("scores Q_h K_hᵀ / √d_k"),
    N_("weights = softmax(scores)"),
    N_("context_h = weights_h V_h"),
    N_("concat (heads side by side)"),
    N_("output = concat W_o"),
)  # attention_core.heads.head_shapes's step names
COSTS = {"parameters": N_("parameters"), "matmul FLOPs": N_("matmul FLOPs"), "scores (h T²)": N_("scores (h T²)")}


@dataclass(frozen=True)
class Layer:
    """The page's own settings: the layer's width, its number of heads, the seed and the mask."""

    width: int | None  # the d_model X is lifted to, None for the sidebar's own width
    num_heads: int
    seed: int
    causal: bool
    blocked_row: int | None  # the query row blocked to show a fully masked row, None when the demo is off


def render(lab: LabInput) -> None:
    """The lesson's outline: the layer's controls (every step's numbers depend on them), then one function per step."""
    page.lesson_title(__file__)
    layer = controls(lab)  # stops the page with an error while h does not divide d_model
    mha = multi_head_layer(
        lab.X,
        layer.num_heads,
        layer.seed,
        width=layer.width,
        causal=layer.causal,
        blocked_row=layer.blocked_row,
        dtype=PRECISION,
    )  # X (lifted or not), W_q, W_k, W_v, W_o, the mask and every head
    lesson_steps(
        __file__,
        {
            N_("Why several heads"): lambda: intro(lab.description),
            N_("Shapes"): lambda: shapes_step(lab, mha, layer),
            N_("Q by head"): lambda: q_by_head(lab, mha, layer.num_heads),
            N_("What splitting costs"): lambda: split_costs(lab.T, mha.d_model, layer.num_heads),
            N_("Every head"): lambda: every_head_step(lab, mha, layer),
            N_("One head's weights"): lambda: one_head_table(lab.labels, mha.steps, mha.head_names),
            N_("Worked example"): lambda: worked_example_step(lab, mha, layer),
            N_("Output as a sum"): lambda: output_parts(lab, mha.steps, mha.params.W_o, shown_heads(mha), mha.d_k),
            N_("Concatenation"): lambda: concatenation(lab.labels, mha.steps, layer.num_heads),
            N_("W_o"): lambda: output_projection(mha.params.W_o, layer.num_heads),
            N_("The output"): lambda: multi_head_output(lab.labels, mha.steps, mha.params.W_o),
            N_("Parameters"): lambda: parameters_step(lab, mha, layer),
            N_("Check against PyTorch"): lambda: check_step(lab, layer, shown_heads(mha)),
        },
    )


def shown_heads(mha: MultiHeadLayer) -> list[str]:
    """The heads' names as the learner reads them ('head 1', 'head 2', ... in the current language)."""
    return [_("head {n}", n=n) for n in range(1, len(mha.head_names) + 1)]


def counted(n: int, one: str, many: str) -> str:
    """'1 row' or '4 rows' in the current language: ``one`` and ``many`` are marked msgids, ``many`` has {n}."""
    return _(one) if n == 1 else _(many, n=n)


def tolerance_words(tolerance: float) -> str:
    """attention_core.reference.tolerance_text in the learner's language."""
    return _(
        "|ours − reference| ≤ {tolerance} × the largest |reference| in every cell", tolerance=format(tolerance, "g")
    )


def material(mha: MultiHeadLayer, layer: Layer) -> MultiHeadShown:
    """What the exercises are made from: the layer as the page draws it."""
    return MultiHeadShown(mha.steps, mha.params.W_o, layer.causal)


def shapes_step(lab: LabInput, mha: MultiHeadLayer, layer: Layer) -> None:
    """The layer's sizes, the question on d_k, then (once it is answered) the shape of every step."""
    layer_sizes(mha.X, layer.num_heads)
    if exercises_section(__file__, lab, material=material(mha, layer), places=("head-size",)):
        shapes(mha.X, layer.num_heads, mha.d_k)


def q_by_head(lab: LabInput, mha: MultiHeadLayer, num_heads: int) -> None:
    """The layer's input (lifted when needed), and Q with its columns named by head."""
    lifted_input(lab, mha.X, mha.W_in)
    split_queries(lab.labels, mha.X, mha.params, num_heads, mha.d_k)


def every_head_step(lab: LabInput, mha: MultiHeadLayer, layer: Layer) -> None:
    """The query's scaled scores in every head, the question on one head's weight, then (once it is answered) every
    head's weights side by side."""
    st.subheader(_("Every head's attention weights"))
    query_scores_by_head(lab.labels, lab.query_index, mha.steps, shown_heads(mha))
    if exercises_section(__file__, lab, material=material(mha, layer), places=("head-weight",)):
        weights_of_every_head(lab.labels, lab.query_label, mha.steps, shown_heads(mha))


def worked_example_step(lab: LabInput, mha: MultiHeadLayer, layer: Layer) -> None:
    """The query through every head, the question on the concatenation's shape, then (once it is answered) the
    query's concatenated row."""
    worked_example(lab, mha.steps, shown_heads(mha))
    if exercises_section(__file__, lab, material=material(mha, layer), places=("concat-shape",)):
        concatenated_row(lab, mha.steps, mha.d_k)


def parameters_step(lab: LabInput, mha: MultiHeadLayer, layer: Layer) -> None:
    """The what-if on one head, then (once it is answered) how many weights the layer has."""
    st.subheader(_("How many parameters?"))
    if exercises_section(__file__, lab, material=material(mha, layer), places=("one-head-params",)):
        parameter_count(mha.d_model)


def check_step(lab: LabInput, layer: Layer, heads: list[str]) -> None:
    """The layer against PyTorch, and the code behind the page."""
    torch_check(lab, layer, heads)
    page.show_code(
        multi_head_layer,
        ac.multi_head_attention,
        ac.split_heads,
        ac.merge_heads,
        head_output_parts,
        split_cost,
        ac.parameter_count,
        mha_reference,
        check_block,
        agreement,
    )


@st.cache_data(max_entries=64, show_spinner=False)
def torch_checks(
    x_values: tuple[float, ...],
    d_in: int,
    width: int | None,
    seed: int,
    num_heads: int,
    causal: bool,
    blocked_row: int | None,
) -> BlockCheck:
    """Agreement with nn.MultiheadAttention and, per head, with F.scaled_dot_product_attention (cached)."""
    X = torch.tensor(x_values, dtype=PRECISION).reshape(-1, d_in)  # (T, d_in)
    mha = multi_head_layer(X, num_heads, seed, width=width, causal=causal, blocked_row=blocked_row, dtype=PRECISION)
    W_q, W_k, W_v, W_o = mha.params.W_q, mha.params.W_k, mha.params.W_v, mha.params.W_o
    return check_block(mha.steps, mha.X, W_q, W_k, W_v, W_o, mask=mha.mask)


@st.cache_data(show_spinner=False)
def torch_counts(d_model: int, num_heads: int) -> tuple[int, int]:
    """Parameters of nn.MultiheadAttention(d_model, num_heads) without and with biases (cached)."""
    return torch_parameter_count(d_model, num_heads, bias=False), torch_parameter_count(d_model, num_heads, bias=True)


def width_label(option: str, sidebar_d_model: int) -> str:
    """How the d_model choice reads: the sidebar's own width, or a lift to a wider one."""
    if option == SIDEBAR:
        return _("{d_model} (the sidebar's embeddings)", d_model=sidebar_d_model)
    return _("{d_model} (lift with a seeded W_in)", d_model=option)


def intro(description: str) -> None:
    st.markdown(
        _(
            """
One attention head gives each query **one** way of spreading its attention. But a word may need to look at
several things at once: the subject of its verb, the word before it, a matching bracket. Multi-head attention
runs **h** smaller heads side by side. Head *h* gets its own slice of W_q, W_k and W_v (d_k = d_model / h
columns each), so it computes its own scores, weights and context. The h contexts are put side by side
(concatenated) and mixed by one more matrix, W_o.

**What W_o is for:** each head only sees its own d_k columns, so without W_o the heads would never combine.
W_o (d_model × d_model) mixes them, every output column drawing on every head, and maps the result back to
d_model numbers per token, the width of the input, so the block's output can be added to the residual stream
(lesson 9 shows where).
"""
        )
    )
    st.latex(
        r"\text{head}_h = \operatorname{softmax}\!\left(\frac{Q_h K_h^\top}{\sqrt{d_k}}\right) V_h,\qquad "
        r"Q_h = X\,W_q^{(h)},\; K_h = X\,W_k^{(h)},\; V_h = X\,W_v^{(h)},\qquad d_k = \frac{d_\text{model}}{h}"
    )
    st.latex(r"\operatorname{MultiHead}(X) = \operatorname{Concat}(\text{head}_1, \dots, \text{head}_h)\, W_o")
    page.lesson_caption(description)


def controls(lab: LabInput) -> Layer:
    st.subheader(_("Choose the layer"))
    c1, c2, c3, c4 = st.columns(4)
    with c1:
        width = inputs.selectbox(
            "d_model",
            WIDTH_OPTIONS,
            index=WIDTH_OPTIONS.index("8") if lab.d_model < 8 else 0,
            format_func=lambda option: width_label(option, lab.d_model),
            key="multi_head_width",
            help=_(
                "The tutorials' embeddings have only 3 dimensions, which 2 heads cannot share. A seeded random "
                "matrix W_in maps them to a wider d_model first."
            ),
        )
    with c2:
        num_heads = int(
            inputs.number_input(
                _("Number of heads h"),
                1,
                MAX_HEADS,
                2,
                step=1,
                key="multi_head_heads",
                help=_("Must divide d_model, so every head gets the same d_k = d_model / h."),
            )
        )
    with c3:
        seed = inputs.seed_input(_("Weight seed"), key="multi_head_seed", help=_("Seeds W_in, W_q, W_k, W_v and W_o."))
    with c4:
        causal = inputs.toggle(
            _("Causal mask"),
            value=False,
            key="multi_head_causal",
            help=_("Every head uses the same mask (lesson 6)."),
        )
        demo_row = inputs.toggle(
            _("Block every key of “{query}”", query=lab.query_label),
            value=False,
            key="multi_head_full_row",
            help=_("A fully masked row, to see how PyTorch's two functions treat it."),
        )
    d_model = lab.d_model if width == SIDEBAR else int(width)
    head_size_or_stop(d_model, num_heads)
    return Layer(None if width == SIDEBAR else d_model, num_heads, seed, causal, lab.query_index if demo_row else None)


def head_size_or_stop(d_model: int, num_heads: int) -> int:
    """d_k = d_model / h, or an error naming the head counts that work (and the page stops)."""
    try:
        return ac.head_size(d_model, num_heads)
    except ValueError:  # the widget keeps h >= 1: the only error left is an h that does not divide d_model
        choices = ", ".join(str(h) for h in valid_head_counts(d_model))
        st.error(
            _(
                "d_model = {d_model} cannot be split into {heads} equal heads: choose a number of heads that divides "
                "{d_model}. With d_model = {d_model}, these work: {choices}.",
                d_model=d_model,
                heads=num_heads,
                choices=choices,
            ),
            icon=":material/error:",
        )
        st.stop()


def lifted_input(lab: LabInput, X_model: torch.Tensor, W_in: torch.Tensor | None) -> None:
    """The layer's input X W_in when the sidebar's embeddings are lifted to a wider d_model (nothing otherwise)."""
    if W_in is None:
        return
    d_model = int(X_model.shape[1])
    st.markdown(
        _(
            "**Input.** X has {d_in} columns; X W_in (W_in is {d_in} × {d_model}, seeded random values / √{d_in}) "
            "describes the same {T} tokens with {d_model} numbers each.",
            d_in=lab.d_model,
            d_model=d_model,
            T=lab.T,
        )
    )
    lift_tab, x_tab = st.tabs([_("X W_in (the layer's input)"), "W_in"])
    with lift_tab:
        page.table(ac.vector_frame(X_model, lab.labels), alt_text=_("Lifted embeddings X W_in"))
    with x_tab:
        page.table(W_in, dimension_labels(lab.d_model), dimension_labels(d_model), alt_text=_("Lifting matrix W_in"))


def layer_sizes(X_model: torch.Tensor, num_heads: int) -> None:
    """The sizes the shapes are made from: T, d_model and h."""
    T, d_model = X_model.shape
    st.subheader(_("The shapes at every step"))
    st.markdown(_("T = {T} tokens, d_model = {d_model}, h = {h} heads.", T=T, d_model=d_model, h=num_heads))


def shapes(X_model: torch.Tensor, num_heads: int, d_k: int) -> None:
    """The shape of every step (diagram and table)."""
    T, d_model = X_model.shape
    st.markdown(
        _(
            "d_k = {d_model} / {h} = **{d_k}**. "
            "In code the split is a reshape: (T, d_model) → (T, h, d_k) → transpose → (h, T, d_k).",
            d_model=d_model,
            h=num_heads,
            d_k=d_k,
        )
    )
    st.graphviz_chart(
        diagrams.head_split(T, d_model, num_heads),
        width="content",
        alt=_("X split into {h} heads of d_k = {d_k}, concatenated and projected by W_o", h=num_heads, d_k=d_k),
    )
    steps_and_shapes = head_shapes(T, d_model, num_heads)
    rows = "".join(f"| {_(step).replace('_', chr(92) + '_')} | {shape} |\n" for step, shape in steps_and_shapes)
    step_title, shape_title = _("step"), _("shape")
    st.markdown(f"| {step_title} | {shape_title} |\n|---|---|\n" + rows)  # a markdown table: one cheap element


def split_queries(labels: tuple[str, ...], X_model: torch.Tensor, params, num_heads: int, d_k: int) -> None:
    """Q with its columns named by head."""
    d_model = int(X_model.shape[1])
    st.subheader(_("Q, split by head"))
    st.markdown(
        _(
            "Each head uses its own columns of W_q, W_k and W_v (head 1 the first {d_k}, head 2 the next {d_k}, …). "
            "Column names below say which head a column of Q belongs to:",
            d_k=d_k,
        )
    )
    Q = ac.project_qkv(X_model, params.W_q, params.W_k, params.W_v)[0]  # (T, d_model)
    page.table(Q, labels, head_column_labels(d_model, num_heads), alt_text=_("Q split into heads"))


def split_costs(T: int, d_model: int, num_heads: int) -> None:
    """One head against h heads: same parameters and matmul FLOPs, h times as many scores."""
    st.subheader(_("What splitting costs"))
    one, split = split_cost(T, d_model, 1), split_cost(T, d_model, num_heads)
    st.markdown(
        _(
            "Splitting into h = {h} heads costs **nothing extra in parameters or matrix-multiply FLOPs**: the "
            "heads share the d_model × d_model matrices of one big head, and h products of width d_k = d_model / h "
            "add up to one of width d_model. It does cost **scores**: every head has its own T × T matrix, so softmax "
            "and memory handle h · T² = {split} numbers instead of T² = {one}.",
            h=num_heads,
            split=format(split["scores (h T²)"], ","),
            one=format(one["scores (h T²)"], ","),
        )
    )
    st.table(
        {
            _("cost"): [_(COSTS.get(name, name)) for name in one],
            _("1 head"): [f"{v:,}" for v in one.values()],
            _("{h} heads", h=num_heads): [f"{v:,}" for v in split.values()],
        }
    )


def weights_of_every_head(labels: tuple[str, ...], query: str, steps: ac.MultiHeadSteps, heads: list[str]) -> None:
    """One clickable heatmap per head on a shared colour scale, and a table of the chosen head's weights."""
    shared = page.weights_domain(*(head.weights for head in steps.heads))
    st.markdown(
        _(
            "Same colour scale in every panel: the heads look at the same tokens in different ways, because each "
            "has its own W_q and W_k. These weights are random, not trained, so the heads are often close to "
            "uniform; trained heads are much sharper. Try another weight seed, or random embeddings in the sidebar. "
            "The row of the query “{query}” is outlined; click any cell for its softmax with the real numbers.",
            query=query,
        )
    )
    st.caption(_("Colours: {legend}, shared by every panel.", legend=charts.weights_legend(shared)))
    grid_rows, panel_px = charts.head_grid(len(heads))
    for row in grid_rows:
        for column, h in zip(st.columns(len(grid_rows[0])), row, strict=False):
            with column:
                if len(labels) > GRID_CHART_TOKENS:
                    st.image(
                        charts.raster(steps.heads[h].weights.numpy(), kind="weights", domain=shared),
                        caption=heads[h],
                        alt=_(
                            "{head}: its weights as an image, {T} query rows × {T} key columns",
                            head=heads[h],
                            T=len(labels),
                        ),
                    )
                else:
                    page.heatmap(
                        steps.heads[h].weights,
                        labels,
                        labels,
                        kind="weights",
                        title=heads[h],
                        key=f"head{h}",
                        explain=page.weights_of(steps.heads[h]),
                        highlight_row=query,
                        domain=shared,
                        compact=True,
                        panel_px=panel_px,
                    )


def one_head_table(labels: tuple[str, ...], steps: ac.MultiHeadSteps, heads: list[str]) -> None:
    """The weights of the chosen head as a table."""
    st.subheader(_("One head's weights as a table"))
    shown = [_("head {n}", n=n) for n in range(1, len(heads) + 1)]  # heads: the core's names, the URL's values
    chosen = inputs.selectbox(
        _("Table of the weights of"),
        heads,
        format_func=lambda head: shown[heads.index(head)],
        key="multi_head_table_head",
    )
    index = heads.index(chosen)
    page.table(steps.heads[index].weights, labels, labels, alt_text=_("Weights of {head}", head=shown[index]))


def query_scores_by_head(labels: tuple[str, ...], q: int, steps: ac.MultiHeadSteps, heads: list[str]) -> None:
    """The query's scaled (and masked) scores in every head: what each head's softmax receives."""
    st.markdown(
        _(
            "Each head scores the query “{query}” with its own W_q and W_k, divided by √d_k (−∞ where a mask "
            "blocks the key); softmax turns each head's row into its weights:",
            query=labels[q],
        )
    )
    scores = torch.stack([head.masked_scores[q] for head in steps.heads])  # (h, T)
    page.frame_table(  # as text: a blocked cell reads −∞
        to_frame(scores, heads, labels).map(format_number),
        alt=_("Scaled scores of “{query}” in every head", query=labels[q]),
    )


def worked_example(lab: LabInput, steps: ac.MultiHeadSteps, heads: list[str]) -> None:
    """The query's row in every head."""
    q, query = lab.query_index, lab.query_label
    st.subheader(_("Step by step for the query “{query}”", query=query))
    st.markdown(
        _("Row “{query}” of every head's weights: each row adds up to 1 (or is all 0 if fully masked).", query=query)
    )
    page.table(steps.weights[:, q], heads, lab.labels, alt_text=_("The query's weights in every head"))


def concatenated_row(lab: LabInput, steps: ac.MultiHeadSteps, d_k: int) -> None:
    """The query's heads side by side: its concatenated row."""
    q, query = lab.query_index, lab.query_label
    d_model = int(steps.concat.shape[1])
    head_dims = head_column_labels(d_model, len(steps.heads))
    st.markdown(
        _(
            "Each head turns its weights into a context of d_k = {count}; side by side they form the concatenated "
            "row of {d_model} numbers:",
            count=counted(d_k, N_("1 number"), N_("{n} numbers")),
            d_model=d_model,
        )
    )
    page.table(steps.concat[q].unsqueeze(0), [query], head_dims, alt_text=_("The query's concatenated heads"))


def output_parts(lab: LabInput, steps: ac.MultiHeadSteps, W_o: torch.Tensor, heads: list[str], d_k: int) -> None:
    """The query's output row as a sum of per-head parts."""
    q, query = lab.query_index, lab.query_label
    dims = dimension_labels(int(W_o.shape[1]))
    st.subheader(_("The output of “{query}” as a sum", query=query))
    parts = head_output_parts(steps, W_o)  # (h, T, d_model)
    st.markdown(
        _(
            "output = concat W_o. Row *r* of W_o multiplies column *r* of the concatenation, so head *h* writes "
            "into the output through its own {count} of W_o. The output row of “{query}” is the sum of these "
            "per-head parts:",
            count=counted(d_k, N_("1 row"), N_("{n} rows")),
            query=query,
        )
    )
    page.table(parts[:, q], heads, dims, alt_text=_("Per-head parts of the output"))
    page.table(steps.output[q].unsqueeze(0), [_("output (sum)")], dims, alt_text=_("Output row of the query"))


def concatenation(labels: tuple[str, ...], steps: ac.MultiHeadSteps, num_heads: int) -> None:
    """Every token's heads side by side: the concatenation, as a heatmap and a table."""
    st.subheader(_("Concatenation"))
    head_dims = head_column_labels(int(steps.concat.shape[1]), num_heads)
    page.heatmap(steps.concat, labels, head_dims, kind="values", title=_("Concatenated heads"), col_title=_("column"))
    page.table(steps.concat, labels, head_dims, alt_text=_("Concatenated heads"))


def output_projection(W_o: torch.Tensor, num_heads: int) -> None:
    """W_o, its rows named by the head whose concatenated column they multiply."""
    st.subheader("W_o")
    d_model = int(W_o.shape[1])
    dims = dimension_labels(d_model)
    head_dims = head_column_labels(d_model, num_heads)
    page.heatmap(W_o, head_dims, dims, kind="values", title="W_o", row_title=_("concat column"), col_title=_("output"))
    page.table(W_o, head_dims, dims, alt_text="W_o")


def multi_head_output(labels: tuple[str, ...], steps: ac.MultiHeadSteps, W_o: torch.Tensor) -> None:
    """The layer's output, concat W_o, every cell clickable for its sum."""
    st.subheader(_("The output"))
    dims = dimension_labels(int(W_o.shape[1]))
    page.matrix(
        steps.output,
        labels,
        dims,
        title=_("Multi-head output"),
        key="multi_head_output_chart",
        download="multi_head_output.csv",
        **page.output_options(steps, W_o),
    )


def parameter_count(d_model: int) -> None:
    """4 d_model² with no biases, here and for BERT-base, checked against nn.MultiheadAttention."""
    st.subheader(_("How many parameters?"))
    st.markdown(
        _(
            "W_q, W_k, W_v and W_o are d_model × d_model each, whatever h is (h heads × d_model × d_k = d_model²). "
            "Biases add d_model numbers per projection."
        )
    )
    here, bert_col = st.columns(2)
    for column, d, name in ((here, d_model, _("this page")), (bert_col, BERT_D_MODEL, "BERT-base")):
        count = parameter_counts(d)
        no_biases, output_bias, all_biases = _("no biases:"), _("output bias only:"), _("all biases:")
        with column:
            st.markdown(_("**{name}: d_model = {d}**", name=name, d=d))
            st.latex(  # each label on its own line: a label beside its sum is wider than a column or a phone
                r"\begin{aligned}"
                rf"&\text{{{no_biases}}} \\"
                rf"&\quad 4\,d_\text{{model}}^2 = 4 \cdot {d}^2 = {latex_int(count['no biases'])} \\"
                rf"&\text{{{output_bias}}} \\"
                rf"&\quad 4\,d_\text{{model}}^2 + d_\text{{model}} = {latex_int(count['output bias only'])} \\"
                rf"&\text{{{all_biases}}} \\"
                rf"&\quad 4\,d_\text{{model}}^2 + 4\,d_\text{{model}} = {latex_int(count['all biases'])}"
                r"\end{aligned}"
            )
    no_bias, with_bias = torch_counts(BERT_D_MODEL, BERT_HEADS)
    st.caption(
        _(
            "Check: nn.MultiheadAttention({d_model}, {heads}) has {no_bias} parameters with bias=False and "
            "{with_bias} with bias=True (it has no output-bias-only option).",
            d_model=BERT_D_MODEL,
            heads=BERT_HEADS,
            no_bias=format(no_bias, ","),
            with_bias=format(with_bias, ","),
        )
    )


def torch_check(lab: LabInput, layer: Layer, heads: list[str]) -> None:
    """The lab's layer against nn.MultiheadAttention and, head by head, F.scaled_dot_product_attention."""
    st.subheader(_("Check against PyTorch"))
    x_values = tuple(lab.X.reshape(-1).tolist())  # plain numbers: the cache's key
    check = torch_checks(
        x_values, lab.d_model, layer.width, layer.seed, layer.num_heads, layer.causal, layer.blocked_row
    )
    st.markdown(
        _(
            "The same weights are copied into `torch.nn.MultiheadAttention(d_model, h, bias=False)` (its "
            "in_proj_weight holds W_qᵀ, W_kᵀ, W_vᵀ; out_proj.weight holds W_oᵀ) and its mask is **inverted**, because "
            "True means *blocked* there. Largest absolute differences, and the verdict of a cell-by-cell comparison "
            "with a relative tolerance ({tolerance}). This page computes in float64, PyTorch too: an output that "
            "cancels to about 1e-6 keeps every digit it shows (float32 would get its third digit wrong):",
            tolerance=tolerance_words(check.output.tolerance),
        )
    )
    st.table(
        {
            _("compared"): [
                _("weights of every head vs nn.MultiheadAttention"),
                _("output vs nn.MultiheadAttention"),
                *[_("{head} context vs F.scaled_dot_product_attention", head=name) for name in heads],
            ],
            _("max |difference|"): [
                format_number(a.max_difference) for a in (check.weights, check.output, *check.heads)
            ],
            _("verdict"): [_(a.verdict) for a in (check.weights, check.output, *check.heads)],
        }
    )
    st.markdown(
        _(
            "**Fully masked rows** are left out of the nn.MultiheadAttention comparison: for a query that may attend "
            "to nothing it returns NaN when called with `need_weights=True` (its default, used here to get the "
            "weights: 0/0 in its own softmax); with `need_weights=False` it calls scaled_dot_product_attention and "
            "returns 0 (PyTorch 2.13). Each head is therefore also compared with `F.scaled_dot_product_attention`, "
            "which returns zeros for such a row, as the lab does (fully masked rows here: {rows}; turn on ‘Block "
            "every key of “{query}”’ to make one).",
            rows=check.fully_masked_rows,
            query=lab.query_label,
        )
    )


render(inputs.current())
