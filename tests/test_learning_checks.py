"""The checks around the 15-minute path (attention_core.learning_checks): every answer recomputed from the question's
own text with torch, pre and post matched, deterministic, the review over the done ideas, and its schedule."""

from __future__ import annotations

import datetime
import math
import random
import re

import pytest
import torch

from attention_core import learning_checks as lc
from attention_core.exercises import check_answer
from tests.test_written_sums import written_arithmetic

NUM = r"-?\d+(?:\.\d+)?"
ORDINALS = {"first": 0, "second": 1, "third": 2, "fourth": 3}
SEEDS = range(40)
ALL_FORMS = [(idea, form) for idea in lc.IDEAS for form in lc.FORMS[idea]]


def vectors(text: str) -> list[torch.Tensor]:
    """Every [a, b, …] written in the text, in order, as float64 tensors."""
    return [
        torch.tensor([float(v) for v in re.findall(NUM, body)], dtype=torch.float64)
        for body in re.findall(r"\[([^\]]*)\]", text)
    ]


def ordinal(text: str, noun: str) -> int:
    return ORDINALS[re.search(rf"the (\w+) {noun}", text).group(1)]


def recomputed(exercise) -> float | str:
    """The answer worked out from what the question says, with torch alone (not the lab's functions)."""
    text = exercise.prompt
    if exercise.id == "scores-dot":
        q, k = vectors(text)
        return float(torch.dot(q, k))
    if exercise.id == "scores-largest":
        q, *keys = vectors(text)
        return f"k{int(torch.argmax(torch.stack(keys) @ q)) + 1}"
    if exercise.id == "softmax-weight":
        (scores,) = vectors(text)
        return float(torch.softmax(scores, dim=0)[ordinal(text, "key")])
    if exercise.id == "softmax-shift":
        scores, _weights = vectors(text)
        shift = float(re.search(rf"If ({NUM}) is added", text).group(1))
        return float(torch.softmax(scores + shift, dim=0)[ordinal(text, "key")])
    if exercise.id.startswith("context-"):
        found = vectors(text)
        if exercise.id == "context-entry":
            weights, values = found[0], torch.stack(found[1:])
        else:
            values = torch.stack(found)
            weights = torch.full((len(found),), 1 / len(found), dtype=torch.float64)
        return float((weights @ values)[ordinal(text, "entry")])
    if exercise.id == "scaling-scaled":
        d_k = int(re.search(r"d_k = (\d+)", text).group(1))
        s = float(re.search(rf"dot product ({NUM})", text).group(1))
        return s / math.sqrt(d_k)
    if exercise.id == "scaling-peak":
        (raw,) = vectors(text)
        d_k = int(re.search(r"d_k = (\d+)", text).group(1))
        return float(torch.softmax(raw / math.sqrt(d_k), dim=0)[0])
    if exercise.id == "masking-visible":
        words = re.search(r"“([^”]+)” goes", text).group(1).split()
        word = re.search(r"may “([^”]+)” attend", text).group(1)
        return ", ".join(words[: words.index(word) + 1])
    if exercise.id == "masking-weight":
        i, T = (int(n) for n in re.search(r"token (\d+) of (\d+)", text).groups())
        j = int(re.search(r"does key (\d+) get", text).group(1))
        (scores,) = vectors(text)
        assert len(scores) == T
        return float(torch.softmax(scores[:i], dim=0)[j - 1])  # keys after token i are blocked
    raise AssertionError(f"no recomputation for {exercise.id}")


@pytest.mark.parametrize(("idea", "form"), ALL_FORMS)
def test_every_answer_follows_from_the_question_alone(idea, form):
    for seed in SEEDS:
        exercise = lc.question(idea, form, random.Random(seed))
        assert exercise.id == f"{idea}-{form}"
        expected = recomputed(exercise)
        if exercise.is_choice:
            assert exercise.answer == expected and expected in exercise.options
            assert len(set(exercise.options)) == len(exercise.options) >= 3
            others = [option for option in exercise.options if option != expected]
            assert all(check_answer(exercise, option).status == "wrong" for option in others)
        else:
            assert exercise.answer == pytest.approx(expected, abs=1e-9), exercise.prompt
            assert exercise.tolerance == 0.0005 and "within ±0.0005" in exercise.prompt
            assert check_answer(exercise, f"{expected:.3f}").status == "correct"
            assert check_answer(exercise, f"{expected + 0.002:.3f}").status == "wrong"
        assert check_answer(exercise, exercise.answer).status == "correct"


@pytest.mark.parametrize(("idea", "form"), ALL_FORMS)
def test_every_solution_checks_by_hand(idea, form):
    for seed in SEEDS:
        exercise = lc.question(idea, form, random.Random(seed))
        found, faults = written_arithmetic(exercise.solution)
        assert not faults, faults
        if form in ("dot", "weight", "entry", "equal", "scaled", "peak"):
            assert sum(found.values()) >= 1, exercise.solution  # the arithmetic is written out


def test_a_blocked_key_is_never_asked_and_a_masked_row_keeps_more_than_one_key():
    for seed in SEEDS:
        exercise = lc.question("masking", "weight", random.Random(seed))
        i = int(re.search(r"token (\d+) of", exercise.prompt).group(1))
        j = int(re.search(r"does key (\d+) get", exercise.prompt).group(1))
        assert 2 <= i < 4 and 1 <= j <= i and 0 < exercise.answer < 1


def test_pre_and_post_ask_the_same_ideas_in_the_same_forms_with_other_numbers():
    for seed in SEEDS:
        pre, post = lc.pre_check(seed), lc.post_check(seed)
        assert [e.id for e in pre] == [e.id for e in post] == [f"{i}-{lc.form_for(seed, i)}" for i in lc.IDEAS]
        for before, after in zip(pre, post, strict=True):
            assert before.prompt != after.prompt
            assert before.kind == after.kind and bool(before.options) == bool(after.options)


def test_the_checks_are_the_same_for_a_seed_and_other_for_another():
    assert lc.pre_check(17) == lc.pre_check(17) and lc.post_check(17) == lc.post_check(17)
    assert lc.review(lc.IDEAS, 740_000) == lc.review(lc.IDEAS, 740_000)
    assert len({tuple(e.prompt for e in lc.pre_check(seed)) for seed in SEEDS}) == len(SEEDS)
    forms = {tuple(lc.form_for(seed, idea) for idea in lc.IDEAS) for seed in SEEDS}
    assert len(forms) > 1, "the seed picks the forms"


def test_the_review_asks_three_done_ideas_with_fresh_numbers():
    done = ("scores", "context", "masking", "scaling")
    for seed in SEEDS:
        checks = {e.prompt for e in (*lc.pre_check(seed), *lc.post_check(seed))}
        asked = lc.review(done, seed, avoid=checks)
        ideas = [idea for idea, _ in asked]
        assert len(ideas) == 3 == len(set(ideas)) and set(ideas) <= set(done)
        assert ideas == [idea for idea in lc.IDEAS if idea in ideas], "in the path's order"
        for idea, exercise in asked:
            assert exercise.id.startswith(f"{idea}-")
        assert not {e.prompt for _, e in asked} & checks
    assert [idea for idea, _ in lc.review(["softmax"], 3)] == ["softmax"]
    assert {idea for idea, _ in lc.review(["softmax", "scores"], 3)} == {"softmax", "scores"}
    assert lc.review([], 3) == ()
    assert len({tuple(e.prompt for _, e in lc.review(lc.IDEAS, day)) for day in range(740_000, 740_010)}) == 10
    with pytest.raises(ValueError):
        lc.review(["scores", "<b>x</b>"], 3)


def day(n: int) -> datetime.date:
    return datetime.date(2026, 11, 1) + datetime.timedelta(days=n)


def test_the_first_review_comes_a_day_after_the_path_then_the_gaps_grow():
    assert not lc.review_due(day(0), [], day(0)), "not on the day the path was finished"
    assert lc.review_due(day(0), [], day(1)) and lc.review_due(day(0), [], day(9))
    assert not lc.review_due(day(0), [day(1)], day(1)), "not again the same day"
    assert lc.next_review(day(0), [day(1)]) == day(4)
    assert lc.next_review(day(0), [day(1), day(4)]) == day(11)
    assert lc.next_review(day(0), [day(1), day(4), day(11)]) == day(25)
    assert lc.next_review(day(0), [day(1), day(4), day(11), day(25)]) == day(55)
    assert lc.next_review(day(0), [day(n) for n in range(1, 20)]) == day(19 + 30), "then every 30 days"
    assert lc.next_review(day(0), [day(9)]) == day(12), "counted from the last review, however late"


def test_the_summary_compares_after_with_before():
    right, wrong, skipped = (dict.fromkeys(lc.IDEAS, r) for r in lc.RESULTS)
    two = dict(wrong, scores="right", softmax="right")
    four = dict(right, masking="wrong")
    assert lc.summary(two, four) == "4 of 5 right, up from 2."
    assert lc.summary(four, two) == "2 of 5 right, down from 4."
    assert lc.summary(two, two) == "2 of 5 right, as before."
    assert lc.summary(skipped, four) == "4 of 5 right (you skipped the check before the path)."
    assert lc.summary({}, right) == "5 of 5 right (there was no check before the path to compare with)."
    assert lc.right_count({"scores": True, "context": False}) == 1
