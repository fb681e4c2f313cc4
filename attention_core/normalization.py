"""Softmax taken apart: the worked steps of one row, row and column sums, and the overflow demonstration.

Shape letters: T tokens. ``scores`` is a (T, T) matrix, ``scores_row`` one (T,) row of it.
The softmax itself, its naive and wrong-axis variants and the entropies live in
``attention_core.attention``; this module only exposes their intermediate numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from attention_core.attention import check_temperature, naive_softmax


@dataclass(frozen=True)
class SoftmaxRow:
    """Every intermediate of softmax for one row of scores, as a learner works it by hand."""

    scores: torch.Tensor  # (T,)  s_j / t (-inf where masked)
    raw_exps: torch.Tensor  # (T,)  exp(s_j / t) unshifted, as 003 prints it; overflows to inf for large scores
    row_max: float  # m = max_j s_j / t over the allowed (finite) scores, 0 if none
    shifted: torch.Tensor  # (T,)  s_j / t - m, every entry <= 0
    exps: torch.Tensor  # (T,)  exp(s_j / t - m), in [0, 1]; exp(-inf) = 0 for a masked key
    exp_sum: float  # sum_j exp(s_j / t - m), at least 1 unless the row is fully masked (then 0)
    weights: torch.Tensor  # (T,)  exps / exp_sum, all 0 for a fully masked row

    @property
    def raw_exp_sum(self) -> float:
        """sum_j exp(s_j / t), the unshifted denominator."""
        return float(self.raw_exps.sum().item())


def softmax_row_steps(scores_row: torch.Tensor, temperature: float = 1.0) -> SoftmaxRow:
    """w_j = exp(s_j/t - m) / sum_k exp(s_k/t - m) with m = max_k s_k/t (allowed keys), every step kept."""
    z = scores_row / check_temperature(temperature)  # (T,)
    allowed = ~torch.isneginf(z)  # (T,), False where masked (-inf)
    row_max = z[allowed].max() if bool(allowed.any()) else z.new_zeros(())  # scalar
    shifted = z - row_max  # (T,)
    exps = torch.where(allowed, torch.exp(shifted), 0.0)  # (T,)
    exp_sum = exps.sum()  # scalar
    weights = torch.zeros_like(exps) if exp_sum == 0 else exps / exp_sum  # (T,)
    return SoftmaxRow(z, torch.exp(z), float(row_max), shifted, exps, float(exp_sum), weights)


def row_sums(matrix: torch.Tensor) -> torch.Tensor:
    """r_i = sum_j M_ij: exactly 1 for every row of a row softmax."""
    return matrix.sum(dim=-1)  # (T, T) -> (T,)


def column_sums(matrix: torch.Tensor) -> torch.Tensor:
    """c_j = sum_i M_ij: the total attention key j receives, anywhere in (0, T) after a row softmax."""
    return matrix.sum(dim=-2)  # (T, T) -> (T,)


def with_sums(matrix: torch.Tensor) -> torch.Tensor:
    """The matrix bordered by its row sums (last column), column sums (last row) and grand total (corner)."""
    rows = torch.cat([matrix, row_sums(matrix).unsqueeze(-1)], dim=-1)  # (T, T + 1)
    bottom = column_sums(rows).unsqueeze(0)  # (1, T + 1)
    return torch.cat([rows, bottom], dim=0)  # (T + 1, T + 1)


def max_weight(weights_row: torch.Tensor) -> tuple[int, float]:
    """(argmax_j w_j, max_j w_j): the key the query attends to most, and how much."""
    index = int(weights_row.argmax())
    return index, float(weights_row[index])


@dataclass(frozen=True)
class OverflowDemo:
    """Scores shifted up by a constant, pushed through the naive and the stable softmax."""

    scores: torch.Tensor  # (T,)  s_j + c, in float64: float32 would round it (1000.4567 -> 1000.45667)
    naive_exps: torch.Tensor  # (T,)  exp(s_j + c) stored in float32: inf once s_j + c > ~88.7
    naive_sum: float  # sum of the above: inf as soon as one term is inf
    naive_weights: torch.Tensor  # (T,)  inf / inf = NaN
    shifted: torch.Tensor  # (T,)  s_j + c - max: the constant cancels
    stable_exps: torch.Tensor  # (T,)  exp(s_j + c - max), in (0, 1]
    stable_weights: torch.Tensor  # (T,)  stable_exps / their sum: the same weights as for the unshifted scores


def overflow_demo(scores_row: torch.Tensor, offset: float = 1000.0) -> OverflowDemo:
    """For s_j + c: naive exp(s_j + c) / sum overflows in float32; exp(s_j + c - m) / sum with m = max does not.

    s + c is kept in float64, so the stable column is exact (every shown digit right) and shows that the shift
    changes nothing; the naive column is what float32 does with the same numbers.
    """
    big = scores_row.to(torch.float64) + offset  # (T,), exact: no float32 rounding of s + c
    naive = big.to(torch.float32)  # (T,) the same numbers as a float32 model would hold them
    naive_exps = torch.exp(naive)  # (T,), inf past ~88.7
    shifted = big - big.max()  # (T,)
    stable_exps = torch.exp(shifted)  # (T,)
    stable_weights = stable_exps / stable_exps.sum()  # (T,)
    return OverflowDemo(
        big, naive_exps, float(naive_exps.sum()), naive_softmax(naive), shifted, stable_exps, stable_weights
    )


FLOAT32_EXP_LIMIT = math.log(torch.finfo(torch.float32).max)  # about 88.72: exp overflows to inf past it
OFFSET_CHOICES = (0.0, 10.0, 50.0, 80.0, 100.0, 1000.0)


def first_overflow_offset(scores_row: torch.Tensor) -> float:
    """The constant c, to 0.1, at which exp(max_j s_j + c) first overflows float32: max s + c just past 88.72."""
    return math.floor((FLOAT32_EXP_LIMIT - float(scores_row.max())) * 10 + 1) / 10


def offset_choices(scores_row: torch.Tensor) -> tuple[float, ...]:
    """The constants c the stability demo offers: a few round ones and the row's first overflowing c."""
    return tuple(sorted({*OFFSET_CHOICES, first_overflow_offset(scores_row)}))


def one_hot_weights(T: int) -> tuple[float, float]:
    """For T distinct one-hot tokens: w_ii = e / (e + T - 1) and w_ij = 1 / (e + T - 1) for j != i."""
    if T < 1:
        raise ValueError("A row needs at least one token.")
    denominator = math.e + T - 1  # exp(1) for itself + exp(0) for each of the T - 1 others
    return math.e / denominator, 1.0 / denominator


def all_positive(scores_row: torch.Tensor) -> bool:
    """True when every s_j > 0: then s_j / sum_k s_k happens to be a proper average (divide-by-sum looks fine)."""
    return bool((scores_row > 0).all())
