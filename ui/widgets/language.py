"""The learner's language (issue 39): a picker at the top of the sidebar, ``lang=`` in the URL, and kept with the
learner's progress in their browser (``ui.widgets.progress``). English is the default and stays out of the URL.

The picker is not one of Streamlit's bound widgets: those write an option as it is shown ("简体中文"), and the
address says ``lang=zh``. A link's ``lang=`` is read once per session (an unknown one gets a sentence and English).
Choices the address holds as they are shown (``example=``, a lesson's mask) are written again in the new language
when the language changes, so a copied link still opens what its sender sees.
"""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from attention_core import i18n
from attention_core.i18n import _
from ui.widgets import progress, url_controls

KEY = "lang"  # the session state's key and the URL's parameter
ARRIVED = "_lang_arrived"  # this session has read the address's lang= (once)
NOTE = "_lang_note"  # the sentence about a lang= the lab does not speak, shown once
PICKED = "_lang_picked"  # the learner has picked a language in this session: a stored one no longer overrides it


def _session_language() -> str | None:
    """The language the learner chose in this session (None outside a script run: a server thread)."""
    if get_script_run_ctx(suppress_warning=True) is None:
        return None
    return st.session_state.get(KEY)


i18n.set_source(_session_language)


def arrived_with_language() -> bool:
    """Whether the address this session opened named a language (a stored language then does not override it)."""
    return bool(st.session_state.get(ARRIVED))


def _adopt_stored() -> None:
    """The language a stored book (read as the session starts) or a loaded progress file names
    (``ui.widgets.progress.merge``): taken unless the session's link named one or the learner has picked one here;
    a language this lab lacks is ignored. Taking it changes the language as the picker would."""
    language = st.session_state.pop(progress.STORED_LANGUAGE_KEY, None)
    if arrived_with_language() or st.session_state.get(PICKED) or language not in i18n.languages():
        return
    if language != st.session_state.get(KEY):
        st.session_state[KEY] = language
        _changed(picked=False)


def _read_address() -> None:
    """A session's first run: take the address's lang= if the lab speaks it; else English and a sentence."""
    if ARRIVED in st.session_state:
        return
    raw = st.query_params.get_all(KEY)
    st.session_state[ARRIVED] = bool(raw)
    if not raw:
        return
    if raw[-1] in i18n.languages():
        st.session_state[KEY] = raw[-1]
        return
    st.query_params.pop(KEY, None)
    shown = raw[-1][:40]
    spoken = ", ".join(f"{code} ({i18n.name(code)})" for code in i18n.languages())
    st.session_state[NOTE] = _(
        "This link asks for the language “{code}” (lang=), which the lab does not speak; it speaks {spoken}. "
        "It shows English instead.",
        code=shown,
        spoken=spoken,
    )


def _write_address(language: str) -> None:
    if language == i18n.SOURCE_LANGUAGE:
        st.query_params.pop(KEY, None)
    elif st.query_params.get(KEY) != language:
        st.query_params[KEY] = language


# Choices drawn with a translated format_func that are not bound controls (their keys are not url_controls'): the
# weights colour scale.
CHOICE_KEYS = ("weights_scale",)


def _changed(picked: bool = True) -> None:
    """The learner picked a language: the address says so, its choices are written in the new language, and every
    choice's value is set again: a radio whose options change their labels shows no option checked otherwise (the
    browser keeps its old labels' state; a value set through the session state is drawn as set)."""
    if picked:
        st.session_state[PICKED] = True
    _write_address(st.session_state[KEY])
    url_controls.relabel()
    for key in [*url_controls.choice_keys(), *CHOICE_KEYS]:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def picker() -> str:
    """Draw the language picker at the top of the sidebar; the language of this run."""
    _read_address()
    _adopt_stored()
    choices = i18n.languages()
    if st.session_state.get(KEY) not in choices:
        st.session_state[KEY] = i18n.SOURCE_LANGUAGE
    i18n.set_language(st.session_state[KEY])  # this run's language: every _() after reads it at once
    label = _("Language")  # and in English beside another language's word: anyone finds the picker
    label = label if i18n.current() == i18n.SOURCE_LANGUAGE else f"{label} · Language"
    language = st.sidebar.selectbox(label, choices, format_func=i18n.name, key=KEY, on_change=_changed)
    i18n.set_language(language)
    _write_address(language)
    return language


def link_note() -> str | None:
    """The sentence about a link's unknown language (once), or None (lab.py shows it through learner_text)."""
    return st.session_state.pop(NOTE, None)
