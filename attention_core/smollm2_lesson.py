"""What the SmolLM2 lesson shows, computed from ``attention_core.smollm2``'s forward: one head's rows, RoPE on
its real vectors, the head figures ranked, the KV cache's size beside full multi-head attention.

Shape letters: T tokens, L = 30 layers, h = 9 query heads, h_kv = 3 key/value heads, d_k = 64 (32 RoPE pairs).
Layers and heads are 0-based here; the page shows them from 1. Never imports streamlit.

The lesson's exercise generator is here too, beside the functions whose numbers it asks about
(``smollm2_exercises``, and ``smol_cache_exercises`` for the generation lesson's step on SmolLM2's cache): each
exercise's id names the step that shows its numbers (next-*, head-*, hand-*, rope-*, patterns-*; gqa-* are the
generation lesson's). Layers and heads are 0-based in the material and counted from 1 in the questions.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from decimal import Decimal

import pandas as pd
import torch

from attention_core import smollm2 as sm
from attention_core.exercises.base import (
    SHOWN_HALF_UNIT,
    Exercise,
    ExerciseInput,
    asked,
    fmt,
    labelled_values,
    pick_options,
    quote,
    shown_numbers,
    tolerance,
    top_index,
)
from attention_core.numbers import result_text, rounded_text, written_value
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


# --- the lesson's exercises ------------------------------------------------------------------------------------


DISTINCT = 1e-3  # a distractor's figure is at least this far below the top one


@dataclass(frozen=True)
class SmolMaterial:
    """What the lesson shows on the learner's prompt (read-only objects of attention_core.smollm2)."""

    labels: tuple[str, ...]  # the prompt's pieces, unique labels
    next_token: object  # smollm2.NextToken at t = 1 and the page's default top-k
    hand: object  # smollm2.HeadByHand of the head and query on screen
    model_row: torch.Tensor  # (T,) the forward's weights of that query
    patterns: object  # smollm2.HeadPatterns on the prompt
    repeated: object  # smollm2.HeadPatterns on the repeated prompt
    num_heads: int
    num_kv_heads: int
    rotation: object  # smollm2_lesson.Rotation of the query
    weights_first: torch.Tensor  # (T - 1,) the head's weights on the first piece, queries 2 .. T
    next_logits: tuple[float, ...] = ()  # the logits of next_token's pieces, in their order
    first_piece: torch.Tensor | None = None  # (L, h, T - 1) every head's weights on the first piece (sink figure)
    induction_rows: torch.Tensor | None = None  # (L, h, Q) every head's weights on its induction targets (repeated)


def _head(layer: int, head: int) -> str:
    return f"layer {layer + 1}, head {head + 1}"


def _ranked(figure: torch.Tensor, count: int = 5) -> list[tuple[int, int, float]]:
    return ranked_heads(figure, count)


def smollm2_exercises(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    """Next token, the head's favourite piece, GQA, a scaled score, RoPE's angle and shift, sinks and induction."""
    m = inp.material
    if not isinstance(m, SmolMaterial):
        return []
    return [
        *next_token_exercises(m),
        head_exercise(m, rng),
        *head_sink_exercise(m),
        *by_hand_exercises(m, rng),
        *rope_exercises(m),
        *pattern_exercises(m, rng),
    ]


def next_token_exercises(m: SmolMaterial) -> list[Exercise]:
    """The most likely next piece, and the top piece's probability renormalised over the top-k."""
    nt = m.next_token
    pieces = [shown_piece(p) for p in nt.pieces]
    raw = list(nt.raw_probabilities)
    k = nt.top_k or len(raw)
    kept = raw[:k]
    answer = nt.probabilities[0]
    listed = ", ".join(f"{quote(p)} {fmt(v)}" for p, v in zip(pieces[:4], raw[:4], strict=True))
    within = tolerance(answer * (SHOWN_HALF_UNIT / raw[0] + len(kept) * SHOWN_HALF_UNIT / sum(kept)))
    logits = ", ".join(f"{quote(p)} {fmt(z)}" for p, z in zip(pieces[:4], m.next_logits[:4], strict=False))
    return [
        Exercise(
            id="next-top",
            kind="choice",
            prompt="Which piece does SmolLM2 find most likely to come next after your prompt (temperature 1)? The "
            "table gives the logits of the pieces it finds most likely.",
            answer=pieces[0],
            hint="Softmax keeps the order of the logits: the largest logit z gets the largest probability.",
            solution=f"Logits {logits}: the largest is {quote(pieces[0])}'s; as probabilities at t = 1: {listed}.",
            options=tuple(sorted(set(pieces[:4]))),
            uses=shown_numbers(m.next_logits),
            reveals=shown_numbers(raw),  # the column “p at t = 1”: drawn once this is settled
        ),
        Exercise(
            id="next-topk",
            kind="numeric",
            prompt=asked(
                f"With top-k = {k} at temperature 1, only the {k} pieces of the table stay, and their probabilities "
                f"are divided by their total. From the column “p at t = 1”, compute the new probability of "
                f"{quote(pieces[0])}, then check it in the column “p at t, top-k”.",
                within,
            ),
            answer=answer,
            hint=f"p({pieces[0]}) / (the sum of the {k} probabilities at t = 1).",
            solution=f"{fmt(raw[0])} / ({' + '.join(fmt(v) for v in kept)}) = {fmt(answer)}: above the "
            f"{fmt(raw[0])} it had, since every other piece's share is given to these {k}.",
            tolerance=within,
            uses=shown_numbers(kept),
        ),
    ]


def head_exercise(m: SmolMaterial, rng: random.Random) -> Exercise:
    """The query's most-attended piece in the head on screen."""
    h = m.hand
    row = m.model_row
    top = top_index(row)
    where = _head(h.layer, h.head)
    allowed = list(range(h.query + 1))
    options = pick_options([m.labels[j] for j in allowed], allowed.index(top), rng)
    seen = h.masked_scores[: h.query + 1]  # (query + 1,) the scaled scores of the keys the query may see
    return Exercise(
        id="head-top",
        kind="choice",
        prompt=f"In {where}, which piece does the query {quote(m.labels[h.query])} attend to most? Its scaled "
        "scores are in the table above.",
        answer=m.labels[top],
        hint="Softmax keeps the order of the scores: the largest scaled score gets the largest weight (only pieces "
        "up to the query can be seen).",
        solution=f"Scores of row {quote(m.labels[h.query])}: {labelled_values(m.labels[: h.query + 1], seen)}; "
        f"weights {labelled_values(m.labels[: h.query + 1], row[: h.query + 1])}: the largest is "
        f"{quote(m.labels[top])}.",
        options=options,
        uses=shown_numbers(seen),
        reveals=shown_numbers(row[: h.query + 1]),  # the query's row of weights: the heatmap, drawn once settled
    )


def head_sink_exercise(m: SmolMaterial) -> list[Exercise]:
    """The head's sink figure: the mean weight on the first piece over the queries after it."""
    column = m.weights_first
    if column.numel() == 0:  # one piece: no query after the first
        return []
    answer = float(column.mean())
    within = tolerance(SHOWN_HALF_UNIT)
    where = _head(m.hand.layer, m.hand.head)
    return [
        Exercise(
            id="head-sink",
            kind="numeric",
            prompt=asked(
                f"The sink figure of {where} is the mean weight on the first piece {quote(m.labels[0])}, over every "
                f"query after it (rows 2 to {len(m.labels)}). Compute it from the heatmap's first column, then check "
                "it under the heatmap.",
                within,
            ),
            answer=answer,
            hint=f"Add the first column's weights from row 2 down and divide by {column.numel()}.",
            solution=f"({' + '.join(fmt(float(w)) for w in column)}) / {column.numel()} = {fmt(answer)}.",
            tolerance=within,
            uses=shown_numbers(column),
        )
    ]


def by_hand_exercises(m: SmolMaterial, rng: random.Random) -> list[Exercise]:
    """Which key/value head the query head reads, and one scaled score from its dot product."""
    h = m.hand
    group = m.num_heads // m.num_kv_heads
    j = rng.randrange(h.query + 1)
    dot, scaled = float(h.scores[j]), float(h.scaled_scores[j])
    within = tolerance(SHOWN_HALF_UNIT / 8)
    return [
        Exercise(
            id="hand-gqa",
            kind="choice",
            prompt=f"SmolLM2 has {m.num_heads} query heads but only {m.num_kv_heads} key/value heads. Which "
            f"key/value head does query head {h.head + 1} read its keys and values from?",
            answer=f"key/value head {h.kv_head + 1}",
            hint=f"Query heads are grouped in threes: heads 1-{group} share key/value head 1, and so on.",
            solution=f"Head {h.head + 1} is in group ⌊{h.head} / {group}⌋ + 1 = {h.kv_head + 1} (counting heads "
            "from 0 inside the brackets).",
            options=tuple(f"key/value head {i + 1}" for i in range(m.num_kv_heads)),
        ),
        Exercise(
            id="hand-scaled",
            kind="numeric",
            prompt=asked(
                f"The table gives q·k = {fmt(dot)} for the query {quote(m.labels[h.query])} and the key "
                f"{quote(m.labels[j])}. Compute the scaled score the softmax receives (d_k = 64).",
                within,
            ),
            answer=scaled,
            hint="Divide by √d_k = √64 = 8.",
            solution=f"{fmt(dot)} / 8 = {fmt(scaled)} (column “÷ √64”).",
            tolerance=within,
            uses=shown_numbers(dot),
        ),
    ]


TWO_PI = "6.2832"  # 2π as the hint writes it


def rope_angle_text(position: int, theta: float, turned: float, wrapped: float) -> str:
    """'8 × 0.6978 = 5.5824 (unrounded: 5.5826); brought into −π … π: 5.5824 − 1 × 6.2832 = −0.7008 (unrounded:
    −0.7005)': each result is worked out from the operands as written (the lab's one rule, attention_core.numbers)."""
    product = Decimal(position) * written_value(fmt(theta))
    line = f"{position} × {fmt(theta)} = {result_text(product, turned, bold=False)}"
    turns = round((turned - wrapped) / (2 * math.pi))  # whole turns taken off
    if turns == 0:
        return f"{line}, already in −π … π"
    brought = written_value(rounded_text(product)) - turns * written_value(TWO_PI)
    return (
        f"{line}; brought into −π … π: {rounded_text(product)} − {turns} × {TWO_PI} = "
        f"{result_text(brought, wrapped, bold=False)}"
    )


def rope_exercises(m: SmolMaterial) -> list[Exercise]:
    """The angle pair 2 of the query turns by, and what shifting every position does to the scores."""
    r = m.rotation
    theta, turned = float(r.theta[1]), float(r.turned[1])
    wrapped = math.atan2(math.sin(turned), math.cos(turned))
    within = tolerance(r.position * SHOWN_HALF_UNIT)
    return [
        Exercise(
            id="rope-angle",
            kind="numeric",
            prompt=asked(
                f"The query {quote(m.labels[r.position])} sits at position m = {r.position} (RoPE counts from 0). "
                f"Pair 2 turns by θ_2 = {fmt(theta)} radians per position. By what angle is it turned, brought "
                "into −π … π (add or subtract 2π until it is)?",
                within,
            ),
            answer=wrapped,
            hint="m × θ_2, then subtract 2π (6.2832) as often as needed.",
            solution=f"{rope_angle_text(r.position, theta, turned, wrapped)} (row “pair 2”, column “m·θ_i (wrapped)”).",
            tolerance=within,
            uses=shown_numbers(theta),
        ),
        Exercise(
            id="rope-shift",
            kind="what-if",
            prompt="What if every position of the prompt were shifted by 100 (the first token at position 100, "
            "not 0)? The scores q·k of every head would …",
            answer="stay the same",
            hint="RoPE turns q at m and k at n; their dot product depends on the angle between them.",
            solution="q turned by m θ and k by n θ meet at the angle (m − n) θ: the same when both move by 100. The "
            "check on this step shifts the real model's positions and compares every score.",
            options=("stay the same", "all grow", "all shrink", "change unpredictably"),
        ),
    ]


def pattern_exercises(m: SmolMaterial, rng: random.Random) -> list[Exercise]:
    """The strongest attention sink on the prompt, and the strongest induction head on the repeated prompt: each from
    the weights its figure averages (the page lists them for the five strongest heads, in layer order)."""
    items = []
    for name, figure, rows, what, where in (
        ("sink", m.patterns.sink, m.first_piece, "puts the most weight on the first piece (an attention sink), on "
         "your prompt", "its weights on the first piece, one per query after it"),
        ("induction", m.repeated.induction, m.induction_rows, "is the strongest induction head on the repeated "
         "prompt", "its weights on the piece after each query's earlier copy"),
    ):  # fmt: skip
        ranked = _ranked(figure)
        lower = [item for item in ranked[1:] if item[2] <= ranked[0][2] - DISTINCT] if ranked else []
        if not lower or rows is None or rows.shape[-1] == 0:  # the top figures tie at 4 decimals: no fair question
            continue
        chosen = [ranked[0], *rng.sample(lower, min(3, len(lower)))]
        names = [_head(layer, head) for layer, head, _ in chosen]
        items.append(
            Exercise(
                id=f"patterns-{name}",
                kind="choice",
                prompt=f"Which of these heads {what}? The table of the {name} figure lists, for each head, {where}: "
                "the figure is their mean.",
                answer=names[0],
                hint="Compare the rows' means (their sums, as every row has as many weights).",
                solution="; ".join(f"{n}: mean {fmt(v)}" for n, (_, _, v) in zip(names, chosen, strict=True))
                + f": {names[0]}.",
                options=tuple(sorted(names)),
                # what ranks the options (the ranked table, the heatmaps) is drawn once this is settled; the figures
                # are not ``reveals``: a saturated sink's figure, 1.0000, is each of its weights as well
                uses=shown_numbers(*[rows[layer, head] for layer, head, _ in chosen]),
            )
        )
    return items


# --- lesson 13's step on the real model: grouped-query attention and the KV cache --------------------------------
