"""Issue 22 part 7: a learner never reads a tutorial's file number ("tutorial 004", "002's"), only its name."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECKED = sorted(
    {
        *ROOT.glob("app_pages/*.py"),
        *ROOT.glob("ui/*.py"),
        *(ROOT / "attention_core" / name for name in ("presets.py", "mistakes.py")),
        *ROOT.glob("attention_core/exercises/*.py"),
    }
)
FILE_NUMBER = re.compile(r"\b00[0-4]\b")
IDS = {"000", "001", "002", "003", "004"}  # a preset's internal id alone is never shown


def shown_strings(path: Path) -> list[tuple[int, str]]:
    """Every string constant of a module except docstrings and comments: what a page can put on screen."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


@pytest.mark.parametrize("path", CHECKED, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_tutorial_is_named_by_its_file_number(path):
    found = [
        f"{path.name}:{line}: {text!r}"
        for line, text in shown_strings(path)
        if text not in IDS and FILE_NUMBER.search(text)
    ]
    assert not found, "\n".join(found)


def test_every_tutorial_has_a_name_and_one_line():
    from ui.drawing import TUTORIALS, tutorial_name

    assert set(TUTORIALS) == IDS
    assert tutorial_name("002") == "the “Your journey starts with one step” tutorial"
    assert all(name and what for name, what in TUTORIALS.values())
