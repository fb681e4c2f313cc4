"""Page tests of the Mistakes museum: it runs on presets and typed sentences; spot-the-bug answers are judged."""

from __future__ import annotations

import pytest

from tests.apptest_helpers import assert_clean, open_page, sentence_params
from ui import museum, progress

PAGE = "app_pages/mistakes.py"


def submit(at, form: str):
    """Click the Check button of one form and rerun."""
    return next(b for b in at.button if b.proto.form_id == form).click().run()


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
def test_every_exhibit_shows_wrong_and_right_on_the_input(params):
    at = open_page(PAGE, params)
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    assert at.title[0].value == "Mistakes museum"
    headings = [h.value for h in at.subheader]
    for number, item in enumerate(museum.EXHIBITS, 1):
        assert f"{number}. {item.title}" in headings
    assert len(at.dataframe) >= len(museum.EXHIBITS), "every exhibit shows the bug's numbers and the right ones"
    both = [frame.value for frame in at.dataframe if any(str(i).startswith("bug: ") for i in frame.value.index)]
    assert both and all(any(str(i).startswith("right: ") for i in frame.index) for frame in both)
    assert any("overflow" in code.value for code in at.code), "the real float16 error message"
    fixes = [code.value for code in at.code]
    assert not any(item.right_code in fixes for item in museum.EXHIBITS), "no fix before an answer"


def test_spot_the_bug_right_wrong_and_no_answer():
    at = open_page(PAGE)
    first, second, third = museum.EXHIBITS[:3]
    at.radio(key=f"ex:museum:{first.key}").set_value(first.answer)
    submit(at, f"exf:museum:{first.key}")
    assert any(first.answer in s.value and s.value.startswith("Right") for s in at.success)
    assert first.right_code in [code.value for code in at.code], "the fix appears once answered"

    wrong = next(option for option in second.options if option != second.answer)
    at.radio(key=f"ex:museum:{second.key}").set_value(wrong)
    submit(at, f"exf:museum:{second.key}")
    assert any(second.answer in e.value for e in at.error)
    assert second.right_code in [code.value for code in at.code]

    submit(at, f"exf:museum:{third.key}")
    assert any("Pick a line first" in w.value for w in at.warning)
    assert third.right_code not in [code.value for code in at.code]
    assert_clean(at)
    assert progress.STATE_KEY in at.session_state
    book = at.session_state[progress.STATE_KEY][museum.PAGE]
    assert book[first.key]["correct"] and not book[second.key]["correct"] and book[third.key]["tries"] == 0


def test_the_museum_ends_with_the_previous_and_next_links_only():
    from tests.learn_helpers import has_exercises_and_footer

    at = open_page(PAGE)
    assert_clean(at)
    has_exercises_and_footer(at, exercises=False, summary=False)
