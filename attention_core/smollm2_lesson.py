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
from attention_core.i18n import N_, _
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
            _("masked"): masked,
            _("weight (by hand)"): hand.weights.tolist(),
            _("weight (model)"): model_row.tolist(),
        },
        index=list(pieces),
    )


def context_table(hand: sm.HeadByHand, model_context: torch.Tensor) -> pd.DataFrame:
    """The context vector weights @ v by hand beside the model's, one row per dimension d1..d64."""
    return pd.DataFrame(
        {_("by hand"): hand.context.tolist(), _("model"): model_context.tolist()},
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
            _("m·θ_i (wrapped)"): wrapped(rotation.turned)[shown].tolist(),
            _("angle before"): rotation.angle_before[shown].tolist(),
            _("angle after"): rotation.angle_after[shown].tolist(),
            _("after − before (wrapped)"): wrapped(turned)[shown].tolist(),
            _("length before"): rotation.norm_before[shown].tolist(),
            _("length after"): rotation.norm_after[shown].tolist(),
        },
        index=[_("pair {n}", n=i + 1) for i in range(min(pairs, rotation.theta.numel()))],
    )


def rotation_gap(rotation: Rotation) -> float:
    """Largest |(after − before) − m theta_i| over all pairs, angles wrapped: 0 up to float error."""
    return float(wrapped(rotation.angle_after - rotation.angle_before - rotation.turned).abs().max())


def head_grid_frame(figure: torch.Tensor) -> pd.DataFrame:
    """An (L, h) figure as a table: rows 'layer 1'.., columns 'head 1'.. (NaN stays NaN)."""
    layers, heads = figure.shape
    return pd.DataFrame(
        figure.tolist(),
        index=[_("layer {n}", n=i + 1) for i in range(layers)],
        columns=[_("head {n}", n=j + 1) for j in range(heads)],
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
    return _("layer {layer}, head {head}", layer=layer + 1, head=head + 1)


def ranked_table(patterns: sm.HeadPatterns, count: int = RANKED_HEADS) -> pd.DataFrame:
    """The strongest heads by each figure, side by side: rank, head, figure."""
    columns: dict[str, list] = {}
    for head_column, figure_column, figure in (
        (_("sink: head"), _("sink: figure"), patterns.sink),
        (_("previous token: head"), _("previous token: figure"), patterns.previous),
        (_("induction: head"), _("induction: figure"), patterns.induction),
    ):
        ranked = ranked_heads(figure, count)
        missing = count - len(ranked)
        columns[head_column] = [head_name(layer, head) for layer, head, _value in ranked] + [""] * missing
        columns[figure_column] = [value for _layer, _head, value in ranked] + [float("nan")] * missing
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
            _("GQA ({n} key/value heads), bytes", n=size.kv_heads): [size.gqa_bytes * t for t in tokens],
            _("full MHA ({n} key/value heads), bytes", n=size.heads): [size.mha_bytes * t for t in tokens],
        },
        index=[_("{count} tokens", count=f"{t:,}") for t in tokens],
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
    return head_name(layer, head)


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
            prompt=_(
                "Which piece does SmolLM2 find most likely to come next after your prompt (temperature 1)? The "
                "table gives the logits of the pieces it finds most likely."
            ),
            answer=pieces[0],
            hint=_("Softmax keeps the order of the logits: the largest logit z gets the largest probability."),
            solution=_(
                "Logits {logits}: the largest is {piece}'s; as probabilities at t = 1: {listed}.",
                logits=logits,
                piece=quote(pieces[0]),
                listed=listed,
            ),
            options=tuple(sorted(set(pieces[:4]))),
            uses=shown_numbers(m.next_logits),
            reveals=shown_numbers(raw),  # the column “p at t = 1”: drawn once this is settled
        ),
        Exercise(
            id="next-topk",
            kind="numeric",
            prompt=asked(
                _(
                    "With top-k = {k} at temperature 1, only the {k} pieces of the table stay, and their "
                    "probabilities are divided by their total. From the column “{raw_column}”, compute the new "
                    "probability of {piece}, then check it in the column “{kept_column}”.",
                    k=k,
                    raw_column=_("p at t = 1"),
                    piece=quote(pieces[0]),
                    kept_column=_("p at t, top-k"),
                ),
                within,
            ),
            answer=answer,
            hint=_("p({piece}) / (the sum of the {k} probabilities at t = 1).", piece=pieces[0], k=k),
            solution=_(
                "{top} / ({kept}) = {answer}: above the {top} it had, since every other piece's share is given to "
                "these {k}.",
                top=fmt(raw[0]),
                kept=" + ".join(fmt(v) for v in kept),
                answer=fmt(answer),
                k=k,
            ),
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
        prompt=_(
            "In {where}, which piece does the query {query} attend to most? Its scaled scores are in the table above.",
            where=where,
            query=quote(m.labels[h.query]),
        ),
        answer=m.labels[top],
        hint=_(
            "Softmax keeps the order of the scores: the largest scaled score gets the largest weight (only pieces "
            "up to the query can be seen)."
        ),
        solution=_(
            "Scores of row {query}: {scores}; weights {weights}: the largest is {top}.",
            query=quote(m.labels[h.query]),
            scores=labelled_values(m.labels[: h.query + 1], seen),
            weights=labelled_values(m.labels[: h.query + 1], row[: h.query + 1]),
            top=quote(m.labels[top]),
        ),
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
                _(
                    "The sink figure of {where} is the mean weight on the first piece {first}, over every query after "
                    "it (rows 2 to {last}). Compute it from the heatmap's first column, then check it under the "
                    "heatmap.",
                    where=where,
                    first=quote(m.labels[0]),
                    last=len(m.labels),
                ),
                within,
            ),
            answer=answer,
            hint=_("Add the first column's weights from row 2 down and divide by {n}.", n=column.numel()),
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
    kv_heads = tuple(_("key/value head {n}", n=i + 1) for i in range(m.num_kv_heads))
    return [
        Exercise(
            id="hand-gqa",
            kind="choice",
            prompt=_(
                "SmolLM2 has {heads} query heads but only {kv_heads} key/value heads. Which key/value head does query "
                "head {head} read its keys and values from?",
                heads=m.num_heads,
                kv_heads=m.num_kv_heads,
                head=h.head + 1,
            ),
            answer=_("key/value head {n}", n=h.kv_head + 1),
            hint=_(
                "Query heads are grouped in threes: heads 1-{group} share key/value head 1, and so on.", group=group
            ),
            solution=_(
                "Head {head} is in group ⌊{index} / {group}⌋ + 1 = {kv_head} (counting heads from 0 inside the "
                "brackets).",
                head=h.head + 1,
                index=h.head,
                group=group,
                kv_head=h.kv_head + 1,
            ),
            options=kv_heads,
            option_labels=kv_heads,  # exercises_for keeps the English options as the graded values
        ),
        Exercise(
            id="hand-scaled",
            kind="numeric",
            prompt=asked(
                _(
                    "The table gives q·k = {dot} for the query {query} and the key {key}. Compute the scaled score "
                    "the softmax receives (d_k = 64).",
                    dot=fmt(dot),
                    query=quote(m.labels[h.query]),
                    key=quote(m.labels[j]),
                ),
                within,
            ),
            answer=scaled,
            hint=_("Divide by √d_k = √64 = 8."),
            solution=_("{dot} / 8 = {scaled} (column “÷ √64”).", dot=fmt(dot), scaled=fmt(scaled)),
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
        return _("{line}, already in −π … π", line=line)
    brought = written_value(rounded_text(product)) - turns * written_value(TWO_PI)
    return _(
        "{line}; brought into −π … π: {sum}",
        line=line,
        sum=f"{rounded_text(product)} − {turns} × {TWO_PI} = {result_text(brought, wrapped, bold=False)}",
    )


def rope_exercises(m: SmolMaterial) -> list[Exercise]:
    """The angle pair 2 of the query turns by, and what shifting every position does to the scores."""
    r = m.rotation
    theta, turned = float(r.theta[1]), float(r.turned[1])
    wrapped = math.atan2(math.sin(turned), math.cos(turned))
    within = tolerance(r.position * SHOWN_HALF_UNIT)
    shift_options = (_("stay the same"), _("all grow"), _("all shrink"), _("change unpredictably"))
    return [
        Exercise(
            id="rope-angle",
            kind="numeric",
            prompt=asked(
                _(
                    "The query {query} sits at position m = {m} (RoPE counts from 0). Pair 2 turns by θ_2 = {theta} "
                    "radians per position. By what angle is it turned, brought into −π … π (add or subtract 2π until "
                    "it is)?",
                    query=quote(m.labels[r.position]),
                    m=r.position,
                    theta=fmt(theta),
                ),
                within,
            ),
            answer=wrapped,
            hint=_("m × θ_2, then subtract 2π (6.2832) as often as needed."),
            solution=_(
                "{working} (row “{row}”, column “{column}”).",
                working=rope_angle_text(r.position, theta, turned, wrapped),
                row=_("pair {n}", n=2),
                column=_("m·θ_i (wrapped)"),
            ),
            tolerance=within,
            uses=shown_numbers(theta),
        ),
        Exercise(
            id="rope-shift",
            kind="what-if",
            prompt=_(
                "What if every position of the prompt were shifted by 100 (the first token at position 100, not 0)? "
                "The scores q·k of every head would …"
            ),
            answer=_("stay the same"),
            hint=_("RoPE turns q at m and k at n; their dot product depends on the angle between them."),
            solution=_(
                "q turned by m θ and k by n θ meet at the angle (m − n) θ: the same when both move by 100. The check "
                "on this step shifts the real model's positions and compares every score."
            ),
            options=shift_options,
            option_labels=shift_options,  # exercises_for keeps the English options as the graded values
        ),
    ]


def pattern_exercises(m: SmolMaterial, rng: random.Random) -> list[Exercise]:
    """The strongest attention sink on the prompt, and the strongest induction head on the repeated prompt: each from
    the weights its figure averages (the page lists them for the five strongest heads, in layer order)."""
    items = []
    sink_prompt = N_(
        "Which of these heads puts the most weight on the first piece (an attention sink), on your prompt? The table "
        "of the sink figure lists, for each head, its weights on the first piece, one per query after it: the figure "
        "is their mean."
    )
    induction_prompt = N_(
        "Which of these heads is the strongest induction head on the repeated prompt? The table of the induction "
        "figure lists, for each head, its weights on the piece after each query's earlier copy: the figure is their "
        "mean."
    )
    for name, figure, rows, prompt in (
        ("sink", m.patterns.sink, m.first_piece, sink_prompt),
        ("induction", m.repeated.induction, m.induction_rows, induction_prompt),
    ):
        ranked = _ranked(figure)
        lower = [item for item in ranked[1:] if item[2] <= ranked[0][2] - DISTINCT] if ranked else []
        if not lower or rows is None or rows.shape[-1] == 0:  # the top figures tie at 4 decimals: no fair question
            continue
        chosen = [ranked[0], *rng.sample(lower, min(3, len(lower)))]
        names = [_head(layer, head) for layer, head, _value in chosen]
        # the options in the order of their English names (the graded values, sorted), in every language
        order = sorted(range(len(chosen)), key=lambda i: f"layer {chosen[i][0] + 1}, head {chosen[i][1] + 1}")
        options = tuple(names[i] for i in order)
        items.append(
            Exercise(
                id=f"patterns-{name}",
                kind="choice",
                prompt=_(prompt),
                answer=names[0],
                hint=_("Compare the rows' means (their sums, as every row has as many weights)."),
                solution=_(
                    "{means}: {top}.",
                    means="; ".join(
                        _("{head}: mean {value}", head=n, value=fmt(v))
                        for n, (_layer, _head_index, v) in zip(names, chosen, strict=True)
                    ),
                    top=names[0],
                ),
                options=options,
                option_labels=options,
                # what ranks the options (the ranked table, the heatmaps) is drawn once this is settled; the figures
                # are not ``reveals``: a saturated sink's figure, 1.0000, is each of its weights as well
                uses=shown_numbers(*[rows[layer, head] for layer, head, _value in chosen]),
            )
        )
    return items


# --- lesson 13's step on the real model: grouped-query attention and the KV cache --------------------------------
