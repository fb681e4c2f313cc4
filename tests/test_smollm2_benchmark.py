"""benchmarks/smollm2.py prints SmolLM2's budgets, and benchmarks.run --quick runs it."""

from __future__ import annotations

import sys

from benchmarks import run as benchmarks_run
from benchmarks import smollm2 as smollm2_benchmark


def test_the_benchmark_prints_load_forward_and_memory_with_their_budgets(monkeypatch, capsys):
    monkeypatch.setattr(smollm2_benchmark, "RUNS", 1)
    smollm2_benchmark.main()
    out = capsys.readouterr().out
    assert "Load average" in out
    for row in ("| first load", "| forward pass, 32 tokens", "| peak RSS", "| KV cache per token"):
        assert row in out, row
    assert "≤ 4 s" in out and "≤ 250 ms" in out and "23,040 B (69,120 B)" in out
    assert "| weights in memory (4-bit layers, 8-bit embeddings) | 97 MB |" in out


def test_benchmarks_run_quick_runs_it(monkeypatch):
    ran = []
    monkeypatch.setattr(sys, "argv", ["benchmarks.run", "--quick"])
    monkeypatch.setattr(benchmarks_run, "compile_scripts_once", lambda: None)
    monkeypatch.setattr(benchmarks_run, "trivial_rerun", lambda: 0.01)
    monkeypatch.setattr(benchmarks_run, "step_rerun_table", lambda trivial: [])  # measured below, on one lesson
    monkeypatch.setattr(benchmarks_run, "rerun_table", lambda: ([], 0, "app_pages/x.py"))
    monkeypatch.setattr(benchmarks_run, "collector_table", lambda: [])
    monkeypatch.setattr(benchmarks_run.subprocess, "run", lambda command, **kw: ran.append(command))
    benchmarks_run.main()
    assert [command[-1] for command in ran] == ["benchmarks.smollm2"]


def test_the_step_rerun_table_has_a_row_per_step(monkeypatch):
    """benchmarks.run's table of every step's rerun, on the first stepped lesson with one run each."""
    from tests.pages.test_steps import STEPPED

    monkeypatch.setattr(benchmarks_run, "RUNS", 1)
    lesson = STEPPED[0]
    lines = benchmarks_run.step_rerun_table(0.01, lessons=(lesson,))
    rows = lines[2:]
    assert rows and [row.split(" | ")[1] for row in rows] == [str(n) for n in range(1, len(rows) + 1)]
    assert all(row.startswith(f"| {lesson.name} | ") and row.endswith(("| yes |", "| no |")) for row in rows)
