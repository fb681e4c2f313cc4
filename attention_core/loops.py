"""The same attention steps written with plain Python loops over tokens, as the tutorials do.

Teaching material (every sum is visible) and a test oracle for the vectorised core.
Shape letters: T tokens, d_model, d_k. Matrices are lists of rows of Python floats.
"""

from __future__ import annotations

import math

Matrix = list[list[float]]


def dot(a: list[float], b: list[float]) -> float:
    """a . b = sum_d a_d b_d."""
    total = 0.0
    for a_d, b_d in zip(a, b, strict=True):
        total += a_d * b_d
    return total


def matmul(A: Matrix, B: Matrix) -> Matrix:
    """C[i][j] = sum_k A[i][k] B[k][j]."""
    columns = [list(col) for col in zip(*B, strict=True)]
    return [[dot(row, col) for col in columns] for row in A]


def attention_scores(Q: Matrix, K: Matrix) -> Matrix:
    """scores[i][j] = q_i . k_j, one dot product at a time."""
    scores = []
    for q in Q:
        row = []
        for k in K:
            row.append(dot(q, k))
        scores.append(row)
    return scores


def softmax_row(row: list[float]) -> list[float]:
    """w_j = exp(s_j - max) / sum_k exp(s_k - max); all zeros if every s_j is -inf."""
    finite = [s for s in row if s != -math.inf]
    if not finite:
        return [0.0 for _ in row]
    top = max(finite)
    exps = [math.exp(s - top) if s != -math.inf else 0.0 for s in row]
    total = sum(exps)
    return [e / total for e in exps]


def context_vector(weights_row: list[float], V: Matrix) -> list[float]:
    """context = sum_j w_j v_j, accumulated token by token."""
    context = [0.0] * len(V[0])
    for w_j, v_j in zip(weights_row, V, strict=True):
        for d, value in enumerate(v_j):
            context[d] += w_j * value
    return context


def self_attention(
    X: Matrix,
    W_q: Matrix | None = None,
    W_k: Matrix | None = None,
    W_v: Matrix | None = None,
    *,
    mask: list[list[bool]] | None = None,
    scale: bool = True,
    temperature: float = 1.0,
) -> tuple[Matrix, Matrix]:
    """(weights, context) for every token, by loops: the tutorials' code, generalised."""
    Q = X if W_q is None else matmul(X, W_q)
    K = X if W_k is None else matmul(X, W_k)
    V = X if W_v is None else matmul(X, W_v)
    divisor = (math.sqrt(len(Q[0])) if scale else 1.0) * temperature
    weights, context = [], []
    for i, q in enumerate(Q):
        row = [dot(q, k) / divisor for k in K]
        if mask is not None:
            row = [s if mask[i][j] else -math.inf for j, s in enumerate(row)]
        w = softmax_row(row)
        weights.append(w)
        context.append(context_vector(w, V))
    return weights, context
