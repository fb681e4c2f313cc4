"""attention_core.export: every intermediate as CSVs / .npz, the PyTorch check, and the reproduction code."""

from __future__ import annotations

import ast
import io
import subprocess
import sys
import zipfile

import numpy as np
import pandas as pd
import pytest
import torch

import attention_core as ac
from attention_core.export import (
    csv_zip,
    intermediate_frames,
    npz_bytes,
    query_trace,
    reproduction_code,
)
from attention_core.reference import check_block

TOKENS = ["the", "cat", "sat", "on", "the", "mat"]


@pytest.fixture(params=[(1, None), (2, "causal"), (4, "causal"), (2, "window")])
def block(request):
    """A seeded block: tokens, X (6, 4), the four weights, heads, mask and its steps."""
    num_heads, mask_kind = request.param
    X = ac.random_embeddings(TOKENS, 4, seed=2)
    P = ac.random_projections(4, 4, seed=5)
    weights = {"W_q": P.W_q, "W_k": P.W_k, "W_v": P.W_v, "W_o": ac.random_output_projection(4, seed=5)}
    mask = {None: None, "causal": ac.causal_mask(6), "window": ac.sliding_window_mask(6, 2)}[mask_kind]
    steps = ac.multi_head_attention(X, *weights.values(), num_heads=num_heads, mask=mask)
    return X, weights, num_heads, mask, steps


def test_intermediate_frames_hold_every_step_labelled(block):
    """Names in computing order, token labels on rows, values equal to the steps."""
    X, weights, h, mask, steps = block
    frames = intermediate_frames(TOKENS, X, weights, steps, mask)
    names = list(frames)
    assert names[:6] == ["X", "W_q", "W_k", "W_v", "W_o", "mask"]
    assert names[-2:] == ["concat", "output"]
    assert len(names) == 8 + 8 * h
    assert list(frames["X"].index) == ["the (1)", "cat", "sat", "on", "the (2)", "mat"]
    assert np.array_equal(frames["output"].to_numpy(), steps.output.double().numpy())
    assert np.array_equal(frames[f"head{h}_weights"].to_numpy(), steps.heads[-1].weights.double().numpy())
    expected_mask = np.ones((6, 6)) if mask is None else mask.double().numpy()
    assert np.array_equal(frames["mask"].to_numpy(), expected_mask)


def test_csv_zip_round_trips_at_full_precision(block):
    """Reading each CSV back gives the same labels and numbers (masked -inf included); bytes are reproducible."""
    X, weights, _, mask, steps = block
    frames = intermediate_frames(TOKENS, X, weights, steps, mask)
    data = csv_zip(frames)
    assert data == csv_zip(frames)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = archive.namelist()
        assert names[0] == "01_X.csv" and names[-1].endswith("_output.csv")
        assert len(names) == len(frames)
        for name, (key, frame) in zip(names, frames.items(), strict=True):
            assert name.endswith(f"_{key}.csv")
            back = pd.read_csv(archive.open(name), index_col=0)
            assert list(back.index) == list(frame.index)
            assert list(back.columns) == list(frame.columns)
            assert np.array_equal(back.to_numpy(), frame.to_numpy())


def test_npz_loads_without_pickle(block):
    """np.load(allow_pickle=False) gives every array and the token labels."""
    X, weights, _, mask, steps = block
    frames = intermediate_frames(TOKENS, X, weights, steps, mask)
    with np.load(io.BytesIO(npz_bytes(frames, TOKENS)), allow_pickle=False) as archive:
        assert set(archive.files) == set(frames) | {"tokens"}
        assert archive["tokens"].tolist() == ["the (1)", "cat", "sat", "on", "the (2)", "mat"]
        assert np.array_equal(archive["output"], steps.output.double().numpy())
        assert np.array_equal(archive["W_q"], weights["W_q"].double().numpy())


def test_the_block_agrees_with_pytorch_to_float32_rounding(block):
    """The pipeline's check: F.scaled_dot_product_attention per head and nn.MultiheadAttention for the block."""
    X, params, _, mask, steps = block
    check = check_block(steps, X, *params.values(), mask=mask)
    assert check.contexts.close and check.weights.close and check.output.close
    assert check.output.max_difference < 1e-5 and check.fully_masked_rows == 0


def test_the_block_check_detects_a_wrong_output(block):
    """A changed output is reported: the check can fail."""
    X, params, _, mask, steps = block
    broken = ac.MultiHeadSteps(steps.heads, steps.concat, steps.output + 0.5)
    check = check_block(broken, X, *params.values(), mask=mask)
    assert not check.output.close and check.output.max_difference == pytest.approx(0.5, abs=1e-6)


def test_query_trace_columns_and_sum(block):
    """One query's row key by key; the weight x value columns sum to its context."""
    _, _, _, _, steps = block
    head = steps.heads[0]
    labels = ac.token_labels(TOKENS)
    trace = query_trace(head, 3, labels)
    assert list(trace.index) == labels
    assert trace["score q·k"].tolist() == pytest.approx(head.scores[3].tolist())
    assert trace["scaled ÷ √d_k"].tolist() == pytest.approx(head.scaled_scores[3].tolist())
    assert trace["weight"].sum() == pytest.approx(1.0, abs=1e-6)
    parts = trace[[c for c in trace.columns if c.startswith("weight × v")]].sum(axis=0).to_numpy()
    assert np.allclose(parts, head.context[3].numpy(), atol=1e-6)


def _run_code(code: str) -> dict:
    namespace: dict = {}
    exec(compile(code, "<reproduction>", "exec"), namespace)  # the generated code, in a fresh namespace
    return namespace


def test_reproduction_code_gives_the_same_numbers(block, capsys):
    """Executing the generated code recomputes weights, per-head context (via SDPA) and output."""
    X, weights, h, mask, steps = block
    code = reproduction_code(TOKENS, X, weights, num_heads=h, mask=mask)
    assert "scaled_dot_product_attention" in code and "pickle" not in code
    ns = _run_code(code)
    assert torch.equal(ns["X"], X)  # full-precision literals: bit-identical inputs
    assert torch.equal(ns["W_o"], weights["W_o"])
    assert torch.allclose(ns["context"], torch.stack([head.context for head in steps.heads]), atol=1e-6)
    assert torch.allclose(ns["weights"], steps.weights, atol=1e-6)
    assert torch.allclose(ns["output"], steps.output, atol=1e-6)
    assert "output:" in capsys.readouterr().out


def test_reproduction_code_runs_in_a_plain_python_process():
    """The code string runs in a fresh interpreter with only torch, and prints the same output."""
    X = ac.random_embeddings(TOKENS, 4, seed=0)
    P = ac.random_projections(4, 4, seed=0)
    weights = {"W_q": P.W_q, "W_k": P.W_k, "W_v": P.W_v, "W_o": ac.random_output_projection(4, seed=0)}
    steps = ac.multi_head_attention(X, *weights.values(), num_heads=2, mask=ac.causal_mask(6))
    code = reproduction_code(TOKENS, X, weights, num_heads=2, mask=ac.causal_mask(6))
    code += "\nprint('RESULT', repr(output.reshape(-1).tolist()))\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    line = next(row for row in result.stdout.splitlines() if row.startswith("RESULT "))
    values = torch.tensor(ast.literal_eval(line.removeprefix("RESULT ")))  # floats printed by repr
    assert torch.allclose(values, steps.output.reshape(-1), atol=1e-6)


def test_reproduction_code_keeps_full_precision():
    """Literals are repr of the exact float, not rounded to 4 decimals."""
    X = torch.tensor([[0.1234567, 1e-9]], dtype=torch.float32)
    W = {name: torch.eye(2) for name in ("W_q", "W_k", "W_v", "W_o")}
    code = reproduction_code(["a"], X, W, num_heads=1, mask=None)
    assert repr(float(X[0, 0])) in code  # 0.12345670163631439, the float32 value exactly
    assert repr(float(X[0, 1])) in code
    assert "0.1235," not in code
    assert torch.equal(_run_code(code)["X"], X)
