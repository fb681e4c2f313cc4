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
    monkeypatch.setattr(benchmarks_run, "rerun_table", lambda: ([], 0, "app_pages/x.py"))
    monkeypatch.setattr(benchmarks_run, "collector_table", lambda: [])
    monkeypatch.setattr(benchmarks_run.subprocess, "run", lambda command, **kw: ran.append(command))
    benchmarks_run.main()
    assert [command[-1] for command in ran] == ["benchmarks.smollm2"]
