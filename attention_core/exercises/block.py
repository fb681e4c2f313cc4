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
    shown_options,
    softmax_slack,
    tolerance,
    top_index,
)
from attention_core.i18n import N_, _
from attention_core.masks import MaskChoice, mask_phrase


@dataclass(frozen=True)
class MaskedShown:
    """Lesson 6: the page's tokens (with its [PAD] tokens), the mask its weights use, and its steps."""

    labels: tuple[str, ...]
    mask: torch.Tensor  # (T, T) True = may attend: the mask as applied (all True when switched off)
    steps: AttentionSteps
    mask_name: str  # "the causal mask", "no mask (switched off)", ... in English (the ids hash the English text)
    query_index: int
    choice: MaskChoice | None = None  # the settings that name the mask in the learner's language (masks.mask_phrase)


def shown_mask(shown: MaskedShown) -> str:
    """The mask inside a question, in the learner's language (the same words as ``mask_name`` in English)."""
    return mask_phrase(shown.choice) if shown.choice is not None else _(shown.mask_name)


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


HEADS_OPTIONS = (N_("grows"), N_("shrinks"), N_("stays the same"))
REVERSED_OPTIONS = (N_("stay the same"), N_("grow"), N_("shrink"))  # and "become 1/T", with T written
SHUFFLED_OPTIONS = (
    N_("the same vector, in another row"),
    N_("a different vector"),
    N_("all zeros"),
    N_("the average of X"),
)


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
                _(
                    "With {mask} (chosen in the step “Choose a mask”), what is the weight of {key} for the query "
                    "{query}? Compute it from the masked scores of {query} above; the table “Masked attention "
                    "weights” follows once you have answered.",
                    mask=shown_mask(shown),
                    key=quote(L[j]),
                    query=quote(L[i]),
                ),
                within,
            ),
            answer=weight,
            hint=_(
                "Only the keys the mask allows compete: take exp of their scaled scores and divide by their sum; a "
                "blocked key (−∞) gets exactly 0."
            ),
            solution=_(
                "Masked scaled scores: {scores}; softmax: {weights}.",
                scores=labelled_values(L, steps.masked_scores[i]),
                weights=labelled_values(L, steps.weights[i]),
            ),
            tolerance=within,
            uses=shown_numbers(steps.masked_scores[i]),
        ),
        Exercise(
            id="non-zero",
            kind="what-if",
            prompt=_(
                "With {mask}, how many non-zero weights does the row of {query} have? What if the mask were switched "
                "off: would that count change? Give the count with this mask. Exact count.",
                mask=shown_mask(shown),
                query=quote(L[i]),
            ),
            answer=float(non_zero),
            hint=_("Count the keys the mask lets this query see (True in the mask's row)."),
            solution=_(
                "The mask's row {query} allows {allowed} of {T} keys, so {non_zero} weights are non-zero; the other "
                "{zero} are exactly 0 (without a mask all {T} would be non-zero).",
                query=quote(L[i]),
                allowed=int(mask[i].sum()),
                T=T,
                non_zero=non_zero,
                zero=T - non_zero,
            ),
        ),
        Exercise(
            id="masked-top",
            kind="choice",
            prompt=_(
                "With {mask}, which key gets the most attention from {query}?",
                mask=shown_mask(shown),
                query=quote(L[i]),
            ),
            answer=L[top],
            hint=_("Only the keys the mask allows compete; the largest of their scores wins."),
            solution=_(
                "Weights of the row: {weights}: the largest is {top}.",
                weights=labelled_values(L, steps.weights[i]),
                top=quote(L[top]),
            ),
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
            prompt=_(
                "This layer has d_model = {d_model} and h = {h} heads (chosen above): how many numbers does each "
                "head's query have (d_k)? Exact count.",
                d_model=d_model,
                h=h,
            ),
            answer=float(d_k),
            hint=_("Each head gets an equal share of the d_model columns."),
            solution=f"d_k = d_model / h = {d_model} / {h} = {d_k}.",
        ),
        Exercise(
            id="head-weight",
            kind="numeric",
            prompt=asked(
                _(
                    "From the row of head {head} in the table “Scaled scores of {query} in every head”, what weight "
                    "does the query {query} give the key {key} in head {head}? The heatmaps of every head's weights "
                    "follow once you have answered.",
                    head=head + 1,
                    query=quote(L[i]),
                    key=quote(L[j]),
                ),
                within,
            ),
            answer=w,
            hint=_(
                "Head {head} uses its own {d_k} columns of W_q, W_k and W_v, and divides by √{d_k}.",
                head=head + 1,
                d_k=d_k,
            ),
            solution=_(
                "Head {head}, row {query}: scaled scores {scores}; weights {weights}.",
                head=head + 1,
                query=quote(L[i]),
                scores=labelled_values(L, heads[head].masked_scores[i]),
                weights=labelled_values(L, heads[head].weights[i]),
            ),
            tolerance=within,
            uses=shown_numbers(heads[head].masked_scores[i]),
        ),
        Exercise(
            id="concat-shape",
            kind="choice",
            prompt=_(
                "Each of the {h} heads outputs a ({T}, {d_k}) context. What is the shape of their concatenation?",
                h=h,
                T=len(L),
                d_k=d_k,
            ),
            answer=f"({len(L)}, {d_model})",
            hint=_("The heads are put side by side, column after column."),
            solution=_(
                "{h} × ({T}, {d_k}) side by side → ({T}, {h} × {d_k}) = ({T}, {d_model}).",
                h=h,
                T=len(L),
                d_k=d_k,
                d_model=d_model,
            ),
            options=tuple(
                sorted({f"({len(L)}, {d_model})", f"({h}, {len(L)}, {d_k})", f"({len(L)}, {len(L)})", f"({d_k}, {h})"})
            ),
        ),
        Exercise(
            id="one-head-params",
            kind="what-if",
            prompt=_(
                "What if the layer used 1 head instead of {h}? Its number of weights (W_q, W_k, W_v, W_o, no biases) …",
                h=h,
            ),
            answer=HEADS_OPTIONS[2],
            hint=_("Splitting into heads slices the same matrices; it does not add any."),
            solution=_(
                "4 × d_model² = 4 × {d_model}² = {count} whatever the number of heads.", d_model=d_model, count=count
            ),
            options=HEADS_OPTIONS,
            option_labels=shown_options(HEADS_OPTIONS),
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
            prompt=_(
                "What if the sentence were reversed (no positional encoding, the same seeded W_q, W_k, W_v)? The "
                "weight {query} gives {key}, {weight} now in the panel “X (no positions)”, would …",
                query=quote(L[i]),
                key=quote(L[j]),
                weight=fmt(before),
            ),
            answer=REVERSED_OPTIONS[0],
            hint=_(
                "Without positions, attention only sees the vectors: moving the words moves rows and columns together."
            ),
            solution=_(
                "Before: {weight} (panel “X (no positions)”); after reversing the rows and columns move together, so "
                "{query} still gives {key} {weight}.",
                weight=fmt(before),
                query=quote(L[i]),
                key=quote(L[j]),
            ),
            options=(*REVERSED_OPTIONS, f"become 1/{T}"),
            option_labels=(*shown_options(REVERSED_OPTIONS), _("become 1/{T}", T=T)),
            uses=shown_numbers(before),
        ),
        Exercise(
            id="shuffled-context",
            kind="choice",
            prompt=_(
                "Without positions, what happens to the output of {query} when the words are shuffled?",
                query=quote(L[i]),
            ),
            answer=SHUFFLED_OPTIONS[0],
            hint=_("Self-attention is permutation-equivariant."),
            solution=_(
                "Every weight and value moves with its token, so the output of {query} is unchanged: compare the "
                "tables “A(P X)” and “P A(X)” above.",
                query=quote(L[i]),
            ),
            options=SHUFFLED_OPTIONS,
            option_labels=shown_options(SHUFFLED_OPTIONS),
            reveals=shown_numbers(steps.context[i]),  # its output, before and after the shuffle
        ),
        Exercise(
            id="sinusoid",
            kind="numeric",
            prompt=asked(
                _(
                    "What is entry d1 of the sinusoidal encoding of position {position} ({token}, pos = {pos} in the "
                    "formula)? The table “Sinusoidal position encodings E” follows once you have answered.",
                    position=pos + 1,
                    token=quote(L[pos]),
                    pos=pos,
                ),
                pe_within,
            ),
            answer=pe,
            hint=_("Entry d1 (2i = 0) is sin(pos / 10000⁰) = sin(pos), with pos in radians."),
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
    self_prompt = (
        _(
            "From the masked scores of head {head} above, predict which token will give itself the largest weight "
            "(the largest diagonal entry of the weights, which follow once you have answered).",
            head=shown.followed_head + 1,
        )
        if len(shown.steps.heads) > 1
        else _(
            "From the masked scores of the head above, predict which token will give itself the largest weight (the "
            "largest diagonal entry of the weights, which follow once you have answered)."
        )
    )
    return [
        Exercise(
            id="output-entry",
            kind="numeric",
            prompt=asked(
                _(
                    "From the row {query} of “Concatenated heads” (stage 8) and column d{c} of “W_o” (stage 9), "
                    "compute entry d{c} of the block's output for {query}; “Output of the block” follows once you "
                    "have answered.",
                    query=quote(L[i]),
                    c=c + 1,
                ),
                within,
            ),
            answer=value,
            hint=_("output = concat W_o: the concatenated row dotted with column d{c} of W_o.", c=c + 1),
            solution=f"{products_text(concat[i].tolist(), W_o[:, c].tolist(), value)}.",
            tolerance=within,
            uses=shown_numbers(concat[i], W_o[:, c]),
        ),
        Exercise(
            id="self-attention",
            kind="choice",
            prompt=self_prompt,
            answer=L[top],
            hint=_(
                "A token keeps much of its weight when its own score stands well above the other scores of its row "
                "(softmax of each row); a row with fewer keys left by the mask has fewer to share with."
            ),
            solution=_(
                "Diagonal of the weights: {diagonal}: the largest is {top}.",
                diagonal=labelled_values(L, diagonal),
                top=quote(L[top]),
            ),
            options=pick_options(L, top, rng),
            uses=shown_numbers(head.masked_scores),
            reveals=shown_numbers(diagonal),
        ),
        Exercise(
            id="causal-count",
            kind="what-if",
            prompt=_(
                "What if the causal mask were kept? How many of the {T}×{T} weights of one head would be non-zero? "
                "Exact count.",
                T=T,
            )
            if shown.masked
            else _(
                "What if a causal mask were added? How many of the {T}×{T} weights of one head would be non-zero? "
                "Exact count.",
                T=T,
            ),
            answer=float(causal_count),
            hint=_("Row 1 keeps 1 key, row 2 keeps 2 keys, …, row T keeps all T."),
            solution=_(
                "Row k keeps k keys; the counts 1 to {T} add up to {T} × ({T} + 1) / 2 = {count}.",
                T=T,
                count=causal_count,
            ),
        ),
    ]
