"""Lesson 9: the whole attention block for the current input, step by step, checked against PyTorch."""

import streamlit as st

import attention_core as ac
from attention_core.export import (
    check_against_pytorch,
    csv_zip,
    intermediate_frames,
    npz_bytes,
    query_trace,
    reproduction_code,
)
from attention_core.projections import random_output_weight, random_projections
from attention_core.tables import dimension_labels, long_frame, to_frame
from ui import charts, display, inputs
from ui.format import format_number

lesson = inputs.current()
X, labels, tokens, q = lesson.X, list(lesson.labels), lesson.tokens, lesson.query_index
T, d_model = lesson.T, lesson.d_model

st.title("9. The full pipeline")
st.markdown(
    """
Every lesson so far looked at one step. Here is the whole self-attention block for the current
input, in the order a transformer runs it: project the inputs into queries, keys and values,
score every query against every key, scale, mask, turn each row into weights with softmax, mix
the values, and, with several heads, put the heads side by side and project them back with W_o.
Open any step to see its numbers; at the end, PyTorch recomputes the same block as a check.
"""
)
st.latex(
    r"\text{head}_h = \operatorname{softmax}\!\Big(\frac{Q_h K_h^\top}{\sqrt{d_k}} + M\Big) V_h,"
    r"\quad Q_h = X W_q^{(h)},\; K_h = X W_k^{(h)},\; V_h = X W_v^{(h)}"
)
st.latex(r"\text{output} = \operatorname{Concat}(\text{head}_1, \dots, \text{head}_h)\, W_o")
display.lesson_caption(lesson.description)

left, middle, right = st.columns(3)
wanted_heads = left.number_input(
    "Number of heads h",
    min_value=1,
    max_value=64,
    value=1,
    step=1,
    key="pipeline_heads",
    help="d_k = d_model / h: the number of heads must divide d_model.",
)
mask_kind = middle.radio(
    "Mask",
    ["none", "causal"],
    horizontal=True,
    key="pipeline_mask",
    help="causal: a token sees itself and earlier tokens.",
)
seed = right.number_input("Seed for W_q, W_k, W_v, W_o", 0, 2**31 - 1, 0, step=1, key="pipeline_seed")
try:
    d_k = ac.head_size(d_model, int(wanted_heads))
    num_heads = int(wanted_heads)
except ValueError as error:
    st.error(f"{error} The page shows a single head (h = 1) until then.", icon=":material/error:")
    num_heads, d_k = 1, ac.head_size(d_model, 1)

projections = random_projections(d_model, d_model, int(seed))
W_o = random_output_weight(d_model, int(seed))
weights = {"W_q": projections.W_q, "W_k": projections.W_k, "W_v": projections.W_v, "W_o": W_o}
mask = ac.causal_mask(T) if mask_kind == "causal" else None
steps = ac.multi_head_attention(
    X, projections.W_q, projections.W_k, projections.W_v, W_o, num_heads=num_heads, mask=mask
)


def column_range(h: int) -> str:
    """'columns 3–4' of head h, or 'column 3' when d_k = 1."""
    first, last = h * d_k + 1, (h + 1) * d_k
    return f"column {first}" if first == last else f"columns {first}–{last}"


head_index = 0
if num_heads > 1:
    head_index = st.selectbox(
        "Head to follow through the steps",
        range(num_heads),
        format_func=lambda h: f"head {h + 1} ({column_range(h)} of W_q, W_k, W_v)",
        key="pipeline_head",
    )
head = steps.heads[head_index]
head_name = f"head {head_index + 1}" if num_heads > 1 else "the head"
st.caption(
    f"T = {T} tokens, d_model = {d_model}, h = {num_heads} head{'s' if num_heads > 1 else ''} of d_k = {d_k}, "
    f"mask: {mask_kind}, weights drawn with seed {seed} (W ~ N(0, 1/d_model))."
)

# --- the flow diagram (DOT built from the live shapes) ---
heads_shape = f"{num_heads} × {T} × {d_k}" if num_heads > 1 else f"{T} × {d_k}"
square_shape = f"{num_heads} × {T} × {T}" if num_heads > 1 else f"{T} × {T}"
dot = f"""
digraph pipeline {{
  rankdir=LR; bgcolor="transparent"; nodesep=0.25; ranksep=0.45;
  node [shape=box, style="rounded,filled", fillcolor="#edf2ff", color="#3b5bdb", fontname="Helvetica", fontsize=11];
  edge [fontname="Helvetica", fontsize=10, color="#868e96", fontcolor="#868e96"];
  X [label="X\\ninput", fillcolor="#fff3bf"];
  Q [label="Q = X W_q"]; K [label="K = X W_k"]; V [label="V = X W_v"];
  S [label="scores\\nQ Kᵀ"]; C [label="scaled\\n÷ √{d_k}"]; M [label="masked\\n({mask_kind})"];
  W [label="weights\\nsoftmax rows"]; Z [label="context\\nweights V"];
  H [label="concat\\n{num_heads} head{"s" if num_heads > 1 else ""}"]; O [label="output\\nconcat W_o", fillcolor="#d3f9d8"];
  X -> Q [label="{T} × {d_model}"]; X -> K [label="{T} × {d_model}"]; X -> V [label="{T} × {d_model}"];
  Q -> S [label="{heads_shape}"]; K -> S [label="{heads_shape}"];
  S -> C [label="{square_shape}"]; C -> M [label="{square_shape}"]; M -> W [label="{square_shape}"];
  W -> Z [label="{square_shape}"]; V -> Z [label="{heads_shape}"];
  Z -> H [label="{heads_shape}"]; H -> O [label="{T} × {d_model}"];
}}
"""
st.graphviz_chart(
    dot, alt=f"Flow of the attention block with the shapes of the tensors for T = {T}, d_model = {d_model}"
)
st.caption("Each arrow carries the shape of the tensor flowing along it (heads × rows × columns).")

st.subheader("Step by step")
st.caption("Open a step to compute and draw its numbers (closed steps cost nothing).")


def step(title: str, key: str, summary: str, *, expanded: bool = False):
    """One collapsible pipeline step; its heavy content runs only while it is open."""
    box = st.expander(title, expanded=expanded, key=f"pipeline_step_{key}", type="step", on_change="rerun")
    box.caption(summary)
    return box


dims, dims_k = dimension_labels(d_model), dimension_labels(d_k)
with step(
    f"1. Input X ({T} × {d_model})", "x", "One row per token, one column per embedding dimension: the sidebar's input."
) as box:
    if box.open:
        display.matrix(X, labels, dims, kind="values", title="Input X", row_title="token", col_title="dimension")

qkv_note = f" {head_name.capitalize()} uses {column_range(head_index)} of each W." if num_heads > 1 else ""
with step(
    f"2. Queries, keys, values ({T} × {d_k} each)",
    "qkv",
    f"Q = X W_q, K = X W_k, V = X W_v, each W of shape {d_model} × {d_model}.{qkv_note}",
) as box:
    if box.open:
        for tab, name, tensor in zip(st.tabs(["Q", "K", "V"]), "QKV", (head.Q, head.K, head.V), strict=True):
            with tab:
                display.matrix(
                    tensor,
                    labels,
                    dims_k,
                    kind="values",
                    title=f"{name} of {head_name}",
                    row_title="token",
                    col_title="dimension",
                )
        st.markdown("The weight matrices (rows: input dimension, columns: output dimension):")
        for tab, (name, W) in zip(st.tabs(list(weights)), weights.items(), strict=True):
            with tab:
                display.table(to_frame(W, dims, dims), alt=name)

with step(f"3. Scores Q Kᵀ ({T} × {T})", "scores", "scores[i, j] = q_i · k_j: how well query i matches key j.") as box:
    if box.open:
        display.matrix(head.scores, labels, labels, kind="scores", title=f"Scores Q Kᵀ of {head_name}")

with step(
    f"4. Scaled scores ÷ √d_k = ÷ √{d_k} ({T} × {T})",
    "scaled",
    f"Every score is divided by √{d_k}, which keeps their spread near 1 whatever d_k is, so softmax does not saturate.",
) as box:
    if box.open:
        display.matrix(head.scaled_scores, labels, labels, kind="scores", title=f"Scaled scores of {head_name}")

mask_note = (
    "No mask: every query may attend to every key, so the masked scores equal the scaled scores."
    if mask is None
    else "The causal mask blocks every key after the query: those cells become −∞ (drawn empty in the heatmap, "
    "“-inf” in the table), so softmax gives them weight exactly 0."
)
with step(f"5. Masked scores, mask: {mask_kind} ({T} × {T})", "masked", mask_note) as box:
    if box.open:
        if mask is not None:
            display.heatmap(mask.to(X.dtype), labels, labels, kind="mask", title="Causal mask (True = may attend)")
        display.matrix(head.masked_scores, labels, labels, kind="scores", title=f"Masked scores of {head_name}")

with step(
    f"6. Weights = softmax of each row ({T} × {T})",
    "weights",
    "Each row is a probability distribution over the keys: non-negative, summing to 1.",
) as box:
    if box.open:
        display.matrix(
            head.weights,
            labels,
            labels,
            kind="weights",
            title=f"Attention weights of {head_name}",
            download="pipeline_weights.csv",
        )

with step(
    f"7. Context = weights V ({T} × {d_k})",
    "context",
    "context_i = Σ_j weights[i, j] v_j: each token's new vector is a weighted mix of the values.",
) as box:
    if box.open:
        display.matrix(
            head.context, labels, dims_k, kind="values", title=f"Context of {head_name}", col_title="dimension"
        )

concat_note = (
    f"The {num_heads} context matrices of {T} × {d_k} side by side, {d_k} column{'s' if d_k > 1 else ''} per head, head 1 first."
    if num_heads > 1
    else "With a single head the concatenation is the head's context itself."
)
with step(f"8. Heads side by side: concat ({T} × {d_model})", "concat", concat_note) as box:
    if box.open:
        display.matrix(steps.concat, labels, dims, kind="values", title="Concatenated heads", col_title="dimension")

with step(
    f"9. Output = concat W_o ({T} × {d_model})",
    "output",
    "W_o mixes the heads' columns back into one d_model-wide vector per token: the block's output.",
    expanded=True,
) as box:
    if box.open:
        display.matrix(
            steps.output,
            labels,
            dims,
            kind="values",
            title="Output of the block",
            col_title="dimension",
            download="pipeline_output.csv",
        )

st.subheader(f"One query through the block: “{lesson.query_label}”")
trace = query_trace(head, q, labels)
st.markdown(
    f"Row “{lesson.query_label}” of {head_name}, key by key: the score q · k_j, divided by √{d_k}, "
    "then the weight after softmax (0 where the mask blocks the key), and the weight times the value."
)
display.table(trace, alt=f"Scores, scaled scores and weights of the query {lesson.query_label}")
row = head.weights[q]
parts = " + ".join(f"{format_number(w)} · v({label})" for w, label in zip(row.tolist(), labels, strict=True) if w != 0)
context_text = ", ".join(format_number(v) for v in head.context[q].tolist())
st.markdown(
    f"context(“{lesson.query_label}”) = {parts if T <= 8 else 'Σ_j weight_j · v_j'} = **[{context_text}]** "
    f"(row “{lesson.query_label}” of step 7), and its output row is "
    f"**[{', '.join(format_number(v) for v in steps.output[q].tolist())}]**."
)

st.subheader("Who attends to whom")
focus = lesson.query_label if T > charts.MAX_LINE_TOKENS else None
st.markdown(
    "Queries on the left, keys on the right; the stronger the weight, the darker and thicker the line. "
    "Hover a word on the left to keep only its lines, or a word on the right to see who attends to it."
)
if focus is not None:
    st.caption(
        f"{T} tokens make {T}² lines: only the lines of the query “{focus}” are drawn (change it in the sidebar)."
    )
line_data = long_frame(head.weights, labels, labels)
display.chart(
    charts.line_view,
    line_data,
    labels,
    title=f"Attention weights of {head_name} as lines",
    focus=focus,
    st_width="content",
)

st.subheader("Checked against PyTorch")
check = check_against_pytorch(steps, X, projections.W_q, projections.W_k, projections.W_v, W_o, mask=mask)
c1, c2, c3 = st.columns(3)
c1.metric(
    "Context vs F.scaled_dot_product_attention",
    format_number(check["sdpa_context"]),
    help="max |difference| over all heads",
)
c2.metric(
    "Weights vs nn.MultiheadAttention", format_number(check["mha_weights"]), help="max |difference| over all heads"
)
c3.metric("Output vs nn.MultiheadAttention", format_number(check["mha_output"]), help="max |difference|")
mask_sentence = (
    "With no mask every query sees every key"
    if mask is None
    else "With the causal mask every query sees at least itself"
)
st.markdown(
    f"""
Each head's context is recomputed by `torch.nn.functional.scaled_dot_product_attention` on the same Q, K, V
and mask, and the whole block by `torch.nn.MultiheadAttention` with our W_q, W_k, W_v, W_o copied in (no biases).
Differences around 10⁻⁷ are float32 rounding (the sums run in another order), not disagreement.

Why fully masked rows are compared with SDPA only: a query that may attend to nothing has no valid softmax.
`nn.MultiheadAttention` returns NaN for such a row, while SDPA, like the lab, returns zeros; so those rows are
left out of the `nn.MultiheadAttention` comparison and checked against SDPA. {mask_sentence}: {check["fully_masked_rows"]}
fully masked rows here, all {T} rows compared with both.
"""
)

st.subheader("Take the numbers with you")
st.markdown(
    "Every intermediate above (X, the four W, the mask, each head's Q, K, V, scores, scaled, masked scores, "
    "weights and context, the concatenation and the output) in one file: a zip of CSVs with the token labels, "
    "or a NumPy .npz (load it with `numpy.load(path)`, no pickle needed)."
)


def _frames() -> dict:
    return intermediate_frames(tokens, X, weights, steps, mask)


d1, d2 = st.columns(2)
d1.download_button(
    "Download every step as CSVs (zip)",
    lambda: csv_zip(_frames()),
    file_name="attention_pipeline.zip",
    mime="application/zip",
    icon=":material/folder_zip:",
    on_click="ignore",
    key="pipeline_zip",
)
d2.download_button(
    "Download every step as .npz",
    lambda: npz_bytes(_frames(), tokens),
    file_name="attention_pipeline.npz",
    mime="application/octet-stream",
    icon=":material/download:",
    on_click="ignore",
    key="pipeline_npz",
)
with st.expander("Code that reproduces these numbers in a plain Python session", icon=":material/terminal:"):
    st.markdown(
        "The current X and weights as full-precision literals, then plain PyTorch with "
        "`F.scaled_dot_product_attention`. Paste it into Python with torch installed."
    )
    st.code(reproduction_code(tokens, X, weights, num_heads=num_heads, mask=mask), language="python")

display.show_code(
    random_projections,
    random_output_weight,
    ac.multi_head_attention,
    ac.self_attention,
    query_trace,
    check_against_pytorch,
)
