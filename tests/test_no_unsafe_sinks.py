"""No user text can reach HTML rendering, eval/exec or a pickle loader: the app's code never calls them."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APP_FILES = sorted(
    [
        ROOT / "streamlit_app.py",
        ROOT / "lab.py",
        *(ROOT / "app_pages").glob("*.py"),
        *(ROOT / "ui").glob("*.py"),
        *(ROOT / "attention_core").glob("*.py"),
    ]
)
FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__"}
# The functions that may give st.html markup that is not fixed text, and why it is safe there: the lessons' tables,
# whose every label, header, tooltip and cell text ui.widgets.html_table escapes (tests/test_html_table.py feeds it
# script
# and image tags through each of them).
HTML_FROM_ESCAPER = {("drawing.py", "show_table"), ("drawing.py", "show_frame")}
FORBIDDEN_MODULES = {"pickle", "cPickle", "dill", "shelve", "marshal"}


def constant_strings(tree: ast.Module) -> set[str]:
    """Module-level names bound once to a literal string (no f-string, no concatenation of user text)."""
    return {
        node.targets[0].id
        for node in tree.body
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }


def is_fixed_text(node: ast.Call, constants: set[str]) -> bool:
    """st.html(CONSTANT): the one argument is a literal, or a module constant bound to a literal."""
    if len(node.args) != 1 or node.keywords:
        return False
    arg = node.args[0]
    return (isinstance(arg, ast.Constant) and isinstance(arg.value, str)) or (
        isinstance(arg, ast.Name) and arg.id in constants
    )


def escaped_lines(tree: ast.Module, path: Path) -> set[int]:
    """The lines of the functions of HTML_FROM_ESCAPER in this file."""
    return {
        line
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and (path.name, node.name) in HTML_FROM_ESCAPER
        for line in range(node.lineno, node.end_lineno + 1)
    }


def calls_and_imports(path: Path) -> tuple[list[str], list[str], list[str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    constants = constant_strings(tree)
    escaped = escaped_lines(tree, path)
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
            if name == "html" and not is_fixed_text(node, constants) and node.lineno not in escaped:  # raw HTML
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


def test_st_html_with_anything_but_fixed_text_is_flagged(tmp_path):
    page = tmp_path / "page.py"
    page.write_text('CSS = "<style></style>"\nst.html(CSS)\nst.html(f"<b>{name}</b>")\nst.html(CSS + name)\n')
    assert calls_and_imports(page)[2] == ["page.py:3 st.html", "page.py:4 st.html"]


def test_only_the_table_functions_may_draw_escaped_html(tmp_path):
    drawing = tmp_path / "drawing.py"
    drawing.write_text("def show_table(body):\n    st.html(body)\n\n\ndef other(body):\n    st.html(body)\n")
    assert calls_and_imports(drawing)[2] == ["drawing.py:6 st.html"]
