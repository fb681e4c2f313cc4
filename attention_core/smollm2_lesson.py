"""What the SmolLM2 lesson shows, computed from ``attention_core.smollm2``'s forward: one head's rows, RoPE on
its real vectors, the head figures ranked, the KV cache's size beside full multi-head attention.

Shape letters: T tokens, L = 30 layers, h = 9 query heads, h_kv = 3 key/value heads, d_k = 64 (32 RoPE pairs).
Layers and heads are 0-based here; the page shows them from 1. Never imports streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import torch

from attention_core import smollm2 as sm
from attention_core.reference import Agreement
from attention_core.rope import pair_angles, pair_norms, rope_frequencies

SHOWN_PAIRS = 8  # RoPE pairs listed in the rotation table (of d_k / 2 = 32)
RANKED_HEADS = 5  # heads listed per figure on the patterns step


def shown_piece(piece: str) -> str:
    """A piece as the page writes it: a space as ·, a line break as ↵ (' cat' -> '·cat')."""
    return piece.replace(" ", "·").replace("\n", "↵")


def sharing_heads(head: int, config: sm.Config) -> tuple[int, ...]:
    """The query heads that read the same key/value head as ``head`` (itself included), 0-based."""
    kv = sm.kv_head_of(head, config.num_heads, config.num_kv_heads)
    return tuple(j for j in range(config.num_heads) if sm.kv_head_of(j, config.num_heads, config.num_kv_heads) == kv)


def head_row_table(hand: sm.HeadByHand, pieces: tuple[str, ...], model_row: torch.Tensor) -> pd.DataFrame:
    """One query's row by hand, key by key: q_rot . k_rot, / sqrt(d_k), masked, softmax, the model's."""
    pairs = zip(hand.masked_scores.tolist(), hand.mask_row.tolist(), strict=True)
    masked = [s if allowed else float("-inf") for s, allowed in pairs]
    return pd.DataFrame(
        {
            "q·k": hand.scores.tolist(),
            "÷ √64": hand.scaled_scores.tolist(),
            "masked": masked,
            "weight (by hand)": hand.weights.tolist(),
            "weight (model)": model_row.tolist(),
        },
        index=list(pieces),
    )


def context_table(hand: sm.HeadByHand, model_context: torch.Tensor) -> pd.DataFrame:
    """The context vector weights @ v by hand beside the model's, one row per dimension d1..d64."""
    return pd.DataFrame(
        {"by hand": hand.context.tolist(), "model": model_context.tolist()},
        index=[f"d{i + 1}" for i in range(hand.context.numel())],
    )


@dataclass(frozen=True)
class Rotation:
    """RoPE on the head's real query vector: each pair's angle and length before and after."""

    position: int  # the query's position m (0-based, as RoPE counts)
    theta: torch.Tensor  # (d_k/2,) radians per position step
    turned: torch.Tensor  # (d_k/2,) m x theta_i
    angle_before: torch.Tensor  # (d_k/2,) atan2 of each pair before RoPE
    angle_after: torch.Tensor  # (d_k/2,)
    norm_before: torch.Tensor  # (d_k/2,)
    norm_after: torch.Tensor  # (d_k/2,)


def query_rotation(hand: sm.HeadByHand, config: sm.Config) -> Rotation:
    """The query's pairs before and after RoPE: lengths unchanged, angles advanced by m x theta_i (mod 2 pi)."""
    position = int(hand.query)
    return Rotation(
        position=position,
        theta=rope_frequencies(config.head_dim, config.rope_base),
        turned=hand.angles[position],
        angle_before=pair_angles(hand.q),
        angle_after=pair_angles(hand.q_rotated),
        norm_before=pair_norms(hand.q),
        norm_after=pair_norms(hand.q_rotated),
    )


def wrapped(angle: torch.Tensor) -> torch.Tensor:
    """An angle brought into (-pi, pi]."""
    return torch.atan2(torch.sin(angle), torch.cos(angle))


def rotation_table(rotation: Rotation, pairs: int = SHOWN_PAIRS) -> pd.DataFrame:
    """The first ``pairs`` pairs: theta_i, m theta_i, angle before, after, their difference (wrapped), lengths."""
    shown = slice(0, pairs)
    turned = rotation.angle_after - rotation.angle_before  # (d_k/2,)
    return pd.DataFrame(
        {
            "θ_i": rotation.theta[shown].tolist(),
            "m·θ_i (wrapped)": wrapped(rotation.turned)[shown].tolist(),
            "angle before": rotation.angle_before[shown].tolist(),
            "angle after": rotation.angle_after[shown].tolist(),
            "after − before (wrapped)": wrapped(turned)[shown].tolist(),
            "length before": rotation.norm_before[shown].tolist(),
            "length after": rotation.norm_after[shown].tolist(),
        },
        index=[f"pair {i + 1}" for i in range(min(pairs, rotation.theta.numel()))],
    )


def rotation_gap(rotation: Rotation) -> float:
    """Largest |(after − before) − m theta_i| over all pairs, angles wrapped: 0 up to float error."""
    return float(wrapped(rotation.angle_after - rotation.angle_before - rotation.turned).abs().max())


def head_grid_frame(figure: torch.Tensor) -> pd.DataFrame:
    """An (L, h) figure as a table: rows 'layer 1'.., columns 'head 1'.. (NaN stays NaN)."""
    layers, heads = figure.shape
    return pd.DataFrame(
        figure.tolist(),
        index=[f"layer {i + 1}" for i in range(layers)],
        columns=[f"head {j + 1}" for j in range(heads)],
    )


def ranked_heads(figure: torch.Tensor, count: int = RANKED_HEADS) -> list[tuple[int, int, float]]:
    """The ``count`` heads with the largest figure, (layer, head, value) 0-based, largest first; NaN skipped."""
    flat = torch.nan_to_num(figure, nan=float("-inf")).reshape(-1)
    top = torch.topk(flat, min(count, flat.numel()))
    heads = figure.shape[1]
    pairs = zip(top.indices.tolist(), top.values.tolist(), strict=True)
    return [(i // heads, i % heads, v) for i, v in pairs if v > float("-inf")]


def head_name(layer: int, head: int) -> str:
    """'layer 6, head 3' from 0-based indices."""
    return f"layer {layer + 1}, head {head + 1}"


def ranked_table(patterns: sm.HeadPatterns, count: int = RANKED_HEADS) -> pd.DataFrame:
    """The strongest heads by each figure, side by side: rank, head, figure."""
    columns: dict[str, list] = {}
    for name, figure in (
        ("sink", patterns.sink),
        ("previous token", patterns.previous),
        ("induction", patterns.induction),
    ):
        ranked = ranked_heads(figure, count)
        columns[f"{name}: head"] = [head_name(layer, head) for layer, head, _ in ranked] + [""] * (count - len(ranked))
        columns[f"{name}: figure"] = [value for _, _, value in ranked] + [float("nan")] * (count - len(ranked))
    return pd.DataFrame(columns, index=[f"#{i + 1}" for i in range(count)])


@dataclass(frozen=True)
class CacheSize:
    """The KV cache's growth per token for this model (GQA) and for full multi-head attention."""

    gqa_bytes: int  # 2 x L x h_kv x d_k x bytes per number
    mha_bytes: int  # 2 x L x h x d_k x bytes per number
    bytes_per_number: int
    layers: int
    kv_heads: int
    heads: int
    d_k: int

    @property
    def saving(self) -> float:
        """How many times smaller the GQA cache is: h / h_kv."""
        return self.mha_bytes / self.gqa_bytes


def cache_size(config: sm.Config, bytes_per_number: int = 2) -> CacheSize:
    """Bytes per token of the KV cache with 3 key/value heads and with 9 (one per query head)."""
    return CacheSize(
        gqa_bytes=sm.kv_cache_bytes_per_token(config, bytes_per_number),
        mha_bytes=sm.mha_cache_bytes_per_token(config, bytes_per_number),
        bytes_per_number=bytes_per_number,
        layers=config.num_layers,
        kv_heads=config.num_kv_heads,
        heads=config.num_heads,
        d_k=config.head_dim,
    )


def cache_table(size: CacheSize, tokens: tuple[int, ...] = (1, 1024, 8192)) -> pd.DataFrame:
    """Cache bytes for a few sequence lengths, GQA beside MHA (whole numbers)."""
    return pd.DataFrame(
        {
            f"GQA ({size.kv_heads} key/value heads), bytes": [size.gqa_bytes * t for t in tokens],
            f"full MHA ({size.heads} key/value heads), bytes": [size.mha_bytes * t for t in tokens],
        },
        index=[f"{t:,} tokens" for t in tokens],
    )


CACHE_TOLERANCE = 1e-4  # cached against recomputed logits: the same float32 products in another order


def cache_agreement(check: sm.CacheCheck, tolerance: float = CACHE_TOLERANCE) -> Agreement:
    """The lab's verdict on cached against recomputed logits, from the check's largest gap and scale."""
    close = check.max_logit_difference <= tolerance * check.logit_scale
    return Agreement(
        check.max_logit_difference, check.logit_scale, close, check.max_logit_difference == 0.0, tolerance, "float32"
    )
