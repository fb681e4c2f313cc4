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
    softmax_slack,
    tolerance,
    top_index,
    written_total,
)
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
    score, top_score, double_key = (
        Exercise(
            id="score",
            kind="numeric",
            prompt=asked(
                f"From the table “Embeddings X”, compute the score of the query {quote(L[i])} with the key "
                f"{quote(L[j])} (x_i · x_j). The step-by-step table appears once you have answered.",
                within,
            ),
            answer=s,
            hint="Multiply the two embeddings entry by entry and add the products.",
            solution=f"{products_text(X[i].tolist(), X[j].tolist(), s)}.",
            tolerance=within,
            uses=shown_numbers(X[i], X[j]),
        ),
        Exercise(
            id="top-score",
            kind="choice",
            prompt=f"Which key has the highest score for the query {quote(L[i])}? Use x_q · x_j = |x_q| |x_j| cos θ "
            "with the lengths and cosines of the table above; the dot products appear once you have answered.",
            answer=L[top],
            hint="Multiply |x_q| (the query's own length) by each token's length and cosine, and compare.",
            solution=f"The scores of row {quote(L[i])} are {labelled_values(L, scores[i])}: the largest is "
            f"{quote(L[top])}.",
            options=pick_options(L, top, rng),
            uses=shown_numbers(norms, cosines),
            reveals=shown_numbers(scores[i]),
        ),
        Exercise(
            id="double-key",
            kind="what-if",
            prompt=asked(
                f"What if the key vector of {quote(L[j])} were doubled (the query stays)? What would the score of "
                f"{quote(L[i])} with {quote(L[j])} become? Today's score stands in "
                f"{cell_place('Attention scores X Xᵀ', L[i], quote(L[j]))}.",
                doubled_within,
            ),
            answer=2 * s,
            hint="The dot product is linear: scaling one vector scales the score by the same factor.",
            solution=f"q · (2k) = 2 (q · k) = 2 × {fmt(s)} = {result_text(2 * written_value(fmt(s)), 2 * s, False)}.",
            tolerance=doubled_within,
            uses=shown_numbers(s),
        ),
    )
    return [score, double_key, top_score]  # in the order of the lesson's steps (top-score: "Length and direction")


WHAT_IF_TEMPERATURE = 0.1  # the lowest temperature the softmax page's slider offers


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
                f"From the scores of the row {quote(L[i])} (the table above), compute the attention weight of the key "
                f"{quote(L[j])}. The worked softmax appears once you have answered.",
                within,
            ),
            answer=float(weights[j]),
            hint="Take exp of every score in the row (subtract the row's largest score first), then divide by their "
            "sum.",
            solution=f"Scores of the row: {labelled_values(L, row)}. Minus the largest, exponentiated: "
            f"{joined(exp_lines, '; ')}; "
            "their sum is "
            f"{sum_text(exps.tolist(), float(exps.sum()), bold=False)}; "
            f"{quotient_text(float(exps[j]), exp_sum, float(weights[j]), bold=False)}.",
            tolerance=within,
            uses=shown_numbers(row),
        ),
        Exercise(
            id="top-weight",
            kind="choice",
            prompt=f"Which key gets the most attention from the query {quote(L[i])}?",
            answer=L[top],
            hint="Softmax keeps the order of the scores: the largest score gets the largest weight.",
            solution=f"Weights of the row: {labelled_values(L, weights)}: the largest is {quote(L[top])}.",
            options=pick_options(L, top, rng),
            uses=shown_numbers(row),
            reveals=shown_numbers(weights),
        ),
        Exercise(
            id="temperature",
            kind="what-if",
            prompt=asked(
                f"What if the temperature went down to {t:g} (scores divided by {t:g} before softmax)? What would the "
                f"weight of {quote(L[top])} for the query {quote(L[i])} become? Set the slider “Temperature t” to "
                f"{t:g} "
                "to check your answer.",
                hot_within,
            ),
            answer=float(hot[top]),
            hint="A small temperature stretches the gaps between scores, so the largest score takes almost everything.",
            solution=f"Scores / {t:g}: {joined([fmt(float(s) / t) for s in row], ', ')}; "
            f"softmax gives {labelled_values(L, hot)}, so {quote(L[top])} gets {fmt(float(hot[top]))}.",
            tolerance=hot_within,
            uses=shown_numbers(row),
        ),
        Exercise(
            id="shift",
            kind="what-if",
            prompt=f"What if {shift:g} were added to every score of the row {quote(L[i])}? Its weights would … (The "
            "explanation and the demonstration appear once you have answered.)",
            answer="stay exactly the same",
            hint="exp(s + c) = exp(s) · exp(c): the same factor appears above and below the fraction line.",
            solution=f"Every exp(s_j + {shift:g}) is exp(s_j) × {fmt(math.exp(shift))}; the factor cancels, so the "
            f"weights stay {labelled_values(L, weights)}.",
            options=("all grow", "all shrink", "stay exactly the same", "move towards 1/T"),
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
                f"From the weights of the row {quote(L[i])} and column v d{d + 1} of the values V = X (the table "
                f"above), compute entry d{d + 1} of the context vector of {quote(L[i])}. The context vector appears "
                "once you have answered.",
                within,
            ),
            answer=value,
            hint=f"Multiply each token's weight (row {quote(L[i])}) by entry d{d + 1} of its value vector and add "
            "them.",
            solution=f"{products_text(w.tolist(), X[:, d].tolist(), value)}.",
            tolerance=within,
            uses=shown_numbers(w, X[:, d]),
        ),
        Exercise(
            id="top-contributor",
            kind="choice",
            prompt=f"Which token adds the most to entry d{d + 1} of the context vector of {quote(L[i])} (the largest "
            f"w_j × x_j,d{d + 1}, sign included)? The weights and the values are in the table above; what each token "
            "adds appears once you have answered.",
            answer=L[top],
            hint=f"Multiply each token's weight by its value in column d{d + 1}, and find the largest product.",
            solution=f"What each token adds to entry d{d + 1}: {labelled_values(L, pieces)}: the largest is "
            f"{quote(L[top])}.",
            options=pick_options(L, top, rng),
            uses=shown_numbers(w, X[:, d]),
            reveals=shown_numbers(pieces),
        ),
        Exercise(
            id="uniform",
            kind="what-if",
            prompt=asked(
                f"What if every weight of the row {quote(L[i])} were 1/T = 1/{T}? What would entry d{d + 1} of its "
                "context vector be?",
                uniform_within,
            ),
            answer=uniform,
            hint="Equal weights make the weighted sum a plain average.",
            solution=f"The average of column d{d + 1} over all {T} tokens: "
            f"{sum_text(X[:, d].tolist(), float(X[:, d].sum()), bold=False)}; "
            f"{quotient_text(float(written_total(X[:, d].tolist())), str(T), uniform, bold=False)}.",
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
                f"With {shown.origin}, compute entry q{c + 1} of the query of {quote(L[i])} from its row of X and "
                f"column q{c + 1} of W_q (both above). Its q, k and v appear once you have answered.",
                within,
            ),
            answer=value,
            hint=f"q = x W_q: entry q{c + 1} is x dotted with column q{c + 1} of W_q.",
            solution=f"{products_text(X[i].tolist(), params.W_q[:, c].tolist(), value)}.",
            tolerance=within,
            uses=shown_numbers(X[i], params.W_q[:, c]),
        ),
        Exercise(
            id="shape-q",
            kind="choice",
            prompt=f"X is ({len(L)}, {d_model}) and W_q is ({d_model}, {d_k}). What is the shape of Q = X W_q?",
            answer=shape,
            hint="(rows of the left) × (columns of the right).",
            solution=f"({len(L)}, {d_model}) @ ({d_model}, {d_k}) → {shape}: one query row per token.",
            options=options,
        ),
        Exercise(
            id="parameters",
            kind="numeric",
            prompt=f"How many learned numbers are in W_q, W_k and W_v together (d_model = {d_model}, d_k = {d_k}, "
            "as above)? Give the exact count.",
            answer=float(count),
            hint="Each W has d_model rows and d_k columns.",
            solution=f"3 × {d_model} × {d_k} = {count}.",
        ),
        Exercise(
            id="same-q-k",
            kind="what-if",
            prompt=asked(
                f"What if W_k were replaced by W_q (so K = Q)? What would the score of {quote(L[i])} with itself be "
                f"(before scaling)? Its query is the row {quote(L[i])} of “Q for all tokens” above.",
                diag_within,
            ),
            answer=diag,
            hint="With K = Q the score of a token with itself is q · q, the squared length of its query.",
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
    switched = "off" if shown.scale else "on"
    other_weight = float(other.weights[i, top])
    other_within = tolerance(softmax_slack(other_weight))
    return [
        Exercise(
            id="scaled-score",
            kind="numeric",
            prompt=asked(
                f"With {shown.origin} and d_k = {d_k} (the slider of the step “Your input”), the score q · k of "
                f"{quote(L[i])} with {quote(L[j])} is {fmt(s)} (the row of {quote(L[i])}, key by key). What is it "
                "after dividing by √d_k? The divided scores and the weights appear once you have answered.",
                within,
            ),
            answer=t,
            hint=f"√{d_k} = {fmt(root)}.",
            solution=f"{quotient_text(s, f'√{d_k}', t, bold=False)}, with √{d_k} = {fmt(root)}.",
            tolerance=within,
            uses=shown_numbers(s),
        ),
        Exercise(
            id="sharper",
            kind="choice",
            prompt=f"For the query {quote(L[i])}, is the largest weight bigger with scaling or without it?",
            answer="without scaling" if sharp > flat + 1e-12 else ("with scaling" if flat > sharp + 1e-12 else "equal"),
            hint="Dividing by √d_k > 1 shrinks the gaps between scores; smaller gaps mean flatter weights.",
            solution=f"Largest weight with scaling {fmt(flat)}, without scaling {fmt(sharp)}.",
            options=("with scaling", "without scaling", "equal"),
            uses=shown_numbers(row),
            reveals=shown_numbers(flat, sharp),
        ),
        Exercise(
            id="scaling-switched",
            kind="what-if",
            prompt=asked(
                f"What if scaling were switched {switched}? What would the weight of {quote(L[top])} for the query "
                f"{quote(L[i])} be? The row of {quote(L[i])}, key by key, has the scores q · k_j (divided by "
                f"√d_k = {fmt(root)} where scaling is on).",
                other_within,
            ),
            answer=other_weight,
            hint="Softmax of the row's scores: divided by √d_k with scaling, as they are without.",
            solution=f"Scores softmax sees: {labelled_values(L, other.scaled_scores[i])}; softmax: "
            f"{labelled_values(L, other.weights[i])}.",
            tolerance=other_within,
            uses=shown_numbers(row),
        ),
    ]
