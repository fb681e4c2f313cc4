"""A lesson's own controls in the URL, so that a copied link opens the screen its sender sees (issue 38, item 7).

Every slider, choice, switch and text box that changes what a lesson draws goes through a function here. Each is
Streamlit's widget bound to the URL (``bind="query-params"``), its key as the parameter (``softmax_temperature=2``):
moving the control writes the address, opening the address sets the control, and a page left and opened again gets
its values back in the address. Two things are added to Streamlit's binding:

- A link's value is checked before Streamlit reads it, the first time the control is drawn in a session, against
  what the control takes: a number in its range (and on its slider's steps), one of its choices, true or false, a
  text of at most its length. A value it cannot take (text where a number goes, out of range, an unknown choice, a
  huge string, a parameter given twice) leaves the address and the control keeps its default, with a sentence
  under the control that names the value. Streamlit alone drops some of these without a word and bends others
  (7.5 to 7, a long text cut short).
- Most lessons draw a control in one step and use its value in the next ones (the mask, d_k, the picked head).
  A step without the control reads it with ``linked`` (``kept`` also writes it back): a link's value (checked the
  same way), else the learner's, and its parameter stays in the address, where Streamlit would drop a bound
  parameter once its widget is not drawn.

A control declares the value its page opens with (``value=``, ``index=``): the browser leaves a value equal to the
declared one out of the address, and Streamlit ignores a link's value equal to it, so any other default would be
lost from a copied link. Two of Streamlit's own methods are used (``_drop``, ``_hold``), each said where.

A control's first draw in a session reads its parameter; later runs add two dictionary lookups. Answers to
questions (``ui.widgets.exercises`` forms) are never bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st
from streamlit.runtime.state.session_state_proxy import get_session_state

from attention_core import i18n
from attention_core.i18n import _
from ui.format import learner_text

CHECKED = "_url_checked"  # the keys whose link value this session has read (once each)
NOTES = "_url_notes"  # key -> (the sentence about a link's value it could not take, the value it kept instead)
CHOICES = "_url_choices"  # key -> (Choice, declared value): choices written as shown, written again in a new language
SHOWN = "_url_notes_shown"  # the keys whose sentence this run has drawn (one per run, where it is first read)
SHOWN_CHARACTERS = 40  # a link's value is quoted up to this many characters
LISTED_CHOICES = 8  # a message lists a control's choices when it has at most this many
BIND = "query-params"


# --- what a control takes -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Number:
    """A number from ``low`` to ``high``: whole, or on a slider's steps of ``step`` from ``low``."""

    low: float
    high: float
    whole: bool = True
    step: float | None = None

    def wanted(self) -> str:
        values = {"low": f"{self.low:g}", "high": f"{self.high:g}", "step": f"{self.step:g}" if self.step else ""}
        if self.step and not (self.whole and self.step == 1):
            if self.whole:
                return _("a whole number from {low} to {high} in steps of {step}", **values)
            return _("a number from {low} to {high} in steps of {step}", **values)
        return (
            _("a whole number from {low} to {high}", **values)
            if self.whole
            else _("a number from {low} to {high}", **values)
        )

    def read(self, raw: str) -> float | int:
        """The number ``raw`` writes (ValueError when the control cannot take it)."""
        try:
            x = float(raw)
        except ValueError:
            raise ValueError(self.wanted()) from None
        if not (math.isfinite(x) and self.low <= x <= self.high) or (self.whole and not x.is_integer()):
            raise ValueError(self.wanted())
        if self.step and not math.isclose((x - self.low) / self.step, round((x - self.low) / self.step), abs_tol=1e-6):
            raise ValueError(self.wanted())
        return int(x) if self.whole else x

    def shown(self, value: Any) -> str:
        return f"{value:g}" if isinstance(value, float) else str(value)

    def written(self, value: Any) -> str:
        """The value as the address holds it (as Streamlit writes it: 5.0 as 5)."""
        return str(int(value)) if float(value).is_integer() else str(float(value))


@dataclass(frozen=True)
class Choice:
    """One of ``options``, written in the address as the control shows it (``format_func``)."""

    options: tuple
    format_func: Callable[[Any], Any] = str

    def labels(self) -> list[str]:
        return [str(self.format_func(option)) for option in self.options]

    def wanted(self) -> str:
        quoted = [f"“{learner_text(label)}”" for label in self.labels()]
        if len(quoted) <= LISTED_CHOICES:
            return _("one of {choices}", choices=", ".join(quoted))
        return _(
            "one of its {count} choices, {first}, …, {last}",
            count=len(quoted),
            first=", ".join(quoted[:3]),
            last=quoted[-1],
        )

    def read(self, raw: str) -> Any:
        """The option ``raw`` names: as shown now, or as shown in another language (a link made in English opened in
        Chinese)."""
        for language in (i18n.current(), *i18n.languages()):
            with i18n.using(language):
                labels = self.labels()
            if raw in labels:
                return self.options[labels.index(raw)]
        raise ValueError(self.wanted())

    def shown(self, value: Any) -> str:
        return f"“{learner_text(self.format_func(value))}”"

    def written(self, value: Any) -> str:
        return str(self.format_func(value))


@dataclass(frozen=True)
class Switch:
    """On or off: ``true`` or ``false`` in the address."""

    def wanted(self) -> str:
        return _("true or false")

    def read(self, raw: str) -> bool:
        if raw not in ("true", "false"):
            raise ValueError(self.wanted())
        return raw == "true"

    def shown(self, value: Any) -> str:
        return _("on") if value else _("off")

    def written(self, value: Any) -> str:
        return "true" if value else "false"


@dataclass(frozen=True)
class Text:
    """A text of at most ``max_chars`` characters."""

    max_chars: int

    def wanted(self) -> str:
        return _("a text of at most {count} characters", count=f"{self.max_chars:,}")

    def read(self, raw: str) -> str:
        if len(raw) > self.max_chars:
            raise ValueError(self.wanted())
        return raw

    def shown(self, value: Any) -> str:
        return _("its own text")

    def written(self, value: Any) -> str:
        return str(value)


Spec = Number | Choice | Switch | Text


# --- a link's values ----------------------------------------------------------------------------------------------


def _arrived(key: str) -> list[str] | None:
    """The texts the address gives ``key`` when this session reads it for the first time; None after that."""
    checked = st.session_state.setdefault(CHECKED, set())
    if key in checked:
        return None
    checked.add(key)
    values = st.query_params.get_all(key)
    return values or None


def _drop(key: str) -> None:
    """Take ``key`` out of the address before Streamlit seeds a widget from it (the control keeps its default).

    Streamlit seeds a bound widget from the address the run started with, which its public st.query_params does not
    change; so its own QueryParams is told to seed from the address as it is now."""
    with get_session_state().query_params() as params:
        params.remove_param(key)
        params.set_initial_query_params_from_current()


def _hold(key: str) -> None:
    """Keep ``key``'s parameter in the address through a run that does not draw its widget.

    Streamlit unbinds a widget that a run did not draw and then removes its parameter from the address; unbinding
    it here first leaves the parameter as it is (its value stays in session state, and drawing the widget binds it
    again)."""
    with get_session_state().query_params() as params:
        binding = params.get_binding_for_param(key)
        if binding is not None:
            params.unbind_widget(binding.widget_id)


def _problem(key: str, label: str, spec: Spec, texts: list[str]) -> str | None:
    """Why the control ``key`` cannot take the address's ``texts`` (one sentence), or None if it can."""
    if len(texts) > 1:
        return _(
            "This link gives {key}= {count} times, so “{label}” ignores it.", key=key, count=len(texts), label=label
        )
    try:
        spec.read(texts[0])
    except ValueError as wanted:
        raw = texts[0]
        shown = raw if len(raw) <= SHOWN_CHARACTERS else raw[:SHOWN_CHARACTERS] + "…"
        values = {"label": label, "key": key, "value": learner_text(shown), "wanted": wanted}
        if len(raw) > SHOWN_CHARACTERS:
            return _(
                "This link sets “{label}” ({key}=) to “{value}” ({size} characters), which it cannot take: it takes "
                "{wanted}.",
                size=f"{len(raw):,}",
                **values,
            )
        return _("This link sets “{label}” ({key}=) to “{value}”, which it cannot take: it takes {wanted}.", **values)
    return None


def _remember(key: str, problem: str, value: Any, outcome: str) -> None:
    """Keep the sentence about a link's value of ``key``: shown while the control keeps the value it fell back to."""
    st.session_state.setdefault(NOTES, {})[key] = (f"{problem} {outcome}", value)


def _note(container, key: str, value: Any) -> None:
    """The sentence about a link's value of ``key``, once a run, while the control keeps the value it fell back to."""
    notes = st.session_state.get(NOTES, {})
    if key not in notes:
        return
    sentence, fallen_back_to = notes[key]
    if value != fallen_back_to:  # the learner has chosen since: the sentence is old news
        del notes[key]
        return
    shown = st.session_state.setdefault(SHOWN, set())
    if key not in shown:
        shown.add(key)
        container.warning(sentence, icon=":material/link_off:")


def new_run() -> None:
    """A new run of the app: each kept sentence may be drawn once more (``inputs.sidebar`` calls it first)."""
    st.session_state.pop(SHOWN, None)


def _write(key: str, spec: Spec, value: Any, declared: Any) -> None:
    """Put a drawn control's value in the address where Streamlit has not: a value set in session state (a "Try
    this" button) before its widget's first draw. The browser writes a value the learner moves, and Streamlit one it
    restores, so this writes only when the address does not already hold the value; a declared value stays out.

    Streamlit's own QueryParams writes it: st.query_params refuses a bound parameter."""
    if value == declared:
        return
    with get_session_state().query_params() as params:
        texts = params.get_all(key)
        try:
            if texts and (
                texts[-1] == spec.written(value) if isinstance(spec, Choice) else spec.read(texts[-1]) == value
            ):
                return  # a choice as shown now: one in another language is written again in this one
        except ValueError:
            pass
        params.set_corrected_value(key, spec.written(value), "string_value")


def register(key: str, spec: Choice, declared: Any) -> None:
    """Note a bound choice, which the address holds as shown: a new language writes it again (``relabel``)."""
    st.session_state.setdefault(CHOICES, {})[key] = (spec, declared)


def translate_arrived(key: str, spec: Choice) -> None:
    """A directly bound choice (the sidebar's example and embeddings): a link's value written in another language is
    written as the choice shows it now, before Streamlit seeds the widget from it (once per session)."""
    if st.session_state.get(f"_translated:{key}"):
        return
    st.session_state[f"_translated:{key}"] = True
    raw = st.query_params.get(key)
    if raw is not None:
        _in_this_language(key, spec, raw)


def _in_this_language(key: str, spec: Choice, raw: str) -> None:
    """A link's choice written in another language, written as the choice shows it now, before Streamlit seeds the
    widget from the address (Streamlit reads only the labels shown now, and drops any other without a word)."""
    if raw in spec.labels():
        return
    try:
        value = spec.read(raw)
    except ValueError:
        return  # not a choice in any language: the control's note (or the sidebar's) says so
    with get_session_state().query_params() as params:
        params.set_corrected_value(key, spec.written(value), "string_value")
        params.set_initial_query_params_from_current()


def choice_keys() -> list[str]:
    """The keys of the bound choices drawn in this session."""
    return list(st.session_state.get(CHOICES, {}))


def relabel() -> None:
    """The learner changed the language: every choice in the address is written as it is shown now, drawn on this
    page or not, so a copied link opens the same choices in the new language."""
    for key, (spec, declared) in st.session_state.get(CHOICES, {}).items():
        value = st.session_state.get(key)
        if key in st.query_params and value is not None and value != declared:
            with get_session_state().query_params() as params:
                params.set_corrected_value(key, spec.written(value), "string_value")


def _bound(widget: str, label: str, key: str, spec: Spec, declared: Any, container, kwargs: dict) -> Any:
    """Draw ``container.<widget>`` bound to the URL; a link value it cannot take is dropped and named under it."""
    if isinstance(spec, Choice):
        register(key, spec, declared)
    texts = _arrived(key)
    if texts and len(texts) == 1 and isinstance(spec, Choice):
        _in_this_language(key, spec, texts[0])
    problem = _problem(key, label, spec, texts) if texts else None
    if problem:
        _drop(key)
    value = getattr(container, widget)(label, key=key, bind=BIND, **kwargs)
    if problem:
        _remember(key, problem, value, _("It shows {value} instead.", value=spec.shown(value)))
    _note(container, key, value)
    _write(key, spec, value, declared)
    return value


# --- the controls -------------------------------------------------------------------------------------------------


def _within(key: str, low, high) -> None:
    """A number the control kept from another input (a step of a longer sequence, on a page left and opened again),
    brought into the range it has now: Streamlit keeps a bound widget's value, and refuses one out of range."""
    value = st.session_state.get(key)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and not low <= value <= high:
        st.session_state[key] = min(max(value, low), high)


def slider(label: str, min_value, max_value, value=None, *, key: str, step=None, container=st, **kwargs) -> Any:
    """st.slider of one number, bound to the URL as ``key``."""
    whole = all(isinstance(v, int) for v in (min_value, max_value))
    spec = Number(min_value, max_value, whole, step if step is not None else (1 if whole else 0.01))
    kwargs.update(min_value=min_value, max_value=max_value, value=value, step=step)
    declared = min_value if value is None else value
    _within(key, min_value, max_value)
    return _bound("slider", label, key, spec, declared, container, kwargs)


def number_input(label: str, min_value, max_value, value="min", *, key: str, container=st, **kwargs) -> Any:
    """st.number_input of a whole number, bound to the URL as ``key`` (any whole number in range: steps only move)."""
    spec = Number(min_value, max_value, whole=True)
    kwargs.update(min_value=min_value, max_value=max_value, value=value)
    declared = min_value if value in (None, "min") else value
    _within(key, min_value, max_value)
    return _bound("number_input", label, key, spec, declared, container, kwargs)


def select_slider(label: str, options: Sequence, *, key: str, format_func=str, container=st, **kwargs) -> Any:
    """st.select_slider bound to the URL as ``key`` (the option as shown)."""
    spec = Choice(tuple(options), format_func)
    declared = kwargs.get("value", spec.options[0])
    kwargs.update(options=options, format_func=format_func)
    return _bound("select_slider", label, key, spec, declared, container, kwargs)


def selectbox(label: str, options: Sequence, *, key: str, format_func=str, container=st, **kwargs) -> Any:
    """st.selectbox bound to the URL as ``key`` (the option as shown)."""
    spec = Choice(tuple(options), format_func)
    declared = spec.options[kwargs.get("index", 0)]
    kwargs.update(options=options, format_func=format_func)
    return _bound("selectbox", label, key, spec, declared, container, kwargs)


def radio(label: str, options: Sequence, *, key: str, format_func=str, container=st, **kwargs) -> Any:
    """st.radio bound to the URL as ``key`` (the option as shown)."""
    spec = Choice(tuple(options), format_func)
    declared = spec.options[kwargs.get("index", 0)]
    kwargs.update(options=options, format_func=format_func)
    return _bound("radio", label, key, spec, declared, container, kwargs)


def toggle(label: str, *, key: str, container=st, **kwargs) -> bool:
    """st.toggle bound to the URL as ``key`` (true or false)."""
    return bool(_bound("toggle", label, key, Switch(), bool(kwargs.get("value", False)), container, kwargs))


def text_input(label: str, *, key: str, max_chars: int, container=st, **kwargs) -> str:
    """st.text_input bound to the URL as ``key``; a link's text longer than ``max_chars`` is refused."""
    kwargs.update(max_chars=max_chars)
    return _bound("text_input", label, key, Text(max_chars), kwargs.get("value", ""), container, kwargs)


def text_area(label: str, *, key: str, max_chars: int, container=st, **kwargs) -> str:
    """st.text_area bound to the URL as ``key``; a link's text longer than ``max_chars`` is refused."""
    kwargs.update(max_chars=max_chars)
    return _bound("text_area", label, key, Text(max_chars), kwargs.get("value", ""), container, kwargs)


# --- a control's value in a step that does not draw it ---------------------------------------------------------------


def linked(key: str, default: Any, spec: Spec | None = None, label: str = "") -> Any:
    """The value of the control ``key`` as this run finds it, its parameter kept in the address although the run may
    not draw it: a link's value the first time the session reads ``key`` (when ``spec`` takes it; one it cannot take
    is dropped and named, as the control would), else what the learner chose, else ``default``."""
    _hold(key)
    texts = _arrived(key) if spec is not None else None
    if texts:  # a link opened on a step without the control: its value, as the control would take it
        problem = _problem(key, label or key, spec, texts)
        if problem:
            _drop(key)
            value = st.session_state.get(key, default)
            if value is None:
                outcome = _("This step uses its default instead.")
            else:
                outcome = _("This step uses {value} instead.", value=spec.shown(value))
            _remember(key, problem, value, outcome)
        else:
            st.session_state[key] = spec.read(texts[0])
    value = st.session_state.get(key, default)
    if spec is not None:  # a read of the value (keep only holds it)
        _note(st, key, value)
    return value


def kept(key: str, default: Any, spec: Spec | None = None, label: str = "") -> Any:
    """``linked`` in a run that does not draw the control: its value is written back, so that it survives the run
    (Streamlit forgets a widget's value after a run that does not draw it)."""
    value = linked(key, default, spec, label)
    if key in st.session_state:
        st.session_state[key] = st.session_state[key]
    return value


def keep(*keys: str) -> None:
    """Keep the values of the controls ``keys``, and their parameters in the address, through a run that does not
    draw them."""
    for key in keys:
        kept(key, None)
