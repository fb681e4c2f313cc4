"""A link reproduces the screen (issue 38, item 7): every lesson control is in the URL (ui/widgets/url_controls.py).

For each bound control: a link with its value sets the control and draws what the control draws at that value
(the same tables, charts and text as a learner who opened the page and moved the control), the widget is bound
(``query_param_key``: the browser writes the address when it moves; tests/e2e/test_url_controls_browser.py watches
the address change), a control used by later steps keeps its value and its parameter there, and a value the
control cannot take gives a sentence and the default, with no exception.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import (
    NumberInput,
    Radio,
    Selectbox,
    SelectSlider,
    Slider,
    TextArea,
    TextInput,
    Toggle,
)

from tests.apptest_helpers import assert_clean, chart_specs, frames, open_page
from tests.pages.answered import answered  # noqa: F401 (a fixture, used by pytestmark)
from ui.format import learner_text
from ui.widgets import url_controls

pytestmark = pytest.mark.usefixtures("answered")  # controls and tables a question holds back are on the page

KINDS = ("slider", "select_slider", "selectbox", "radio", "toggle", "number_input", "text_input", "text_area")
JOURNEY_WEIGHTS = "The journey tutorial's weights (recovered)"  # lesson 4's third choice of W
SIDEBAR = {"example", "sentence", "embedding", "seed", "d_model", "query", "edits", "step", "view"}


@dataclass(frozen=True)
class Case:
    """A control: its page, the step that draws it, its key, a value to link (None: the first choice that is not the
    default), other parameters it needs, and a later step that uses its value without drawing it."""

    page: str
    step: int
    key: str
    value: str | None = None
    extra: dict = field(default_factory=dict)
    later: int | None = None
    visible: bool = True  # whether the step that draws it draws something else for another value

    def __str__(self) -> str:
        return self.key


CASES = [
    Case("softmax", 5, "softmax_temperature", "2.5", later=6),
    Case("softmax", 8, "softmax_offset"),
    Case("context_vectors", 6, "context_vectors_projection"),
    Case("qkv_projections", 2, "qkv_source", JOURNEY_WEIGHTS, later=5),
    Case("qkv_projections", 2, "qkv_seed", "7", later=5),
    Case("qkv_projections", 2, "qkv_d_k", "5", later=5),
    Case("qkv_projections", 2, "qkv_scale_random", "false", later=8, visible=False),
    Case("qkv_projections", 2, "qkv_scale_002", "true", {"qkv_source": JOURNEY_WEIGHTS}, later=8, visible=False),
    Case("scaling", 5, "scaling_seed", "7", later=6),
    Case("scaling", 5, "scaling_d_k", "4", later=6),
    Case("scaling", 5, "scaling_scale", "false", later=6, visible=False),
    Case("masking", 2, "masking_type", "Padding", later=4),
    Case("masking", 2, "masking_enabled", "false", later=4),
    Case("masking", 2, "masking_full_row", "true", later=4),
    Case("masking", 2, "masking_pads", "5", {"masking_type": "Padding"}, later=4),
    Case("masking", 2, "masking_window", "2", {"masking_type": "Sliding window"}, later=4),
    Case("multi_head", 5, "multi_head_width", "16 (lift with a seeded W_in)"),
    Case("multi_head", 5, "multi_head_heads", "4"),
    Case("multi_head", 5, "multi_head_seed", "7"),
    Case("multi_head", 5, "multi_head_causal", "true"),
    Case("multi_head", 5, "multi_head_full_row", "true"),
    Case("multi_head", 6, "multi_head_table_head"),
    Case("positions", 4, "positions_seed", "7"),
    Case("positions", 4, "positions_order", "reverse"),
    Case("positions", 4, "positions_typed_order", "2 1 3 4 5 6", {"positions_order": "type an order"}),
    Case("positions", 10, "positions_kind"),
    Case("pipeline", 6, "pipeline_heads", "3"),
    Case("pipeline", 6, "pipeline_mask", "causal"),
    Case("pipeline", 6, "pipeline_seed", "7"),
    Case("pipeline", 6, "pipeline_head", None, {"pipeline_heads": "3"}),
    Case("generation", 2, "generation_step", "3"),
    Case("generation", 7, "generation_row"),
    Case("generation", 7, "generation_block"),
    Case("training", 2, "training_task", later=4),
    Case("training", 2, "training_seed", "7", later=4),
    Case("training", 2, "training_layers", later=4, visible=False),
    Case("training", 2, "training_heads", later=4, visible=False),
    Case("training", 2, "training_steps", "100", later=4, visible=False),
    Case("training", 2, "training_learning_rate", later=4, visible=False),
    Case("training", 2, "training_mlp", "true", later=4, visible=False),
    Case("trained_model", 4, "tm_layer", "3", later=7),
    Case("trained_model", 4, "tm_head", "5", later=7),
    Case("trained_model", 4, "tm_query", later=7),
    Case("trained_model", 7, "tm_param"),
    Case("trained_model", 7, "tm_step"),
    Case("trained_model", 9, "tm_link_query"),
    Case("trained_model", 9, "tm_link_key"),
    Case("smollm2", 1, "smol_prompt", "Hello there, general Kenobi"),
    Case("smollm2", 2, "smol_temperature", "2"),
    Case("smollm2", 2, "smol_top_k", "5"),
    Case("smollm2", 3, "smol_how", "sampling", visible=False),  # the text comes with the button
    Case("smollm2", 3, "smol_seed", "5", {"smol_how": "sampling"}, visible=False),
    Case("smollm2", 5, "smol_layer", "3", later=6),
    Case("smollm2", 5, "smol_head", "4", later=6),
    Case("smollm2", 5, "smol_query", later=6),
]
KEPT = [case for case in CASES if case.later]


# --- reading the page ---------------------------------------------------------------------------------------------


def widget(at: AppTest, key: str):
    """The bound control ``key`` on the page."""
    found = [element for kind in KINDS for element in at.get(kind) if getattr(element, "key", None) == key]
    assert len(found) == 1, f"{key}: {len(found)} widgets"
    return found[0]


def shown(element) -> str:
    """The control's value as the URL writes it."""
    if isinstance(element, (Selectbox, Radio)):
        return element.options[element.index]
    if isinstance(element, SelectSlider):
        return str(element.format_func(element.value))
    if isinstance(element, Toggle):
        return "true" if element.value else "false"
    if isinstance(element, (Slider, NumberInput)):
        value = element.value
        return f"{value:g}" if isinstance(value, float) else str(value)
    assert isinstance(element, (TextInput, TextArea))
    return element.value


KINDS_DRAWN = ("title", "header", "subheader", "markdown", "caption", "latex", "text", "metric", "info", "success",
               "error", "warning", "code")  # fmt: skip
PROGRESS = re.compile(r"This lesson so far: .*|^caption: Exercises: .*")  # the session's answers, not the control's


def drawn(at: AppTest) -> list[str]:
    """What the page draws besides its controls, the link's notes and the session's score: tables, charts (with
    their data), text, formulas, metrics."""
    out = [frame.to_json() for frame in frames(at)]
    out += [json.dumps(spec, sort_keys=True) for spec in chart_specs(at)]
    out += [hashlib.sha256(data.data.data).hexdigest() for chart in at.get("vega_lite_chart") for data in
            chart.proto.datasets]  # fmt: skip
    for kind in KINDS_DRAWN:
        out += [f"{kind}: {getattr(element, 'value', '')}" for element in at.get(kind)]
    return [PROGRESS.sub("", text) for text in out if "This link" not in text]


def link_notes(at: AppTest) -> list[str]:
    return [warning.value for warning in at.warning if "This link" in warning.value]


def opened(case: Case, step: int, **params: str) -> AppTest:
    at = open_page(f"app_pages/{case.page}.py", {"step": str(step), **case.extra, **params}, timeout=240)
    assert_clean(at)
    return at


def move(at: AppTest, step: int) -> AppTest:
    """The same session on another step (as Back / Next do: the step in the URL)."""
    at.query_params["step"] = str(step)
    at.run()
    assert_clean(at)
    return at


def another_value(element) -> str:
    """A value for the control other than the one it shows: the first other choice, or the other side."""
    if isinstance(element, Toggle):
        return "false" if element.value else "true"
    return next(option for option in element.options if option != shown(element))


# --- the tests ----------------------------------------------------------------------------------------------------


def address(at: AppTest) -> dict:
    """The address a learner would copy, as far as the server writes it (the browser writes a moved control's own
    parameter: tests/e2e/test_url_controls_browser.py)."""
    return {key: value for key, value in at.query_params.items() if key != "step"}


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_link_sets_the_control_and_draws_what_it_draws(case):
    """A learner opens the step and sets the control; the address they copy (with the control's value) opens the
    same control and the same tables, charts and text in a new session. The control declares the value the page
    opens with (a value equal to it is left out of the address), is bound, and changes what the step draws. A step
    that uses the value without drawing the control draws the same from a link, keeps the parameter, and the
    control shows the link's value."""
    by_hand = opened(case, case.step)
    control = widget(by_hand, case.key)
    assert control.proto.query_param_key == case.key, "bound: moving it writes the URL"
    assert shown(control) == declared(control), "the page opens the control at the default it declares"
    value = case.value or another_value(control)
    assert value != shown(control), "the case links another value than the default"
    before = drawn(by_hand)
    linked = opened(case, case.step, **{case.key: value})
    assert shown(widget(linked, case.key)) == value
    assert not link_notes(linked)
    widget(by_hand, case.key).set_value(widget(linked, case.key).value).run()
    assert_clean(by_hand)
    assert by_hand.query_params[case.key] == value, "moving the control writes it into the address"
    copied = opened(case, case.step, **address(by_hand))
    assert drawn(copied) == drawn(by_hand), "the link draws what the control draws at its value"
    assert copied.query_params[case.key] == value, "the value stays in the address"
    if case.visible:
        assert drawn(copied) != before, "the control changes what the step draws"
    if case.later is None:
        return
    move(by_hand, case.later)
    assert by_hand.query_params[case.key] == value, "the later step keeps the value in the address"
    later = opened(case, case.later, **address(by_hand))
    assert not link_notes(later)
    assert drawn(later) == drawn(by_hand), "a link to the later step draws what the learner who went on sees"
    assert drawn(later) != drawn(opened(case, case.later, **case.extra)), "the later step uses the value"
    move(later, case.step)
    assert shown(widget(later, case.key)) == value, "the control shows the value of a link to a later step"
    move(later, case.later)  # the control is not drawn: Streamlit alone would drop its parameter
    assert later.query_params[case.key] == value, "the later step keeps the value in the address"


def bad_values(element) -> list[str]:
    """Values the control cannot take: text for a number and one out of its range, a huge string for a choice (an
    unknown one), 'yes' for a switch, a text one character too long."""
    if isinstance(element, (Slider, NumberInput)):
        return ["abc", str(element.max + 1)]
    if isinstance(element, (TextInput, TextArea)):
        return ["x" * (element.max_chars + 1)]
    if isinstance(element, Toggle):
        return ["yes"]
    return ["9" * 5000]


GROUPS = sorted({(case.page, case.step, tuple(case.extra.items())) for case in CASES})


@pytest.mark.parametrize("group", GROUPS, ids=lambda group: f"{group[0]}-{group[1]}{'-' if group[2] else ''}")
def test_values_the_controls_cannot_take_give_a_sentence_each_and_the_defaults(group):
    """Every control of a step linked with a value it cannot take, at once: a sentence each (naming the parameter
    and quoting the value, short), the control at its default, the value out of the address, the step drawn as by
    default, no exception."""
    step = group[1]
    cases = [case for case in CASES if (case.page, case.step, tuple(case.extra.items())) == group]
    plain = opened(cases[0], step)
    defaults = {case.key: shown(widget(plain, case.key)) for case in cases}
    bad = {case.key: bad_values(widget(plain, case.key)) for case in cases}
    for round_ in range(max(len(values) for values in bad.values())):
        values = {key: texts[round_] for key, texts in bad.items() if round_ < len(texts)}
        at = opened(cases[0], step, **values)
        notes = link_notes(at)
        assert len(notes) == len(values), notes
        for key, value in values.items():
            note = next((note for note in notes if f"({key}=)" in note), "")
            assert "cannot take" in note and f"“{learner_text(value[:40])}" in note, (key, notes)
            assert len(note) < 600, "a huge value is quoted short"
            assert shown(widget(at, key)) == defaults[key], "the control keeps its default"
            assert key not in at.query_params, "the value leaves the address"
        assert drawn(at) == drawn(plain), "the step draws the default"


LATER = sorted({(case.page, case.later) for case in KEPT})


@pytest.mark.parametrize("later", LATER, ids=lambda later: f"{later[0]}-{later[1]}")
def test_values_a_later_step_cannot_take_give_a_sentence_each_and_the_defaults(later):
    cases = [case for case in KEPT if (case.page, case.later) == later and not case.extra]
    plain = opened(cases[0], later[1])
    at = opened(cases[0], later[1], **{case.key: "no such value" for case in cases})
    notes = link_notes(at)
    for case in cases:
        assert any(f"({case.key}=)" in note and "cannot take" in note for note in notes), (case.key, notes)
        assert case.key not in at.query_params
    assert drawn(at) == drawn(plain)


def test_a_trained_runs_step_and_head_come_from_a_link_once_the_session_trains():
    """Lesson 12's step slider and head picker show a run this session trained: a link's values wait in the address
    until they are drawn, then set them (or, unfit, give a sentence and the defaults)."""
    from ui.models import training_runs

    training_runs.store.clear()
    settings = {"training_steps": "20", "training_heads": "2"}
    case = Case("training", 4, "training_step")
    at = opened(case, 4, **settings, training_step="8", training_look="Layer 1, head 2")
    at.button(key="training_train").click().run()
    assert_clean(at)
    move(at, 5)
    for key, value in (("training_step", "8"), ("training_look", "Layer 1, head 2")):
        assert widget(at, key).proto.query_param_key == key
        assert shown(widget(at, key)) == value
        assert at.query_params[key] == value
    assert any(caption.value.startswith("At step 8:") for caption in at.caption), "the run drawn at step 8"
    bad = opened(case, 4, **settings, training_step="9", training_look="Layer 3, head 1")
    bad.button(key="training_train").click().run()
    move(bad, 5)
    notes = link_notes(bad)
    assert len(notes) == 2 and all("cannot take" in note for note in notes), notes
    assert shown(widget(bad, "training_step")) == "20" and shown(widget(bad, "training_look")) == "Layer 1, head 1"


TRY_THIS = [("masking", 9, 1, "masking_type", "Padding"), ("trained_model", 10, 1, "tm_head", "9")]


@pytest.mark.parametrize(("page", "last", "experiment", "key", "value"), TRY_THIS)
def test_a_try_this_button_puts_what_it_sets_in_the_address(page, last, experiment, key, value):
    """A "Try this" button on the last step sets a control before its widget is first drawn (the browser writes only
    what the learner moves): the step it opens shows the value, and the address holds it."""
    at = opened(Case(page, last, key), last)
    at.button(key=f"try:{page}:{experiment}").click().run()
    assert_clean(at)
    assert shown(widget(at, key)) == value and at.query_params[key] == value


def test_a_links_value_is_quoted_as_text():
    """A value from the address reaches the page's Markdown escaped: no image, link or HTML."""
    hostile = "![x](http://h/x.png)<img src=x>"
    at = open_page("app_pages/masking.py", {"step": "2", "masking_type": hostile})
    assert_clean(at)
    (note,) = link_notes(at)
    assert learner_text(hostile) in note
    assert "](" not in note.replace("\\]", "") and "<img" not in note.replace("\\<", "")


def test_a_parameter_given_twice_is_named_and_ignored():
    at = open_page("app_pages/softmax.py", {"step": "5", "softmax_temperature": ["2", "3"]})
    assert_clean(at)
    assert any("softmax_temperature= 2 times" in note for note in link_notes(at))
    assert at.slider(key="softmax_temperature").value == 1.0


# --- what a control takes -----------------------------------------------------------------------------------------


def test_a_number_is_read_as_its_control_takes_it():
    d_k = url_controls.Number(1, 16)
    assert d_k.read("7") == 7 and d_k.read("07") == 7 and d_k.read("7.0") == 7
    for bad in ("7.5", "0", "17", "abc", "", "nan", "inf", "1e400"):
        with pytest.raises(ValueError, match="a whole number from 1 to 16"):
            d_k.read(bad)
    t = url_controls.Number(0.1, 5.0, whole=False, step=0.1)
    assert t.read("2.5") == 2.5 and t.read("0.1") == 0.1 and t.read("5") == 5.0
    for bad in ("0.15", "5.1", "0", "-1"):
        with pytest.raises(ValueError, match=r"in steps of 0\.1"):
            t.read(bad)


def test_a_choice_is_read_by_its_shown_label():
    heads = url_controls.Choice((0, 1, 2), lambda h: f"head {h + 1}")
    assert heads.read("head 2") == 1
    with pytest.raises(ValueError, match="one of “head 1”, “head 2”, “head 3”"):
        heads.read("1")
    layers = url_controls.Choice(tuple(range(1, 31)))
    with pytest.raises(ValueError, match="one of its 30 choices, “1”, “2”, “3”, …, “30”"):
        layers.read("31")
    assert url_controls.Switch().read("true") is True
    with pytest.raises(ValueError):
        url_controls.Switch().read("True")
    assert url_controls.Text(5).read("12345") == "12345"
    with pytest.raises(ValueError, match="at most 5 characters"):
        url_controls.Text(5).read("123456")


def test_control_keys_do_not_collide_with_the_sidebar_and_the_steps():
    keys = [case.key for case in CASES]
    assert len(set(keys)) == len(keys)
    assert not SIDEBAR & set(keys)


def declared(element) -> str:
    """The default the widget declares, as the URL writes it: the browser leaves a value equal to it out of the URL
    (and Streamlit ignores a link's value equal to it), so it must be what the page opens with."""
    proto = element.proto
    if isinstance(element, (Selectbox, Radio)):
        return element.options[proto.default]
    if isinstance(element, SelectSlider):
        return element.options[int(proto.default[0])]
    if isinstance(element, Toggle):
        return "true" if proto.default else "false"
    if isinstance(element, Slider):
        value = proto.default[0]
        return f"{value:g}" if element.data_type == element.proto.DataType.FLOAT else str(int(value))
    if isinstance(element, NumberInput):
        return f"{proto.default:g}"
    return proto.default
