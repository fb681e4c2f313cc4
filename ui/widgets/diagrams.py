"""Every Graphviz diagram of the lab, as DOT source built from plain arguments (pure: no Streamlit).

One style for all of them (STYLE: node and edge attributes, text at least 12 px); pages draw a
diagram with ``st.graphviz_chart(diagrams.<name>(...))``. Shape letters: T tokens, d_model, d_k, h heads.
"""

from __future__ import annotations

from attention_core.i18n import _

FONT = "Helvetica"
NODE_FONTSIZE = 13
EDGE_FONTSIZE = 12
INPUT_FILL = "#fff3bf"
OUTPUT_FILL = "#d3f9d8"
NODE = (
    'shape=box, width=0.3, margin="0.06,0.04", style="rounded,filled", fillcolor="#edf2ff", color="#3b5bdb", '
    f'fontname="{FONT}", fontsize={NODE_FONTSIZE}'
)
EDGE = f'fontname="{FONT}", fontsize={EDGE_FONTSIZE}, color="#868e96", fontcolor="#495057"'
STYLE = f'rankdir=LR; bgcolor="transparent"; nodesep=0.2; ranksep=0.2;\n  node [{NODE}];\n  edge [{EDGE}];'


def digraph(name: str, lines: list[str]) -> str:
    """A complete DOT digraph in the shared STYLE around the given node and edge lines."""
    body = "\n".join(f"  {line}" for line in lines)
    return f"digraph {name} {{\n  {STYLE}\n{body}\n}}\n"


def attention_steps() -> str:
    """The overview's pipeline: X -> Q, K, V -> scores -> scaled -> masked -> weights -> context."""
    embeddings, scores, scaled, masked = _("embeddings"), _("scores"), _("scaled"), _("masked")
    weights, context, blend, rows = _("weights"), _("context"), _("weights · V"), _("rows sum to 1")
    return digraph(
        "attention",
        [
            f'X [label="X\\n{embeddings}", fillcolor="{INPUT_FILL}"]; QKV [label="Q, K, V"]; '
            f'S [label="{scores}\\nQ Kᵀ"];',
            f'SC [label="{scaled}\\n÷ √d_k"]; M [label="{masked}"]; W [label="{weights}\\nsoftmax"];',
            f'C [label="{context}\\n{blend}", fillcolor="{OUTPUT_FILL}"];',
            'X -> QKV [label="(T, d_model) → (T, d_k)"]; QKV -> S [label="(T, T)"]; S -> SC; SC -> M;',
            f'M -> W [label="{rows}"]; W -> C [label="(T, d_v)"];',
        ],
    )


def columns_text(n: int) -> str:
    """'1 column', '4 columns' (one whole phrase per form: a language without plurals writes both alike)."""
    return _("{n} column", n=n) if n == 1 else _("{n} columns", n=n)


def heads_text(n: int) -> str:
    """'1 head', '4 heads'."""
    return _("{n} head", n=n) if n == 1 else _("{n} heads", n=n)


def head_split(T: int, d_model: int, num_heads: int) -> str:
    """Multi-head shapes: X (T, d_model) -> Q, K, V -> h heads of d_k columns -> concat -> W_o -> output."""
    d_k = d_model // num_heads
    columns = columns_text(d_k)
    each = _("({T}, {d_model}) each", T=T, d_model=d_model)
    concat, output = _("concat"), _("output")
    lines = [
        f'X [label="X\\n({T}, {d_model})", fillcolor="{INPUT_FILL}"]; QKV [label="Q, K, V\\n{each}"];',
        f'C [label="{concat}\\n({T}, {d_model})"]; O [label="{output}\\n({T}, {d_model})", fillcolor="{OUTPUT_FILL}"];',
        'X -> QKV [label="W_q, W_k, W_v"]; C -> O [label="W_o"];',
    ]
    for h in range(num_heads):
        head = _(
            "head {number}: Q, K, V ({T}, {d_k})\\nweights ({T}, {T})\\ncontext ({T}, {d_k})",
            number=h + 1,
            T=T,
            d_k=d_k,
        )
        lines.append(f'H{h} [label="{head}"]; QKV -> H{h} [label="{columns}"]; H{h} -> C;')
    return digraph("heads", lines)


def block_flow(T: int, d_model: int, num_heads: int, mask_kind: str) -> str:
    """The full block with the shape on every arrow: X -> Q, K, V -> scores -> ... -> concat -> W_o -> output."""
    d_k = d_model // num_heads
    per_head = f"{num_heads} × {T} × {d_k}" if num_heads > 1 else f"{T} × {d_k}"
    square = f"{num_heads} × {T} × {T}" if num_heads > 1 else f"{T} × {T}"
    full = f"{T} × {d_model}"
    scores, scaled, masked, weights, rows = _("scores"), _("scaled"), _("masked"), _("weights"), _("softmax rows")
    context, blend, concat, output, mixed = _("context"), _("weights V"), _("concat"), _("output"), _("concat W_o")
    given = _("input")
    return digraph(
        "pipeline",
        [
            f'X [label="X\\n{given}", fillcolor="{INPUT_FILL}"];',
            'Q [label="Q = X W_q"]; K [label="K = X W_k"]; V [label="V = X W_v"];',
            f'S [label="{scores}\\nQ Kᵀ"]; C [label="{scaled}\\n÷ √{d_k}"]; M [label="{masked}\\n({mask_kind})"];',
            f'W [label="{weights}\\n{rows}"]; Z [label="{context}\\n{blend}"];',
            f'H [label="{concat}\\n{heads_text(num_heads)}"]; ',
            f'O [label="{output}\\n{mixed}", fillcolor="{OUTPUT_FILL}"];',
            f'X -> Q [label="{full}"]; X -> K [label="{full}"]; X -> V [label="{full}"];',
            f'Q -> S [label="{per_head}"]; K -> S [label="{per_head}"];',
            f'S -> C [label="{square}"]; C -> M [label="{square}"]; M -> W [label="{square}"];',
            f'W -> Z [label="{square}"]; V -> Z [label="{per_head}"];',
            f'Z -> H [label="{per_head}"]; H -> O [label="{full}"];',
        ],
    )


def transformer_block(T: int, d_model: int) -> str:
    """Where attention sits: x + attention(layer norm(x)), then x + feed-forward(layer norm(x)) (pre-LN, GPT-2)."""
    shape = f"{T} × {d_model}"
    residual, stream, norm, onward = _("residual"), _("residual stream"), _("layer norm"), _("to the next block")
    attention, here, feed = _("multi-head attention"), _("(this page)"), _("feed-forward")
    return digraph(
        "block",
        [
            f'X [label="x\\n{stream}", fillcolor="{INPUT_FILL}"]; N1 [label="{norm}"];',
            f'A [label="{attention}\\n{here}", penwidth=2.5];',
            f'P1 [label="+", shape=circle]; N2 [label="{norm}"];',
            f'F [label="{feed}\\n{d_model} → {4 * d_model} → {d_model}"]; P2 [label="+", shape=circle];',
            f'O [label="x\\n{onward}", fillcolor="{OUTPUT_FILL}"];',
            f'X -> N1 [label="{shape}"]; N1 -> A; A -> P1 [label="{shape}"];',
            f'X -> P1 [label="{residual}", style=dashed];',
            f'P1 -> N2; N2 -> F; F -> P2; P1 -> P2 [label="{residual}", style=dashed]; P2 -> O;',
        ],
    )
