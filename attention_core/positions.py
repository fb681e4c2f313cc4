"""Word order: attention alone ignores it (permutation equivariance); position encodings add it.

Shape letters: T tokens, d_model embedding size, d_k query/key size, d_v value size.
A permutation ``perm`` is a (T,) tensor of positions: the shuffled sentence puts the token at
position ``perm[i]`` of the original into position i, so shuffled X = X[perm] = P X.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import torch

from attention_core.attention import self_attention
from attention_core.embeddings import check_d_model, check_seed
from attention_core.i18n import _
from attention_core.reference import Agreement, agreement, sdpa_agreement

BASE = 10_000.0  # the wavelength base of "Attention Is All You Need"
MAX_POSITIONS = 1024  # rows of the learned-style table, like GPT-2's 1024 positions
DOG_BITES_MAN = ("dog", "bites", "man")  # the built-in demo: reversed, it means the opposite


def encoding_angles(T: int, d_model: int, base: float = BASE) -> torch.Tensor:
    """angle[pos, c] = pos / base^(2i / d_model) with i = c // 2 (columns 2i and 2i+1 share a frequency)."""
    d_model = check_d_model(d_model)
    pos = torch.arange(T, dtype=torch.float64).unsqueeze(1)  # (T, 1)
    two_i = 2 * torch.div(torch.arange(d_model), 2, rounding_mode="floor").to(torch.float64)  # (d_model,)
    return pos / base ** (two_i / d_model)  # (T, 1) / (d_model,) -> (T, d_model)


def sinusoidal_encoding(T: int, d_model: int, base: float = BASE, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """PE[pos, 2i] = sin(pos / base^(2i/d_model)), PE[pos, 2i+1] = cos(pos / base^(2i/d_model)); (T, d_model)."""
    angles = encoding_angles(T, d_model, base)  # (T, d_model)
    even = (torch.arange(d_model) % 2 == 0).unsqueeze(0)  # (1, d_model): sin columns (an odd d_model ends on sin)
    return torch.where(even, torch.sin(angles), torch.cos(angles)).to(dtype)  # (T, d_model)


def position_breakdown(pos: int, d_model: int, base: float = BASE) -> pd.DataFrame:
    """One row per column c of PE[pos]: 2i / d_model, the angle pos / base^(2i/d_model), and sin or cos of it."""
    angles = encoding_angles(pos + 1, d_model, base)[pos]  # (d_model,)
    values = sinusoidal_encoding(pos + 1, d_model, base, torch.float64)[pos]  # (d_model,)
    two_i = 2 * torch.div(torch.arange(d_model), 2, rounding_mode="floor")  # (d_model,)
    index = [f"d{c + 1} = {'sin' if c % 2 == 0 else 'cos'}" for c in range(d_model)]  # d1 = sin: counted from 1
    return pd.DataFrame(
        {"2i / d_model": (two_i / d_model).tolist(), "angle": angles.tolist(), "PE value": values.tolist()}, index=index
    )


def learned_positions(T: int, d_model: int, seed: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """P[pos] = row pos of a seeded N(0, 1) table of MAX_POSITIONS rows (a stand-in for a trained one); (T, d_model)."""
    d_model, seed = check_d_model(d_model), check_seed(seed)
    if T > MAX_POSITIONS:
        raise ValueError(
            _(
                "A learned position table has a fixed number of rows: {rows} here, not {T}.",
                rows=MAX_POSITIONS,
                T=T,
            )
        )
    generator = torch.Generator().manual_seed(seed ^ 0x9051)
    table = torch.randn(MAX_POSITIONS, d_model, generator=generator, dtype=torch.float64)  # (MAX_POSITIONS, d_model)
    return table[:T].to(dtype)  # (T, d_model): row pos never depends on T


def add_positions(X: torch.Tensor, positions: torch.Tensor | None) -> torch.Tensor:
    """X' = X + PE: the same word at another position gets another input vector."""
    return X if positions is None else X + positions.to(X.dtype)  # (T, d_model) + (T, d_model)


def check_permutation(perm: Sequence[int] | torch.Tensor, T: int) -> torch.Tensor:
    """perm as a (T,) long tensor, or a ValueError unless it holds each position 0..T-1 exactly once."""
    values = [int(p) for p in (perm.tolist() if isinstance(perm, torch.Tensor) else perm)]
    if sorted(values) != list(range(T)):
        raise ValueError(_("An order must list each of the positions 0 to {last} exactly once.", last=T - 1))
    return torch.tensor(values, dtype=torch.long)  # (T,)


def shuffle_permutation(T: int, seed: int) -> torch.Tensor:
    """A seeded random order of 0..T-1 (torch.randperm); a shift by one instead if it came out unchanged."""
    generator = torch.Generator().manual_seed(check_seed(seed))
    perm = torch.randperm(T, generator=generator)  # (T,)
    if T > 1 and torch.equal(perm, torch.arange(T)):
        perm = torch.roll(perm, 1)  # (T,): a shuffle that moves every token
    return perm


def reversal_permutation(T: int) -> torch.Tensor:
    """perm[i] = T - 1 - i: the sentence read backwards ("dog bites man" -> "man bites dog")."""
    return torch.arange(T - 1, -1, -1)  # (T,)


def parse_order(text: str, T: int) -> torch.Tensor:
    """'3 1 2' (positions counted from 1, as the learner reads them; spaces or commas) -> perm (T,) counted
    from 0, or a ValueError."""
    parts = text.replace(",", " ").split()
    if not all(part.isdigit() for part in parts):
        raise ValueError(_("Type the new order as positions counted from 1, separated by spaces, e.g. '3 1 2'."))
    positions = [int(part) for part in parts]
    if sorted(positions) != list(range(1, T + 1)):
        raise ValueError(_("An order must list each of the positions 1 to {last} exactly once.", last=T))
    return check_permutation([p - 1 for p in positions], T)  # (T,)


def inverse_permutation(perm: torch.Tensor) -> torch.Tensor:
    """inv[perm[i]] = i: where each original position ends up in the shuffled sentence."""
    return torch.argsort(perm)  # (T,)


def permute_rows(M: torch.Tensor, perm: torch.Tensor) -> torch.Tensor:
    """(P M)[i] = M[perm[i]]: the rows of M in the shuffled order."""
    return M[perm]  # (T, d) -> (T, d)


def permute_tokens(tokens: Sequence[str], perm: torch.Tensor) -> list[str]:
    """tokens[perm[i]] for each i: the shuffled sentence."""
    return [tokens[int(p)] for p in perm]


def attention_output(
    X: torch.Tensor, W_q: torch.Tensor, W_k: torch.Tensor, W_v: torch.Tensor, positions: torch.Tensor | None = None
) -> torch.Tensor:
    """context = softmax((X + PE) W_q ((X + PE) W_k)^T / sqrt(d_k)) (X + PE) W_v; (T, d_v)."""
    return self_attention(add_positions(X, positions), W_q, W_k, W_v).context  # (T, d_v)


def output_check(X: torch.Tensor, W_q: torch.Tensor, W_k: torch.Tensor, W_v: torch.Tensor) -> Agreement:
    """A(X) against PyTorch's F.scaled_dot_product_attention on the same Q, K, V (reference.sdpa_agreement)."""
    return sdpa_agreement(self_attention(X, W_q, W_k, W_v), mask=None, scale=True)


def equivariance_agreement(
    X: torch.Tensor,
    perm: torch.Tensor,
    W_q: torch.Tensor,
    W_k: torch.Tensor,
    W_v: torch.Tensor,
    positions: torch.Tensor | None = None,
) -> Agreement:
    """A(P X + PE) against P A(X + PE), cell by cell with a relative tolerance (reference.agreement)."""
    shuffled = attention_output(permute_rows(X, perm), W_q, W_k, W_v, positions)  # (T, d_v)
    expected = permute_rows(attention_output(X, W_q, W_k, W_v, positions), perm)  # (T, d_v)
    return agreement(shuffled, expected)


def identical_rows(X: torch.Tensor) -> list[list[int]]:
    """Groups (2 or more) of positions whose embedding rows are exactly equal, e.g. both 'the's."""
    groups: dict[tuple[float, ...], list[int]] = {}
    for i, row in enumerate(X.tolist()):
        groups.setdefault(tuple(row), []).append(i)
    return [group for group in groups.values() if len(group) > 1]


def row_spread(M: torch.Tensor, rows: Sequence[int]) -> float:
    """max_{i, j in rows} |M[i] - M[j]|: 0 when those rows are identical."""
    block = M[list(rows)]  # (n, d)
    return float((block.unsqueeze(0) - block.unsqueeze(1)).abs().max().item())  # (n, n, d) -> scalar
