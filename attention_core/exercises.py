"""Exercises generated from the learner's own input: numeric, choice and what-if, with worked solutions.

Shape letters: T tokens, d_model embedding size, d_k query/key size, h heads. Every answer is
computed with the public functions of ``attention_core``. The same input always gives the same
exercises (the seed is a SHA-256 of the tokens, X and the lesson, never Python's ``hash``); a new
input gives new ones. ``GENERATORS`` maps a lesson page to its generator: adding a lesson is one entry.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Literal

import torch

import attention_core as ac
from attention_core.attention import AttentionSteps
from attention_core.numbers import (
    MAX_TERMS,
    exp_text,
    format_number,
    products_sum_text,
    quotient_text,
    result_text,
    rounded_text,
    sum_text,
    written_value,
)

Kind = Literal["numeric", "choice", "what-if"]
KINDS: tuple[Kind, ...] = ("numeric", "choice", "what-if")
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
    uses: tuple[float, ...] = ()  # the numbers the question and its solution read from the page

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


def _n(x: float) -> str:
    """A number as every table of the lab shows it (the lab's one formatter)."""
    return format_number(x)


def _products(a, b, exact: float) -> str:
    """'(a × b) + (c × d) + … = r': checkable by hand from the written operands (the lab's one rule)."""
    return products_sum_text(a, b, exact, bold=False)


def _written_total(values) -> str:
    """The total of the values as written (4 decimals each), written by the one rule."""
    return rounded_text(sum((written_value(format_number(v)) for v in values), Decimal(0)))


def _q(label: str) -> str:
    return f"“{label}”"


def _more(parts: list[str], separator: str) -> str:
    """The first MAX_TERMS parts joined, and how many more there are."""
    shown = separator.join(parts[:MAX_TERMS])
    return shown + (f"{separator}… ({len(parts) - MAX_TERMS} more)" if len(parts) > MAX_TERMS else "")


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


def _cell(table: str, row: str, column: str) -> str:
    """Where a number stands on the page: '(the table “Q for all tokens”, row “starts”, column q2)'."""
    return f"(the table {_q(table)} above, row {_q(row)}, column {column})"


# --- tolerance: half a unit in the asked decimal, plus what reading the screen can add -------------

ASKED_DECIMALS = 3  # numeric answers are asked to 3 decimals; the page shows 4
HALF_UNIT = 0.5 * 10.0**-ASKED_DECIMALS  # 0.0005
SHOWN_HALF_UNIT = 0.5e-4  # a number the page shows with 4 decimals is within this of its exact value


def dot_slack(a, b) -> float:
    """How far Σ a_k b_k can move when every a_k and b_k is read from the page at 4 decimals."""
    return sum(
        (abs(float(x)) + abs(float(y))) * SHOWN_HALF_UNIT + SHOWN_HALF_UNIT**2 for x, y in zip(a, b, strict=True)
    )


def softmax_slack(weight: float, temperature: float = 1.0) -> float:
    """How far a softmax weight can move when its row's scores are read at 4 decimals (then divided by t)."""
    return 2 * SHOWN_HALF_UNIT * weight / temperature


def tolerance(slack: float = 0.0) -> float:
    """Half a unit in the third decimal plus ``slack``, rounded up to 4 decimals: what the question states.

    A guess (1/T, 0, 1, a neighbouring cell) is more than this away unless it is the answer to 3 decimals.
    """
    return math.ceil(round((HALF_UNIT + slack) * 1e4, 6)) / 1e4


def _asked(prompt: str, within: float) -> str:
    return f"{prompt} Give it to {ASKED_DECIMALS} decimals (within ±{within:.4f})."


def _numbers(*groups) -> tuple[float, ...]:
    """The numbers a question or its solution reads from the page, flattened (tensors, lists or floats)."""
    flat: list[float] = []
    for group in groups:
        if isinstance(group, torch.Tensor):
            flat += [float(v) for v in group.reshape(-1).tolist()]
        elif isinstance(group, list | tuple):
            flat += [float(v) for v in group]
        else:
            flat.append(float(group))
    return tuple(flat)


# --- what a page shows, that its exercises are made from -------------------------------------------


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
    seed: int
    followed_head: int = 0  # the head the page follows step by step


@dataclass(frozen=True)
class PositionsShown:
    """Lesson 8: the weights of X and of X + E through the page's seeded W_q, W_k, W_v, and E."""

    plain: AttentionSteps  # X, no positions
    placed: AttentionSteps  # X + E
    E: torch.Tensor  # (T, d_model) sinusoidal encodings
    seed: int


def material_fingerprint(material: object) -> str:
    """A SHA-256 of every tensor and plain value in a page's material: the same numbers, the same key."""
    digest = hashlib.sha256()

    def visit(value: object) -> None:
        if isinstance(value, torch.Tensor):
            digest.update(str(tuple(value.shape)).encode())
            digest.update(value.detach().to(torch.float64).contiguous().numpy().tobytes())
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            digest.update(type(value).__name__.encode())
            for field in dataclasses.fields(value):
                visit(getattr(value, field.name))
        elif isinstance(value, list | tuple):
            for item in value:
                visit(item)
        else:
            digest.update(repr(value).encode())
        digest.update(b"\x1f")

    visit(material)
    return digest.hexdigest()


# --- lesson generators -----------------------------------------------------------------------------


def _scores(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    """Lesson 1: one score by hand from the embeddings table, the row's largest, and a doubled key."""
    X, L, i = inp.X, inp.labels, inp.query_index
    j = _other_key(rng, len(L), i)
    scores = ac.attention_scores(X, X)  # (T, d_model) @ (d_model, T) -> (T, T)
    s = float(scores[i, j])
    top = _top(scores[i])
    within = tolerance(dot_slack(X[i], X[j]))
    doubled_within = tolerance(2 * SHOWN_HALF_UNIT)
    return [
        Exercise(
            id="score",
            kind="numeric",
            prompt=_asked(
                f"From the table “Embeddings X”, compute the score of the query {_q(L[i])} with the key "
                f"{_q(L[j])} (x_i · x_j), then find it in the table “Attention scores X Xᵀ”.",
                within,
            ),
            answer=s,
            hint="Multiply the two embeddings entry by entry and add the products.",
            solution=f"{_products(X[i].tolist(), X[j].tolist(), s)}.",
            tolerance=within,
            uses=_numbers(X[i], X[j], s),
        ),
        Exercise(
            id="top-score",
            kind="choice",
            prompt=f"Which key has the highest score for the query {_q(L[i])}?",
            answer=L[top],
            hint="Compute the dot product of the query with every key and compare.",
            solution=f"The scores of row {_q(L[i])} are {_weights_text(L, scores[i])}: the largest is {_q(L[top])}.",
            options=_pick_options(L, top, rng),
            uses=_numbers(scores[i]),
        ),
        Exercise(
            id="double-key",
            kind="what-if",
            prompt=_asked(
                f"What if the key vector of {_q(L[j])} were doubled (the query stays)? What would the score of "
                f"{_q(L[i])} with {_q(L[j])} become? {_cell('Attention scores X Xᵀ', L[i], _q(L[j]))} has it now.",
                doubled_within,
            ),
            answer=2 * s,
            hint="The dot product is linear: scaling one vector scales the score by the same factor.",
            solution=f"q · (2k) = 2 (q · k) = 2 × {_n(s)} = {result_text(2 * written_value(_n(s)), 2 * s, False)}.",
            tolerance=doubled_within,
            uses=_numbers(s),
        ),
    ]


WHAT_IF_TEMPERATURE = 0.1  # the lowest temperature the softmax page's slider offers


def _softmax(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    """Lesson 2: one weight from the worked example's scores, the row's largest, a low temperature, a shift."""
    X, L, i = inp.X, inp.labels, inp.query_index
    j = _other_key(rng, len(L), i)
    steps = ac.self_attention(X, scale=False)
    row = steps.scores[i]  # (T,)
    weights = steps.weights[i]  # (T,)
    top = _top(weights)
    t = WHAT_IF_TEMPERATURE
    hot = ac.softmax(row.unsqueeze(0), temperature=t)[0]  # (T,)
    exps = torch.exp(row - row.max())  # (T,)
    exp_sum = _written_total(exps.tolist())  # the sum of the exps as written
    shift = 5.0
    within = tolerance(softmax_slack(float(weights[j])))
    hot_within = tolerance(softmax_slack(float(hot[top]), t))
    return [
        Exercise(
            id="weight",
            kind="numeric",
            prompt=_asked(
                f"From the scores of the row {_q(L[i])} (the step-by-step table above), compute the attention weight "
                f"of the key {_q(L[j])}, then find it in the table “Attention weights softmax(X Xᵀ)”.",
                within,
            ),
            answer=float(weights[j]),
            hint="Take exp of every score in the row (subtract the row's largest score first), then divide by their "
            "sum.",
            solution=f"Scores of the row: {_weights_text(L, row)}. Minus the largest, exponentiated: "
            f"{_more([exp_text(float(v), float(row.max()), float(e)) for v, e in zip(row, exps, strict=True)], '; ')}; "
            "their sum is "
            f"{sum_text(exps.tolist(), float(exps.sum()), bold=False)}; "
            f"{quotient_text(float(exps[j]), exp_sum, float(weights[j]), bold=False)}.",
            tolerance=within,
            uses=_numbers(row, weights[j]),
        ),
        Exercise(
            id="top-weight",
            kind="choice",
            prompt=f"Which key gets the most attention from the query {_q(L[i])}?",
            answer=L[top],
            hint="Softmax keeps the order of the scores: the largest score gets the largest weight.",
            solution=f"Weights of the row: {_weights_text(L, weights)}: the largest is {_q(L[top])}.",
            options=_pick_options(L, top, rng),
            uses=_numbers(weights),
        ),
        Exercise(
            id="temperature",
            kind="what-if",
            prompt=_asked(
                f"What if the temperature went down to {t:g} (scores divided by {t:g} before softmax)? What would the "
                f"weight of {_q(L[top])} for the query {_q(L[i])} become? Set the slider “Temperature t” to {t:g} "
                "to check your answer.",
                hot_within,
            ),
            answer=float(hot[top]),
            hint="A small temperature stretches the gaps between scores, so the largest score takes almost everything.",
            solution=f"Scores / {t:g}: {_more([_n(float(s) / t) for s in row], ', ')}; "
            f"softmax gives {_weights_text(L, hot)}, so {_q(L[top])} gets {_n(float(hot[top]))}.",
            tolerance=hot_within,
            uses=_numbers(row),
        ),
        Exercise(
            id="shift",
            kind="what-if",
            prompt=f"What if {shift:g} were added to every score of the row {_q(L[i])}? Its weights would …",
            answer="stay exactly the same",
            hint="exp(s + c) = exp(s) · exp(c): the same factor appears above and below the fraction line.",
            solution=f"Every exp(s_j + {shift:g}) is exp(s_j) × {_n(math.exp(shift))}; the factor cancels, so the "
            f"weights stay {_weights_text(L, weights)}.",
            options=("all grow", "all shrink", "stay exactly the same", "move towards 1/T"),
            uses=_numbers(weights),
        ),
    ]


def _context(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    """Lesson 3: one entry of a context vector by hand, its largest contributor, and equal weights."""
    X, L, i = inp.X, inp.labels, inp.query_index
    d = rng.randrange(X.shape[1])
    steps = ac.self_attention(X, scale=False)
    w = steps.weights[i]  # (T,)
    value = float(steps.context[i, d])
    top = _top(w)
    T = len(L)
    uniform = float(X[:, d].mean())
    within = tolerance(dot_slack(w, X[:, d]))
    uniform_within = tolerance(SHOWN_HALF_UNIT)
    return [
        Exercise(
            id="context-entry",
            kind="numeric",
            prompt=_asked(
                f"From the weights of the row {_q(L[i])} and column d{d + 1} of the values (the embeddings X), compute "
                f"entry d{d + 1} of the context vector of {_q(L[i])}, then find it in the table "
                "“Context vectors W X”.",
                within,
            ),
            answer=value,
            hint=f"Multiply each token's weight (row {_q(L[i])}) by entry d{d + 1} of its value vector and add them.",
            solution=f"{_products(w.tolist(), X[:, d].tolist(), value)}.",
            tolerance=within,
            uses=_numbers(w, X[:, d], value),
        ),
        Exercise(
            id="top-contributor",
            kind="choice",
            prompt=f"Whose value vector is mixed into the context vector of {_q(L[i])} with the largest weight?",
            answer=L[top],
            hint="The context vector is a weighted sum: look for the largest weight in the query's row.",
            solution=f"Weights of the row: {_weights_text(L, w)}: the largest is {_q(L[top])}.",
            options=_pick_options(L, top, rng),
            uses=_numbers(w),
        ),
        Exercise(
            id="uniform",
            kind="what-if",
            prompt=_asked(
                f"What if every weight of the row {_q(L[i])} were 1/T = 1/{T}? What would entry d{d + 1} of its "
                "context vector be?",
                uniform_within,
            ),
            answer=uniform,
            hint="Equal weights make the weighted sum a plain average.",
            solution=f"The average of column d{d + 1} over all {T} tokens: "
            f"{sum_text(X[:, d].tolist(), float(X[:, d].sum()), bold=False)}; "
            f"{quotient_text(float(_written_total(X[:, d].tolist())), str(T), uniform, bold=False)}.",
            tolerance=uniform_within,
            uses=_numbers(X[:, d]),
        ),
    ]


def _qkv(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
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
            prompt=_asked(
                f"With {shown.origin}, compute entry q{c + 1} of the query of {_q(L[i])} from its row of X and "
                f"column q{c + 1} of W_q, then find it in {_cell('Q for all tokens', L[i], f'q{c + 1}')}.",
                within,
            ),
            answer=value,
            hint=f"q = x W_q: entry q{c + 1} is x dotted with column q{c + 1} of W_q.",
            solution=f"{_products(X[i].tolist(), params.W_q[:, c].tolist(), value)}.",
            tolerance=within,
            uses=_numbers(X[i], params.W_q[:, c], value),
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
            prompt=_asked(
                f"What if W_k were replaced by W_q (so K = Q)? What would the score of {_q(L[i])} with itself be "
                f"(before scaling)? Its query is the row {_q(L[i])} of the table “Q for all tokens”.",
                diag_within,
            ),
            answer=diag,
            hint="With K = Q the score of a token with itself is q · q, the squared length of its query.",
            solution=f"q · q = {_products(Q[i].tolist(), Q[i].tolist(), diag)}.",
            tolerance=diag_within,
            uses=_numbers(Q[i]),
        ),
    ]


def _scaling(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    """Lesson 5: one score divided by √d_k, which is sharper, and the weight with scaling switched the other way."""
    if not isinstance(inp.material, ProjectedShown):
        return []
    shown = inp.material
    L, i = inp.labels, inp.query_index
    d_k = shown.params.W_q.shape[1]
    j = _other_key(rng, len(L), i)
    scaled, raw = shown.scaled, shown.raw
    s, t = float(scaled.scores[i, j]), float(scaled.scaled_scores[i, j])
    other = raw if shown.scale else scaled  # the steps with scaling switched the other way
    top = _top(other.weights[i])
    flat, sharp = float(scaled.weights[i].max()), float(raw.weights[i].max())
    root = math.sqrt(d_k)
    within = tolerance(SHOWN_HALF_UNIT / root)
    switched = "off" if shown.scale else "on"
    other_weight = float(other.weights[i, top])
    other_within = tolerance(softmax_slack(other_weight))
    return [
        Exercise(
            id="scaled-score",
            kind="numeric",
            prompt=_asked(
                f"With {shown.origin} and d_k = {d_k} (the slider above), the score q · k of {_q(L[i])} with "
                f"{_q(L[j])} is {_n(s)} (the row of {_q(L[i])}, key by key). What is it after dividing by √d_k?",
                within,
            ),
            answer=t,
            hint=f"√{d_k} = {_n(root)}.",
            solution=f"{quotient_text(s, f'√{d_k}', t, bold=False)}, with √{d_k} = {_n(root)}.",
            tolerance=within,
            uses=_numbers(s, t),
        ),
        Exercise(
            id="sharper",
            kind="choice",
            prompt=f"For the query {_q(L[i])}, is the largest weight bigger with scaling or without it?",
            answer="without scaling" if sharp > flat + 1e-12 else ("with scaling" if flat > sharp + 1e-12 else "equal"),
            hint="Dividing by √d_k > 1 shrinks the gaps between scores; smaller gaps mean flatter weights.",
            solution=f"Largest weight with scaling {_n(flat)}, without scaling {_n(sharp)}.",
            options=("with scaling", "without scaling", "equal"),
            uses=_numbers(flat, sharp),
        ),
        Exercise(
            id="scaling-switched",
            kind="what-if",
            prompt=_asked(
                f"What if scaling were switched {switched}? What would the weight of {_q(L[top])} for the query "
                f"{_q(L[i])} be? The row of {_q(L[i])}, key by key, has the scores you need.",
                other_within,
            ),
            answer=other_weight,
            hint="Softmax of the row's scores: divided by √d_k with scaling, as they are without.",
            solution=f"Scores softmax sees: {_weights_text(L, other.scaled_scores[i])}; softmax: "
            f"{_weights_text(L, other.weights[i])}.",
            tolerance=other_within,
            uses=_numbers(other.scaled_scores[i]),
        ),
    ]


def _masking(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
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
    top = _top(steps.weights[i])
    weight = float(steps.weights[i, j])
    within = tolerance(softmax_slack(weight))
    non_zero = int((steps.weights[i] > 0).sum())
    return [
        Exercise(
            id="masked-weight",
            kind="numeric",
            prompt=_asked(
                f"With {shown.mask_name} (chosen above), what is the weight of {_q(L[j])} for the query {_q(L[i])}? "
                f"Compute it from the row {_q(L[i])} of the table “Masked scores”, then find it in the table "
                "“Masked attention weights”.",
                within,
            ),
            answer=weight,
            hint="Only the keys the mask allows compete: take exp of their scaled scores and divide by their sum; a "
            "blocked key (−∞) gets exactly 0.",
            solution=f"Masked scaled scores: {_weights_text(L, steps.masked_scores[i])}; softmax: "
            f"{_weights_text(L, steps.weights[i])}.",
            tolerance=within,
            uses=_numbers(steps.weights[i, j]),
        ),
        Exercise(
            id="non-zero",
            kind="what-if",
            prompt=f"With {shown.mask_name}, how many non-zero weights does the row of {_q(L[i])} have? What if the "
            "mask were switched off: would that count change? Give the count with this mask. Exact count.",
            answer=float(non_zero),
            hint="Count the keys the mask lets this query see (True in the mask's row).",
            solution=f"The mask's row {_q(L[i])} allows {int(mask[i].sum())} of {T} keys, so {non_zero} weights are "
            f"non-zero; the other {T - non_zero} are exactly 0 (without a mask all {T} would be non-zero).",
        ),
        Exercise(
            id="masked-top",
            kind="choice",
            prompt=f"With {shown.mask_name}, which key gets the most attention from {_q(L[i])}?",
            answer=L[top],
            hint="Only the keys the mask allows compete; the largest of their scores wins.",
            solution=f"Weights of the row: {_weights_text(L, steps.weights[i])}: the largest is {_q(L[top])}.",
            options=_pick_options(L, top, rng) if T > 1 else (L[0],),
            uses=_numbers(steps.weights[i]),
        ),
    ]


def _multi_head(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
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
            prompt=_asked(
                f"In the heatmap of head {head + 1} (“Every head's attention weights”), what weight does the query "
                f"{_q(L[i])} give the key {_q(L[j])}?",
                within,
            ),
            answer=w,
            hint=f"Head {head + 1} uses its own {d_k} columns of W_q, W_k and W_v, and divides by √{d_k}.",
            solution=f"Head {head + 1}, row {_q(L[i])}: scaled scores "
            f"{_weights_text(L, heads[head].masked_scores[i])}; weights {_weights_text(L, heads[head].weights[i])}.",
            tolerance=within,
            uses=_numbers(w),
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


def _positions(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    """Lesson 8: a weight after reversing the sentence, the shuffled context, and one sinusoidal entry."""
    if not isinstance(inp.material, PositionsShown):
        return []
    shown = inp.material
    X, L, i = inp.X, inp.labels, inp.query_index
    T = X.shape[0]
    j = _other_key(rng, T, i)
    steps = shown.plain
    before = float(steps.weights[i, j])
    pos = rng.randrange(T)
    pe = float(shown.E[pos, 0])
    within = tolerance(SHOWN_HALF_UNIT)
    pe_within = tolerance()
    return [
        Exercise(
            id="reversed-weight",
            kind="what-if",
            prompt=_asked(
                f"What if the sentence were reversed (no positional encoding, the same seeded W_q, W_k, W_v)? What "
                f"weight would {_q(L[i])} give {_q(L[j])} then? The panel “X (no positions)” shows the weights now.",
                within,
            ),
            answer=before,
            hint="Without positions, attention only sees the vectors: moving the words moves rows and columns "
            "together.",
            solution=f"Before: {_n(before)} (panel “X (no positions)”); after reversing the rows and columns move "
            f"together, so {_q(L[i])} still gives {_q(L[j])} {_n(before)}.",
            tolerance=within,
            uses=_numbers(before),
        ),
        Exercise(
            id="shuffled-context",
            kind="choice",
            prompt=f"Without positions, what happens to the output of {_q(L[i])} when the words are shuffled?",
            answer="the same vector, in another row",
            hint="Self-attention is permutation-equivariant.",
            solution=f"Every weight and value moves with its token, so the output of {_q(L[i])} is unchanged: "
            "compare the tables “A(P X)” and “P A(X)” above.",
            options=("the same vector, in another row", "a different vector", "all zeros", "the average of X"),
        ),
        Exercise(
            id="sinusoid",
            kind="numeric",
            prompt=_asked(
                f"What is entry d1 of the sinusoidal encoding of position {pos + 1} ({_q(L[pos])}, pos = {pos} in the "
                "formula)? Check it in the table “Sinusoidal position encodings E”.",
                pe_within,
            ),
            answer=pe,
            hint="Entry d1 (2i = 0) is sin(pos / 10000⁰) = sin(pos), with pos in radians.",
            solution=f"sin({pos}) = {_n(pe)}.",
            tolerance=pe_within,
            uses=_numbers(pe),
        ),
    ]


def _pipeline(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
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
    top = _top(diagonal)
    within = tolerance(dot_slack(concat[i], W_o[:, c]))
    causal_count = T * (T + 1) // 2
    head_name = f"head {shown.followed_head + 1}" if len(shown.steps.heads) > 1 else "the head"
    return [
        Exercise(
            id="output-entry",
            kind="numeric",
            prompt=_asked(
                f"From the row {_q(L[i])} of “Concatenated heads” (step 8) and column d{c + 1} of “W_o” (step 9), "
                f"compute entry d{c + 1} of the block's output for {_q(L[i])}, then find it in “Output of the block”.",
                within,
            ),
            answer=value,
            hint=f"output = concat W_o: the concatenated row dotted with column d{c + 1} of W_o.",
            solution=f"{_products(concat[i].tolist(), W_o[:, c].tolist(), value)}.",
            tolerance=within,
            uses=_numbers(concat[i], W_o[:, c], value),
        ),
        Exercise(
            id="self-attention",
            kind="choice",
            prompt=f"In the attention weights of {head_name}, which token gives itself the largest weight (the largest "
            "diagonal entry)?",
            answer=L[top],
            hint="Look at the diagonal of the weights matrix.",
            solution=f"Diagonal: {_weights_text(L, diagonal)}: the largest is {_q(L[top])}.",
            options=_pick_options(L, top, rng),
            uses=_numbers(diagonal),
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


@dataclass(frozen=True)
class TrainedMaterial:
    """Lesson 10: the sentence through all-MiniLM-L6-v2, and the model (read-only) for one head's parameters."""

    forward: object  # trained_model.Forward
    model: object  # transformers.BertModel
    layer: int = 0  # the head the page shows, 0-based (the page reads them 1-based)
    head: int = 0
    query: int = 1  # the query piece the page outlines


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
    step: int  # the step the page's slider shows, 0-based (the page counts from 1)
    online_row: int  # the query row and block size of the page's online softmax
    block_size: int


def _trained(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    from attention_core import trained_model as tm  # only this lesson needs it (transformers stays unimported)

    if not isinstance(inp.material, TrainedMaterial):
        return []
    forward = inp.material.forward
    P = tuple(ac.token_labels(forward.pieces))
    T = len(P)
    layer, head = inp.material.layer, inp.material.head
    i = min(inp.material.query, T - 1)
    where = f"layer {layer + 1}, head {head + 1} (the head shown above)"
    params = tm.head_params(inp.material.model, layer, head)
    X = forward.hidden_states[layer]  # (T, d_model)
    steps = tm.head_by_hand(X, params)
    weights = steps.weights  # (T, T)
    row = weights[i]  # (T,)
    top = _top(row)
    label = tm.head_label(weights)
    shares = tm.head_shares(weights)
    entropy = float(ac.row_entropy(row.unsqueeze(0))[0])
    # reading each weight at 4 decimals moves -w ln w by at most |ln w + 1| per half unit
    entropy_within = tolerance(sum(abs(math.log(w) + 1) * SHOWN_HALF_UNIT for w in row.tolist() if w > 1e-4))
    bias_term = float(steps.Q[i] @ params.b_k) / math.sqrt(tm.D_K)
    no_bias = tm.head_by_hand(X, replace(params, b_k=torch.zeros_like(params.b_k)))
    gap = float((no_bias.weights[i] - row).abs().max())
    return [
        Exercise(
            id="trained-top",
            kind="choice",
            prompt=f"In {where} of all-MiniLM-L6-v2, which piece does the query {_q(P[i])} attend to most?",
            answer=P[top],
            hint="Read the query's row in section 3: the brightest cell.",
            solution=f"Row {_q(P[i])} of {where}: {_weights_text(P, row)}: the largest is {_q(P[top])}.",
            options=_pick_options(P, top, rng),
            uses=_numbers(row),
        ),
        Exercise(
            id="trained-label",
            kind="choice",
            prompt=f"Which label does {where} get on this sentence (section 5's rules)?",
            answer=label,
            hint=f"Average over the queries the weight on [CLS], [SEP], the previous, next and same piece; "
            f"a share of at least {tm.LABEL_SHARE:g} names the head, else look at the entropy.",
            solution=f"Mean shares: {', '.join(f'{name} {_n(value)}' for name, value in shares.items())}; "
            f"mean row entropy {_n(float(ac.row_entropy(weights).mean()))} of ln T = {_n(math.log(T))}: "
            f"the label is {_q(label)}.",
            options=tm.HEAD_LABELS,
        ),
        Exercise(
            id="trained-entropy",
            kind="numeric",
            prompt=_asked(
                f"From the row of the query {_q(P[i])} in {where}, compute its entropy −Σ w ln w (in nats), then "
                "check it under the row's table.",
                entropy_within,
            ),
            answer=entropy,
            hint=f"Add −w ln w over the row's {T} weights (a weight of 0 adds 0); a uniform row would give ln {T}.",
            solution=f"Weights {_weights_text(P, row)}; −Σ w ln w = {_n(entropy)} "
            f"(uniform: ln {T} = {_n(math.log(T))}).",
            tolerance=entropy_within,
            uses=_numbers(row),
        ),
        Exercise(
            id="trained-no-bias",
            kind="what-if",
            prompt=f"What if the key bias b_k of {where} were dropped (K = X W_k instead of X W_k + b_k)? "
            f"The weights of the query {_q(P[i])} would …",
            answer="stay the same",
            hint="The bias adds q · b_k to the score of every key of the row: the same number for every key.",
            solution=f"q · b_k / √{tm.D_K} = {_n(bias_term)} is added to every score of row {_q(P[i])}; softmax "
            f"ignores a constant added to a whole row (recomputed without b_k: the weights move by at most {_n(gap)}).",
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
            id="ideal-key",
            kind="choice",
            prompt=f"{tr.TASKS[settings.task]}: in the right pattern, which key should the query {_q(labels[q])} "
            "attend to (in the last layer)?",
            answer=labels[right],
            hint="Ask what the query must predict, and which earlier position holds that token.",
            solution=f"Query {_q(labels[q])} must predict the token at {_q(labels[right])}, so its row of the right "
            "pattern is 1 there and 0 elsewhere.",
            options=_pick_options(labels[: q + 1], right, rng),
        ),
        Exercise(
            id="uniform-closeness",
            kind="what-if",
            prompt=_asked(
                "What if every query spread its weight evenly over the keys the causal mask lets it see? What would "
                "the mean weight on the right key (over the scored queries) be?",
                tolerance(),
            ),
            answer=uniform_close,
            hint="The query at position p (counted from 1) sees keys 1 to p, so each gets 1/p; average that over the "
            "scored queries.",
            solution=f"Scored positions {', '.join(str(s + 1) for s in scored)}: mean of "
            f"{_more([f'1/{s + 1}' for s in scored], ', ')} = {_n(uniform_close)}.",
            tolerance=tolerance(),
        ),
        Exercise(
            id="causal-future",
            kind="what-if",
            prompt=f"The model is causal. Can the query {_q(labels[ahead])} put any weight on the key "
            f"{_q(labels[ahead + 1])}?",
            answer="no: the key is in its future",
            hint="Compare the two positions: a causal mask hides every key after the query.",
            solution=f"Key {ahead + 2} comes after query {ahead + 1}: its score is −∞ before softmax, so its weight is "
            "exactly 0 at every step of training.",
            options=("yes, once trained", "yes, a little", "no: the key is in its future"),
        ),
        Exercise(
            id="scored-count",
            kind="numeric",
            prompt="How many positions of the example are scored (have a target)? Exact count.",
            answer=float(len(scored)),
            hint="Count the positions whose target is not '·' in the task's table.",
            solution=f"Positions {', '.join(str(s + 1) for s in scored)}: {len(scored)} scored.",
        ),
    ]
    if len(snapshots) > 1 and snapshots[0].step != snapshots[-1].step:
        first, last = snapshots[0], snapshots[-1]
        start = tr.closeness(first.weights[last_layer, head], ideal)
        end = tr.closeness(last.weights[last_layer, head], ideal)
        answer = f"step {last.step}" if end > start else f"step {first.step}"
        items.append(
            Exercise(
                id="closer",
                kind="choice",
                prompt=f"Layer {last_layer + 1}, head {head + 1}: is its pattern closer to the right one at step "
                f"{first.step} or at step {last.step}?",
                answer=answer,
                hint="Compare the mean weight on the right key at both steps (move the step slider).",
                solution=f"Weight on the right key: {_n(start)} at step {first.step}, {_n(end)} at step {last.step}.",
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
    t = min(m.step, T - 1)
    cached_numbers = steps[t].K.numel() + steps[t].V.numel()
    top = _top(steps[t].weights)
    row_index, block_size = min(m.online_row, T - 1), m.block_size
    online = gen.online_softmax_steps(gen.masked_scores(m.X, m.W_q, m.W_k)[row_index], block_size)
    b = rng.randrange(len(online))
    doubled = gen.total_multiply_adds(2 * T, d_model, d_k, d_v, cached=False)
    doubled_cached = gen.total_multiply_adds(2 * T, d_model, d_k, d_v, cached=True)
    blocks = ", ".join(f"block {s.block + 1}: max {_n(s.block_max)} → m = {_n(s.new_max)}" for s in online[: b + 1])
    return [
        Exercise(
            id="cache-numbers",
            kind="numeric",
            prompt=f"After step {t + 1} (the new token {_q(L[t])}, the step slider above), how many numbers do the K "
            f"and V caches hold together (d_k = {d_k}, d_v = {d_v})? Exact count.",
            answer=float(cached_numbers),
            hint="One K row and one V row per token so far.",
            solution=f"{t + 1} tokens × (d_k + d_v) = {t + 1} × ({d_k} + {d_v}) = {cached_numbers}.",
        ),
        Exercise(
            id="step-top",
            kind="choice",
            prompt=f"At step {t + 1}, which cached key gets the most weight from the new token {_q(L[t])}'s query?",
            answer=L[top],
            hint="Only the keys of steps 1 to t are in the cache; the largest scaled score q · k / √d_k wins.",
            solution=f"Scores q · k / √{d_k}: {_weights_text(L[: t + 1], steps[t].scores)}; weights "
            f"{_weights_text(L[: t + 1], steps[t].weights)}.",
            options=_pick_options(L[: t + 1], top, rng),
            uses=_numbers(steps[t].weights),
        ),
        Exercise(
            id="running-max",
            kind="numeric",
            prompt=_asked(
                f"Online softmax of the query {_q(L[row_index])}'s row in blocks of {block_size} keys (the table "
                f"“Online softmax, block by block”): what is the running maximum m after block {b + 1}?",
                tolerance(SHOWN_HALF_UNIT),
            ),
            answer=online[b].new_max,
            hint="m starts at −∞; after each block, m′ = max(m, the block's largest score). Masked keys are −∞.",
            solution=f"{blocks}.",
            tolerance=tolerance(SHOWN_HALF_UNIT),
            uses=_numbers(*[s.block_max for s in online[: b + 1]]),
        ),
        Exercise(
            id="double-length",
            kind="what-if",
            prompt=f"What if the sequence had {2 * T} tokens instead of {T}? How many multiply-adds would one head "
            f"need in total without the cache (d_model = {d_model}, d_k = {d_k}, d_v = {d_v})? Exact count.",
            answer=float(doubled),
            hint="Step n (n tokens so far) redoes every projection and the whole n × n scores and context.",
            solution=f"Σ over n = 1..{2 * T} of n · {d_model}·(2·{d_k} + {d_v}) + n² · ({d_k} + {d_v}) = {doubled:,}; "
            f"with the cache it would be {doubled_cached:,}.",
        ),
        Exercise(
            id="cache-unchanged",
            kind="what-if",
            prompt=f"What if the token at step {t + 1} had been another word? Which rows already in the cache would "
            "change?",
            answer="none: earlier rows never change",
            hint="A cache row depends only on its own token: k_j = x_j W_k.",
            solution=f"Rows 1 to {t} are x_j W_k and x_j W_v of earlier tokens: the new token only appends row {t + 1}."
            if t
            else "At step 1 the cache is empty before the new row is appended.",
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
