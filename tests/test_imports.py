"""The lab's modules import each other without a cycle, counting the imports inside functions, and in layers
(issue 37, item 1).

An import inside a function hides a cycle from Python at import time, not from a reader: two modules that need each
other are one module, or a third one is missing. The graph is read from the source (ast), so a lazy import counts.

The layers: a page imports the page API (ui.page), the Altair builders (ui.charts), the inputs (ui.widgets.inputs)
and at most one widget or model handle; never the server's machinery (runtime/). ui/'s import chains are at most
MAX_DEPTH modules deep. attention_core imports neither ui nor Streamlit; the app never imports the operations code
(benchmarks, deploy, tools), and deploy shares tools/browser.py with the benchmarks instead of importing them.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_DEPTH = 4  # modules in ui/'s longest import chain (runtime.cache, a leaf outside ui/, is not counted)
MAX_UI_PER_PAGE = 4  # ui modules a page imports
OPERATIONS = ("benchmarks", "deploy", "tools")
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


def top_level_imports(path: Path) -> set[str]:
    """The first part of every name a file imports anywhere in it (streamlit, torch, ui, ...)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


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


def modules_of(graph: dict[str, set[str]], *packages: str) -> set[str]:
    """The modules (not the packages: their __init__ holds only a docstring) under ``packages``."""
    files = module_files()
    return {
        name for name in graph if name.split(".")[0] in packages and "." in name and files[name].name != "__init__.py"
    }


def longest_chain(graph: dict[str, set[str]], start: str, within: set[str]) -> list[str]:
    """The longest import chain from ``start`` through modules of ``within`` (the graph has no cycle)."""
    best = [start]
    for other in sorted(graph[start] & within):
        chain = [start, *longest_chain(graph, other, within)]
        if len(chain) > len(best):
            best = chain
    return best


def test_ui_import_chains_are_at_most_four_deep():
    graph = import_graph()
    within = modules_of(graph, "ui")
    chains = [longest_chain(graph, name, within) for name in sorted(within)]
    deepest = max(chains, key=len)
    assert len(deepest) <= MAX_DEPTH, " -> ".join(deepest)
    assert len(longest_chain({"a": {"b"}, "b": {"c"}, "c": set()}, "a", {"b", "c"})) == 3, "the check can fail"


def test_a_page_imports_at_most_four_ui_modules_and_never_the_runtime():
    graph = import_graph()
    ui_modules = modules_of(graph, "ui")
    pages = modules_of(graph, "app_pages")
    assert len(pages) >= 15
    for page in sorted(pages):
        used = graph[page] & ui_modules
        assert len(used) <= MAX_UI_PER_PAGE, f"{page} imports {sorted(used)}"
        assert "ui.page" in used, f"{page} draws through the page API"
        assert not {name for name in graph[page] if name.split(".")[0] == "runtime"}, f"{page} imports runtime"
        assert not top_level_imports(module_files()[page]) & {"runtime", *OPERATIONS}, page


def test_attention_core_imports_neither_ui_nor_streamlit():
    files = module_files()
    for name, path in files.items():
        if name.split(".")[0] == "attention_core":
            assert not top_level_imports(path) & {"ui", "runtime", "streamlit", "altair", *OPERATIONS}, name


def test_the_app_never_imports_the_operations_code_and_deploy_not_the_benchmarks():
    files = module_files()
    for name, path in files.items():
        if name.split(".")[0] in ("ui", "runtime", "app_pages", "attention_core", "lab", "streamlit_app"):
            assert not top_level_imports(path) & set(OPERATIONS), name
        if name.split(".")[0] == "deploy":
            assert "benchmarks" not in top_level_imports(path), name


def test_the_registry_names_each_generator_from_its_own_module():
    """Adding a lesson edits no re-export module: the registry imports the module that defines each generator (a new
    lesson's, beside its core function)."""
    from ui import registry

    imported_by_registry = import_graph()["ui.registry"]
    for lesson in registry.LESSONS:
        if lesson.exercises is not None:
            assert lesson.exercises.__module__ in imported_by_registry, (lesson.name, lesson.exercises.__module__)


FIRST_IMPORT = """
import importlib, sys
failed = []
for name in sys.argv[1:]:
    for loaded in [module for module in sys.modules if module.split(".")[0] == "attention_core"]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except ImportError as error:
        failed.append(f"{name}: {error}")
print("\\n".join(failed))
"""


def test_every_core_module_imports_first():
    """The graph above sees no cycle through a package's __init__ (importing ``a.b`` runs ``a``'s first); importing
    each module of attention_core first, in a fresh set of its modules, does."""
    import subprocess
    import sys

    names = sorted(name for name in module_files() if name.split(".")[0] == "attention_core")
    done = subprocess.run(
        [sys.executable, "-c", FIRST_IMPORT, *names], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", done.stdout
