"""The lab's languages: gettext catalogs, one ``_()`` per learner-facing string (issue 39).

The catalogs are standard gettext files, ``locale/<language>/LC_MESSAGES/messages.po`` (what a translator edits)
and the ``messages.mo`` that Babel compiles from it (what is read here, with the standard library's ``gettext``).
``python -m tools.i18n`` extracts, updates and compiles them; CONTRIBUTING says how to add a language.

    _("Attention scores")                                  # a plain string
    _("Query “{query}” scores {score} against itself.", query=q, score=s)   # named placeholders
    N_("Softmax")                                          # marked for extraction, translated later with _()

A string with placeholders is written with named fields and ``str.format``'s rules ({{ and }} for a literal brace),
so a translation can put the values in its own order. English is the source language: a string missing from a
catalog reads in English.

Which language a call translates to: the one :func:`using` or :func:`set_language` sets in the current context (tests;
a script run, where ``ui.widgets.language.picker`` sets it first thing), else the one the app's language source says
(the learner's choice in the session, for a fragment's or a callback's thread: ``ui`` sets the source as it imports,
since the core never imports Streamlit), else English.
"""

from __future__ import annotations

import contextlib
import functools
import gettext
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path


def N_(message: str, /) -> str:
    """Mark ``message`` for the catalogs without translating it here (a constant translated where it is shown)."""
    return message


LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"
DOMAIN = "messages"
SOURCE_LANGUAGE = "en"
# TRANSLATORS: this language's own name, as the language picker shows it ("简体中文"), not the word "English".
SOURCE_NAME = N_("English")  # the msgid a catalog translates as its own language's name, as the picker shows it

_CHOSEN: ContextVar[str | None] = ContextVar("attention_lab_language", default=None)
_SOURCE: list[Callable[[], str | None]] = []  # at most one: the app's source of the learner's choice


@functools.cache
def languages(locale_dir: Path = LOCALE_DIR) -> tuple[str, ...]:
    """Every language the lab speaks: English, then each compiled catalog's language, sorted (looked up once per
    process: a new catalog needs a restart, as a new page does)."""
    found = sorted(path.parent.parent.name for path in locale_dir.glob(f"*/LC_MESSAGES/{DOMAIN}.mo"))
    return (SOURCE_LANGUAGE, *(code for code in found if code != SOURCE_LANGUAGE))


@functools.cache
def catalog(language: str, locale_dir: Path = LOCALE_DIR) -> gettext.NullTranslations:
    """The compiled catalog of ``language`` (read once per process); English, or an unknown code, translates
    nothing."""
    if language == SOURCE_LANGUAGE:
        return gettext.NullTranslations()
    return gettext.translation(DOMAIN, locale_dir, languages=[language], fallback=True)


def name(language: str) -> str:
    """A language's name in itself ("English", "简体中文"): its catalog's translation of "English"."""
    return catalog(language).gettext(SOURCE_NAME)


HTML_LANGUAGES = {"zh": "zh-Hans"}  # a catalog's code -> the page's lang attribute, where the two differ


def html_language(language: str) -> str:
    """The BCP 47 tag a page in ``language`` declares (``<html lang>``): "zh" is written in Simplified characters."""
    return HTML_LANGUAGES.get(language, language.replace("_", "-"))


def set_source(source: Callable[[], str | None]) -> None:
    """Where the current learner's language comes from when no :func:`using` is in force (the app's session)."""
    _SOURCE[:] = [source]


def current() -> str:
    """The language this call translates to."""
    chosen = _CHOSEN.get()
    if chosen is None and _SOURCE:
        chosen = _SOURCE[0]()
    return chosen if chosen in languages() else SOURCE_LANGUAGE


def set_language(language: str) -> None:
    """Translate to ``language`` in this context from now on: the app sets it as each script run starts, so a call
    reads one variable instead of the session (a thread that never set it, a fragment's or a callback's, asks the
    app's source)."""
    _CHOSEN.set(language)


@contextlib.contextmanager
def using(language: str) -> Iterator[None]:
    """Translate to ``language`` inside the block (in this context only)."""
    token = _CHOSEN.set(language)
    try:
        yield
    finally:
        _CHOSEN.reset(token)


def _(message: str, /, **values: object) -> str:
    """``message`` in the current language, with ``values`` put into its named placeholders."""
    text = catalog(current()).gettext(message)
    return text.format(**values) if values else text
