"""Exercises of lessons 1-5: scores, softmax, context vectors, Q/K/V projections, scaling by √d_k."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import torch

import attention_core as ac
from attention_core.attention import AttentionSteps
from attention_core.exercises.base import (
    SHOWN_HALF_UNIT,
    Exercise,
    ExerciseInput,
    asked,
    cell_place,
    dot_slack,
    fmt,
    joined,
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
    written_total,
)
from attention_core.i18n import N_, _
from attention_core.numbers import exp_text, quotient_text, result_text, sum_text, written_value
from attention_core.similarity import cosine_similarity, lengths


@dataclass(frozen=True)
class ProjectedShown:
    """Lessons 4 and 5: the page's W_q, W_k, W_v and its attention with and without the division by √d_k."""

    params: ac.Projections  # (d_model, d_k) each
    scaled: AttentionSteps  # Q Kᵀ / √d_k
    raw: AttentionSteps  # Q Kᵀ, not scaled
    scale: bool  # the page's choice: which of the two its weight tables show
    origin: str  # the weights as the page names them: "the seeded random weights (seed 3)"

    @property
    def steps(self) -> AttentionSteps:
        """The steps the page draws (its scaling choice)."""
        return self.scaled if self.scale else self.raw


def projected_shown(X: torch.Tensor, params: ac.Projections, scale: bool, origin: str) -> ProjectedShown:
    """The attention of X through the page's W_q, W_k, W_v, scaled and not: what lessons 4 and 5 draw."""
    scaled = ac.self_attention(X, params.W_q, params.W_k, params.W_v, scale=True)
    raw = ac.self_attention(X, params.W_q, params.W_k, params.W_v, scale=False)
    return ProjectedShown(params, scaled, raw, scale, origin)


def scores_exercises(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    """Lesson 1: one score by hand from the embeddings table, the row's largest, and a doubled key."""
    X, L, i = inp.X, inp.labels, inp.query_index
    j = other_key(rng, len(L), i)
    scores = ac.attention_scores(X, X)  # (T, d_model) @ (d_model, T) -> (T, T)
    s = float(scores[i, j])
    top = top_index(scores[i])
    within = tolerance(dot_slack(X[i], X[j]))
    doubled_within = tolerance(2 * SHOWN_HALF_UNIT)
    norms = lengths(X)  # (T,)
    cosines = cosine_similarity(X[i], X)  # (T,)
    place = cell_place(_("Attention scores X Xᵀ"), L[i], quote(L[j]))  # where today's score stands
    score, top_score, double_key = (
        Exercise(
            id="score",
            kind="numeric",
            prompt=asked(
                _(
                    "From the table “Embeddings X”, compute the score of the query {query} with the key {key} "
                    "(x_i · x_j). The step-by-step table appears once you have answered.",
                    query=quote(L[i]),
                    key=quote(L[j]),
                ),
                within,
            ),
            answer=s,
            hint=_("Multiply the two embeddings entry by entry and add the products."),
            solution=f"{products_text(X[i].tolist(), X[j].tolist(), s)}.",
            tolerance=within,
            uses=shown_numbers(X[i], X[j]),
        ),
        Exercise(
            id="top-score",
            kind="choice",
            prompt=_(
                "Which key has the highest score for the query {query}? Use x_q · x_j = |x_q| |x_j| cos θ with the "
                "lengths and cosines of the table above; the dot products appear once you have answered.",
                query=quote(L[i]),
            ),
            answer=L[top],
            hint=_("Multiply |x_q| (the query's own length) by each token's length and cosine, and compare."),
            solution=_(
                "The scores of row {query} are {scores}: the largest is {top}.",
                query=quote(L[i]),
                scores=labelled_values(L, scores[i]),
                top=quote(L[top]),
            ),
            options=pick_options(L, top, rng),
            uses=shown_numbers(norms, cosines),
            reveals=shown_numbers(scores[i]),
        ),
        Exercise(
            id="double-key",
            kind="what-if",
            prompt=asked(
                _(
                    "What if the key vector of {key} were doubled (the query stays)? What would the score of {query} "
                    "with {key} become? Today's score stands in {place}.",
                    key=quote(L[j]),
                    query=quote(L[i]),
                    place=place,
                ),
                doubled_within,
            ),
            answer=2 * s,
            hint=_("The dot product is linear: scaling one vector scales the score by the same factor."),
            solution=f"q · (2k) = 2 (q · k) = 2 × {fmt(s)} = {result_text(2 * written_value(fmt(s)), 2 * s, False)}.",
            tolerance=doubled_within,
            uses=shown_numbers(s),
        ),
    )
    return [score, double_key, top_score]  # in the order of the lesson's steps (top-score: "Length and direction")


WHAT_IF_TEMPERATURE = 0.1  # the lowest temperature the softmax page's slider offers
SHIFT_OPTIONS = (N_("all grow"), N_("all shrink"), N_("stay exactly the same"), N_("move towards 1/T"))
SCALING_OPTIONS = (N_("with scaling"), N_("without scaling"), N_("equal"))  # the answer is one of these values


def softmax_exercises(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    """Lesson 2: one weight from the worked example's scores, the row's largest, a low temperature, a shift."""
    X, L, i = inp.X, inp.labels, inp.query_index
    j = other_key(rng, len(L), i)
    steps = ac.self_attention(X, scale=False)
    row = steps.scores[i]  # (T,)
    weights = steps.weights[i]  # (T,)
    top = top_index(weights)
    t = WHAT_IF_TEMPERATURE
    hot = ac.softmax(row.unsqueeze(0), temperature=t)[0]  # (T,)
    exps = torch.exp(row - row.max())  # (T,)
    exp_sum = written_total(exps.tolist())  # the sum of the exps as written
    exp_lines = [exp_text(float(v), float(row.max()), float(e)) for v, e in zip(row, exps, strict=True)]
    shift = 5.0
    within = tolerance(softmax_slack(float(weights[j])))
    hot_within = tolerance(softmax_slack(float(hot[top]), t))
    return [
        Exercise(
            id="weight",
            kind="numeric",
            prompt=asked(
                _(
                    "From the scores of the row {query} (the table above), compute the attention weight of the key "
                    "{key}. The worked softmax appears once you have answered.",
                    query=quote(L[i]),
                    key=quote(L[j]),
                ),
                within,
            ),
            answer=float(weights[j]),
            hint=_(
                "Take exp of every score in the row (subtract the row's largest score first), then divide by their sum."
            ),
            solution=_(
                "Scores of the row: {scores}. Minus the largest, exponentiated: {exps}; their sum is {total}; "
                "{weight}.",
                scores=labelled_values(L, row),
                exps=joined(exp_lines, "; "),
                total=sum_text(exps.tolist(), float(exps.sum()), bold=False),
                weight=quotient_text(float(exps[j]), exp_sum, float(weights[j]), bold=False),
            ),
            tolerance=within,
            uses=shown_numbers(row),
        ),
        Exercise(
            id="top-weight",
            kind="choice",
            prompt=_("Which key gets the most attention from the query {query}?", query=quote(L[i])),
            answer=L[top],
            hint=_("Softmax keeps the order of the scores: the largest score gets the largest weight."),
            solution=_(
                "Weights of the row: {weights}: the largest is {top}.",
                weights=labelled_values(L, weights),
                top=quote(L[top]),
            ),
            options=pick_options(L, top, rng),
            uses=shown_numbers(row),
            reveals=shown_numbers(weights),
        ),
        Exercise(
            id="temperature",
            kind="what-if",
            prompt=asked(
                _(
                    "What if the temperature went down to {t} (scores divided by {t} before softmax)? What would the "
                    "weight of {key} for the query {query} become? Set the slider “Temperature t” to {t} to check "
                    "your answer.",
                    t=f"{t:g}",
                    key=quote(L[top]),
                    query=quote(L[i]),
                ),
                hot_within,
            ),
            answer=float(hot[top]),
            hint=_(
                "A small temperature stretches the gaps between scores, so the largest score takes almost everything."
            ),
            solution=_(
                "Scores / {t}: {scores}; softmax gives {weights}, so {key} gets {weight}.",
                t=f"{t:g}",
                scores=joined([fmt(float(s) / t) for s in row], ", "),
                weights=labelled_values(L, hot),
                key=quote(L[top]),
                weight=fmt(float(hot[top])),
            ),
            tolerance=hot_within,
            uses=shown_numbers(row),
        ),
        Exercise(
            id="shift",
            kind="what-if",
            prompt=_(
                "What if {shift} were added to every score of the row {query}? Its weights would … (The explanation "
                "and the demonstration appear once you have answered.)",
                shift=f"{shift:g}",
                query=quote(L[i]),
            ),
            answer=SHIFT_OPTIONS[2],
            hint=_("exp(s + c) = exp(s) · exp(c): the same factor appears above and below the fraction line."),
            solution=_(
                "Every exp(s_j + {shift}) is exp(s_j) × {factor}; the factor cancels, so the weights stay {weights}.",
                shift=f"{shift:g}",
                factor=fmt(math.exp(shift)),
                weights=labelled_values(L, weights),
            ),
            options=SHIFT_OPTIONS,
            option_labels=shown_options(SHIFT_OPTIONS),
        ),
    ]


def context_exercises(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    """Lesson 3: one entry of a context vector by hand, its largest contributor, and equal weights."""
    X, L, i = inp.X, inp.labels, inp.query_index
    d = rng.randrange(X.shape[1])
    steps = ac.self_attention(X, scale=False)
    w = steps.weights[i]  # (T,)
    value = float(steps.context[i, d])
    pieces = ac.contributions(w, X)[:, d]  # (T, d_model) -> (T,): w_j x_j,d, what each token adds to entry d
    top = top_index(pieces)
    T = len(L)
    uniform = float(X[:, d].mean())
    within = tolerance(dot_slack(w, X[:, d]))
    uniform_within = tolerance(SHOWN_HALF_UNIT)
    return [
        Exercise(
            id="context-entry",
            kind="numeric",
            prompt=asked(
                _(
                    "From the weights of the row {query} and column v d{d} of the values V = X (the table above), "
                    "compute entry d{d} of the context vector of {query}. The context vector appears once you have "
                    "answered.",
                    query=quote(L[i]),
                    d=d + 1,
                ),
                within,
            ),
            answer=value,
            hint=_(
                "Multiply each token's weight (row {query}) by entry d{d} of its value vector and add them.",
                query=quote(L[i]),
                d=d + 1,
            ),
            solution=f"{products_text(w.tolist(), X[:, d].tolist(), value)}.",
            tolerance=within,
            uses=shown_numbers(w, X[:, d]),
        ),
        Exercise(
            id="top-contributor",
            kind="choice",
            prompt=_(
                "Which token adds the most to entry d{d} of the context vector of {query} (the largest "
                "w_j × x_j,d{d}, sign included)? The weights and the values are in the table above; what each token "
                "adds appears once you have answered.",
                d=d + 1,
                query=quote(L[i]),
            ),
            answer=L[top],
            hint=_("Multiply each token's weight by its value in column d{d}, and find the largest product.", d=d + 1),
            solution=_(
                "What each token adds to entry d{d}: {pieces}: the largest is {top}.",
                d=d + 1,
                pieces=labelled_values(L, pieces),
                top=quote(L[top]),
            ),
            options=pick_options(L, top, rng),
            uses=shown_numbers(w, X[:, d]),
            reveals=shown_numbers(pieces),
        ),
        Exercise(
            id="uniform",
            kind="what-if",
            prompt=asked(
                _(
                    "What if every weight of the row {query} were 1/T = 1/{T}? What would entry d{d} of its context "
                    "vector be?",
                    query=quote(L[i]),
                    T=T,
                    d=d + 1,
                ),
                uniform_within,
            ),
            answer=uniform,
            hint=_("Equal weights make the weighted sum a plain average."),
            solution=_(
                "The average of column d{d} over all {T} tokens: {total}; {average}.",
                d=d + 1,
                T=T,
                total=sum_text(X[:, d].tolist(), float(X[:, d].sum()), bold=False),
                average=quotient_text(float(written_total(X[:, d].tolist())), str(T), uniform, bold=False),
            ),
            tolerance=uniform_within,
            uses=shown_numbers(X[:, d]),
        ),
    ]


def qkv_exercises(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    """Lesson 4: one query entry by hand from X and W_q, the shape of Q, the parameter count, K = Q."""
    if not isinstance(inp.material, ProjectedShown):
        return []
    shown = inp.material
    X, L, i = inp.X, inp.labels, inp.query_index
    params, steps = shown.params, shown.steps
    d_model, d_k = params.W_q.shape
    c = rng.randrange(d_k)
    Q = steps.Q  # (T, d_k)
    value = float(Q[i, c])
    count = 3 * d_model * d_k
    shape = f"({len(L)}, {d_k})"
    wrong_shapes = {f"({d_model}, {d_k})", f"({len(L)}, {len(L)})", f"({d_k}, {len(L)})", f"({len(L)}, {d_model})"}
    options = tuple(sorted(wrong_shapes | {shape}))
    diag = float(Q[i] @ Q[i])
    within = tolerance(dot_slack(X[i], params.W_q[:, c]))
    diag_within = tolerance(dot_slack(Q[i], Q[i]))
    return [
        Exercise(
            id="query-entry",
            kind="numeric",
            prompt=asked(
                _(
                    "With {origin}, compute entry q{c} of the query of {query} from its row of X and column q{c} of "
                    "W_q (both above). Its q, k and v appear once you have answered.",
                    origin=_(shown.origin),
                    c=c + 1,
                    query=quote(L[i]),
                ),
                within,
            ),
            answer=value,
            hint=_("q = x W_q: entry q{c} is x dotted with column q{c} of W_q.", c=c + 1),
            solution=f"{products_text(X[i].tolist(), params.W_q[:, c].tolist(), value)}.",
            tolerance=within,
            uses=shown_numbers(X[i], params.W_q[:, c]),
        ),
        Exercise(
            id="shape-q",
            kind="choice",
            prompt=_(
                "X is ({T}, {d_model}) and W_q is ({d_model}, {d_k}). What is the shape of Q = X W_q?",
                T=len(L),
                d_model=d_model,
                d_k=d_k,
            ),
            answer=shape,
            hint=_("(rows of the left) × (columns of the right)."),
            solution=_(
                "({T}, {d_model}) @ ({d_model}, {d_k}) → {shape}: one query row per token.",
                T=len(L),
                d_model=d_model,
                d_k=d_k,
                shape=shape,
            ),
            options=options,
        ),
        Exercise(
            id="parameters",
            kind="numeric",
            prompt=_(
                "How many learned numbers are in W_q, W_k and W_v together (d_model = {d_model}, d_k = {d_k}, as "
                "above)? Give the exact count.",
                d_model=d_model,
                d_k=d_k,
            ),
            answer=float(count),
            hint=_("Each W has d_model rows and d_k columns."),
            solution=f"3 × {d_model} × {d_k} = {count}.",
        ),
        Exercise(
            id="same-q-k",
            kind="what-if",
            prompt=asked(
                _(
                    "What if W_k were replaced by W_q (so K = Q)? What would the score of {query} with itself be "
                    "(before scaling)? Its query is the row {query} of “Q for all tokens” above.",
                    query=quote(L[i]),
                ),
                diag_within,
            ),
            answer=diag,
            hint=_("With K = Q the score of a token with itself is q · q, the squared length of its query."),
            solution=f"q · q = {products_text(Q[i].tolist(), Q[i].tolist(), diag)}.",
            tolerance=diag_within,
            uses=shown_numbers(Q[i]),
        ),
    ]


def scaling_exercises(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    """Lesson 5: one score divided by √d_k, which is sharper, and the weight with scaling switched the other way."""
    if not isinstance(inp.material, ProjectedShown):
        return []
    shown = inp.material
    L, i = inp.labels, inp.query_index
    d_k = shown.params.W_q.shape[1]
    j = other_key(rng, len(L), i)
    scaled, raw = shown.scaled, shown.raw
    s, t = float(scaled.scores[i, j]), float(scaled.scaled_scores[i, j])
    other = raw if shown.scale else scaled  # the steps with scaling switched the other way
    top = top_index(other.weights[i])
    flat, sharp = float(scaled.weights[i].max()), float(raw.weights[i].max())
    row = scaled.scores[i]  # (T,): q · k_j, the same with scaling or without
    root = math.sqrt(d_k)
    within = tolerance(SHOWN_HALF_UNIT / root)
    other_weight = float(other.weights[i, top])
    other_within = tolerance(softmax_slack(other_weight))
    return [
        Exercise(
            id="scaled-score",
            kind="numeric",
            prompt=asked(
                _(
                    "With {origin} and d_k = {d_k} (the slider of the step “Your input”), the score q · k of {query} "
                    "with {key} is {score} (the row of {query}, key by key). What is it after dividing by √d_k? The "
                    "divided scores and the weights appear once you have answered.",
                    origin=_(shown.origin),
                    d_k=d_k,
                    query=quote(L[i]),
                    key=quote(L[j]),
                    score=fmt(s),
                ),
                within,
            ),
            answer=t,
            hint=f"√{d_k} = {fmt(root)}.",
            solution=_(
                "{quotient}, with √{d_k} = {root}.",
                quotient=quotient_text(s, f"√{d_k}", t, bold=False),
                d_k=d_k,
                root=fmt(root),
            ),
            tolerance=within,
            uses=shown_numbers(s),
        ),
        Exercise(
            id="sharper",
            kind="choice",
            prompt=_(
                "For the query {query}, is the largest weight bigger with scaling or without it?", query=quote(L[i])
            ),
            answer=SCALING_OPTIONS[1]
            if sharp > flat + 1e-12
            else (SCALING_OPTIONS[0] if flat > sharp + 1e-12 else SCALING_OPTIONS[2]),
            hint=_("Dividing by √d_k > 1 shrinks the gaps between scores; smaller gaps mean flatter weights."),
            solution=_(
                "Largest weight with scaling {scaled}, without scaling {unscaled}.",
                scaled=fmt(flat),
                unscaled=fmt(sharp),
            ),
            options=SCALING_OPTIONS,
            option_labels=shown_options(SCALING_OPTIONS),
            uses=shown_numbers(row),
            reveals=shown_numbers(flat, sharp),
        ),
        Exercise(
            id="scaling-switched",
            kind="what-if",
            prompt=asked(
                (
                    _(
                        "What if scaling were switched off? What would the weight of {key} for the query {query} be? "
                        "The row of {query}, key by key, has the scores q · k_j (divided by √d_k = {root} where "
                        "scaling is on).",
                        key=quote(L[top]),
                        query=quote(L[i]),
                        root=fmt(root),
                    )
                    if shown.scale
                    else _(
                        "What if scaling were switched on? What would the weight of {key} for the query {query} be? "
                        "The row of {query}, key by key, has the scores q · k_j (divided by √d_k = {root} where "
                        "scaling is on).",
                        key=quote(L[top]),
                        query=quote(L[i]),
                        root=fmt(root),
                    )
                ),
                other_within,
            ),
            answer=other_weight,
            hint=_("Softmax of the row's scores: divided by √d_k with scaling, as they are without."),
            solution=_(
                "Scores softmax sees: {scores}; softmax: {weights}.",
                scores=labelled_values(L, other.scaled_scores[i]),
                weights=labelled_values(L, other.weights[i]),
            ),
            tolerance=other_within,
            uses=shown_numbers(row),
        ),
    ]
