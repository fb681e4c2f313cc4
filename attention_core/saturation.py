"""Why attention divides by sqrt(d_k): 003's worked example, the variance of q . k, softmax saturation.

Shape letters: T tokens (keys per query), d_k query/key size, N samples or trials.
Everything random takes a ``seed`` and draws from its own ``torch.Generator``. The gradient of
softmax, J = diag(w) - w w^T, is measured by ``gradient_size`` (its Frobenius norm, closed form);
``gradient_to_query`` compares what scaled and unscaled attention pass back to the same q.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd
import torch

from attention_core.attention import AttentionSteps, attention, row_entropy, scale_scores, softmax
from attention_core.embeddings import check_seed
from attention_core.i18n import _
from attention_core.presets import SCALING_EXAMPLE
from attention_core.projections import Comparison, compare_with_printed, random_matrix

MAX_SAMPLES = 20_000
SERIES_UNSCALED = "without scaling: q·k"
SERIES_SCALED = "with scaling: q·k / √d_k"
QUANTILES = {"10th percentile": 0.1, "median": 0.5, "90th percentile": 0.9}
NEARLY_ONE_HOT = 0.9  # mean largest weight from which rows count as saturated
BARELY = 0.1  # a change of the mean largest weight below this barely matters


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
        raise ValueError(_("The number of samples must be between 2 and {limit}.", limit=f"{MAX_SAMPLES:,}"))
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


def gradient_to_query(
    d_ks: Sequence[int], n_tokens: int, n_trials: int, seed: int
) -> dict[str, dict[str, list[float]]]:
    """Quantiles of |dL/dq| for L = g · softmax(c q K^T), c = 1 or 1/sqrt(d_k), g a fixed random upstream gradient.

    The same q, K (those of ``saturation``) and the same g for both series, so both gradients are taken
    with respect to the same input q: dL/ds = w * (g - w · g) (softmax's Jacobian times g), dL/dq = c dL/ds K.
    """
    n_trials = _check_samples(n_trials)
    result: dict[str, dict[str, list[float]]] = {name: {SERIES_UNSCALED: [], SERIES_SCALED: []} for name in QUANTILES}
    levels = torch.tensor(list(QUANTILES.values()), dtype=torch.float64)
    for d_k in d_ks:
        generator = _generator(seed, d_k)
        q = torch.randn(n_trials, 1, d_k, generator=generator).double()  # (N, 1, d_k)
        K = torch.randn(n_trials, n_tokens, d_k, generator=generator).double()  # (N, T, d_k)
        g = torch.randn(n_trials, n_tokens, generator=generator).double()  # (N, T): dL/dw, fixed
        scores = (q @ K.transpose(-2, -1)).squeeze(1)  # (N, 1, d_k) @ (N, d_k, T) -> (N, T)
        for series, c in ((SERIES_UNSCALED, 1.0), (SERIES_SCALED, 1 / math.sqrt(d_k))):
            w = softmax(c * scores)  # (N, T)
            d_scores = w * (g - (w * g).sum(dim=-1, keepdim=True))  # (N, T): J^T g, J = diag(w) - w w^T
            d_q = c * (d_scores.unsqueeze(1) @ K).squeeze(1)  # (N, 1, T) @ (N, T, d_k) -> (N, d_k)
            values = torch.quantile(torch.linalg.vector_norm(d_q, dim=-1), levels)  # (N,) -> (3,)
            for name, value in zip(QUANTILES, values.tolist(), strict=True):
                result[name][series].append(value)
    return result


def projected_scores(X: torch.Tensor, d_k: int, seed: int) -> torch.Tensor:
    """Q K^T with Q = X W_q, K = X W_k for seeded random W of any d_k (no MAX_D_K limit); (T, T)."""
    generator = torch.Generator().manual_seed(check_seed(seed))
    W_q = random_matrix(X.shape[-1], d_k, generator, X.dtype)  # (d_model, d_k)
    W_k = random_matrix(X.shape[-1], d_k, generator, X.dtype)  # (d_model, d_k)
    return (X @ W_q) @ (X @ W_k).T  # (T, d_k) @ (d_k, T) -> (T, T)


def entry_variances(Q: torch.Tensor, K: torch.Tensor) -> tuple[float, float]:
    """Variance of the entries of Q and of K (population): the lesson assumes 1 for both."""
    return float(Q.var(correction=0).item()), float(K.var(correction=0).item())


def scaling_effect(scores: torch.Tensor, d_k: int) -> str:
    """'saturated' (unscaled rows nearly one-hot), 'barely' (mean largest weight moves < BARELY) or 'visible'."""
    unscaled = float(softmax(scores).amax(dim=-1).mean().item())
    scaled = float(softmax(scale_scores(scores, d_k)).amax(dim=-1).mean().item())
    if unscaled >= NEARLY_ONE_HOT:
        return "saturated"
    return "barely" if unscaled - scaled < BARELY else "visible"


def summary(scores: torch.Tensor, d_k: int) -> pd.DataFrame:
    """Spread of the scores, mean max weight and mean entropy, without and with / sqrt(d_k)."""
    columns = {}
    for series, s in ((SERIES_UNSCALED, scores), (SERIES_SCALED, scale_scores(scores, d_k))):
        weights = softmax(s)  # (T, T)
        columns[series] = [
            float(s.std(correction=0).item()),  # population std: 0 for a single score
            float(weights.amax(dim=-1).mean().item()),
            float(row_entropy(weights).mean().item()),
        ]
    index = ["spread of the scores (std)", "largest weight (mean over rows)", "entropy (mean over rows, nats)"]
    return pd.DataFrame(columns, index=index)


def long_series(xs: Sequence[float], series: dict[str, list[float]], x: str, value: str) -> pd.DataFrame:
    """{series name: [y per x]} -> long frame with columns x, value, series (for a line chart)."""
    rows = [
        {x: x_value, value: y, "series": name} for name, ys in series.items() for x_value, y in zip(xs, ys, strict=True)
    ]
    return pd.DataFrame(rows)
