"""ui.widgets.diagrams: every Graphviz diagram is well-formed DOT in the one shared style and shows the live shapes."""

from __future__ import annotations

import re

import pytest

from ui.widgets import diagrams

NODE = re.compile(r"^\s*(\w+)\s*\[label=")
EDGE = re.compile(r"(\w+)\s*->\s*(\w+)")


def statements(dot: str) -> list[str]:
    """The statements inside the digraph's braces, split at ';' outside quoted strings."""
    body = dot[dot.index("{") + 1 : dot.rindex("}")]
    parts, current, quoted = [], "", False
    for char in body:
        if char == '"':
            quoted = not quoted
        if char == ";" and not quoted:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    assert not quoted, "unbalanced quotes"
    assert not current.strip(), f"statement without ';': {current.strip()!r}"
    return [part for part in parts if part]


def assert_valid(dot: str) -> None:
    """Looks like valid DOT: one digraph, balanced braces and brackets, every edge between declared nodes."""
    assert dot.startswith("digraph ") and dot.rstrip().endswith("}")
    assert dot.count("{") == dot.count("}") == 1
    found = statements(dot)
    for statement in found:
        assert statement.count("[") == statement.count("]"), statement
    nodes = {match.group(1) for statement in found if (match := NODE.match(statement))}
    edges = [pair for statement in found for pair in EDGE.findall(statement)]
    assert edges, "a diagram without arrows"
    for source, target in edges:
        assert source in nodes and target in nodes, (source, target)


def all_diagrams() -> list[str]:
    return [
        diagrams.attention_steps(),
        diagrams.head_split(6, 8, 2),
        diagrams.block_flow(6, 4, 1, "none"),
        diagrams.block_flow(6, 8, 4, "causal"),
        diagrams.transformer_block(6, 8),
    ]


@pytest.mark.parametrize("dot", all_diagrams())
def test_every_diagram_is_valid_dot_in_the_shared_style(dot):
    assert_valid(dot)
    assert diagrams.STYLE in dot  # node and edge attributes defined once, used by every diagram
    sizes = [float(size) for size in re.findall(r"fontsize=([\d.]+)", dot)]
    assert sizes and min(sizes) >= 12  # issue 9: Graphviz text at least 12 px


def test_head_split_shows_every_head_with_its_shapes():
    dot = diagrams.head_split(5, 12, 3)
    assert_valid(dot)
    assert "X\\n(5, 12)" in dot and "concat\\n(5, 12)" in dot and "output\\n(5, 12)" in dot
    for h in range(3):
        assert f"head {h + 1}: Q, K, V (5, 4)" in dot and f"QKV -> H{h}" in dot
    assert "weights (5, 5)" in dot and '"4 columns"' in dot
    assert "H3" not in dot


def test_head_split_with_one_column_per_head():
    assert '"1 column"' in diagrams.head_split(3, 4, 4)


@pytest.mark.parametrize(
    ("T", "d_model", "num_heads", "mask_kind", "per_head", "square", "heads"),
    [
        (6, 4, 1, "none", "6 × 4", "6 × 6", "1 head"),
        (7, 8, 2, "causal", "2 × 7 × 4", "2 × 7 × 7", "2 heads"),
    ],
)
def test_block_flow_labels_every_arrow_with_its_live_shape(T, d_model, num_heads, mask_kind, per_head, square, heads):
    dot = diagrams.block_flow(T, d_model, num_heads, mask_kind)
    assert_valid(dot)
    assert f'X -> Q [label="{T} × {d_model}"]' in dot
    assert f'Q -> S [label="{per_head}"]' in dot and f'S -> C [label="{square}"]' in dot
    assert f'H -> O [label="{T} × {d_model}"]' in dot
    assert f"masked\\n({mask_kind})" in dot and f"concat\\n{heads}" in dot
    assert f"÷ √{d_model // num_heads}" in dot


def test_overview_pipeline_names_each_step():
    dot = diagrams.attention_steps()
    for step in ("embeddings", "Q, K, V", "scores", "scaled", "masked", "softmax", "context"):
        assert step in dot


def test_transformer_block_shows_layer_norm_attention_residuals_and_feed_forward():
    dot = diagrams.transformer_block(7, 8)
    assert_valid(dot)
    assert dot.count('label="layer norm"') == 2 and dot.count('label="+", shape=circle') == 2
    assert 'X -> P1 [label="residual", style=dashed]' in dot and 'P1 -> P2 [label="residual", style=dashed]' in dot
    assert "multi-head attention" in dot and "8 → 32 → 8" in dot and 'label="7 × 8"' in dot
