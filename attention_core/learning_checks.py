"""The checks around the 15-minute path: five ideas, one short question each, before and after, then reviews.

A question stands alone (there is no page around it): its few small numbers are written in the question, in the
lab's one format (``attention_core.numbers``), and it is an ``Exercise`` graded by ``check_answer`` within the
lessons' tolerance, so a check reads and grades as a lesson's "Check yourself" does.

- ``pre_check(seed)`` and ``post_check(seed)``: one question per idea, matched: the same idea in the same form
  (the form comes from the seed alone), with other numbers (each check draws from its own stream).
- ``review(ideas, seed)``: up to three questions over the ideas the learner did, with fresh numbers.
- ``next_review(finished, reviews)``: spaced retrieval; the first review a day after the path, then after
  3, 7, 14 and 30 days.

Shape letters: T tokens, d_k query/key size. Every answer is computed with the public functions of
``attention_core``; nothing here draws.
"""

from __future__ import annotations

import datetime
import hashlib
import random
from collections.abc import Callable, Iterable, Mapping, Sequence

import torch

import attention_core as ac
from attention_core.exercises.base import Exercise, asked, products_text, tolerance
from attention_core.i18n import N_, _
from attention_core.numbers import exp_text, format_number, quotient_text, sum_text, vector_text, written_sum

IDEAS = ("scores", "softmax", "context", "scaling", "masking")
IDEA_LABELS = {  # English, marked: shown through _()
    "scores": N_("Scores (dot products)"),
    "softmax": N_("Softmax (scores to weights)"),
    "context": N_("Context vectors (weighted sums)"),
    "scaling": N_("Scaling by √d_k"),
    "masking": N_("The causal mask"),
}
ORDINALS = {1: N_("first"), 2: N_("second"), 3: N_("third"), 4: N_("fourth"), 5: N_("fifth"), 6: N_("sixth")}
ALL_WORDS = N_("all six words")  # an option of the masking question (graded in English, shown through _())
FORMS = {  # each idea asked in one of two forms; a check and its matched check use the same form
    "scores": ("dot", "largest"),
    "softmax": ("weight", "shift"),
    "context": ("entry", "equal"),
    "scaling": ("scaled", "peak"),
    "masking": ("visible", "weight"),
}
RESULTS = ("right", "wrong", "skipped")  # an idea's result in a check
REVIEW_SIZE = 3
REVIEW_GAPS = (1, 3, 7, 14, 30)  # days before review n + 1 (n reviews done), from the last review or the path's end
# Six different words each, so a word names one position. A translation writes six different words too, separated
# by spaces: the question about word n asks about the translation's word n (the graded values stay these words).
SENTENCE_TEXTS = (
    # TRANSLATORS: six different words separated by single spaces (a causal-mask question counts them).
    N_("the cat sat on my mat"),
    # TRANSLATORS: six different words separated by single spaces.
    N_("a small dog chased the ball"),
    # TRANSLATORS: six different words separated by single spaces.
    N_("we read one short book today"),
    # TRANSLATORS: six different words separated by single spaces.
    N_("birds sing before the sun rises"),
    # TRANSLATORS: six different words separated by single spaces.
    N_("my friend baked a lemon cake"),
    # TRANSLATORS: six different words separated by single spaces.
    N_("rain fell on the quiet town"),
)
SENTENCES = tuple(tuple(text.split()) for text in SENTENCE_TEXTS)
# TRANSLATORS: what separates the words of a list of words ("the, cat, sat"): a comma and a space in English.
WORD_SEPARATOR = N_(", ")


# --- numbers --------------------------------------------------------------------------------------------------


def stream(seed: int, *parts: object) -> random.Random:
    """A random stream named by the seed and ``parts`` (SHA-256, the same in every process)."""
    digest = hashlib.sha256(repr((int(seed), *parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def halves(rng: random.Random, n: int, low: float = -2.0, high: float = 2.0) -> list[float]:
    """``n`` non-zero multiples of 0.5 from ``low`` to ``high``."""
    choices = [k / 2 for k in range(int(2 * low), int(2 * high) + 1) if k]
    return [rng.choice(choices) for _draw in range(n)]


def tenths(rng: random.Random, n: int, low: float, high: float) -> list[float]:
    """``n`` different multiples of 0.1 from ``low`` to ``high``."""
    return [k / 10 for k in rng.sample(range(round(10 * low), round(10 * high) + 1), n)]


def vector(values: Sequence[float]) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)  # (n,)


def softmax_row(scores: Sequence[float]) -> torch.Tensor:
    """softmax of one row of scores (−∞ for a blocked key)."""
    return ac.softmax(vector(scores).unsqueeze(0))[0]  # (1, n) -> (n,)


def softmax_lines(scores: Sequence[float], j: int) -> str:
    """The worked softmax of one weight: each e^(s − max), their sum, then the weight, each checkable by hand."""
    row = vector(scores)  # (n,)
    visible = row[torch.isfinite(row)]  # (n_visible,)
    top = float(visible.max())
    exps = torch.exp(row - top)  # (n,), 0 for a blocked key
    lines = [exp_text(float(s), top, float(e)) for s, e in zip(row, exps, strict=True)]
    weight = float(softmax_row(scores)[j])
    shown = [float(e) for e, s in zip(exps, row, strict=True) if torch.isfinite(s)]
    return _(
        "{exps}; their sum is {total}; the weight is {weight}.",
        exps="; ".join(lines),
        total=sum_text(shown, float(exps.sum()), bold=False),
        weight=quotient_text(float(exps[j]), written_sum(shown), weight, bold=False),
    )


def sentence_words(words: tuple[str, ...]) -> tuple[str, ...]:
    """A sentence of SENTENCES as the learner reads it: its translation's words (English if the translation does not
    have as many different words)."""
    sentence = " ".join(words)  # its msgid (one of SENTENCE_TEXTS)
    shown = tuple(_(sentence).split())
    return shown if len(set(shown)) == len(shown) == len(words) else words


def ordinal(n: int) -> str:
    """'first' … 'sixth', in the learner's language."""
    return _(ORDINALS[n])


# --- one generator per idea -----------------------------------------------------------------------------------


def scores_question(rng: random.Random, form: str) -> Exercise:
    """A score is a dot product: compute one, or say which of three keys scores highest."""
    within = tolerance()
    if form == "dot":
        q, k = halves(rng, 3), halves(rng, 3)
        while float(vector(q) @ vector(k)) == 0:
            k = halves(rng, 3)
        s = float(ac.attention_scores(vector(q).unsqueeze(0), vector(k).unsqueeze(0))[0, 0])  # (1, 3) @ (3, 1)
        return Exercise(
            id="scores-dot",
            kind="numeric",
            prompt=asked(
                _(
                    "A query q = {q} meets a key k = {k}. What is their score q · k?",
                    q=vector_text(q),
                    k=vector_text(k),
                ),
                within,
            ),
            answer=s,
            hint=_("Multiply the two vectors entry by entry and add the products."),
            solution=f"q · k = {products_text(q, k, s)}.",
            tolerance=within,
            uses=(*q, *k),
        )
    q = halves(rng, 2, 0.5, 2.0)
    while True:
        K = torch.tensor([halves(rng, 2) for _key in range(3)], dtype=torch.float64)  # (3, 2)
        scores = ac.attention_scores(vector(q).unsqueeze(0), K)[0]  # (1, 2) @ (2, 3) -> (3,)
        ranked = sorted(scores.tolist(), reverse=True)
        if ranked[0] - ranked[1] >= 0.5:
            break
    top = int(torch.argmax(scores))
    keys = ", ".join(f"k{j + 1} = {vector_text(K[j])}" for j in range(3))
    return Exercise(
        id="scores-largest",
        kind="choice",
        prompt=_(
            "A query q = {q} and three keys: {keys}. Which key gets the highest score?", q=vector_text(q), keys=keys
        ),
        answer=f"k{top + 1}",
        hint=_("Compute q · k for each key and compare."),
        solution=_(
            "{scores}: the highest is {top}.",
            scores="; ".join(f"q · k{j + 1} = {products_text(q, K[j].tolist(), float(scores[j]))}" for j in range(3)),
            top=f"k{top + 1}",
        ),
        options=("k1", "k2", "k3"),
        uses=(*q, *K.reshape(-1).tolist()),
    )


def softmax_question(rng: random.Random, form: str) -> Exercise:
    """Softmax turns scores into weights: compute one, or see that adding a constant changes none."""
    within = tolerance()
    scores = tenths(rng, 3, -1.0, 3.0)
    j = rng.randrange(3)
    weights = softmax_row(scores)  # (3,)
    if form == "weight":
        return Exercise(
            id="softmax-weight",
            kind="numeric",
            prompt=asked(
                _(
                    "A query's scores for three keys are {scores}. What weight does softmax give the {ordinal} key?",
                    scores=vector_text(scores),
                    ordinal=ordinal(j + 1),
                ),
                within,
            ),
            answer=float(weights[j]),
            hint=_("Take e to the power of each score (minus the largest), then divide by their sum."),
            solution=softmax_lines(scores, j),
            tolerance=within,
            uses=tuple(scores),
        )
    shift = rng.choice([2.0, 3.0, 5.0, 10.0])
    shifted = softmax_row([s + shift for s in scores])  # (3,)
    return Exercise(
        id="softmax-shift",
        kind="what-if",
        prompt=asked(
            _(
                "Softmax turns the scores {scores} into the weights {weights}. If {shift} is added to every score, "
                "what weight does the {ordinal} key get?",
                scores=vector_text(scores),
                weights=vector_text(weights),
                shift=f"{shift:g}",
                ordinal=ordinal(j + 1),
            ),
            within,
        ),
        answer=float(shifted[j]),
        hint=_("e^(s + c) = e^s × e^c: the same factor is above and below the fraction line."),
        solution=_(
            "The factor e^{shift} cancels, so every weight stays: the {ordinal} is {weight}.",
            shift=f"{shift:g}",
            ordinal=ordinal(j + 1),
            weight=format_number(float(shifted[j])),
        ),
        tolerance=within,
        uses=(*scores, *weights.tolist()),
    )


def context_question(rng: random.Random, form: str) -> Exercise:
    """A context vector is the weighted sum of the values: one entry of it, with given or equal weights."""
    within = tolerance()
    if form == "entry":
        a = rng.randint(1, 7)
        b = rng.randint(1, 8 - a)
        w = [a / 10, b / 10, (10 - a - b) / 10]
    else:
        w = [0.25] * 4
    V = torch.tensor([halves(rng, 2) for _weight in w], dtype=torch.float64)  # (T, 2)
    e = rng.randrange(2)
    context = ac.context_vectors(vector(w).unsqueeze(0), V)[0]  # (1, T) @ (T, 2) -> (2,)
    values = ", ".join(f"v{j + 1} = {vector_text(V[j])}" for j in range(len(w)))
    return Exercise(
        id=f"context-{form}",
        kind="numeric",
        prompt=asked(
            _(
                "A query gives the weights {weights} to three keys, whose values are {values}. What is the {ordinal} "
                "entry of its context vector?",
                weights=vector_text(w),
                values=values,
                ordinal=ordinal(e + 1),
            )
            if form == "entry"
            else _(
                "A query gives equal weights to its four keys, whose values are {values}. What is the {ordinal} "
                "entry of its context vector?",
                values=values,
                ordinal=ordinal(e + 1),
            ),
            within,
        ),
        answer=float(context[e]),
        hint=_("Multiply each value's entry by that key's weight and add them up."),
        solution=_("Entry {n}: {products}.", n=e + 1, products=products_text(w, V[:, e].tolist(), float(context[e]))),
        tolerance=within,
        uses=(*w, *V.reshape(-1).tolist()),
    )


def scaling_question(rng: random.Random, form: str) -> Exercise:
    """Scores are divided by √d_k: one scaled score, or how the division lowers softmax's peak."""
    within = tolerance()
    if form == "scaled":
        d_k = rng.choice([4, 9, 16, 25, 36, 64])
        s = rng.choice([k / 2 for k in range(-16, 17) if k])
        scaled = float(ac.scale_scores(vector([s]), d_k)[0])
        return Exercise(
            id="scaling-scaled",
            kind="numeric",
            prompt=asked(
                _(
                    "A query and a key of length d_k = {d_k} have the dot product {dot}. What score does attention "
                    "use after scaling?",
                    d_k=d_k,
                    dot=format_number(s),
                ),
                within,
            ),
            answer=scaled,
            hint=_("Divide the dot product by the square root of d_k."),
            solution=f"{quotient_text(s, f'√{d_k}', scaled, bold=False)}.",
            tolerance=within,
            uses=(s, float(d_k)),
        )
    d_k = rng.choice([4, 16, 64])
    raw = [rng.choice([k / 2 for k in range(8, 21)]), 0.0]
    scaled_scores = ac.scale_scores(vector(raw), d_k)  # (2,)
    weight = float(softmax_row(scaled_scores.tolist())[0])
    return Exercise(
        id="scaling-peak",
        kind="numeric",
        prompt=asked(
            _(
                "Two keys score {scores} against a query, with d_k = {d_k}. After dividing the scores by √d_k, what "
                "weight does softmax give the first key?",
                scores=vector_text(raw),
                d_k=d_k,
            ),
            within,
        ),
        answer=weight,
        hint=_("Divide both scores by √d_k first, then take the softmax."),
        solution=_(
            "Scaled: {scaled} and 0; {softmax} Unscaled, the first key would get {unscaled}: scaling lowers the peak.",
            scaled=quotient_text(raw[0], f"√{d_k}", float(scaled_scores[0]), bold=False),
            softmax=softmax_lines(scaled_scores.tolist(), 0),
            unscaled=format_number(float(softmax_row(raw)[0])),
        ),
        tolerance=within,
        uses=(*raw, float(d_k)),
    )


def masking_question(rng: random.Random, form: str) -> Exercise:
    """A causal mask lets a token see itself and the tokens before it: which words, or one weight after it."""
    if form == "visible":
        words = rng.choice(SENTENCES)
        i = rng.randrange(2, len(words) - 1)  # a word with words on both sides, not the second
        right = ", ".join(words[: i + 1])
        options = [right, ", ".join(words[:i]), ", ".join(words[i:]), ALL_WORDS]
        rng.shuffle(options)
        shown, separator = sentence_words(words), _(WORD_SEPARATOR)
        labels = {  # each option (English, graded) as the learner reads it
            right: separator.join(shown[: i + 1]),
            ", ".join(words[:i]): separator.join(shown[:i]),
            ", ".join(words[i:]): separator.join(shown[i:]),
            ALL_WORDS: _(ALL_WORDS),
        }
        return Exercise(
            id="masking-visible",
            kind="choice",
            prompt=_(
                "The sentence “{sentence}” goes through attention with a causal mask. Which words may “{word}” attend "
                "to?",
                sentence=" ".join(shown),
                word=shown[i],
            ),
            answer=right,
            hint=_("A causal mask blocks every key that comes after the query."),
            solution=_(
                "“{word}” is word {n}: it sees words 1 to {n}, itself included ({right}).",
                word=shown[i],
                n=i + 1,
                right=labels[right],
            ),
            options=tuple(options),
            option_labels=tuple(labels[option] for option in options),
        )
    within = tolerance()
    T = 4
    i = rng.randrange(1, T - 1)  # the second or third token: more than one key visible, at least one blocked
    scores = tenths(rng, T, -1.0, 2.0)
    j = rng.randrange(i + 1)
    row = ac.apply_mask(vector(scores).unsqueeze(0), ac.causal_mask(T)[i : i + 1])[0]  # (1, T) -> (T,)
    weight = float(softmax_row(row.tolist())[j])
    blocked = (
        _("Key {key} is blocked (−∞, weight 0).", key=T)
        if i + 2 == T
        else _("Keys {first} to {last} are blocked (−∞, weight 0).", first=i + 2, last=T)
    )
    return Exercise(
        id="masking-weight",
        kind="numeric",
        prompt=asked(
            _(
                "With a causal mask, token {token} of {T} has the scores {scores} for keys 1 to {T}. What weight does "
                "key {key} get?",
                token=i + 1,
                T=T,
                scores=vector_text(scores),
                key=j + 1,
            ),
            within,
        ),
        answer=weight,
        hint=_("Keys after token {token} are blocked: take the softmax over keys 1 to {token} only.", token=i + 1),
        solution=f"{blocked} {softmax_lines(row.tolist(), j)}",
        tolerance=within,
        uses=tuple(scores),
    )


QUESTIONS: dict[str, Callable[[random.Random, str], Exercise]] = {
    "scores": scores_question,
    "softmax": softmax_question,
    "context": context_question,
    "scaling": scaling_question,
    "masking": masking_question,
}


# --- the checks -----------------------------------------------------------------------------------------------


def form_for(seed: int, idea: str) -> str:
    """The form an idea is asked in by the checks of ``seed`` (the same before and after the path)."""
    return stream(seed, "form", idea).choice(FORMS[idea])


def question(idea: str, form: str, rng: random.Random) -> Exercise:
    return QUESTIONS[idea](rng, form)


def pre_check(seed: int) -> tuple[Exercise, ...]:
    """The check before the path: one question per idea, in IDEAS order."""
    return tuple(question(idea, form_for(seed, idea), stream(seed, "pre", idea)) for idea in IDEAS)


def same_question(one: Exercise, other: Exercise) -> bool:
    """Whether two questions ask the same: same answer from the same numbers (whatever the language they are in)."""
    return (one.answer, one.uses) == (other.answer, other.uses)


def post_check(seed: int) -> tuple[Exercise, ...]:
    """The matched check after the path: each idea in the same form as ``pre_check(seed)``, other numbers."""
    matched = []
    for idea, before in zip(IDEAS, pre_check(seed), strict=True):
        rng = stream(seed, "post", idea)
        after = question(idea, form_for(seed, idea), rng)
        while same_question(after, before):  # the same numbers by chance: draw again from the same stream
            after = question(idea, form_for(seed, idea), rng)
        matched.append(after)
    return tuple(matched)


def review(ideas: Iterable[str], seed: int, avoid: Iterable[str] = ()) -> tuple[tuple[str, Exercise], ...]:
    """(idea, question) for up to REVIEW_SIZE of ``ideas`` (different ideas, in IDEAS order), fresh numbers: never
    a question whose prompt is in ``avoid`` (the checks the learner already answered)."""
    known, avoided = set(ideas), set(avoid)  # prompts in the learner's language, as shown
    if not known <= set(IDEAS):
        raise ValueError(f"unknown ideas: {sorted(known - set(IDEAS))}")
    rng = stream(seed, "review")
    chosen = rng.sample([idea for idea in IDEAS if idea in known], min(REVIEW_SIZE, len(known)))
    asked = []
    for idea in (idea for idea in IDEAS if idea in chosen):
        form, numbers = rng.choice(FORMS[idea]), stream(seed, "review", idea)
        fresh = question(idea, form, numbers)
        while fresh.prompt in avoided:  # the same numbers as a check already answered: draw again
            fresh = question(idea, form, numbers)
        asked.append((idea, fresh))
    return tuple(asked)


# --- results and the review schedule --------------------------------------------------------------------------


def right_count(results: Mapping[str, str | bool]) -> int:
    """How many ideas of a check ("right") or a review (True) were answered right."""
    return sum(1 for result in results.values() if result is True or result == "right")


def summary(before: Mapping[str, str], after: Mapping[str, str]) -> str:
    """'4 of 5 right, up from 2.': the check after the path against the one before it."""
    right, total = right_count(after), len(after)
    if not before:
        return _(
            "{right} of {total} right (there was no check before the path to compare with).", right=right, total=total
        )
    if all(result == "skipped" for result in before.values()):
        return _("{right} of {total} right (you skipped the check before the path).", right=right, total=total)
    then = right_count(before)
    if then == right:
        return _("{right} of {total} right, as before.", right=right, total=total)
    if right > then:
        return _("{right} of {total} right, up from {then}.", right=right, total=total, then=then)
    return _("{right} of {total} right, down from {then}.", right=right, total=total, then=then)


def next_review(finished: datetime.date, reviews: Sequence[datetime.date]) -> datetime.date:
    """When the next review is due: REVIEW_GAPS[n] days after the last review (or the path's end), n reviews done."""
    last = max([finished, *reviews])
    return last + datetime.timedelta(days=REVIEW_GAPS[min(len(reviews), len(REVIEW_GAPS) - 1)])


def review_due(finished: datetime.date, reviews: Sequence[datetime.date], today: datetime.date) -> bool:
    """Whether a review is due today: never on the day of the path's end or of a review."""
    return today >= next_review(finished, reviews)
