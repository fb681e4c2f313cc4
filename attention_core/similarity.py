"""Facts about a score matrix that the scores page states: symmetry and nearest neighbours.

Shape letters: T tokens.
"""

from __future__ import annotations

import torch


def asymmetry(scores: torch.Tensor) -> float:
    """max_ij |S_ij - S_ji|: 0 for X X^T (symmetric), usually not for Q K^T."""
    return float((scores - scores.transpose(-2, -1)).abs().max().item())  # (T, T) -> scalar


def most_and_least_similar(scores_row: torch.Tensor, query_index: int) -> tuple[int | None, int | None]:
    """Indices of the highest and lowest score among the *other* tokens (None if there are none)."""
    others = [j for j in range(scores_row.shape[0]) if j != query_index]
    if not others:
        return None, None
    values = scores_row[others]  # (T - 1,)
    return others[int(values.argmax())], others[int(values.argmin())]


def lengths(X: torch.Tensor) -> torch.Tensor:
    """|x_j| = sqrt(sum_d x_jd^2) for every row; (T, d) -> (T,)."""
    return torch.linalg.vector_norm(X, dim=-1)  # (T, d) -> (T,)


def cosine_similarity(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """cos θ_j = x_q · x_j / (|x_q| |x_j|), 0 where either vector is zero; (d,), (T, d) -> (T,)."""
    dots = keys @ query  # (T, d) @ (d,) -> (T,)
    norms = lengths(keys) * lengths(query)  # (T,)
    return torch.where(norms > 0, dots / norms.clamp_min(torch.finfo(dots.dtype).tiny), torch.zeros_like(dots))


def highest_score(scores_row: torch.Tensor) -> int:
    """argmax_j s_j over all keys, the query itself included (the first one on a tie)."""
    return int(scores_row.argmax())
