"""Why attention divides by sqrt(d_k): 003's worked example, the variance of q . k, softmax saturation.

Shape letters: T tokens (keys per query), d_k query/key size, N samples or trials.
Everything random takes a ``seed`` and draws from its own ``torch.Generator``. The gradient of
softmax, J = diag(w) - w w^T, is measured by ``gradient_size`` (its Frobenius norm, closed form).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd
import torch

from attention_core.attention import AttentionSteps, attention, row_entropy, scale_scores, softmax
from attention_core.attention import uniform_entropy as uniform_entropy  # TEMP alias for pages; removed at merge
from attention_core.embeddings import check_seed
from attention_core.normalization import column_sums, row_sums, softmax_row_steps
from attention_core.presets import SCALING_EXAMPLE
from attention_core.projections import Comparison, compare_with_printed

MAX_SAMPLES = 20_000
SERIES_UNSCALED = "without scaling: q·k"
SERIES_SCALED = "with scaling: q·k / √d_k"


def reproduce_003() -> tuple[AttentionSteps, list[Comparison]]:
    """003's scaled_dot_product on its printed Q, K, V, each step beside the value 003 prints."""
    steps = attention(*SCALING_EXAMPLE.tensors(), scale=True)
    pairs = (
        ("Q Kᵀ", steps.scores, "scores"),
        ("Q Kᵀ / √d_k", steps.scaled_scores, "scaled_scores"),
        ("weights (softmax)", steps.weights, "weights"),
        ("context (weights V)", steps.context, "context"),
    )
    return steps, compare_with_printed(SCALING_EXAMPLE.printed, pairs)


# TEMP alias for pages; removed at merge
def attention_from_qkv(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, *, scale: bool = True) -> AttentionSteps:
    """TEMP alias for pages; removed at merge: use attention(Q, K, V, scale=scale)."""
    return attention(Q, K, V, scale=scale)


# TEMP alias for pages; removed at merge
def exp_terms(scores_row: torch.Tensor) -> tuple[torch.Tensor, float]:
    """TEMP alias for pages; removed at merge: use softmax_row_steps(row).raw_exps and .raw_exp_sum."""
    row = softmax_row_steps(scores_row)
    return row.raw_exps, row.raw_exp_sum


# TEMP alias for pages; removed at merge
def row_and_column_sums(weights: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """TEMP alias for pages; removed at merge: use normalization.row_sums and column_sums."""
    return row_sums(weights), column_sums(weights)


# TEMP alias for pages; removed at merge
def softmax_jacobian(weights_row: torch.Tensor) -> torch.Tensor:
    """TEMP for pages; removed at merge (scaling.py shows it but never calls it; tests keep a copy as oracle).

    J = d softmax(s) / d s = diag(w) - w w^T; it vanishes when w is one-hot.
    """
    return torch.diag_embed(weights_row) - weights_row.unsqueeze(-1) * weights_row.unsqueeze(-2)  # (..., T, T)


def gradient_size(weights: torch.Tensor) -> torch.Tensor:
    """||J_i||_F with J_i = diag(w_i) - w_i w_i^T (softmax's Jacobian) = sqrt(sum w^2 - 2 sum w^3 + (sum w^2)^2).

    The closed form never builds the (T, T) Jacobian of every row, which at 1,024 tokens
    would be a (T, T, T) tensor of 4 GB.
    """
    squares = (weights**2).sum(dim=-1)  # (..., T) -> (...,)
    cubes = (weights**3).sum(dim=-1)  # (..., T) -> (...,)
    return torch.sqrt(torch.clamp(squares - 2 * cubes + squares**2, min=0.0))  # (...,)


def d_k_grid(extra: int | None = None, largest: int = 256) -> tuple[int, ...]:
    """Powers of two 1, 2, 4, ..., largest, plus ``extra`` (a chosen d_k), sorted."""
    powers = {2**i for i in range(int(math.log2(largest)) + 1)}  # {1, 2, 4, ..., largest}
    return tuple(sorted(powers | ({int(extra)} if extra is not None else set())))


def _check_samples(n_samples: int) -> int:
    """A sample count the simulation can afford."""
    if not 2 <= n_samples <= MAX_SAMPLES:
        raise ValueError(f"The number of samples must be between 2 and {MAX_SAMPLES:,}.")
    return n_samples


def _generator(seed: int, d_k: int) -> torch.Generator:
    """One generator per (seed, d_k), so a d_k's numbers do not depend on which other d_k are simulated."""
    if d_k < 1:
        raise ValueError("d_k must be at least 1.")
    return torch.Generator().manual_seed((check_seed(seed) + 7919 * d_k) % 2**63)


def dot_product_variance(d_ks: Sequence[int], n_samples: int, seed: int) -> dict[str, list[float]]:
    """var(q . k) and var(q . k / sqrt(d_k)) for q, k with N(0, 1) entries, one value per d_k."""
    n_samples = _check_samples(n_samples)
    unscaled, scaled = [], []
    for d_k in d_ks:
        generator = _generator(seed, d_k)
        q = torch.randn(n_samples, d_k, generator=generator)  # (N, d_k)
        k = torch.randn(n_samples, d_k, generator=generator)  # (N, d_k)
        dots = (q * k).sum(dim=-1)  # (N, d_k) -> (N,)
        unscaled.append(float(dots.var().item()))  # theory: d_k
        scaled.append(float((dots / math.sqrt(d_k)).var().item()))  # theory: 1
    return {SERIES_UNSCALED: unscaled, SERIES_SCALED: scaled}


def saturation(d_ks: Sequence[int], n_tokens: int, n_trials: int, seed: int) -> dict[str, dict[str, list[float]]]:
    """Mean max weight, entropy and gradient size of softmax(q K^T [/ sqrt(d_k)]) for random q, K, per d_k."""
    n_trials = _check_samples(n_trials)
    result: dict[str, dict[str, list[float]]] = {
        measure: {SERIES_UNSCALED: [], SERIES_SCALED: []} for measure in ("max weight", "entropy", "gradient size")
    }
    for d_k in d_ks:
        generator = _generator(seed, d_k)
        q = torch.randn(n_trials, 1, d_k, generator=generator)  # (N, 1, d_k)
        K = torch.randn(n_trials, n_tokens, d_k, generator=generator)  # (N, T, d_k)
        scores = (q @ K.transpose(-2, -1)).squeeze(1)  # (N, 1, d_k) @ (N, d_k, T) -> (N, T)
        for series, s in ((SERIES_UNSCALED, scores), (SERIES_SCALED, scores / math.sqrt(d_k))):
            weights = softmax(s)  # (N, T)
            result["max weight"][series].append(float(weights.amax(dim=-1).mean().item()))
            result["entropy"][series].append(float(row_entropy(weights).mean().item()))
            result["gradient size"][series].append(float(gradient_size(weights).mean().item()))
    return result


def summary(scores: torch.Tensor, d_k: int) -> pd.DataFrame:
    """Spread of the scores, mean max weight, mean entropy and gradient size, without and with / sqrt(d_k)."""
    columns = {}
    for series, s in ((SERIES_UNSCALED, scores), (SERIES_SCALED, scale_scores(scores, d_k))):
        weights = softmax(s)  # (T, T)
        columns[series] = [
            float(s.std(correction=0).item()),  # population std: 0 for a single score
            float(weights.amax(dim=-1).mean().item()),
            float(row_entropy(weights).mean().item()),
            float(gradient_size(weights).mean().item()),
        ]
    index = [
        "spread of the scores (std)",
        "largest weight (mean over rows)",
        "entropy (mean over rows, nats)",
        "gradient size ‖J‖ (mean over rows)",
    ]
    return pd.DataFrame(columns, index=index)


def long_series(xs: Sequence[float], series: dict[str, list[float]], x: str, value: str) -> pd.DataFrame:
    """{series name: [y per x]} -> long frame with columns x, value, series (for a line chart)."""
    rows = [
        {x: x_value, value: y, "series": name} for name, ys in series.items() for x_value, y in zip(xs, ys, strict=True)
    ]
    return pd.DataFrame(rows)
