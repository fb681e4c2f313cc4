"""The whole attention block at once: every intermediate as CSVs or .npz, a PyTorch check, and code to rerun it.

Shape letters: T tokens, d_model embedding size, h heads, d_k = d_model / h.
Head h uses columns h*d_k:(h+1)*d_k of W_q, W_k, W_v (attention_core.heads). ``params`` is a
{"W_q": ..., "W_o": ...} dict of projection matrices; ``weights`` are attention weights only.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch

from attention_core.attention import AttentionSteps, contributions
from attention_core.heads import MultiHeadSteps
from attention_core.masks import causal_mask
from attention_core.tables import dimension_labels, to_frame, token_labels

ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # a fixed timestamp: the same numbers always give the same zip bytes


def intermediate_frames(
    tokens: Sequence[str],
    X: torch.Tensor,
    params: dict[str, torch.Tensor],
    steps: MultiHeadSteps,
    mask: torch.Tensor | None,
) -> dict[str, pd.DataFrame]:
    """Every tensor of the block, in computing order, as DataFrames labelled by tokens (W_* by dimension)."""
    labels, d_model = token_labels(tokens), X.shape[1]
    dims = dimension_labels(d_model)
    frames = {"X": to_frame(X, labels, dims)}
    frames.update({name: to_frame(W, dims, dimension_labels(W.shape[1])) for name, W in params.items()})
    mask_values = torch.ones(len(labels), len(labels)) if mask is None else mask.to(torch.float64)  # (T, T)
    frames["mask"] = to_frame(mask_values, labels, labels)  # 1 = may attend, 0 = blocked
    for h, head in enumerate(steps.heads, start=1):
        frames.update(head_frames(head, labels, prefix=f"head{h}_"))
    frames["concat"] = to_frame(steps.concat, labels, dims)
    frames["output"] = to_frame(steps.output, labels, dims)
    return frames


def head_frames(head: AttentionSteps, labels: Sequence[str], prefix: str = "") -> dict[str, pd.DataFrame]:
    """Q, K, V, scores, scaled_scores, masked_scores (-inf = blocked), weights and context of one head."""
    d_k, d_v = head.Q.shape[1], head.V.shape[1]
    return {
        f"{prefix}Q": to_frame(head.Q, labels, dimension_labels(d_k)),
        f"{prefix}K": to_frame(head.K, labels, dimension_labels(d_k)),
        f"{prefix}V": to_frame(head.V, labels, dimension_labels(d_v)),
        f"{prefix}scores": to_frame(head.scores, labels, labels),
        f"{prefix}scaled_scores": to_frame(head.scaled_scores, labels, labels),
        f"{prefix}masked_scores": to_frame(head.masked_scores, labels, labels),
        f"{prefix}weights": to_frame(head.weights, labels, labels),
        f"{prefix}context": to_frame(head.context, labels, dimension_labels(d_v)),
    }


def query_trace(head: AttentionSteps, query: int, labels: Sequence[str]) -> pd.DataFrame:
    """Row ``query`` key by key: score q.k_j, scaled score, weight w_j, and w_j v_j (summing to the context)."""
    parts = contributions(head.weights[query], head.V)  # (T, d_v): w_j * v_j
    frame = pd.DataFrame(
        {
            "score q·k": head.scores[query].tolist(),
            "scaled ÷ √d_k": head.scaled_scores[query].tolist(),
            "weight": head.weights[query].tolist(),
        },
        index=list(labels),
    )
    for d, column in enumerate(parts.T.tolist(), start=1):
        frame[f"weight × v d{d}"] = column
    return frame


def csv_zip(frames: dict[str, pd.DataFrame]) -> bytes:
    """A zip holding one '<name>.csv' per frame (full precision, token labels as the index column)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for position, (name, frame) in enumerate(frames.items(), start=1):
            info = zipfile.ZipInfo(f"{position:02d}_{name}.csv", date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, frame.to_csv())
    return buffer.getvalue()


def npz_bytes(frames: dict[str, pd.DataFrame], tokens: Sequence[str]) -> bytes:
    """numpy.savez of every frame's values (float64) plus 'tokens' as a str array: np.load needs no pickle."""
    arrays = {name: frame.to_numpy(dtype=np.float64) for name, frame in frames.items()}
    arrays["tokens"] = np.array(token_labels(tokens), dtype=np.str_)  # fixed-width unicode, not object
    buffer = io.BytesIO()
    np.savez(buffer, allow_pickle=False, **arrays)
    return buffer.getvalue()


def _literal(M: torch.Tensor) -> str:
    """A matrix as a nested Python list with full-precision floats (repr round-trips the exact value)."""
    rows = [", ".join(repr(float(v)) for v in row) for row in M.tolist()]
    return "[\n" + "".join(f"    [{row}],\n" for row in rows) + "]"


def _mask_code(mask: torch.Tensor | None, T: int) -> str:
    """The line that rebuilds the mask: None, the causal tril, or the literal booleans."""
    if mask is None:
        return "mask = None  # every token may attend to every token"
    if torch.equal(mask, causal_mask(T)):
        return "mask = torch.tril(torch.ones(T, T, dtype=torch.bool))  # causal: True = may attend"
    rows = [", ".join(str(bool(v)) for v in row) for row in mask.tolist()]
    return "mask = torch.tensor([\n" + "".join(f"    [{r}],\n" for r in rows) + "])  # True = may attend"


def reproduction_code(
    tokens: Sequence[str],
    X: torch.Tensor,
    params: dict[str, torch.Tensor],
    *,
    num_heads: int,
    mask: torch.Tensor | None,
) -> str:
    """Plain PyTorch code (a string) that recomputes the block with F.scaled_dot_product_attention."""
    dtype = str(X.dtype).replace("torch.", "")
    matrices = "\n".join(
        f"{name} = torch.tensor({_literal(W)}, dtype=torch.{dtype})  # (d_model, d_model)" for name, W in params.items()
    )
    return f'''"""Attention Lab: recompute the pipeline page's numbers in a plain Python session (needs torch)."""
import math

import torch
import torch.nn.functional as F

tokens = {list(tokens)!r}
X = torch.tensor({_literal(X)}, dtype=torch.{dtype})  # (T, d_model)
{matrices}
T, d_model = X.shape
num_heads = {num_heads}
d_k = d_model // num_heads
{_mask_code(mask, len(tokens))}

Q, K, V = X @ W_q, X @ W_k, X @ W_v  # (T, d_model) each
q, k, v = (M.view(T, num_heads, d_k).transpose(0, 1) for M in (Q, K, V))  # (h, T, d_k): head h = its d_k columns
scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (h, T, d_k) @ (h, d_k, T) -> (h, T, T)
if mask is not None:
    scores = scores.masked_fill(~mask, float("-inf"))
weights = torch.softmax(scores, dim=-1)  # (h, T, T), each row sums to 1
context = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # (h, T, d_k) = weights @ v
concat = context.transpose(0, 1).reshape(T, d_model)  # (T, d_model): heads side by side
output = concat @ W_o  # (T, d_model)

torch.set_printoptions(precision=4, sci_mode=False)
print("weights of head 1:", weights[0], sep="\\n")
print("output:", output, sep="\\n")
'''
