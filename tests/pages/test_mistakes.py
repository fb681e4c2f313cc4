"""Page tests of the Mistakes museum: it runs on presets and typed sentences; each exhibit asks before it tells
(nothing of the bug reaches the browser before an answer) and every verdict stays on screen."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from google.protobuf.message import Message

import attention_core as ac
from attention_core import mistakes
from tests.apptest_helpers import assert_clean, frames, lab_input, open_page, sentence_params
from ui.format import sum_text
from ui.widgets import museum, progress

PAGE = "app_pages/mistakes.py"
NUMBER = {item.key: number for number, item in enumerate(museum.EXHIBITS, 1)}


def exhibit(key: str) -> museum.Exhibit:
    return museum.EXHIBITS[NUMBER[key] - 1]


def sent(at) -> str:
    """Every string the main area of the page sends to the browser (each element's proto fields: bodies,
    labels, alt texts, anchors, widget ids, options, chart specs), whether shown, folded or hidden."""
    out: list[str] = []

    def strings(message) -> None:
        for _, value in message.ListFields():
            for one in [value] if isinstance(value, (str, bytes, Message)) or not hasattr(value, "__iter__") else value:
                if isinstance(one, str):
                    out.append(one)
                elif isinstance(one, Message):
                    strings(one)

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            strings(proto)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at.main)
    return "\n".join(out)


def secrets(item: museum.Exhibit, lab) -> list[str]:
    """What must not reach the browser before the exhibit is answered, and is on the page after: its name,
    where one meets it, the fix, the explanation."""
    return [item.title, item.source, item.right_code, item.evidence(lab).verdict]


def answer(at, number: int, choice: str | None):
    """Pick ``choice`` (None: nothing) in exhibit ``number``'s form and press Check."""
    if choice is not None:
        at.radio(key=f"ex:museum:{number}").set_value(choice)
    return next(b for b in at.button if b.proto.form_id == f"exf:museum:exhibit-{number}").click().run()


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"example": "How self attention works in Transformer"},
        sentence_params("the cat sat on the mat and the dog sat too", seed=11, d_model=6, query="dog"),
        sentence_params("prime width", seed=3, d_model=5),
        sentence_params("alone", seed=1, d_model=2),
    ],
    ids=["default", "000", "typed", "d_model 5", "one token"],
)
def test_before_an_answer_each_exhibit_shows_its_symptom_and_nothing_of_its_bug(params):
    at = open_page(PAGE, params)
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    assert at.title[0].value == "Mistakes museum"
    assert [h.value for h in at.subheader] == [f"Exhibit {n}" for n in range(1, len(museum.EXHIBITS) + 1)]
    lab = lab_input(at)
    page = sent(at)
    for item in museum.EXHIBITS:
        for secret in [*secrets(item, lab), item.key]:  # the key names the bug too (no widget id or anchor uses it)
            assert secret not in page, f"{item.key}: {secret!r} sent before an answer"
    alts = [frame.attrs["alt"] for frame in frames(at)]
    for number, item in enumerate(museum.EXHIBITS, 1):
        assert f"Exhibit {number}: what the code is given" in alts
        error = isinstance(item.evidence(lab).wrong, str)
        assert error or f"Exhibit {number}: what the code gives" in alts, "the buggy numbers beside the input"
    assert any("overflow" in code.value for code in at.code), "the real float16 error message"
    assert not any(str(i).startswith(("bug: ", "right: ")) for frame in frames(at) for i in frame.index)
    assert not at.success
    assert [box.label for box in at.expander] == ["The lab's own scores and softmax, to compare with"], (
        "no exhibit's code"
    )


def test_the_answer_options_are_the_code_lines_in_their_order():
    """Every line of the code is an option, worded as the code is and in its order, whichever line is wrong."""
    at = open_page(PAGE)
    for number, item in enumerate(museum.EXHIBITS, 1):
        lines = item.wrong_code.splitlines()
        assert item.options == tuple(f"line {n}: {line.strip()}" for n, line in enumerate(lines, 1))
        assert list(at.radio(key=f"ex:museum:{number}").options) == list(item.options)
        assert item.answer == item.options[item.bug_line]


def test_answering_reveals_that_exhibit_only_and_every_verdict_stays():
    at = open_page(PAGE)
    lab = lab_input(at)
    third, fifth = museum.EXHIBITS[2], museum.EXHIBITS[4]
    answer(at, 3, third.answer)
    assert_clean(at)
    headings = [h.value for h in at.subheader]
    assert headings[2] == f"Exhibit 3: {third.title}" and headings[4] == "Exhibit 5"
    page = sent(at)
    for secret in secrets(third, lab):
        assert secret in page, f"{secret!r} shown once answered"
    for secret in secrets(fifth, lab):
        assert secret not in page, "the other exhibits still ask first"
    assert [s.value for s in at.success] == [f"Right: {third.answer}."]
    assert any(f.attrs["alt"] == f"{third.title}: wrong and right results" for f in frames(at))
    assert not [b for b in at.button if b.proto.form_id == "exf:museum:exhibit-3"], "the first answer counts"

    wrong = next(option for option in fifth.options if option != fifth.answer)
    answer(at, 5, wrong)
    assert_clean(at)
    headings = [h.value for h in at.subheader]
    assert headings[2] == f"Exhibit 3: {third.title}" and headings[4] == f"Exhibit 5: {fifth.title}"
    assert [s.value for s in at.success] == [f"Right: {third.answer}."], "exhibit 3's verdict is still there"
    assert [e.value for e in at.error] == [f"Not this one: you picked {wrong}; the bug is {fifth.answer}."]
    page = sent(at)
    for secret in secrets(third, lab) + secrets(fifth, lab):
        assert secret in page
    summary = next(m.value for m in at.markdown if m.value.startswith("Bugs spotted"))
    assert "**1 of 2**" in summary
    assert f"Spotted: exhibit 3 ({third.title})." in summary
    assert f"Missed: exhibit 5 ({fifth.title})." in summary
    assert "Not answered yet: exhibits 1, 2, 4, 6, 7, 8, 9, 10." in summary

    at.run()  # any later rerun (another widget, another exhibit) keeps both verdicts
    assert len(at.success) == 1 and len(at.error) == 1
    book = at.session_state[progress.STATE_KEY][museum.PAGE]
    assert book[third.key]["correct"] and not book[fifth.key]["correct"] and book[fifth.key]["tries"] == 1


def test_checking_without_a_pick_asks_for_one_and_reveals_nothing():
    at = open_page(PAGE)
    first = museum.EXHIBITS[0]
    answer(at, 1, None)
    assert any("Pick a line first" in w.value for w in at.warning)
    assert first.title not in sent(at) and at.subheader[0].value == "Exhibit 1"
    assert at.session_state[progress.STATE_KEY][museum.PAGE][first.key]["tries"] == 0


def test_the_float16_exhibit_should_be_the_exact_float64_answer():
    """Issue 22 part 5: 'what it should be' is softmax in float64 of the exhibit's input, not float16's rounding."""
    at = open_page(PAGE)
    item = exhibit("half-precision")
    answer(at, NUMBER["half-precision"], item.answer)
    lab = lab_input(at)
    X = lab.X.to(torch.float64)
    reference = torch.softmax((X @ X.T).masked_fill(~ac.causal_mask(lab.T), float("-inf")), dim=-1)
    shown = next(f for f in frames(at) if f.attrs["alt"] == f"{item.title}: right result")
    assert list(shown.index) == [lab.query_label] and list(shown.columns) == list(lab.labels)
    np.testing.assert_allclose(shown.to_numpy()[0], reference[lab.query_index].numpy(), rtol=0, atol=1e-12)


def test_the_written_sums_use_the_shared_formatter():
    """The row sums the explanations write out come from ui.format.sum_text, with the row the table shows."""
    at = open_page(PAGE)
    lab = lab_input(at)
    scores = ac.attention_scores(lab.X, lab.X)
    for key, wrong in (
        ("wrong-axis", mistakes.softmax_wrong_axis(scores)[0]),
        ("mask-after-softmax", mistakes.mask_after_softmax(scores, ac.causal_mask(lab.T))[0]),
    ):
        answer(at, NUMBER[key], exhibit(key).answer)
        row = wrong[lab.query_index]
        written = sum_text(row, float(row.sum()))
        assert any(written in m.value for m in at.markdown), key


def test_the_museum_ends_with_the_previous_and_next_links_only():
    from tests.learn_helpers import has_exercises_and_footer

    at = open_page(PAGE)
    assert_clean(at)
    has_exercises_and_footer(at, exercises=False, summary=False)


@pytest.mark.parametrize(
    "params",
    [{}, sentence_params("one two three four five six seven eight nine ten eleven twelve", seed=2, d_model=6)],
    ids=["default", "12 tokens"],
)
def test_in_steps_one_exhibit_a_step_named_by_number_only_and_short_once_answered(params):
    """Issue 24 for the museum: how it works, one step per exhibit, the scorecard. A step's name is its number (the
    step bar would otherwise name the bug before the answer); each step asks its own exhibit only and stays
    within the steps' element budget before and after the answer."""
    from tests.pages.test_steps import MAX_ELEMENTS, leaf_count

    first = open_page(PAGE, {**params, "step": "1"})
    assert_clean(first)
    bar = first.segmented_control(key="stepbar:mistakes")
    assert len(bar.options) == len(museum.EXHIBITS) + 2
    shown_names = " ".join(str(option) for option in bar.options) + " " + sent(first)
    assert not any(item.title in shown_names for item in museum.EXHIBITS), "no bug named before its answer"
    assert not [b for b in first.button if b.proto.form_id.startswith("exf:museum:")], "the intro asks nothing"
    for number, item in enumerate(museum.EXHIBITS, 1):
        at = open_page(PAGE, {**params, "step": str(number + 1)})
        assert_clean(at)
        assert [h.value for h in at.subheader] == [f"Exhibit {number}"]
        assert {b.proto.form_id for b in at.button if b.proto.form_id} == {f"exf:museum:exhibit-{number}"}
        assert leaf_count(at.main) <= MAX_ELEMENTS, (number, leaf_count(at.main))
        answer(at, number, item.answer)
        assert_clean(at)
        assert [h.value for h in at.subheader] == [f"Exhibit {number}: {item.title}"]
        assert leaf_count(at.main) <= MAX_ELEMENTS, (number, "answered", leaf_count(at.main))
    last = open_page(PAGE, {**params, "step": str(len(museum.EXHIBITS) + 2)})
    assert any(m.value.startswith("Bugs spotted") for m in last.markdown)
