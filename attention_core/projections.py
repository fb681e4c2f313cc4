"""Projection matrices: seeded random W_q, W_k, W_v, W_o, checking an edited W, recovering 002's W.

Shape letters: T tokens, d_model input size, d_k projection size.
Also tutorial 002 reproduced from its printed numbers (JOURNEY.printed) and its wrong sections.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from attention_core.attention import column_softmax, self_attention
from attention_core.embeddings import _cell_to_float, check_seed
from attention_core.i18n import _
from attention_core.presets import JOURNEY

MAX_D_K = 64


@dataclass(frozen=True)
class Projections:
    """The three projection matrices of one attention head."""

    W_q: torch.Tensor  # (d_model, d_k)
    W_k: torch.Tensor  # (d_model, d_k)
    W_v: torch.Tensor  # (d_model, d_v)


def random_matrix(
    d_in: int, d_out: int, generator: torch.Generator, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """W ~ N(0, 1) / sqrt(d_in), so X W keeps unit variance; (d_in, d_out)."""
    W = torch.randn(d_in, d_out, generator=generator, dtype=torch.float64) / math.sqrt(d_in)  # (d_in, d_out)
    return W.to(dtype)


def random_projections(d_model: int, d_k: int, seed: int, dtype: torch.dtype = torch.float32) -> Projections:
    """W_q, W_k, W_v drawn in that order from one seeded generator; each (d_model, d_k)."""
    if not 1 <= d_k <= MAX_D_K:
        raise ValueError(_("d_k must be between 1 and {limit}.", limit=MAX_D_K))
    generator = torch.Generator().manual_seed(check_seed(seed))
    W_q, W_k, W_v = (random_matrix(d_model, d_k, generator, dtype) for _matrix in range(3))
    return Projections(W_q, W_k, W_v)


def random_output_projection(d_model: int, seed: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """W_o for multi-head attention, from its own seeded generator; (d_model, d_model)."""
    generator = torch.Generator().manual_seed(check_seed(seed) ^ 0x5EED)
    return random_matrix(d_model, d_model, generator, dtype)


def recover_projection(X: torch.Tensor, projected: torch.Tensor) -> tuple[torch.Tensor, float]:
    """W = argmin ||X W - P||: the least-squares projection matrix that maps X to a printed projection P.

    Returns W (d_model, d_k) and the largest absolute residual max|X W - P|.
    """
    X64, P64 = X.to(torch.float64), projected.to(torch.float64)
    W = torch.linalg.lstsq(X64, P64).solution  # (d_model, d_k)
    residual = (X64 @ W - P64).abs().max().item()  # (T, d_k) -> scalar
    return W.to(X.dtype), residual


def validate_projection_matrix(
    values: object, d_in: int, d_out: int, name: str = "W", dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """Check a user-edited projection matrix (list of rows, array or DataFrame) and return it as (d_in, d_out)."""
    if hasattr(values, "to_numpy"):
        values = values.to_numpy(dtype=object)  # a DataFrame from st.data_editor
    array = np.asarray(values, dtype=object)
    if array.ndim != 2 or array.size == 0:
        raise ValueError(
            _("{name} must be a table with {rows} rows and {cols} columns.", name=name, rows=d_in, cols=d_out)
        )
    if array.shape != (d_in, d_out):
        rows, cols = array.shape
        raise ValueError(
            _(
                "{name} is {rows} × {cols} but must be {d_in} × {d_out}: one row per input dimension (d_model = "
                "{d_in}), one column per output dimension (d_k = {d_out}).",
                name=name,
                rows=rows,
                cols=cols,
                d_in=d_in,
                d_out=d_out,
            )
        )
    try:
        numbers = [[_cell_to_float(array[i, j], i, j) for j in range(d_out)] for i in range(d_in)]
    except ValueError as error:
        raise ValueError(_("{name}: {reason}", name=name, reason=error)) from None
    return torch.tensor(numbers, dtype=dtype)  # (d_in, d_out)


@dataclass(frozen=True)
class Comparison:
    """One matrix the lab computes beside the one a tutorial prints."""

    name: str
    ours: torch.Tensor
    printed: torch.Tensor
    max_difference: float  # max |ours - printed|


def recovered_002_projections(dtype: torch.dtype = torch.float32) -> tuple[Projections, dict[str, float]]:
    """002's unprinted W_q, W_k, W_v, recovered by least squares from its inputs and printed Q, K, V."""
    X = JOURNEY.matrix(torch.float64)  # (6, 3)
    recovered, residuals = {}, {}
    for name, key in (("W_q", "Q"), ("W_k", "K"), ("W_v", "V")):
        printed = torch.tensor(JOURNEY.printed[key], dtype=torch.float64)  # (6, 3)
        W, residuals[name] = recover_projection(X, printed)  # (3, 3)
        recovered[name] = W.to(dtype)
    return Projections(**recovered), residuals


def matches_002_inputs(X: torch.Tensor) -> bool:
    """True when X is 002's journey embeddings (the inputs its printed numbers come from)."""
    journey = JOURNEY.matrix(torch.float64)  # (6, 3)
    return tuple(X.shape) == tuple(journey.shape) and bool(torch.allclose(X.to(torch.float64), journey, atol=1e-6))


def compare_with_printed(
    printed_numbers: Mapping[str, tuple], pairs: Sequence[tuple[str, torch.Tensor, str]]
) -> list[Comparison]:
    """Each (name, ours, key) beside printed_numbers[key] (a preset's printed), with max |ours - printed|."""
    comparisons = []
    for name, ours, key in pairs:
        printed = torch.tensor(printed_numbers[key], dtype=ours.dtype)  # same shape as ours
        gap = (ours.to(torch.float64) - printed.to(torch.float64)).abs().max().item()  # (T, n) -> scalar
        comparisons.append(Comparison(name, ours, printed, gap))
    return comparisons


def reproduce_002(params: Projections, X: torch.Tensor) -> list[Comparison]:
    """002's section 2.3 recomputed from X and the recovered W (unscaled, as 002 does), beside its printout."""
    steps = self_attention(X, params.W_q, params.W_k, params.W_v, scale=False)
    pairs = (
        ("Q (queries)", steps.Q, "Q"),
        ("K (keys)", steps.K, "K"),
        ("V (values)", steps.V, "V"),
        ("scores Q Kᵀ", steps.scores, "projected_scores"),
        ("weights", steps.weights, "projected_weights"),
        ("context", steps.context, "projected_context"),
    )
    return compare_with_printed(JOURNEY.printed, pairs)


def tutorial_002_pitfall(X: torch.Tensor, W_k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """002's sections 2.2.4-2.2.6 as written: X W_k^T, softmax down columns, then a broadcast 'context'."""
    wrong_scores = X @ W_k.T  # (T, d_model) @ (d_k, d_model)^T -> (T, d_k): not query-key scores
    column_weights = column_softmax(wrong_scores)  # (T, d_k), columns sum to 1 (dim=0)
    broadcast = column_weights.unsqueeze(1) * X  # (T, 1, d_k) * (T, d_model) -> (T, T, d_model)
    return wrong_scores, column_weights, broadcast.sum(dim=0)  # (T, d_model): X times column sums = X


def projection_parameter_count(d_model: int, d_k: int, d_v: int | None = None) -> int:
    """Learned numbers in W_q, W_k, W_v: d_model d_k + d_model d_k + d_model d_v."""
    return d_model * (2 * d_k + (d_k if d_v is None else d_v))
