"""What every lesson's exercises share: the question, its grading, its tolerance and the text of its solution.

Shape letters: T tokens, d_model embedding size, d_k query/key size, h heads. Every answer is computed
with the public functions of ``attention_core``. The same input always gives the same exercises (the
seed is a SHA-256 of the tokens, X and the lesson's name, never Python's ``hash``); a new input gives
new ones. A lesson's generator is named in the lesson registry (``ui.registry``).

The text a learner reads is translated (``attention_core.i18n``) when a generator runs; what is graded, hashed or
compared stays in English: an exercise's id is a hash of its English question (``exercises_for``), and a choice's
options are English values with their shown text in ``option_labels``.

Numeric answers are asked to 3 decimals; the tolerance is half a unit in that decimal plus what reading
the page's 4-decimal operands can add, so a guess (1/T, 0, 1, a neighbouring cell) fails unless it is
the answer. Written arithmetic in a solution follows the lab's one rule (``attention_core.numbers``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import random
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Literal

import torch

from attention_core import i18n
from attention_core.i18n import _
from attention_core.numbers import MAX_TERMS, format_number, products_sum_text, rounded_text, written_value

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
    # The numbers that give the answer away (a numeric answer itself, the weights a "which is largest?" compares):
    # a step draws them only after the exercise is settled (ui.widgets.exercises.settled). Empty: the answer alone.
    reveals: tuple[float, ...] = ()
    option_labels: tuple[str, ...] = ()  # what each option reads in the learner's language (empty: as it is)

    @property
    def is_choice(self) -> bool:
        return bool(self.options)

    def option_text(self, option: str) -> str:
        """An option (one of ``options``, the graded value) as the learner reads it."""
        if self.option_labels and option in self.options:
            return self.option_labels[self.options.index(option)]
        return option

    @property
    def given_away_by(self) -> tuple[float, ...]:
        """What must not be on the step before the learner answers: ``reveals``, else a numeric answer."""
        if self.reveals:
            return self.reveals
        return () if self.is_choice else (float(self.answer),)


@dataclass(frozen=True)
class ExerciseInput:
    """What the exercises are generated from: the sidebar's input and the lesson's own settings."""

    labels: tuple[str, ...]
    X: torch.Tensor  # (T, d_model)
    query_index: int = 0
    material: object = None  # what the page shows: ProjectedShown, MaskedShown, …, GenerationMaterial
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
        return None, _("Type a number first.")
    # A Chinese keyboard's full-width digits, point and minus (０．２５, －1) are the ASCII ones; 。 is a point too.
    cleaned = unicodedata.normalize("NFKC", raw).replace(" ", "").replace("−", "-").replace("。", ".")
    note = ""
    if "," in cleaned and "." not in cleaned and cleaned.count(",") == 1:
        cleaned = cleaned.replace(",", ".")
        note = _("Read {typed} as {read} (a comma taken as the decimal mark).", typed=repr(raw), read=cleaned)
    try:
        value = float(cleaned)
    except ValueError:
        return None, _("{typed} is not a number: type digits such as 0.25 or -1.5.", typed=repr(raw[:40]))
    if math.isnan(value):
        return None, _("NaN is not an answer here: type a number such as 0.25.")
    if math.isinf(value) or abs(value) > MAX_ANSWER:
        return None, _("{typed} is far too large to be the answer: check for a typo.", typed=repr(raw[:40]))
    return value, note


def check_answer(exercise: Exercise, answer: object) -> Check:
    """Compare an answer with the exercise's, within its tolerance; 'invalid' leaves the exercise open."""
    if exercise.is_choice:
        if answer is None or str(answer) not in exercise.options:
            return Check("invalid", _("Pick one of the options first."))
        right = str(answer) == exercise.answer
        return Check("correct" if right else "wrong", _("Right.") if right else _("Not this one."))
    value, note = parse_number(answer)
    if value is None:
        return Check("invalid", note)
    right = abs(value - float(exercise.answer)) <= exercise.tolerance + 1e-9
    within = f"{exercise.tolerance:g}"
    if right:
        verdict = _("Right (within ±{within}).", within=within) if exercise.tolerance else _("Right.")
    else:
        verdict = _("Not quite: more than ±{within} away.", within=within) if exercise.tolerance else _("Not quite.")
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


def fmt(x: float) -> str:
    """A number as every table of the lab shows it (the lab's one formatter)."""
    return format_number(x)


def products_text(a, b, exact: float) -> str:
    """'(a × b) + (c × d) + … = r': checkable by hand from the written operands (the lab's one rule)."""
    return products_sum_text(a, b, exact, bold=False)


def written_total(values) -> str:
    """The total of the values as written (4 decimals each), written by the one rule."""
    return rounded_text(sum((written_value(format_number(v)) for v in values), Decimal(0)))


def quote(label: str) -> str:
    return f"“{label}”"


def joined(parts: list[str], separator: str) -> str:
    """The first MAX_TERMS parts joined, and how many more there are."""
    shown = separator.join(parts[:MAX_TERMS])
    if len(parts) <= MAX_TERMS:
        return shown
    return shown + separator + _("… ({count} more)", count=len(parts) - MAX_TERMS)


def other_key(rng: random.Random, T: int, i: int) -> int:
    """A key other than the query when there are at least two tokens."""
    return rng.choice([j for j in range(T) if j != i]) if T > 1 else 0


def top_index(row: torch.Tensor) -> int:
    return int(torch.argmax(row))


def pick_options(labels, right: int, rng: random.Random, n: int = 4) -> tuple[str, ...]:
    """The right label and up to n - 1 others, in sentence order."""
    others = [j for j in range(len(labels)) if j != right]
    chosen = sorted([right, *rng.sample(others, min(n - 1, len(others)))])
    return tuple(labels[j] for j in chosen)


def shown_options(options) -> tuple[str, ...]:
    """The options (English values, marked with N_) as the learner reads them: ``Exercise.option_labels``."""
    return tuple(_(option) for option in options)


def labelled_values(labels, row: torch.Tensor) -> str:
    return joined([f"{quote(label)} {fmt(float(w))}" for label, w in zip(labels, row.tolist(), strict=True)], ", ")


def cell_place(table: str, row: str, column: str) -> str:
    """Where a number stands on the page: 'the table “Q for all tokens” above (row “starts”, column q2)'."""
    return _("the table {table} above (row {row}, column {column})", table=quote(table), row=quote(row), column=column)


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


def asked(prompt: str, within: float) -> str:
    return _(
        "{prompt} Give it to {decimals} decimals (within ±{within}).",
        prompt=prompt,
        decimals=ASKED_DECIMALS,
        within=f"{within:.4f}",
    )


def shown_numbers(*groups) -> tuple[float, ...]:
    """The finite numbers a question or its solution reads from the page, flattened (tensors, lists or floats)."""
    flat: list[float] = []
    for group in groups:
        if isinstance(group, torch.Tensor):
            flat += [float(v) for v in group.reshape(-1).tolist()]
        elif isinstance(group, list | tuple):
            flat += [float(v) for v in group]
        else:
            flat.append(float(group))
    return tuple(v for v in flat if math.isfinite(v))  # a masked −∞ is shown as text, not as a number


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


Generator = Callable[[ExerciseInput, random.Random], list[Exercise]]


def exercises_for(lesson: str, generator: Generator | None, inp: ExerciseInput) -> tuple[Exercise, ...]:
    """The exercises ``generator`` makes for the lesson named ``lesson`` on this input (none without a generator).

    The query is not part of the seed: another query changes only the questions that are about the query, and
    each question's id is its content's, so the others keep their ids (and the learner's answer). The content is
    the English one in every language (the generator runs in English first, with the same seed): an id, an
    answer, a choice's options and a tolerance are the same whatever language the learner reads.
    """
    if generator is None:
        return ()
    seed = input_seed(inp.labels, inp.X, lesson, *inp.material_key)
    with i18n.using(i18n.SOURCE_LANGUAGE):
        english = generator(inp, random.Random(seed))
    shown = english if i18n.current() == i18n.SOURCE_LANGUAGE else generator(inp, random.Random(seed))
    return tuple(
        replace(
            item,
            id=f"{source.id}-{content_tag(source)}",
            answer=source.answer,
            options=source.options,
            tolerance=source.tolerance,
            uses=source.uses,
            reveals=source.reveals,
        )
        for source, item in zip(english, shown, strict=True)
    )


def content_tag(exercise: Exercise) -> str:
    """Ten hex digits of a stable hash of what the learner sees and is checked against (in English)."""
    digest = hashlib.sha256()
    for part in (exercise.prompt, *exercise.options, repr(exercise.answer), repr(exercise.tolerance)):
        digest.update(part.encode())
        digest.update(b"\x1f")
    return digest.hexdigest()[:10]
