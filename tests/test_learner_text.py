"""The learner's text stays text: escaped wherever it reaches Markdown, LaTeX or a CSV download.

Markdown is rendered here with markdown-it (CommonMark, raw HTML on: stricter than Streamlit, which drops raw
HTML), so "renders as literal text" is checked on real HTML output, not on the escaped string's look.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest
from markdown_it import MarkdownIt

from tests import hostile_corpus as corpus
from tests.apptest_helpers import assert_clean, open_page, sentence_params
from ui.format import LearnerText, csv_text, latex_text, learner_text

MARKDOWN = MarkdownIt("commonmark")
FETCHING_TAG = re.compile(r"<(img|a|script|iframe|link|video|audio|source)\b", re.IGNORECASE)
HOSTILE = {**corpus.SENTENCES, **{f"seed {k}": v for k, v in corpus.SEEDS.items()}}
NORMAL = ["Your journey starts with one step", "can't", "the (2)", "d_model = 4", "x_1 → x_2", "Row of “the (1)”."]


def rendered_text(html: str) -> str:
    """The text a reader sees in rendered HTML: tags dropped, the few entities markdown-it writes decoded."""
    text = re.sub(r"<[^>]+>", "", html)
    for entity, char in (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&amp;", "&")):
        text = text.replace(entity, char)
    return text.strip()


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_text_renders_as_literal_text(name):
    text = " ".join(HOSTILE[name].replace("\x00", "").split())  # one line, as a label or a quoted value is
    html = MARKDOWN.render(f"Row of “{learner_text(text)}” outlined.")
    assert not FETCHING_TAG.search(html), html
    assert "](" not in learner_text(text).replace("\\]", "")  # no link or image syntax survives unescaped
    assert "![" not in learner_text(text).replace("\\![", "")
    assert rendered_text(html) == f"Row of “{text}” outlined."


@pytest.mark.parametrize("name", corpus.FETCHING)
def test_the_probe_values_never_become_an_image_or_a_link(name):
    html = MARKDOWN.render(learner_text(corpus.SENTENCES[name]))
    assert not FETCHING_TAG.search(html), html


@pytest.mark.parametrize("text", NORMAL)
def test_normal_words_are_left_as_they_are(text):
    assert learner_text(text) == text
    assert f"{LearnerText(text)}" == text


def test_newlines_cannot_start_a_block():
    assert "\n" not in learner_text("a\n# heading\n[r]: //203.0.113.9/x.png")


def test_a_label_escapes_itself_when_formatted_and_stays_itself_elsewhere():
    label = LearnerText("![](//203.0.113.9/a.png)")
    assert label == "![](//203.0.113.9/a.png)" and hash(label) == hash("![](//203.0.113.9/a.png)")
    assert f"Row of {label}" == "Row of " + learner_text(label)
    assert f"{label:>26}".strip() == learner_text(label)
    assert ["a", label].index("![](//203.0.113.9/a.png)") == 1


def test_latex_commands_are_escaped():
    text = latex_text(corpus.SENTENCES["LaTeX command"])
    assert not re.search(r"\\(href|includegraphics|url)", text)
    assert "$" not in text.replace(r"\$", "")
    assert latex_text("{x}_1^2 & #3 % 4 ~") == r"\{x\}\_1\textasciicircum{}2 \& \#3 \% 4 \textasciitilde{}"


def test_a_csv_download_neutralises_formula_cells():
    frame = pd.DataFrame(
        {"weight": [0.25, -0.5], "word": ["=cmd|' /C calc'!A0", "cat"], "+d1": [1, -2]},
        index=pd.Index(["=cmd", "@sum"], name="token"),
    )
    rows = csv_text(frame).splitlines()
    assert rows[0] == "token,weight,word,'+d1"
    assert rows[1] == "'=cmd,0.25,'=cmd|' /C calc'!A0,1"
    assert rows[2] == "'@sum,-0.5,cat,-2"  # numbers, negative ones too, stay numbers


def test_a_csv_download_of_normal_labels_is_unchanged():
    frame = pd.DataFrame({"d1": [0.1, -0.2]}, index=["Your", "the (2)"])
    assert csv_text(frame) == frame.to_csv()


def page_markdown(at) -> list[str]:
    """Every Markdown string the page draws: markdown, captions, headers and the alerts."""
    kinds = ("markdown", "caption", "error", "warning", "info", "success", "subheader", "header", "title")
    return [str(element.value) for kind in kinds for element in at.get(kind)]


@pytest.mark.parametrize(
    "page",
    ["app_pages/scores.py", "app_pages/softmax.py", "app_pages/context_vectors.py", "app_pages/positions.py"],
)
def test_a_hostile_sentence_draws_no_image_on_a_page(page):
    sentence = f"{corpus.SENTENCES['markdown image']} ![](//203.0.113.9/b.png)"
    at = open_page(page, sentence_params(sentence, query="![](//203.0.113.9/b.png)"))
    assert_clean(at)
    texts = page_markdown(at)
    assert any("203.0.113.9" in text for text in texts), "the hostile label is on the page"
    for text in texts:
        assert not FETCHING_TAG.search(MARKDOWN.render(text)), text


def test_a_hostile_seed_is_quoted_as_text_in_its_error():
    at = open_page("app_pages/scores.py", corpus.URL_PARAMS["image in the seed"])
    assert_clean(at)
    errors = [e.value for e in at.error]
    assert any("203.0.113.9" in text for text in errors), errors
    for text in errors:
        assert not FETCHING_TAG.search(MARKDOWN.render(text)), text
