"""Exercises generated from the learner's own input: numeric, choice and what-if, with worked solutions.

Shape letters: T tokens, d_model embedding size, d_k query/key size, h heads. Every answer is
computed with the public functions of ``attention_core``. The same input always gives the same
exercises (the seed is a SHA-256 of the tokens, X and the lesson, never Python's ``hash``); a new
input gives new ones. ``GENERATORS`` maps a lesson page to its generator: adding a lesson is one entry.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

import torch

import attention_core as ac
from attention_core.positions import sinusoidal_encoding

Kind = Literal["numeric", "choice", "what-if"]
KINDS: tuple[Kind, ...] = ("numeric", "choice", "what-if")
TOLERANCE_2DP = 0.01  # "to 2 decimals": within ±0.01
MAX_ANSWER = 1e12  # a typed number beyond this is refused as a typo


@dataclass(frozen=True)
class Exercise:
    """One question with its answer, the tolerance, a hint and the worked solution (real numbers)."""

    id: str  # a name within the lesson, then a hash of the question (ids stay while the question does)
    kind: Kind
    prompt: str
    answer: float | str  # a number, or the right option for a choice
    hint: str
    solution: str
    options: tuple[str, ...] = ()  # non-empty: answered by picking one
    tolerance: float = 0.0

    @property
    def is_choice(self) -> bool:
        return bool(self.options)


@dataclass(frozen=True)
class ExerciseInput:
    """What the exercises are generated from: the sidebar's input and the lesson's own settings."""

    labels: tuple[str, ...]
    X: torch.Tensor  # (T, d_model)
    query_index: int = 0
    seed: int = 0  # seed of the lesson's random W_q, W_k, W_v
    temperature: float = 0.1  # the what-if temperature
    material: object = None  # a later lesson's own computation: Trained-, Training- or GenerationMaterial
    material_key: tuple = ()  # plain values that determine ``material`` (part of the seed and of the cache key)


@dataclass(frozen=True)
class Check:
    """The verdict on one typed or picked answer."""

    status: Literal["correct", "wrong", "invalid"]
    message: str
    note: str = ""  # how the answer was read (a comma taken as the decimal mark), if worth saying


# --- answers ---------------------------------------------------------------------------------------


def parse_number(text: object) -> tuple[float | None, str]:
    """(value, note) from a typed answer; value None with a learner-readable reason when it is not a number.

    A comma as the decimal mark is accepted ("0,25" reads 0.25, and the note says so).
    """
    raw = "" if text is None else str(text).strip()
    if not raw:
        return None, "Type a number first."
    cleaned = raw.replace(" ", "").replace("−", "-")
    note = ""
    if "," in cleaned and "." not in cleaned and cleaned.count(",") == 1:
        cleaned = cleaned.replace(",", ".")
        note = f"Read {raw!r} as {cleaned} (a comma taken as the decimal mark)."
    try:
        value = float(cleaned)
    except ValueError:
        return None, f"{raw[:40]!r} is not a number: type digits such as 0.25 or -1.5."
    if math.isnan(value):
        return None, "NaN is not an answer here: type a number such as 0.25."
    if math.isinf(value) or abs(value) > MAX_ANSWER:
        return None, f"{raw[:40]!r} is far too large to be the answer: check for a typo."
    return value, note


def check_answer(exercise: Exercise, answer: object) -> Check:
    """Compare an answer with the exercise's, within its tolerance; 'invalid' leaves the exercise open."""
    if exercise.is_choice:
        if answer is None or str(answer) not in exercise.options:
            return Check("invalid", "Pick one of the options first.")
        right = str(answer) == exercise.answer
        return Check("correct" if right else "wrong", "Right." if right else "Not this one.")
    value, note = parse_number(answer)
    if value is None:
        return Check("invalid", note)
    right = abs(value - float(exercise.answer)) <= exercise.tolerance + 1e-9
    if right:
        verdict = f"Right (within ±{exercise.tolerance:g})." if exercise.tolerance else "Right."
    else:
        verdict = f"Not quite: more than ±{exercise.tolerance:g} away." if exercise.tolerance else "Not quite."
    message = " ".join(part for part in (note, verdict) if part)
    return Check("correct" if right else "wrong", message, note)


def input_seed(labels, X: torch.Tensor, lesson: str, *extra: object) -> int:
    """A stable 64-bit seed from the tokens, the bytes of X and the lesson (hashlib, the same in every process)."""
    digest = hashlib.sha256()
    digest.update(lesson.encode())
    digest.update("\x1f".join(labels).encode())
    digest.update(X.detach().to(torch.float64).contiguous().numpy().tobytes())
    digest.update(repr(extra).encode())
    return int.from_bytes(digest.digest()[:8], "big")


# --- text helpers (plain, so the core stays free of presentation libraries) ------------------------


def _n(x: float, decimals: int = 4) -> str:
    return "-∞" if x == float("-inf") else f"{x:.{decimals}f}"


def _q(label: str) -> str:
    return f"“{label}”"


MAX_TERMS = 12  # terms written out in a solution before "…"


def _more(parts: list[str], separator: str) -> str:
    """The first MAX_TERMS parts joined, and how many more there are."""
    shown = separator.join(parts[:MAX_TERMS])
    return shown + (f"{separator}… ({len(parts) - MAX_TERMS} more)" if len(parts) > MAX_TERMS else "")


def _terms(a, b) -> str:
    return _more([f"({_n(x)} × {_n(y)})" for x, y in zip(a, b, strict=True)], " + ")


def _two_dp(prompt: str) -> str:
    return f"{prompt} Give it to 2 decimals (±{TOLERANCE_2DP})."


def _other_key(rng: random.Random, T: int, i: int) -> int:
    """A key other than the query when there are at least two tokens."""
    return rng.choice([j for j in range(T) if j != i]) if T > 1 else 0


def _top(row: torch.Tensor) -> int:
    return int(torch.argmax(row))


def _pick_options(labels, right: int, rng: random.Random, n: int = 4) -> tuple[str, ...]:
    """The right label and up to n - 1 others, in sentence order."""
    others = [j for j in range(len(labels)) if j != right]
    chosen = sorted([right, *rng.sample(others, min(n - 1, len(others)))])
    return tuple(labels[j] for j in chosen)


def _weights_text(labels, row: torch.Tensor) -> str:
    return _more([f"{_q(label)} {_n(float(w))}" for label, w in zip(labels, row.tolist(), strict=True)], ", ")


# --- lesson generators -----------------------------------------------------------------------------


def _scores(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    X, L, i = inp.X, inp.labels, inp.query_index
    j = _other_key(rng, len(L), i)
    scores = ac.attention_scores(X, X)  # (T, d_model) @ (d_model, T) -> (T, T)
    s = float(scores[i, j])
    top = _top(scores[i])
    return [
        Exercise(
            "score",
            "numeric",
            _two_dp(f"What is the score of the query {_q(L[i])} with the key {_q(L[j])} (x_i · x_j)?"),
            s,
            "Multiply the two embeddings entry by entry and add the products.",
            f"{_terms(X[i].tolist(), X[j].tolist())} = {_n(s)}.",
            tolerance=TOLERANCE_2DP,
        ),
        Exercise(
            "top-score",
            "choice",
            f"Which key has the highest score for the query {_q(L[i])}?",
            L[top],
            "Compute the dot product of the query with every key and compare.",
            f"The scores of row {_q(L[i])} are {_weights_text(L, scores[i])}: the largest is {_q(L[top])}.",
            options=_pick_options(L, top, rng),
        ),
        Exercise(
            "double-key",
            "what-if",
            _two_dp(
                f"What if the key vector of {_q(L[j])} were doubled (the query stays)? "
                f"What would the score of {_q(L[i])} with {_q(L[j])} become?"
            ),
            2 * s,
            "The dot product is linear: scaling one vector scales the score by the same factor.",
            f"q · (2k) = 2 (q · k) = 2 × {_n(s)} = {_n(2 * s)}.",
            tolerance=TOLERANCE_2DP,
        ),
    ]


def _softmax(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    X, L, i = inp.X, inp.labels, inp.query_index
    j = _other_key(rng, len(L), i)
    steps = ac.self_attention(X, scale=False)
    row = steps.scores[i]  # (T,)
    weights = steps.weights[i]  # (T,)
    top = _top(weights)
    hot = ac.softmax(row.unsqueeze(0), temperature=inp.temperature)[0]  # (T,)
    exps = torch.exp(row - row.max())  # (T,)
    shift = 5.0
    return [
        Exercise(
            "weight",
            "numeric",
            _two_dp(f"What is the attention weight of the key {_q(L[j])} for the query {_q(L[i])}?"),
            float(weights[j]),
            "Take exp of every score in the row (subtract the row's largest score first), then divide by their sum.",
            f"Scores of the row: {_weights_text(L, row)}. exp(s − {_n(float(row.max()))}) = "
            f"{_more([_n(float(e)) for e in exps], ', ')}; their sum is {_n(float(exps.sum()))}; "
            f"{_n(float(exps[j]))} / {_n(float(exps.sum()))} = {_n(float(weights[j]))}.",
            tolerance=TOLERANCE_2DP,
        ),
        Exercise(
            "top-weight",
            "choice",
            f"Which key gets the most attention from the query {_q(L[i])}?",
            L[top],
            "Softmax keeps the order of the scores: the largest score gets the largest weight.",
            f"Weights of the row: {_weights_text(L, weights)}: the largest is {_q(L[top])}.",
            options=_pick_options(L, top, rng),
        ),
        Exercise(
            "temperature",
            "what-if",
            _two_dp(
                f"What if the temperature went down to {inp.temperature:g} (scores divided by {inp.temperature:g} "
                f"before softmax)? What would the weight of {_q(L[top])} for the query {_q(L[i])} become?"
            ),
            float(hot[top]),
            "A small temperature stretches the gaps between scores, so the largest score takes almost everything.",
            f"Scores / {inp.temperature:g}: {_more([_n(float(s) / inp.temperature) for s in row], ', ')}; "
            f"softmax gives {_weights_text(L, hot)}, so {_q(L[top])} gets {_n(float(hot[top]))}.",
            tolerance=TOLERANCE_2DP,
        ),
        Exercise(
            "shift",
            "what-if",
            f"What if {shift:g} were added to every score of the row {_q(L[i])}? Its weights would …",
            "stay exactly the same",
            "exp(s + c) = exp(s) · exp(c): the same factor appears above and below the fraction line.",
            f"Every exp(s_j + {shift:g}) is exp(s_j) × {_n(math.exp(shift))}; the factor cancels, so the weights "
            f"stay {_weights_text(L, weights)}.",
            options=("all grow", "all shrink", "stay exactly the same", "move towards 1/T"),
        ),
    ]


def _context(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    X, L, i = inp.X, inp.labels, inp.query_index
    d = rng.randrange(X.shape[1])
    steps = ac.self_attention(X, scale=False)
    w = steps.weights[i]  # (T,)
    value = float(steps.context[i, d])
    top = _top(w)
    uniform = float(X[:, d].mean())
    return [
        Exercise(
            "context-entry",
            "numeric",
            _two_dp(f"What is entry {d + 1} of the context vector of {_q(L[i])}?"),
            value,
            f"Multiply each token's weight (row {_q(L[i])}) by entry {d + 1} of its value vector and add them up.",
            f"{_terms(w.tolist(), X[:, d].tolist())} = {_n(value)}.",
            tolerance=TOLERANCE_2DP,
        ),
        Exercise(
            "top-contributor",
            "choice",
            f"Whose value vector is mixed into the context vector of {_q(L[i])} with the largest weight?",
            L[top],
            "The context vector is a weighted sum: look for the largest weight in the query's row.",
            f"Weights of the row: {_weights_text(L, w)}: the largest is {_q(L[top])}.",
            options=_pick_options(L, top, rng),
        ),
        Exercise(
            "uniform",
            "what-if",
            _two_dp(
                f"What if every weight of the row {_q(L[i])} were 1/T? "
                f"What would entry {d + 1} of its context vector be?"
            ),
            uniform,
            "Equal weights make the weighted sum a plain average.",
            f"The average of entry {d + 1} over all {len(L)} tokens: "
            f"({_more([_n(v) for v in X[:, d].tolist()], ' + ')}) / {len(L)} = {_n(uniform)}.",
            tolerance=TOLERANCE_2DP,
        ),
    ]


def _projections(inp: ExerciseInput) -> tuple[int, ac.Projections]:
    d_k = inp.X.shape[1]
    return d_k, ac.random_projections(inp.X.shape[1], d_k, inp.seed)


def _qkv(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    X, L, i = inp.X, inp.labels, inp.query_index
    d_model = X.shape[1]
    d_k, params = _projections(inp)
    c = rng.randrange(d_k)
    Q = X @ params.W_q  # (T, d_model) @ (d_model, d_k) -> (T, d_k)
    value = float(Q[i, c])
    count = 3 * d_model * d_k
    shape = f"({len(L)}, {d_k})"
    wrong_shapes = {f"({d_model}, {d_k})", f"({len(L)}, {len(L)})", f"({d_k}, {len(L)})", f"({len(L)}, {d_model})"}
    options = tuple(sorted(wrong_shapes | {shape}))
    same = ac.self_attention(X, params.W_q, params.W_q, params.W_v)
    diag = float(same.scores[i, i])
    return [
        Exercise(
            "query-entry",
            "numeric",
            _two_dp(
                f"With the lab's random W_q (seed {inp.seed}, d_k = {d_k}), what is entry {c + 1} of the query "
                f"vector of {_q(L[i])}?"
            ),
            value,
            f"q = x W_q: entry {c + 1} is x dotted with column {c + 1} of W_q.",
            f"{_terms(X[i].tolist(), params.W_q[:, c].tolist())} = {_n(value)}.",
            tolerance=TOLERANCE_2DP,
        ),
        Exercise(
            "shape-q",
            "choice",
            f"X is ({len(L)}, {d_model}) and W_q is ({d_model}, {d_k}). What is the shape of Q = X W_q?",
            shape,
            "(rows of the left) × (columns of the right).",
            f"({len(L)}, {d_model}) @ ({d_model}, {d_k}) → {shape}: one query row per token.",
            options=options,
        ),
        Exercise(
            "parameters",
            "numeric",
            f"How many learned numbers are in W_q, W_k and W_v together (d_model = {d_model}, d_k = {d_k})? "
            "Give the exact count.",
            float(count),
            "Each W has d_model rows and d_k columns.",
            f"3 × {d_model} × {d_k} = {count}.",
        ),
        Exercise(
            "same-q-k",
            "what-if",
            _two_dp(
                f"What if W_k were replaced by W_q (so K = Q)? What would the score of {_q(L[i])} with itself be "
                "(before scaling)?"
            ),
            diag,
            "With K = Q the score of a token with itself is q · q, the squared length of its query.",
            f"q = ({', '.join(_n(v) for v in Q[i].tolist())}); q · q = {_terms(Q[i].tolist(), Q[i].tolist())} "
            f"= {_n(diag)}.",
            tolerance=TOLERANCE_2DP,
        ),
    ]


def _scaling(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    X, L, i = inp.X, inp.labels, inp.query_index
    d_k, params = _projections(inp)
    j = _other_key(rng, len(L), i)
    scaled = ac.self_attention(X, params.W_q, params.W_k, params.W_v, scale=True)
    raw = ac.self_attention(X, params.W_q, params.W_k, params.W_v, scale=False)
    s, t = float(scaled.scores[i, j]), float(scaled.scaled_scores[i, j])
    top = _top(raw.weights[i])
    flat, sharp = float(scaled.weights[i].max()), float(raw.weights[i].max())
    return [
        Exercise(
            "scaled-score",
            "numeric",
            _two_dp(
                f"With the lab's random W_q, W_k (seed {inp.seed}, d_k = {d_k}) the score of {_q(L[i])} with "
                f"{_q(L[j])} is {_n(s)}. What is it after dividing by √d_k?"
            ),
            t,
            f"√{d_k} = {_n(math.sqrt(d_k))}.",
            f"{_n(s)} / √{d_k} = {_n(s)} / {_n(math.sqrt(d_k))} = {_n(t)}.",
            tolerance=TOLERANCE_2DP,
        ),
        Exercise(
            "sharper",
            "choice",
            f"For the query {_q(L[i])}, is the largest weight bigger with scaling or without it?",
            "without scaling" if sharp > flat + 1e-12 else ("with scaling" if flat > sharp + 1e-12 else "equal"),
            "Dividing by √d_k > 1 shrinks the gaps between scores; smaller gaps mean flatter weights.",
            f"Largest weight with scaling {_n(flat)}, without scaling {_n(sharp)}.",
            options=("with scaling", "without scaling", "equal"),
        ),
        Exercise(
            "scaling-off",
            "what-if",
            _two_dp(
                f"What if scaling were switched off? What would the weight of {_q(L[top])} for the query {_q(L[i])} be?"
            ),
            float(raw.weights[i, top]),
            "Softmax of the unscaled row of scores.",
            f"Unscaled scores: {_weights_text(L, raw.scores[i])}; softmax: {_weights_text(L, raw.weights[i])}.",
            tolerance=TOLERANCE_2DP,
        ),
    ]


def _masking(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    X, L = inp.X, inp.labels
    T = len(L)
    i = inp.query_index if inp.query_index > 0 or T == 1 else rng.randrange(T)
    mask = ac.causal_mask(T)  # (T, T)
    steps = ac.self_attention(X, mask=mask)
    j = rng.randrange(i + 1)
    top = _top(steps.weights[i])
    return [
        Exercise(
            "causal-weight",
            "numeric",
            _two_dp(
                f"With the causal mask (and scaling by √d_model), what is the weight of {_q(L[j])} for the query "
                f"{_q(L[i])}?"
            ),
            float(steps.weights[i, j]),
            "Keep only the keys up to and including the query, and take softmax over those.",
            f"Masked scaled scores: {_weights_text(L, steps.masked_scores[i])}; softmax: "
            f"{_weights_text(L, steps.weights[i])}.",
            tolerance=TOLERANCE_2DP,
        ),
        Exercise(
            "non-zero",
            "what-if",
            f"After the causal mask, how many non-zero weights does row {i + 1} ({_q(L[i])}) have? Exact count.",
            float(int((steps.weights[i] > 0).sum())),
            "A token sees itself and the tokens before it.",
            f"Keys 1 to {i + 1} are allowed: {i + 1} non-zero weights; the {T - i - 1} later keys get exactly 0.",
        ),
        Exercise(
            "causal-top",
            "choice",
            f"With the causal mask, which key gets the most attention from {_q(L[i])}?",
            L[top],
            "Only the keys up to the query compete; the largest of their scores wins.",
            f"Weights of the row: {_weights_text(L, steps.weights[i])}: the largest is {_q(L[top])}.",
            options=_pick_options(L[: i + 1], top, rng) if i > 0 else (L[0],),
        ),
    ]


def _heads_for(d_model: int) -> int:
    """The largest head count in 2..4 that divides d_model (1 when none does)."""
    return next((h for h in (4, 3, 2) if d_model % h == 0), 1)


def _multi_head(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    X, L, i = inp.X, inp.labels, inp.query_index
    d_model = X.shape[1]
    h = _heads_for(d_model)
    d_k = ac.head_size(d_model, h)
    params = ac.random_projections(d_model, d_model, inp.seed)
    W_o = ac.random_output_projection(d_model, inp.seed)
    steps = ac.multi_head_attention(X, params.W_q, params.W_k, params.W_v, W_o, num_heads=h)
    head = rng.randrange(h)
    j = _other_key(rng, len(L), i)
    w = float(steps.heads[head].weights[i, j])
    count = ac.parameter_count(d_model)
    return [
        Exercise(
            "head-size",
            "numeric",
            f"d_model = {d_model} split into h = {h} heads: how many numbers does each head's query have (d_k)?",
            float(d_k),
            "Each head gets an equal share of the d_model columns.",
            f"d_k = d_model / h = {d_model} / {h} = {d_k}.",
        ),
        Exercise(
            "head-weight",
            "numeric",
            _two_dp(
                f"With {h} heads (random weights, seed {inp.seed}), what weight does head {head + 1} give "
                f"{_q(L[j])} for the query {_q(L[i])}?"
            ),
            w,
            f"Head {head + 1} uses its own {d_k} columns of W_q, W_k and W_v, and divides by √{d_k}.",
            f"Head {head + 1}, row {_q(L[i])}: scaled scores {_weights_text(L, steps.heads[head].scaled_scores[i])}; "
            f"weights {_weights_text(L, steps.heads[head].weights[i])}.",
            tolerance=TOLERANCE_2DP,
        ),
        Exercise(
            "concat-shape",
            "choice",
            f"Each of the {h} heads outputs a ({len(L)}, {d_k}) context. What is the shape of their concatenation?",
            f"({len(L)}, {d_model})",
            "The heads are put side by side, column after column.",
            f"{h} × ({len(L)}, {d_k}) side by side → ({len(L)}, {h} × {d_k}) = ({len(L)}, {d_model}).",
            options=tuple(
                sorted({f"({len(L)}, {d_model})", f"({h}, {len(L)}, {d_k})", f"({len(L)}, {len(L)})", f"({d_k}, {h})"})
            ),
        ),
        Exercise(
            "one-head-params",
            "what-if",
            f"What if the layer used 1 head instead of {h}? Its number of weights (W_q, W_k, W_v, W_o, no biases) …",
            "stays the same",
            "Splitting into heads slices the same matrices; it does not add any.",
            f"4 × d_model² = 4 × {d_model}² = {count} whatever the number of heads.",
            options=("grows", "shrinks", "stays the same"),
        ),
    ]


def _positions(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    X, L, i = inp.X, inp.labels, inp.query_index
    T, d_model = X.shape
    j = _other_key(rng, T, i)
    steps = ac.self_attention(X)
    flipped = torch.flip(torch.arange(T), dims=[0])  # reversed word order
    reversed_steps = ac.self_attention(X[flipped])
    w_after = float(reversed_steps.weights[T - 1 - i, T - 1 - j])
    pos = rng.randrange(T)
    pe = float(sinusoidal_encoding(T, d_model)[pos, 0])
    return [
        Exercise(
            "reversed-weight",
            "what-if",
            _two_dp(
                f"What if the sentence were reversed (no positional encoding)? What weight would {_q(L[i])} "
                f"give {_q(L[j])} then?"
            ),
            w_after,
            "Without positions, attention only sees the vectors: moving the words moves rows and columns together.",
            f"Before: {_n(float(steps.weights[i, j]))}; after reversing: {_n(w_after)}: the same, in a new place.",
            tolerance=TOLERANCE_2DP,
        ),
        Exercise(
            "shuffled-context",
            "choice",
            f"Without positions, what happens to the context vector of {_q(L[i])} when the words are shuffled?",
            "the same vector, in another row",
            "Self-attention is permutation-equivariant.",
            f"Every weight and value moves with its token, so the context of {_q(L[i])} is unchanged: "
            f"({', '.join(_n(v) for v in steps.context[i].tolist())}).",
            options=("the same vector, in another row", "a different vector", "all zeros", "the average of X"),
        ),
        Exercise(
            "sinusoid",
            "numeric",
            _two_dp(f"What is entry 1 of the sinusoidal positional encoding of position {pos} (positions from 0)?"),
            pe,
            "Entry 1 (even index 0) is sin(pos / 10000^0) = sin(pos), with pos in radians.",
            f"sin({pos}) = {_n(pe)}.",
            tolerance=TOLERANCE_2DP,
        ),
    ]


def _pipeline(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    X, L, i = inp.X, inp.labels, inp.query_index
    T = len(L)
    d_k, params = _projections(inp)
    steps = ac.self_attention(X, params.W_q, params.W_k, params.W_v)
    causal = ac.self_attention(X, params.W_q, params.W_k, params.W_v, mask=ac.causal_mask(T))
    c = rng.randrange(steps.context.shape[1])
    value = float(steps.context[i, c])
    diagonal = torch.diagonal(steps.weights)  # (T,)
    top = _top(diagonal)
    non_zero = int((causal.weights > 0).sum())
    return [
        Exercise(
            "output-entry",
            "numeric",
            _two_dp(
                f"End to end (random W_q, W_k, W_v with seed {inp.seed}, d_k = {d_k}, scaled, no mask): "
                f"what is entry {c + 1} of the output for {_q(L[i])}?"
            ),
            value,
            "softmax(Q Kᵀ / √d_k) V: take row i of the weights and the column of V.",
            f"{_terms(steps.weights[i].tolist(), steps.V[:, c].tolist())} = {_n(value)}.",
            tolerance=TOLERANCE_2DP,
        ),
        Exercise(
            "self-attention",
            "choice",
            "Which token gives itself the largest weight (the largest diagonal entry)?",
            L[top],
            "Look at the diagonal of the weights matrix.",
            f"Diagonal: {_weights_text(L, diagonal)}: the largest is {_q(L[top])}.",
            options=_pick_options(L, top, rng),
        ),
        Exercise(
            "causal-count",
            "what-if",
            f"What if a causal mask were added? How many of the {T}×{T} weights would be non-zero? Exact count.",
            float(non_zero),
            "Row i keeps keys 1 to i.",
            f"1 + 2 + … + {T} = {T} × {T + 1} / 2 = {T * (T + 1) // 2}; the computed count is {non_zero}.",
        ),
    ]


@dataclass(frozen=True)
class TrainedMaterial:
    """Lesson 10: the sentence through all-MiniLM-L6-v2, and the model (read-only) for one head's parameters."""

    forward: object  # trained_model.Forward
    model: object  # transformers.BertModel


@dataclass(frozen=True)
class TrainingMaterial:
    """Lesson 11: the toy task's settings, its held-out example and the snapshots so far (step 0 only if untrained)."""

    settings: object  # training.TrainingSettings
    example: torch.Tensor  # (T,)
    snapshots: tuple  # training.Snapshot, step 0 first


@dataclass(frozen=True)
class GenerationMaterial:
    """Lesson 12: the head the page generates with: X (T, d_model), W_q, W_k, W_v (d_model, d_k), labels."""

    X: torch.Tensor
    W_q: torch.Tensor
    W_k: torch.Tensor
    W_v: torch.Tensor
    labels: tuple[str, ...]


def _trained(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    from attention_core import trained_model as tm  # only this lesson needs it (transformers stays unimported)

    if not isinstance(inp.material, TrainedMaterial):
        return []
    forward = inp.material.forward
    P = tuple(ac.token_labels(forward.pieces))
    T = len(P)
    layer, head = rng.randrange(tm.NUM_LAYERS), rng.randrange(tm.NUM_HEADS)
    i = rng.randrange(1, T - 1) if T > 2 else 0
    where = f"layer {layer + 1}, head {head + 1}"
    params = tm.head_params(inp.material.model, layer, head)
    X = forward.hidden_states[layer]  # (T, d_model)
    steps = tm.head_by_hand(X, params)
    weights = steps.weights  # (T, T)
    row = weights[i]  # (T,)
    top = _top(row)
    label = tm.head_label(weights)
    shares = tm.head_shares(weights)
    entropy = float(ac.row_entropy(row.unsqueeze(0))[0])
    bias_term = float(steps.Q[i] @ params.b_k) / math.sqrt(tm.D_K)
    no_bias = tm.head_by_hand(X, replace(params, b_k=torch.zeros_like(params.b_k)))
    gap = float((no_bias.weights[i] - row).abs().max())
    return [
        Exercise(
            "trained-top",
            "choice",
            f"In {where} of all-MiniLM-L6-v2, which piece does the query {_q(P[i])} attend to most?",
            P[top],
            "Open that head (section 3) and read the query's row: the brightest cell.",
            f"Row {_q(P[i])} of {where}: {_weights_text(P, row)}: the largest is {_q(P[top])}.",
            options=_pick_options(P, top, rng),
        ),
        Exercise(
            "trained-label",
            "choice",
            f"Which label does {where} get on this sentence (section 5's rules)?",
            label,
            f"Average over the queries the weight on [CLS], [SEP], the previous, next and same piece; "
            f"a share of at least {tm.LABEL_SHARE:g} names the head, else look at the entropy.",
            f"Mean shares: {', '.join(f'{name} {_n(value)}' for name, value in shares.items())}; "
            f"mean row entropy {_n(float(ac.row_entropy(weights).mean()))} of ln T = {_n(math.log(T))}: "
            f"the label is {_q(label)}.",
            options=tm.HEAD_LABELS,
        ),
        Exercise(
            "trained-entropy",
            "numeric",
            _two_dp(f"What is the entropy −Σ w ln w (in nats) of the query {_q(P[i])}'s row in {where}?"),
            entropy,
            f"Add −w ln w over the row's {T} weights (a weight of 0 adds 0); a uniform row would give ln {T}.",
            f"Weights {_weights_text(P, row)}; −Σ w ln w = {_n(entropy)} (uniform: ln {T} = {_n(math.log(T))}).",
            tolerance=TOLERANCE_2DP,
        ),
        Exercise(
            "trained-no-bias",
            "what-if",
            f"What if the key bias b_k of {where} were dropped (K = X W_k instead of X W_k + b_k)? "
            f"The weights of the query {_q(P[i])} would …",
            "stay the same",
            "The bias adds q · b_k to the score of every key of the row: the same number for every key.",
            f"q · b_k / √{tm.D_K} = {_n(bias_term)} is added to every score of row {_q(P[i])}; softmax ignores a "
            f"constant added to a whole row (recomputed without b_k: the weights move by at most {gap:.1e}).",
            options=("stay the same", "all become 1/T", "move towards [CLS]", "change unpredictably"),
        ),
    ]


def _training(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    from attention_core import training as tr

    if not isinstance(inp.material, TrainingMaterial):
        return []
    settings, example, snapshots = inp.material.settings, inp.material.example, inp.material.snapshots
    labels = tr.position_labels(settings.task, example)
    T = len(labels)
    keys = tr.ideal_keys(settings.task, example)  # (T,)
    ideal = tr.ideal_pattern(settings.task, example)  # (T, T)
    scored = [q for q in range(T) if int(keys[q]) >= 0]
    q = rng.choice(scored)
    right = int(keys[q])
    uniform = torch.tril(torch.ones(T, T)) / torch.arange(1, T + 1).unsqueeze(1)  # (T, T) 1/(i+1) up to i
    uniform_close = tr.closeness(uniform, ideal)
    ahead = rng.randrange(T - 1)
    head = rng.randrange(settings.heads)
    last_layer = snapshots[-1].weights.shape[0] - 1
    items = [
        Exercise(
            "ideal-key",
            "choice",
            f"{tr.TASKS[settings.task]}: in the right pattern, which key should the query {_q(labels[q])} attend to "
            "(in the last layer)?",
            labels[right],
            "Ask what the query must predict, and which earlier position holds that token.",
            f"Query {_q(labels[q])} must predict the token at {_q(labels[right])}, so its row of the right pattern "
            "is 1 there and 0 elsewhere.",
            options=_pick_options(labels[: q + 1], right, rng),
        ),
        Exercise(
            "uniform-closeness",
            "what-if",
            _two_dp(
                "What if every query spread its weight evenly over the keys the causal mask lets it see? What would "
                "the mean weight on the right key (over the scored queries) be?"
            ),
            uniform_close,
            "Query i sees keys 0 to i, so each gets 1/(i + 1); average that over the scored queries.",
            f"Scored queries {', '.join(str(s) for s in scored)}: mean of "
            f"{_more([f'1/{s + 1}' for s in scored], ', ')} = {_n(uniform_close)}.",
            tolerance=TOLERANCE_2DP,
        ),
        Exercise(
            "causal-future",
            "what-if",
            f"The model is causal. Can the query {_q(labels[ahead])} put any weight on the key "
            f"{_q(labels[ahead + 1])}?",
            "no: the key is in its future",
            "Compare the two positions: a causal mask hides every key after the query.",
            f"Key {ahead + 1} comes after query {ahead}: its score is −∞ before softmax, so its weight is exactly 0 "
            "at every step of training.",
            options=("yes, once trained", "yes, a little", "no: the key is in its future"),
        ),
        Exercise(
            "scored-count",
            "numeric",
            "How many positions of the example are scored (have a target)? Exact count.",
            float(len(scored)),
            "Count the positions whose target is not '·' in the task's table.",
            f"Positions {', '.join(str(s) for s in scored)}: {len(scored)} scored.",
        ),
    ]
    if len(snapshots) > 1 and snapshots[0].step != snapshots[-1].step:
        first, last = snapshots[0], snapshots[-1]
        start = tr.closeness(first.weights[last_layer, head], ideal)
        end = tr.closeness(last.weights[last_layer, head], ideal)
        answer = f"step {last.step}" if end > start else f"step {first.step}"
        items.append(
            Exercise(
                "closer",
                "choice",
                f"Layer {last_layer + 1}, head {head + 1}: is its pattern closer to the right one at step 0 or at "
                f"step {last.step}?",
                answer,
                "Compare the mean weight on the right key at both steps (move the step slider).",
                f"Weight on the right key: {_n(start)} at step 0, {_n(end)} at step {last.step}.",
                options=(f"step {first.step}", f"step {last.step}"),
            )
        )
    return items


def _generation(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    from attention_core import generation as gen

    if not isinstance(inp.material, GenerationMaterial):
        return []
    m = inp.material
    L = m.labels
    T, d_model = m.X.shape
    d_k, d_v = m.W_k.shape[1], m.W_v.shape[1]
    steps = gen.cached_attention(m.X, m.W_q, m.W_k, m.W_v)
    t = rng.randrange(T)
    cached_numbers = steps[t].K.numel() + steps[t].V.numel()
    top = _top(steps[t].weights)
    row_index = rng.randrange(T)
    block_size = rng.choice([b for b in (2, 3) if b <= max(2, T)])
    online = gen.online_softmax_steps(gen.masked_scores(m.X, m.W_q, m.W_k)[row_index], block_size)
    b = rng.randrange(len(online))
    doubled = gen.total_multiply_adds(2 * T, d_model, d_k, d_v, cached=False)
    doubled_cached = gen.total_multiply_adds(2 * T, d_model, d_k, d_v, cached=True)
    blocks = ", ".join(f"block {s.block + 1}: max {_n(s.block_max)} → m = {_n(s.new_max)}" for s in online[: b + 1])
    return [
        Exercise(
            "cache-numbers",
            "numeric",
            f"After step {t} (the new token {_q(L[t])}, steps counted from 0), how many numbers do the K and V "
            f"caches hold together (d_k = {d_k}, d_v = {d_v})? Exact count.",
            float(cached_numbers),
            "One K row and one V row per token so far.",
            f"{t + 1} tokens × (d_k + d_v) = {t + 1} × ({d_k} + {d_v}) = {cached_numbers}.",
        ),
        Exercise(
            "step-top",
            "choice",
            f"At step {t}, which cached key gets the most weight from the new token {_q(L[t])}'s query?",
            L[top],
            "Only keys 0 to t are in the cache; the largest scaled score q · k / √d_k wins.",
            f"Scores q · k / √{d_k}: {_weights_text(L[: t + 1], steps[t].scores)}; weights "
            f"{_weights_text(L[: t + 1], steps[t].weights)}.",
            options=_pick_options(L[: t + 1], top, rng),
        ),
        Exercise(
            "running-max",
            "numeric",
            _two_dp(
                f"Online softmax of the query {_q(L[row_index])}'s row in blocks of {block_size} keys: what is the "
                f"running maximum m after block {b + 1}?"
            ),
            online[b].new_max,
            "m starts at −∞; after each block, m′ = max(m, the block's largest score). Masked keys are −∞.",
            f"{blocks}.",
            tolerance=TOLERANCE_2DP,
        ),
        Exercise(
            "double-length",
            "what-if",
            f"What if the sequence had {2 * T} tokens instead of {T}? How many multiply-adds would one head need in "
            f"total without the cache (d_model = {d_model}, d_k = {d_k}, d_v = {d_v})? Exact count.",
            float(doubled),
            "Step t (t + 1 tokens so far) redoes every projection and the whole (t + 1) × (t + 1) scores and context.",
            f"Σ over n = 1..{2 * T} of n · {d_model}·(2·{d_k} + {d_v}) + n² · ({d_k} + {d_v}) = {doubled:,}; "
            f"with the cache it would be {doubled_cached:,}.",
        ),
        Exercise(
            "cache-unchanged",
            "what-if",
            f"What if the token at step {t} had been another word? Which rows already in the cache would change?",
            "none: earlier rows never change",
            "A cache row depends only on its own token: k_j = x_j W_k.",
            f"Rows 0 to {t - 1} are x_j W_k and x_j W_v of earlier tokens: the new token only appends row {t}."
            if t
            else "At step 0 the cache is empty before the new row is appended.",
            options=("none: earlier rows never change", "the last row only", "all of them"),
        ),
    ]


Generator = Callable[[ExerciseInput, random.Random], list[Exercise]]

GENERATORS: dict[str, Generator] = {
    "app_pages/scores.py": _scores,
    "app_pages/softmax.py": _softmax,
    "app_pages/context_vectors.py": _context,
    "app_pages/qkv_projections.py": _qkv,
    "app_pages/scaling.py": _scaling,
    "app_pages/masking.py": _masking,
    "app_pages/multi_head.py": _multi_head,
    "app_pages/positions.py": _positions,
    "app_pages/pipeline.py": _pipeline,
    "app_pages/trained_model.py": _trained,
    "app_pages/training.py": _training,
    "app_pages/generation.py": _generation,
}


def lesson_key(path: str) -> str:
    """'app_pages/softmax.py' from a page's __file__ or its registry path."""
    return "app_pages/" + path.replace("\\", "/").rsplit("/", 1)[-1]


def exercises_for(path: str, inp: ExerciseInput) -> tuple[Exercise, ...]:
    """The exercises of one lesson on this input (empty when the lesson has none yet)."""
    key = lesson_key(path)
    generator = GENERATORS.get(key)
    if generator is None:
        return ()
    # The query is not part of the seed: another query changes only the questions that are about the
    # query, and each question's id is its content's, so the others keep their ids (and the learner's answer).
    seed = input_seed(inp.labels, inp.X, key, inp.seed, inp.temperature, *inp.material_key)
    rng = random.Random(seed)
    return tuple(replace(exercise, id=f"{exercise.id}-{content_tag(exercise)}") for exercise in generator(inp, rng))


def content_tag(exercise: Exercise) -> str:
    """Ten hex digits of a stable hash of what the learner sees and is checked against."""
    digest = hashlib.sha256()
    for part in (exercise.prompt, *exercise.options, repr(exercise.answer), repr(exercise.tolerance)):
        digest.update(part.encode())
        digest.update(b"\x1f")
    return digest.hexdigest()[:10]
