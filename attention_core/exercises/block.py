"""Exercises of lessons 6-9: masking, multi-head attention, word order and positions, the full pipeline."""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch

import attention_core as ac
from attention_core.attention import AttentionSteps
from attention_core.exercises.base import (
    Exercise,
    ExerciseInput,
    asked,
    dot_slack,
    fmt,
    labelled_values,
    other_key,
    pick_options,
    products_text,
    quote,
    shown_numbers,
    softmax_slack,
    tolerance,
    top_index,
)


@dataclass(frozen=True)
class MaskedShown:
    """Lesson 6: the page's tokens (with its [PAD] tokens), the mask its weights use, and its steps."""

    labels: tuple[str, ...]
    mask: torch.Tensor  # (T, T) True = may attend: the mask as applied (all True when switched off)
    steps: AttentionSteps
    mask_name: str  # "the causal mask", "no mask (switched off)", ...
    query_index: int


@dataclass(frozen=True)
class MultiHeadShown:
    """Lessons 7 and 9: the layer the page draws: every head's steps, W_o and the output."""

    steps: object  # heads.MultiHeadSteps
    W_o: torch.Tensor  # (d_model, d_model)
    masked: bool  # a causal mask on every head
    followed_head: int = 0  # the head the page follows step by step


@dataclass(frozen=True)
class PositionsShown:
    """Lesson 8: the weights of X and of X + E through the page's seeded W_q, W_k, W_v, and E."""

    plain: AttentionSteps  # X, no positions
    placed: AttentionSteps  # X + E
    E: torch.Tensor  # (T, d_model) sinusoidal encodings


def masking_exercises(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    """Lesson 6: one weight under the page's mask, the row's non-zero count, and its largest weight."""
    if not isinstance(inp.material, MaskedShown):
        return []
    shown = inp.material
    L, steps, mask = shown.labels, shown.steps, shown.mask
    T = len(L)
    open_rows = [r for r in range(T) if bool(mask[r].any())]
    i = shown.query_index if shown.query_index in open_rows else (rng.choice(open_rows) if open_rows else 0)
    allowed = [k for k in range(T) if bool(mask[i, k])] or [0]
    j = rng.choice(allowed)
    top = top_index(steps.weights[i])
    weight = float(steps.weights[i, j])
    within = tolerance(softmax_slack(weight))
    non_zero = int((steps.weights[i] > 0).sum())
    return [
        Exercise(
            id="masked-weight",
            kind="numeric",
            prompt=asked(
                f"With {shown.mask_name} (chosen in the step “Choose a mask”), what is the weight of {quote(L[j])} "
                f"for the query {quote(L[i])}? "
                f"Compute it from the masked scores of {quote(L[i])} above; the table “Masked attention weights” "
                "follows once you have answered.",
                within,
            ),
            answer=weight,
            hint="Only the keys the mask allows compete: take exp of their scaled scores and divide by their sum; a "
            "blocked key (−∞) gets exactly 0.",
            solution=f"Masked scaled scores: {labelled_values(L, steps.masked_scores[i])}; softmax: "
            f"{labelled_values(L, steps.weights[i])}.",
            tolerance=within,
            uses=shown_numbers(steps.masked_scores[i]),
        ),
        Exercise(
            id="non-zero",
            kind="what-if",
            prompt=f"With {shown.mask_name}, how many non-zero weights does the row of {quote(L[i])} have? What if the "
            "mask were switched off: would that count change? Give the count with this mask. Exact count.",
            answer=float(non_zero),
            hint="Count the keys the mask lets this query see (True in the mask's row).",
            solution=f"The mask's row {quote(L[i])} allows {int(mask[i].sum())} of {T} keys, so {non_zero} weights are "
            f"non-zero; the other {T - non_zero} are exactly 0 (without a mask all {T} would be non-zero).",
        ),
        Exercise(
            id="masked-top",
            kind="choice",
            prompt=f"With {shown.mask_name}, which key gets the most attention from {quote(L[i])}?",
            answer=L[top],
            hint="Only the keys the mask allows compete; the largest of their scores wins.",
            solution=f"Weights of the row: {labelled_values(L, steps.weights[i])}: the largest is {quote(L[top])}.",
            options=pick_options(L, top, rng) if T > 1 else (L[0],),
            uses=shown_numbers(steps.masked_scores[i]),
            reveals=shown_numbers(steps.weights[i, allowed]),  # the weights compared (a blocked key's 0 is the mask's)
        ),
    ]


def multi_head_exercises(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    """Lesson 7: the head size, one head's weight, the concatenation's shape, and the parameter count."""
    if not isinstance(inp.material, MultiHeadShown):
        return []
    shown = inp.material
    L, i = inp.labels, inp.query_index
    heads = shown.steps.heads
    h = len(heads)
    d_model = int(shown.steps.concat.shape[1])
    d_k = int(heads[0].Q.shape[1])
    head = rng.randrange(h)
    open_keys = [k for k in range(len(L)) if k != i and float(heads[head].weights[i, k]) > 0]
    j = rng.choice(open_keys) if open_keys else i
    w = float(heads[head].weights[i, j])
    within = tolerance(softmax_slack(w))
    count = ac.parameter_count(d_model)
    return [
        Exercise(
            id="head-size",
            kind="numeric",
            prompt=f"This layer has d_model = {d_model} and h = {h} heads (chosen above): how many numbers does each "
            "head's query have (d_k)? Exact count.",
            answer=float(d_k),
            hint="Each head gets an equal share of the d_model columns.",
            solution=f"d_k = d_model / h = {d_model} / {h} = {d_k}.",
        ),
        Exercise(
            id="head-weight",
            kind="numeric",
            prompt=asked(
                f"From the row of head {head + 1} in the table “Scaled scores of {quote(L[i])} in every head”, what "
                f"weight does the query {quote(L[i])} give the key {quote(L[j])} in head {head + 1}? The heatmaps of "
                "every head's weights follow once you have answered.",
                within,
            ),
            answer=w,
            hint=f"Head {head + 1} uses its own {d_k} columns of W_q, W_k and W_v, and divides by √{d_k}.",
            solution=f"Head {head + 1}, row {quote(L[i])}: scaled scores "
            f"{labelled_values(L, heads[head].masked_scores[i])}; weights "
            f"{labelled_values(L, heads[head].weights[i])}.",
            tolerance=within,
            uses=shown_numbers(heads[head].masked_scores[i]),
        ),
        Exercise(
            id="concat-shape",
            kind="choice",
            prompt=f"Each of the {h} heads outputs a ({len(L)}, {d_k}) context. What is the shape of their "
            "concatenation?",
            answer=f"({len(L)}, {d_model})",
            hint="The heads are put side by side, column after column.",
            solution=f"{h} × ({len(L)}, {d_k}) side by side → ({len(L)}, {h} × {d_k}) = ({len(L)}, {d_model}).",
            options=tuple(
                sorted({f"({len(L)}, {d_model})", f"({h}, {len(L)}, {d_k})", f"({len(L)}, {len(L)})", f"({d_k}, {h})"})
            ),
        ),
        Exercise(
            id="one-head-params",
            kind="what-if",
            prompt=f"What if the layer used 1 head instead of {h}? Its number of weights (W_q, W_k, W_v, W_o, no "
            "biases) …",
            answer="stays the same",
            hint="Splitting into heads slices the same matrices; it does not add any.",
            solution=f"4 × d_model² = 4 × {d_model}² = {count} whatever the number of heads.",
            options=("grows", "shrinks", "stays the same"),
        ),
    ]


def positions_exercises(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    """Lesson 8: a weight after reversing the sentence, the shuffled context, and one sinusoidal entry."""
    if not isinstance(inp.material, PositionsShown):
        return []
    shown = inp.material
    X, L, i = inp.X, inp.labels, inp.query_index
    T = X.shape[0]
    j = other_key(rng, T, i)
    steps = shown.plain
    before = float(steps.weights[i, j])
    pos = rng.randrange(T)
    pe = float(shown.E[pos, 0])
    pe_within = tolerance()
    return [
        Exercise(
            id="reversed-weight",
            kind="what-if",
            prompt=f"What if the sentence were reversed (no positional encoding, the same seeded W_q, W_k, W_v)? The "
            f"weight {quote(L[i])} gives {quote(L[j])}, {fmt(before)} now in the panel “X (no positions)”, would …",
            answer="stay the same",
            hint="Without positions, attention only sees the vectors: moving the words moves rows and columns "
            "together.",
            solution=f"Before: {fmt(before)} (panel “X (no positions)”); after reversing the rows and columns move "
            f"together, so {quote(L[i])} still gives {quote(L[j])} {fmt(before)}.",
            options=("stay the same", "grow", "shrink", f"become 1/{T}"),
            uses=shown_numbers(before),
        ),
        Exercise(
            id="shuffled-context",
            kind="choice",
            prompt=f"Without positions, what happens to the output of {quote(L[i])} when the words are shuffled?",
            answer="the same vector, in another row",
            hint="Self-attention is permutation-equivariant.",
            solution=f"Every weight and value moves with its token, so the output of {quote(L[i])} is unchanged: "
            "compare the tables “A(P X)” and “P A(X)” above.",
            options=("the same vector, in another row", "a different vector", "all zeros", "the average of X"),
            reveals=shown_numbers(steps.context[i]),  # its output, before and after the shuffle
        ),
        Exercise(
            id="sinusoid",
            kind="numeric",
            prompt=asked(
                f"What is entry d1 of the sinusoidal encoding of position {pos + 1} ({quote(L[pos])}, pos = {pos} in "
                "the formula)? The table “Sinusoidal position encodings E” follows once you have answered.",
                pe_within,
            ),
            answer=pe,
            hint="Entry d1 (2i = 0) is sin(pos / 10000⁰) = sin(pos), with pos in radians.",
            solution=f"sin({pos}) = {fmt(pe)}.",
            tolerance=pe_within,
        ),
    ]


def pipeline_exercises(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    """Lesson 9: one output entry from the concatenated heads and W_o, the largest self-weight, a causal count."""
    if not isinstance(inp.material, MultiHeadShown):
        return []
    shown = inp.material
    L, i = inp.labels, inp.query_index
    T = len(L)
    concat, W_o, output = shown.steps.concat, shown.W_o, shown.steps.output
    c = rng.randrange(output.shape[1])
    value = float(output[i, c])
    head = shown.steps.heads[shown.followed_head]
    diagonal = torch.diagonal(head.weights)  # (T,)
    top = top_index(diagonal)
    within = tolerance(dot_slack(concat[i], W_o[:, c]))
    causal_count = T * (T + 1) // 2
    head_name = f"head {shown.followed_head + 1}" if len(shown.steps.heads) > 1 else "the head"
    return [
        Exercise(
            id="output-entry",
            kind="numeric",
            prompt=asked(
                f"From the row {quote(L[i])} of “Concatenated heads” (stage 8) and column d{c + 1} of “W_o” (stage 9), "
                f"compute entry d{c + 1} of the block's output for {quote(L[i])}; “Output of the block” follows once "
                "you have answered.",
                within,
            ),
            answer=value,
            hint=f"output = concat W_o: the concatenated row dotted with column d{c + 1} of W_o.",
            solution=f"{products_text(concat[i].tolist(), W_o[:, c].tolist(), value)}.",
            tolerance=within,
            uses=shown_numbers(concat[i], W_o[:, c]),
        ),
        Exercise(
            id="self-attention",
            kind="choice",
            prompt=f"From the masked scores of {head_name} above, predict which token will give itself the largest "
            "weight (the largest diagonal entry of the weights, which follow once you have answered).",
            answer=L[top],
            hint="A token keeps much of its weight when its own score stands well above the other scores of its row "
            "(softmax of each row); a row with fewer keys left by the mask has fewer to share with.",
            solution=f"Diagonal of the weights: {labelled_values(L, diagonal)}: the largest is {quote(L[top])}.",
            options=pick_options(L, top, rng),
            uses=shown_numbers(head.masked_scores),
            reveals=shown_numbers(diagonal),
        ),
        Exercise(
            id="causal-count",
            kind="what-if",
            prompt=f"What if {'the' if shown.masked else 'a'} causal mask were {'kept' if shown.masked else 'added'}? "
            f"How many of the {T}×{T} weights of one head would be non-zero? Exact count.",
            answer=float(causal_count),
            hint="Row 1 keeps 1 key, row 2 keeps 2 keys, …, row T keeps all T.",
            solution=f"Row k keeps k keys; the counts 1 to {T} add up to {T} × ({T} + 1) / 2 = {causal_count}.",
        ),
    ]
