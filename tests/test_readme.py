"""README.md stays a page for people: short, its commands the ones CI runs, the benchmark notebook elsewhere."""

from __future__ import annotations

import re
from pathlib import Path

from benchmarks import run as benchmarks_run
from ui import registry

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
LINES = README.splitlines()
BENCHMARKS = ROOT / "docs" / "benchmarks.md"


def code_lines(text: str) -> list[str]:
    """The lines inside the fenced code blocks of a markdown text."""
    inside, found = False, []
    for line in text.splitlines():
        if line.startswith("```"):
            inside = not inside
        elif inside:
            found.append(line.strip())
    return found


def ci_test_command() -> str:
    """The last line of .ci/run that runs pytest: the command CI calls the README's."""
    commands = [
        line.strip()
        for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
        if "pytest" in line and not line.lstrip().startswith(("#", "echo"))
    ]
    return commands[-1]


def test_readme_is_at_most_160_lines():
    assert len(LINES) <= 160, f"README.md has {len(LINES)} lines; the notebook belongs in docs/benchmarks.md"


def test_readme_test_command_is_the_one_ci_runs():
    shown = [line for line in code_lines(README) if "requirements-dev.txt" in line and "pytest" in line]
    assert shown == [ci_test_command()]


def test_the_pip_retries_hint_sits_right_under_the_run_command():
    run = next(i for i, line in enumerate(LINES) if "streamlit run streamlit_app.py" in line and "pip install" in line)
    hint = next((i for i, line in enumerate(LINES) if i > run and "PIP_RETRIES=0" in line), None)
    assert hint is not None and hint - run <= 5, (run, hint)


def test_the_benchmark_notebook_is_in_docs_and_linked():
    assert BENCHMARKS.is_file()
    assert "(docs/benchmarks.md)" in README
    assert "Where the time goes" in BENCHMARKS.read_text(encoding="utf-8")


def test_readme_names_only_lessons_of_the_registry_and_links_the_contributors_guide():
    """README's lesson table may lag a new lesson (adding one touches four files), but never names a gone one."""
    titles = {lesson.title for lesson in registry.LESSONS}
    rows = re.findall(r"^\| *\d+ *\| *([^|]+?) *\|", README, flags=re.MULTILINE)
    assert rows and set(rows) <= titles
    assert "(CONTRIBUTING.md)" in README and (ROOT / "CONTRIBUTING.md").exists()


def test_the_files_the_readme_and_the_benchmarks_page_name_exist():
    texts = README + BENCHMARKS.read_text(encoding="utf-8")
    named = set(re.findall(r"(?:tests|docs|app_pages|ui|attention_core|benchmarks)/[\w/]+\.(?:py|png|md)", texts))
    assert named
    assert [path for path in sorted(named) if not (ROOT / path).exists()] == []


def test_every_benchmarks_run_flag_shown_is_one_it_accepts():
    source = Path(benchmarks_run.__file__).read_text(encoding="utf-8")
    accepted = set(re.findall(r'add_argument\(\s*"(--[\w-]+)"', source)) | {"--help"}
    texts = README + BENCHMARKS.read_text(encoding="utf-8")
    shown = {flag for line in texts.splitlines() if "benchmarks.run" in line for flag in re.findall(r"--[\w-]+", line)}
    assert shown and shown <= accepted, shown - accepted


def test_the_chinese_readme_runs_and_tests_with_the_same_commands():
    """README.zh.md (issue 39) gives the same run and test commands as README.md, so it cannot drift from CI."""
    chinese = (ROOT / "README.zh.md").read_text(encoding="utf-8")
    assert code_lines(chinese) == [line for line in code_lines(README) if "pip install" in line]
    assert "?lang=zh" in chinese and "http://localhost:8501" in chinese
