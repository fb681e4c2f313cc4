"""No user text can reach HTML rendering, eval/exec or a pickle loader: the app's code never calls them."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APP_FILES = sorted(
    [
        ROOT / "streamlit_app.py",
        *(ROOT / "app_pages").glob("*.py"),
        *(ROOT / "ui").glob("*.py"),
        *(ROOT / "attention_core").glob("*.py"),
    ]
)
FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__"}
FORBIDDEN_MODULES = {"pickle", "cPickle", "dill", "shelve", "marshal"}


def calls_and_imports(path: Path) -> tuple[list[str], list[str], list[str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    calls, imports, html = [], [], []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name):  # a bare eval(...), exec(...), compile(...)
                calls.append(node.func.id)
            name = getattr(node.func, "attr", "")
            for keyword in node.keywords:
                if keyword.arg in {"unsafe_allow_html", "allow_pickle"} and not (
                    isinstance(keyword.value, ast.Constant) and keyword.value.value is False
                ):
                    html.append(f"{path.name}:{node.lineno} {keyword.arg}")
            if name == "html":  # st.html renders raw HTML
                html.append(f"{path.name}:{node.lineno} st.html")
        elif isinstance(node, ast.Import):
            imports += [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            imports.append(node.module.split(".")[0])
    return calls, imports, html


def test_the_app_has_files_to_check():
    assert len(APP_FILES) > 15


def test_no_eval_exec_or_pickle_anywhere_in_the_app():
    for path in APP_FILES:
        calls, imports, _ = calls_and_imports(path)
        assert not FORBIDDEN_CALLS & set(calls), f"{path.name} calls {FORBIDDEN_CALLS & set(calls)}"
        assert not FORBIDDEN_MODULES & set(imports), f"{path.name} imports {FORBIDDEN_MODULES & set(imports)}"


def test_no_raw_html_and_no_pickling_allowed():
    offenders = [hit for path in APP_FILES for hit in calls_and_imports(path)[2]]
    assert offenders == []
