"""The lab's modules import each other without a cycle, counting the imports inside functions (issue 37, item 1).

An import inside a function hides a cycle from Python at import time, not from a reader: two modules that need each
other are one module, or a third one is missing. The graph is read from the source (ast), so a lazy import counts.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ui", "runtime", "attention_core", "app_pages", "benchmarks", "deploy", "tools")
SCRIPTS = ("lab", "streamlit_app")


def module_files() -> dict[str, Path]:
    """Every module of the lab by its dotted name."""
    found = {name: ROOT / f"{name}.py" for name in SCRIPTS}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported(path: Path, known: set[str]) -> set[str]:
    """The lab's modules a file imports anywhere in it (top level or inside a function)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in names if name in known}


def import_graph() -> dict[str, set[str]]:
    files = module_files()
    return {name: imported(path, set(files)) - {name} for name, path in files.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each a cycle or several."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_reads_lazy_imports():
    graph = import_graph()
    assert "ui.widgets.exercises" in graph["ui.page"] and "attention_core.story" in graph["ui.models.story"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]], "the check can fail"


def test_no_import_cycle():
    assert cycles(import_graph()) == []
