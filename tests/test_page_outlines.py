"""A lesson's render() reads as its outline: controls, one core call, then the sections (issue 23 item 4).

The pages are read as source (ast), not run: a page module renders when imported.

In lessons 9, 7 and 6 (pipeline, multi_head, masking) every statement of render() is one of
- a call of a function the page defines (a section, the controls, a guard such as ``heads_or_one``),
  also as ``name = section(...)``;
- the one call into attention_core that computes the page's state (``block = ac.pipeline_block(...)``);
- a call of ``page.*`` or ``exercises_section``, or ``with page.slot():`` around such calls.
At most MAX_OTHER statements may be anything else. Main had 10 or 11 such lines per page (projections, W_o,
masks, padding, multi_head_attention, the followed head, its name...). Two leave room to name an
intermediate once (``head = block.steps.heads[i]``), but not to compute the page's state in the page.

Lesson 10 (trained_model) keeps layer and head zero-based inside and shows them 1-based only in text: no
``layer - 1`` or ``head - 1``, no identity map of step names read with getattr, and the model's sizes come from
attention_core.trained_model (NUM_LAYERS, NUM_HEADS, ALL_HEADS, D_K), never written as "72", "√32" or "1 to 6".
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OUTLINE_PAGES = ("app_pages/pipeline.py", "app_pages/multi_head.py", "app_pages/masking.py")
MAX_OTHER = 2
PAGE_API = ("page",)  # the module whose calls render() may make directly
PAGE_CALLS = ("exercises_section",)


def module(path: str) -> ast.Module:
    return ast.parse((ROOT / path).read_text(encoding="utf-8"))


def render_body(tree: ast.Module) -> list[ast.stmt]:
    return next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "render").body


def own_functions(tree: ast.Module) -> set[str]:
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


def core_names(tree: ast.Module) -> set[str]:
    """Names bound to attention_core: ``import attention_core as ac`` and ``from attention_core.x import f``."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names |= {a.asname or a.name for a in node.names if a.name.startswith("attention_core")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("attention_core"):
            names |= {a.asname or a.name for a in node.names}
    return names


def called(statement: ast.stmt) -> ast.Call | None:
    """The call a statement makes: ``f(...)``, ``x = f(...)`` or ``a, b = f(...)``; None otherwise."""
    if isinstance(statement, ast.Expr | ast.Assign | ast.AnnAssign) and isinstance(statement.value, ast.Call):
        return statement.value
    return None


def root_name(call: ast.Call) -> str | None:
    """``f`` for f(...), ``ac`` for ac.f(...), ``page`` for page.slot(...)."""
    function = call.func
    while isinstance(function, ast.Attribute):
        function = function.value
    return function.id if isinstance(function, ast.Name) else None


def classify(statement: ast.stmt, own: set[str], core: set[str]) -> str:
    """'section', 'core' or 'other' for one statement of render()."""
    if isinstance(statement, ast.With):
        items_ok = all(
            isinstance(item.context_expr, ast.Call) and root_name(item.context_expr) in PAGE_API
            for item in statement.items
        )
        inner = {classify(s, own, core) for s in statement.body}
        return "section" if items_ok and inner <= {"section"} else "other"
    call = called(statement)
    if call is None:
        return "other"
    name = root_name(call)
    if isinstance(call.func, ast.Name) and name in own | set(PAGE_CALLS):
        return "section"
    if isinstance(call.func, ast.Attribute) and name in PAGE_API:
        return "section"
    if name in core and isinstance(statement, ast.Assign):
        return "core"
    return "other"


@pytest.mark.parametrize("path", OUTLINE_PAGES)
def test_render_is_controls_one_core_call_and_sections(path):
    tree = module(path)
    own, core = own_functions(tree), core_names(tree)
    kinds = [(classify(s, own, core), ast.unparse(s).splitlines()[0]) for s in render_body(tree)]
    cores = [line for kind, line in kinds if kind == "core"]
    others = [line for kind, line in kinds if kind == "other"]
    assert len(cores) == 1, f"{path}: render() should make one core call, it makes {len(cores)}: {cores}"
    assert len(others) <= MAX_OTHER, f"{path}: render() computes state in the page:\n" + "\n".join(others)


def test_the_classifier_counts_state_computed_in_render():
    """The rule itself can fail: lines that compute state count as 'other', a section call does not."""
    source = """
import attention_core as ac
from attention_core.masks import fully_masked_rows
def section(x): ...
def render(lab):
    choice = section(lab)
    mask = ac.causal_mask(lab.T) if choice else None
    steps = ac.self_attention(lab.X, mask=mask)
    empty = fully_masked_rows(mask)
    head = steps.heads[0]
    section(steps)
"""
    tree = ast.parse(source)
    kinds = [classify(s, own_functions(tree), core_names(tree)) for s in render_body(tree)]
    assert kinds == ["section", "other", "core", "core", "other", "section"]


TRAINED = "app_pages/trained_model.py"


def mentions_layer_or_head(node: ast.AST) -> bool:
    names = [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]
    names += [n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)]
    return any("layer" in name or "head" in name for name in names)


def test_trained_model_keeps_layer_and_head_zero_based():
    """No ``layer - 1`` / ``head - 1``: the selectors' 1-based numbers are converted once, in the core."""
    minus_one = [
        ast.unparse(node)
        for node in ast.walk(module(TRAINED))
        if isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Sub)
        and isinstance(node.right, ast.Constant)
        and node.right.value == 1
        and mentions_layer_or_head(node.left)
    ]
    assert not minus_one, minus_one


def test_trained_model_reads_steps_without_an_identity_map():
    """The by-hand step is read by field, not by getattr on a map from each name to (nearly) itself."""
    tree = module(TRAINED)
    getattrs = [ast.unparse(n) for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "getattr"]
    assert not getattrs, getattrs
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict) and node.keys and all(isinstance(k, ast.Constant) for k in node.keys):
            pairs = [
                (k.value, v.value) for k, v in zip(node.keys, node.values, strict=True) if isinstance(v, ast.Constant)
            ]
            same = [key for key, value in pairs if isinstance(key, str) and key.replace(" ", "_") == value]
            assert len(same) < len(node.keys), f"an identity map: {ast.unparse(node)[:120]}"


@pytest.mark.parametrize("written", ["72", "√32", "sqrt{32}", "1 to 6"])
def test_trained_model_takes_the_model_sizes_from_the_core(written):
    """Prose says tm.ALL_HEADS, tm.D_K, tm.NUM_LAYERS: no model size typed into a string."""
    strings = [
        node.value
        for node in ast.walk(module(TRAINED))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and written in node.value
    ]
    assert not strings, strings
