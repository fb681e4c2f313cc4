"""Context vectors as blends of the inputs: the weighted sum term by term, the loop version, a 2-D picture.

Shape letters: T tokens, d dimensions of the vectors being mixed (d_model here, since V = X).
The 2-D picture applies ONE affine map to the inputs and to the context vectors: either the
first two dimensions, or the top two principal directions of the centred inputs (PCA by SVD).
An affine map keeps weighted averages, so every context vector stays inside the inputs' cloud.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import pandas as pd
import torch

from attention_core import loops
from attention_core.attention import contributions
from attention_core.i18n import N_
from attention_core.tables import dimension_labels

Method = Literal["pca", "first two"]


def weighted_sum_table(weights_row: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    """Rows [w_j, w_j v_j] for each token j, then a last row [sum_j w_j, sum_j w_j v_j] = [1, context]."""
    parts = torch.cat([weights_row.unsqueeze(-1), contributions(weights_row, V)], dim=-1)  # (T, 1 + d)
    return torch.cat([parts, parts.sum(dim=0, keepdim=True)], dim=0)  # (T + 1, 1 + d)


def contributions_frame(weights_row: torch.Tensor, V: torch.Tensor, labels: Sequence[str]) -> pd.DataFrame:
    """Long form for stacked bars: one row per (token, dimension) with weight, value and weight x value."""
    parts = contributions(weights_row, V)  # (T, d)
    T, d = parts.shape
    dims = dimension_labels(d)
    return pd.DataFrame(
        {
            "token": [label for label in labels for _ in range(d)],
            "token_pos": [j for j in range(T) for _ in range(d)],
            "dimension": dims * T,
            "weight": [float(w) for w in weights_row.tolist() for _ in range(d)],
            "value": V.detach().to(torch.float64).reshape(-1).tolist(),
            "contribution": parts.detach().to(torch.float64).reshape(-1).tolist(),
        }
    )


def loop_self_attention(X: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(weights, context) of simplified attention (Q = K = V = X, unscaled) computed by Python loops."""
    weights, context = loops.self_attention(X.tolist(), scale=False)  # lists of rows of floats
    return torch.tensor(weights, dtype=X.dtype), torch.tensor(context, dtype=X.dtype)  # (T, T), (T, d)


def first_two_dims(M: torch.Tensor) -> torch.Tensor:
    """M[:, :2], padded with a zero column when there is only one dimension."""
    if M.shape[-1] >= 2:
        return M[:, :2]  # (T, 2)
    return torch.cat([M, torch.zeros_like(M)], dim=-1)  # (T, 1) -> (T, 2)


def pca_basis(X: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, float]:
    """(mean, basis, share): X_c = X - mean = U S V^T, basis = first two columns of V, share = (s1² + s2²) / sum s²."""
    mean = X.mean(dim=0)  # (d,)
    _, S, Vh = torch.linalg.svd(X - mean, full_matrices=False)  # S (r,), Vh (r, d), r = min(T, d)
    basis = Vh[:2].transpose(0, 1)  # (d, 2)
    signs = torch.sign(basis.gather(0, basis.abs().argmax(dim=0, keepdim=True)))  # (1, 2): largest loading > 0
    basis = basis * torch.where(signs == 0, 1.0, signs)  # (d, 2), deterministic up to ties
    energy = S.pow(2)  # (r,)
    return mean, basis, float(energy[:2].sum() / energy.sum())


def pca_project(M: torch.Tensor, mean: torch.Tensor, basis: torch.Tensor) -> torch.Tensor:
    """(M - mean) @ basis: coordinates along the principal directions."""
    return (M - mean) @ basis  # (T, d) @ (d, 2) -> (T, 2)


@dataclass(frozen=True)
class Picture2D:
    """Inputs and context vectors mapped to the plane by the same map."""

    inputs: torch.Tensor  # (T, 2)
    context: torch.Tensor  # (T, 2)
    method: Method  # what was actually used ("pca" falls back to "first two" when it cannot work)
    axis_titles: tuple[str, str]
    explained: float | None  # share of the inputs' spread the two PCA axes keep; None for "first two"


def can_use_pca(X: torch.Tensor) -> bool:
    """PCA needs more than two dimensions (else the first two are exact) and inputs that are not all equal."""
    return X.shape[-1] > 2 and X.shape[0] >= 2 and bool((X - X.mean(dim=0)).abs().max() > 0)


def project_2d(X: torch.Tensor, context: torch.Tensor, method: Method = "pca") -> Picture2D:
    """The same map for both: (M - mean) @ basis for PCA, else M[:, :2]."""
    if method == "pca" and can_use_pca(X):
        mean, basis, share = pca_basis(X)
        titles = (N_("principal direction 1"), N_("principal direction 2"))  # translated where shown
        return Picture2D(pca_project(X, mean, basis), pca_project(context, mean, basis), "pca", titles, share)
    titles = ("d1", "d2") if X.shape[-1] >= 2 else ("d1", N_("(none: d_model is 1)"))
    return Picture2D(first_two_dims(X), first_two_dims(context), "first two", titles, None)


def scatter_frame(picture: Picture2D, labels: Sequence[str]) -> pd.DataFrame:
    """Long form for charts.scatter_2d: columns x, y, label, kind ('input' / 'context')."""
    rows = []
    for kind, points in (("input", picture.inputs), ("context", picture.context)):
        for label, (x, y) in zip(labels, points.detach().to(torch.float64).tolist(), strict=True):
            rows.append({"x": x, "y": y, "label": label, "kind": kind})
    return pd.DataFrame(rows, columns=["x", "y", "label", "kind"])
