"""A sample of the hostile corpus through the real app (AppTest): every page and every kind of input.

For each: no exception element; where the input is refused or replaced, a visible explanation;
user text never rendered as HTML.
"""

from __future__ import annotations

import pytest

from tests import hostile_corpus as corpus
from tests.apptest_helpers import PAGES, assert_clean, lab_input, open_page, sentence_params

LESSON_PAGES = [page for page in PAGES if not page.endswith("overview.py")]
ACCEPTED = [
    "one token",
    "two tokens",
    "33 tokens",
    "128 tokens",
    "emoji",
    "right-to-left",
    "script tag",
    "10,000-character word in a sentence",
    "duplicates that look like labels",
    "markdown",
    "LaTeX",
    "numbers as words",
    "control characters",
    "unicode combining",
    "512 tokens",
]
REFUSED = ["empty", "spaces only", "1025 tokens (over the limit)", "2,000 tokens"]
# Rotate the accepted sentences over the pages so every page meets several kinds of input.
SAMPLE = [(page, ACCEPTED[(i * 3 + k) % len(ACCEPTED)]) for i, page in enumerate(LESSON_PAGES) for k in range(2)]
SAMPLE += [(page, "512 tokens") for page in LESSON_PAGES if (page, "512 tokens") not in SAMPLE][:3]
URL_REFUSED = {
    "unknown preset",
    "out-of-range d_model",
    "d_model 1",
    "huge d_model",
    "garbage d_model",
    "negative seed",
    "huge seed",
    "garbage embedding",
    "unknown query",
    "sentence over the limit",
}


def user_text_never_as_html(at, text: str) -> None:
    for element in at.markdown:
        if element.proto.allow_html:
            assert text not in element.value, "user text went through unsafe_allow_html"


@pytest.mark.parametrize(("page", "name"), SAMPLE)
def test_accepted_sentences_work_on_every_page(page, name):
    sentence = corpus.SENTENCES[name]
    at = open_page(page, sentence_params(sentence, d_model=6, seed=5))
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    assert lab_input(at).tokens == tuple(sentence.split())
    user_text_never_as_html(at, sentence.split()[0])


@pytest.mark.parametrize("name", REFUSED)
def test_refused_sentences_explain_and_keep_the_last_good_lesson(name):
    at = open_page("app_pages/scores.py", sentence_params("a good sentence"))
    good = lab_input(at)
    at.sidebar.text_input(key="sentence").set_value(corpus.SENTENCES[name]).run()
    assert_clean(at)
    assert at.error and ("empty" in at.error[0].value or "at most" in at.error[0].value)
    assert lab_input(at) is good


@pytest.mark.parametrize("name", list(corpus.URL_PARAMS))
def test_odd_links_never_break_a_page(name):
    page = LESSON_PAGES[list(corpus.URL_PARAMS).index(name) % len(LESSON_PAGES)]
    at = open_page(page, corpus.URL_PARAMS[name])
    assert_clean(at)
    if name in URL_REFUSED:
        assert at.error or at.warning, "a refused link value is explained on the page"
    assert lab_input(at).T >= 1


@pytest.mark.parametrize("page", LESSON_PAGES[:3])
def test_a_bad_hand_edit_is_explained_on_lesson_pages(page):
    at = open_page(page, {"embedding": "Edit by hand"})
    good = lab_input(at)
    at.session_state["embedding_editor"] = {"edited_rows": {2: {"d3": "NaN"}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert_clean(at)
    assert any("row 3, column 3" in e.value for e in at.error)
    assert lab_input(at) is good
