"""The lab in other languages (issue 39): the catalogs, their placeholders and terms, the machinery, and the pages.

- Every string the code marks (``_()``, ``N_()``) is translated in every catalog (a fuzzy entry is a guess: missing).
- A translation has the same named placeholders as its English, and formats with the values the code gives.
- The compiled ``.mo`` says what its ``.po`` says (a translator who forgot ``python -m tools.i18n compile`` is told).
- The glossary's terms are used: a string with an English term has the glossary's Chinese for it.
- No module that translates rebinds ``_`` (a function that assigns ``_`` turns its ``_()`` calls into errors).
- A new catalog with one translated string reads that string and English for the rest.
- Pages: every page opens in Chinese with no exception and the same numbers as in English, and shows no English
  prose (tests/i18n_text.py says what stays English).
"""

from __future__ import annotations

import ast
import csv
import gettext
import io
import json
import re
import string
from pathlib import Path

import pytest
from babel.messages.mofile import read_mo, write_mo
from babel.messages.pofile import read_po

from attention_core import i18n
from attention_core.i18n import _
from tools import i18n as tool

ROOT = Path(__file__).resolve().parents[1]
LANGUAGES = [language for language in i18n.languages() if language != i18n.SOURCE_LANGUAGE]
GLOSSARY = ROOT / "locale" / "zh" / "glossary.csv"


def catalog(language: str):
    with tool.po_path(language).open("rb") as file:
        return read_po(file, locale=language)


def fields(text: str) -> set[str]:
    """The named placeholders of a format string ({query}, {share:.1%} -> query, share)."""
    return {name.split(".")[0].split("[")[0] for _lit, name, _spec, _conv in string.Formatter().parse(text) if name}


@pytest.fixture(scope="module")
def extracted():
    return {message.id for message in tool.extracted() if message.id}


def test_the_lab_speaks_chinese():
    assert "zh" in LANGUAGES
    assert i18n.name("zh") == "简体中文" and i18n.name("en") == "English"


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_marked_string_is_translated(language, extracted):
    translated = {message.id for message in catalog(language) if message.id and message.string and not message.fuzzy}
    missing = sorted(extracted - translated)
    assert not missing, f"{len(missing)} strings untranslated in {language} (python -m tools.i18n missing {language})"


@pytest.mark.parametrize("language", LANGUAGES)
def test_placeholders_match_and_format(language):
    for message in catalog(language):
        if not message.id or not message.string:
            continue
        assert fields(message.string) == fields(message.id), (message.id, message.string)
        if fields(message.id):  # a string with values is formatted: its braces must be balanced the same way
            values = dict.fromkeys(fields(message.id), 1)
            message.id.format(**values)
            message.string.format(**values)


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_compiled_catalog_is_its_po(language):
    with tool.po_path(language).with_suffix(".mo").open("rb") as file:
        compiled = {message.id: message.string for message in read_mo(file) if message.id}
    fresh = io.BytesIO()
    write_mo(fresh, catalog(language), use_fuzzy=False)
    fresh.seek(0)
    expected = {message.id: message.string for message in read_mo(fresh) if message.id}
    assert compiled == expected, "run: python -m tools.i18n compile"


def glossary() -> list[tuple[str, str]]:
    with GLOSSARY.open(encoding="utf-8") as file:
        return [(row["english"], row["chinese"]) for row in csv.DictReader(file)]


def test_the_glossary_names_each_concept_once():
    terms = glossary()
    assert {"attention", "query", "key", "value", "attention weight", "context vector", "mask"} <= {
        e for e, _z in terms
    }
    assert len({english for english, _zh in terms}) == len(terms)


GLOSSARY_CHECKED = ("attention weight", "attention score", "context vector", "multi-head attention", "causal mask")


def test_chinese_uses_the_glossarys_terms():
    """A string naming one of the core concepts in English names it with the glossary's Chinese."""
    terms = dict(glossary())
    wrong = []
    for message in catalog("zh"):
        if not message.id or not message.string:
            continue
        for english in GLOSSARY_CHECKED:
            named = english in terms and re.search(rf"\b{re.escape(english)}s?\b", message.id, re.I)
            if named and terms[english] not in message.string:
                wrong.append(f"{english} -> {terms[english]}: {message.string[:80]}")
    assert not wrong, "\n".join(wrong)


def translating_modules() -> list[Path]:
    """The app's modules that import the translation function."""
    found = []
    for folder in ("attention_core", "app_pages", "ui", "runtime"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if re.search(r"^from attention_core\.i18n import .*\b_\b", path.read_text(encoding="utf-8"), re.M):
                found.append(path)
    return [*found, ROOT / "lab.py"]


def rebinds_underscore(tree: ast.AST) -> list[int]:
    """Lines that bind the name ``_``: assignments, loop and comprehension targets, arguments, with/except names."""
    lines = []
    for node in ast.walk(tree):
        stored = isinstance(node, ast.Name) and node.id == "_" and isinstance(node.ctx, ast.Store | ast.Del)
        argument = isinstance(node, ast.arg) and node.arg == "_"
        caught = isinstance(node, ast.ExceptHandler) and node.name == "_"
        if stored or argument or caught:
            lines.append(node.lineno)
    return lines


def untranslatable_calls(tree: ast.AST) -> list[int]:
    """Lines where _() or N_() is given something Babel cannot extract: an f-string, a variable, a concatenation
    with a name (``_(LABELS[key])`` of an N_-marked constant is fine: its text was marked where it is defined)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("_", "N_") and node.args:
            message = node.args[0]
            if isinstance(message, ast.JoinedStr) or (node.func.id == "N_" and not isinstance(message, ast.Constant)):
                lines.append(node.lineno)
    return lines


def test_no_message_is_an_f_string():
    bad = {
        str(path.relative_to(ROOT)): lines
        for path in translating_modules()
        if (lines := untranslatable_calls(ast.parse(path.read_text())))
    }
    assert not bad, f"an f-string message cannot be translated: write _('… {{name}} …', name=value): {bad}"


def test_no_translating_module_rebinds_underscore():
    modules = translating_modules()
    assert len(modules) >= 3
    bad = {
        str(path.relative_to(ROOT)): lines
        for path in modules
        if (lines := rebinds_underscore(ast.parse(path.read_text())))
    }
    assert not bad, f"rename the throwaway `_` (it shadows the translation function): {bad}"


def test_a_new_catalog_with_one_string_falls_back_to_english(tmp_path):
    """A third language is one file: its .po (compiled by tools.i18n); what it does not translate reads in English."""
    from babel.messages.catalog import Catalog

    po = Catalog(locale="fr", domain=i18n.DOMAIN)
    po.add(i18n.SOURCE_NAME, "Français")
    po.add("Language", "Langue")
    folder = tmp_path / "fr" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    with (folder / f"{i18n.DOMAIN}.mo").open("wb") as file:
        write_mo(file, po)
    assert i18n.languages(tmp_path) == ("en", "fr")
    french = i18n.catalog("fr", tmp_path)
    assert french.gettext("Language") == "Langue"
    assert french.gettext("Attention scores") == "Attention scores"  # not translated: English
    assert isinstance(french, gettext.GNUTranslations)


def test_using_sets_the_language_for_the_block_only():
    assert i18n.current() == "en"
    with i18n.using("zh"):
        assert i18n.current() == "zh"
        assert _("Language") == "语言"
        with i18n.using("xx"):  # a language the lab lacks: English
            assert i18n.current() == "en"
    assert _("Language") == "Language"
    assert _("{reason} The numbers below still use the last valid input.", reason="R").startswith("R ")


# --- the language in the app: the URL, the picker, the browser's book -----------------------------------------------


def test_lang_in_the_url_opens_chinese_and_the_picker_says_so():
    from tests.apptest_helpers import assert_clean, open_page

    at = open_page("app_pages/overview.py", {"lang": "zh"})
    assert_clean(at)
    picker = at.sidebar.selectbox(key="lang")
    assert picker.value == "zh" and picker.label == "语言 · Language"
    assert at.query_params["lang"] == "zh"
    with i18n.using("zh"):  # AppTest formats the other widgets' options in this thread: in the session's language
        picker.set_value("en").run()
    assert "lang" not in at.query_params and at.sidebar.selectbox(key="lang").label == "Language"


def test_an_unknown_language_in_a_link_gets_a_sentence_and_english():
    from tests.apptest_helpers import assert_clean, open_page

    at = open_page("app_pages/overview.py", {"lang": "xx<script>"})
    assert_clean(at)
    assert at.sidebar.selectbox(key="lang").value == "en"
    warnings = " ".join(str(warning.value) for warning in at.warning)
    assert "“xx\\<script\\>”" in warnings and "en (English), zh (简体中文)" in warnings
    assert "lang" not in at.query_params


def test_the_language_is_kept_in_the_book_and_comes_back_without_a_link():
    """The browser's book keeps the language (ui.widgets.progress), and a session opened without lang= takes it;
    a link's lang= wins over it."""
    from tests.apptest_helpers import open_page
    from ui.widgets import progress

    with i18n.using("zh"):  # AppTest formats a widget's options in this thread: in the session's language
        chinese = open_page("app_pages/scores.py", {"lang": "zh", "step": "1"})
        chinese.session_state["_progress_store_loaded"] = True
        chinese.run()  # a later run writes the book (the first one only reads the browser's)
    written = json.loads(chinese.session_state["_progress_store_written"])
    assert written["language"] == "zh" and progress.parse_file(json.dumps(written))["language"] == "zh"
    with pytest.raises(progress.ProgressFileError, match="language"):
        progress.parse_file(json.dumps(written | {"language": "<b>"}))

    fresh = open_page("app_pages/scores.py", {"step": "1"})
    fresh.session_state["_progress_store_loaded"] = True
    fresh.session_state[progress.STORED_LANGUAGE_KEY] = "zh"  # what merge() leaves for the picker
    fresh.run()  # English until this run adopts zh
    assert fresh.sidebar.selectbox(key="lang").value == "zh"

    linked = open_page("app_pages/scores.py", {"step": "1", "lang": "en"})
    linked.session_state[progress.STORED_LANGUAGE_KEY] = "zh"
    linked.run()
    assert linked.sidebar.selectbox(key="lang").value == "en"  # the link named English


# --- every page in Chinese -------------------------------------------------------------------------------------------


def answered(path: str, params: dict[str, str]):
    """A page whole (its steps on one page) with "Show me the answer" on each question, as test_exercises_on_screen
    opens it."""
    from tests.pages.test_exercises_on_screen import open_answered

    return open_answered(path, params)


PAGE_NAMES = [lesson.name for lesson in __import__("ui.registry", fromlist=["LESSONS"]).LESSONS]


@pytest.mark.parametrize("name", PAGE_NAMES)
def test_every_page_reads_in_chinese_with_the_same_numbers(name):
    """Whole and answered: no exception, no English prose left, and every number as the English page shows it."""
    from tests.i18n_text import english_left
    from tests.pages.test_exercises_on_screen import shown_numbers
    from ui import registry

    path = registry.BY_NAME[name].path
    english = answered(path, {})
    with i18n.using("zh"):  # AppTest formats a widget's options in this thread: in the session's language
        chinese = answered(path, {"lang": "zh"})
    assert not chinese.exception, [error.value for error in chinese.exception]
    left = english_left(chinese)
    assert not left, f"{len(left)} English runs in zh: {left[:12]}"
    assert shown_numbers(chinese) == shown_numbers(english)


@pytest.mark.parametrize("name", ["scores", "softmax", "masking", "multi_head", "pipeline"])
def test_a_chinese_sentence_works_as_the_input(name):
    """Lessons 1-9 split a Chinese sentence one token per character (attention_core.embeddings.split_cjk)."""
    from tests.apptest_helpers import assert_clean, lab_input, open_page, sentence_params
    from ui import registry

    with i18n.using("zh"):
        at = open_page(registry.BY_NAME[name].path, {"lang": "zh", **sentence_params("猫坐在垫子上。")})
    assert_clean(at)
    assert lab_input(at).tokens == ("猫", "坐", "在", "垫", "子", "上")


def stepped_names() -> list[str]:
    from tests.pages.test_steps import STEPPED

    return [lesson.name for lesson in STEPPED] + ["path", "mistakes"]  # the path and the museum step too


@pytest.mark.parametrize("name", stepped_names())
def test_every_step_of_every_lesson_opens_in_chinese(name):
    """Each step from its link in zh, as first drawn: no exception, the step bar on it, no English prose (the step bar,
    Back / Next and the step's own text)."""
    from tests.apptest_helpers import open_page
    from tests.i18n_text import english_left
    from ui import registry

    path = registry.BY_NAME[name].path
    count = None
    step = 1
    while count is None or step <= count:
        with i18n.using("zh"):  # AppTest formats a widget's options in this thread: in the session's language
            at = open_page(path, {"lang": "zh", "step": str(step)})
        assert not at.exception, (step, [error.value for error in at.exception])
        bar = at.segmented_control(key=f"stepbar:{name}")
        count = len(bar.options)
        assert bar.value == step and at.query_params["step"] == str(step)
        left = english_left(at)
        assert not left, f"step {step}: {len(left)} English runs in zh: {left[:12]}"
        step += 1


def test_smollm2_reads_a_chinese_prompt_without_replacement_characters():
    """Lesson 11 with a Chinese prompt: its pieces show the characters they belong to, "…" where one is cut, and a
    sentence says why (attention_core.byte_pieces)."""
    from tests.apptest_helpers import assert_clean, open_page
    from tests.i18n_text import page_texts

    with i18n.using("zh"):
        at = open_page("app_pages/smollm2.py", {"lang": "zh", "step": "1", "smol_prompt": "注意力是"})
    assert_clean(at)
    texts = " ".join(page_texts(at))
    assert "�" not in texts
    assert "注… │ …注" in texts
    assert any("一个汉字在 UTF-8 中占 3 个字节" in str(caption.value) for caption in at.caption)


def test_lesson_10_says_what_unk_means_for_a_chinese_sentence():
    from tests.apptest_helpers import assert_clean, open_page, sentence_params

    with i18n.using("zh"):
        at = open_page("app_pages/trained_model.py", {"lang": "zh", **sentence_params("猫坐在垫子上")})
    assert_clean(at)
    notes = " ".join(str(caption.value) for caption in at.caption)
    assert "[UNK] 代表你的输入中有" in notes and "主要" in notes
    english = open_page("app_pages/trained_model.py")
    assert not any("[UNK] stands for" in str(caption.value) for caption in english.caption)


@pytest.mark.parametrize(("typed", "value"), [("０．２５", 0.25), ("－0.5", -0.5), ("0。25", 0.25), ("１２", 12.0)])
def test_a_chinese_keyboards_numbers_are_read(typed, value):
    """Full-width digits, point and minus (a Chinese input method's) and 。 read as the ASCII ones."""
    from attention_core.exercises.base import parse_number

    assert parse_number(typed)[0] == value


def test_a_stored_language_never_overrides_the_learners_pick():
    """The stored language is taken as the session starts (or from a loaded file), never after the learner picked."""
    from tests.apptest_helpers import open_page
    from ui.widgets import progress

    at = open_page("app_pages/scores.py", {"step": "1"})
    at.sidebar.selectbox(key="lang").set_value("zh").run()
    with i18n.using("zh"):  # AppTest formats the drawn (Chinese) widgets' options in this thread
        at.sidebar.selectbox(key="lang").set_value("en").run()  # picked: English
    at.session_state[progress.STORED_LANGUAGE_KEY] = "zh"
    at.run()
    assert at.sidebar.selectbox(key="lang").value == "en"


def read_twice() -> None:
    """An app that receives a stored book as a session starts, then the same book as another tab's write."""
    import json

    import streamlit as st

    from runtime import browser_store
    from ui.widgets import progress

    book = json.dumps({"version": progress.VERSION, "lessons": {}, "visited": ["scores"], "language": "zh"})
    browser_store.receive(book)
    first = st.session_state.pop(progress.STORED_LANGUAGE_KEY, None)
    browser_store.receive(book)
    st.write(f"{first}|{st.session_state.get(progress.STORED_LANGUAGE_KEY)}")


def test_another_tabs_write_does_not_switch_the_language():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(read_twice).run()
    assert not at.exception
    assert at.markdown[0].value == "zh|None"


@pytest.mark.parametrize(
    ("page", "key", "english", "value"),
    [
        ("app_pages/masking.py", "masking_type", "Sliding window", "sliding window"),  # read through linked() too
        ("app_pages/qkv_projections.py", "qkv_source", "Edit by hand", "edited"),  # only its radio reads it
    ],
)
def test_a_lesson_choice_in_an_english_link_opens_in_chinese(page, key, english, value):
    """A link made in English opened with lang=zh keeps its choice, and the address then holds it as the Chinese
    page shows it (url_controls: Streamlit alone seeds a bound choice only from a label shown now)."""
    from tests.apptest_helpers import assert_clean, open_page

    with i18n.using("zh"):
        at = open_page(page, {"lang": "zh", "view": "all", key: english})
        assert_clean(at)
        assert at.session_state[key] == value
        assert at.query_params[key] == _(english) != english


def test_lesson_6s_questions_name_every_mask_in_chinese():
    """The masking exercises name the mask as the page does (masks.mask_phrase), padding and window included; their
    ids are the English ones."""
    from tests.apptest_helpers import assert_clean, open_page

    params = {"view": "all", "masking_type": "Padding", "masking_pads": "2"}
    english = open_page("app_pages/masking.py", params)
    with i18n.using("zh"):
        chinese = open_page("app_pages/masking.py", {"lang": "zh", **params})
    assert_clean(chinese)
    asked_en, asked_zh = (at.session_state["_exercises:masking"] for at in (english, chinese))
    assert [item.id for item in asked_en] == [item.id for item in asked_zh]
    assert any("padding mask (2 [PAD])" in item.prompt for item in asked_en)
    assert not any("padding mask" in item.prompt for item in asked_zh)
