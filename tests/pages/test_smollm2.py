"""Page tests of the SmolLM2 lesson (inside a GPT-style model): every step on the default prompt, the by-hand head
against the model, induction on a repeated prompt, a typed prompt, refused prompts, and the absent model package."""

from __future__ import annotations

import pytest

import tests.test_verdicts as verdict_tests  # the module: its tests are not collected again here
from attention_core import smollm2 as sm
from tests.apptest_helpers import assert_clean, frames, open_page
from tests.pages.answered import answered  # noqa: F401  (the fixture)
from tests.pages.cell_click_helpers import clickable_specs, keep_cell, markdown, outlined_rows
from ui import registry
from ui.format import format_number
from ui.models import smol

PAGE = "app_pages/smollm2.py"
STEPS = (
    "The model",
    "Next token",
    "Token by token",
    "Every head",
    "Pick a head",
    "One head by hand",
    "RoPE",
    "Patterns",
)
REPEATED = "one two three four five six one two three four five six"
pytestmark = pytest.mark.usefixtures("answered")  # the tests read each step as once its questions are answered


@pytest.fixture(scope="module", autouse=True)
def needs_model():
    """These tests run the real model: skipped with the reason where the package is not installed."""
    try:
        sm.gguf_path()
    except sm.ModelUnavailable as error:
        pytest.skip(str(error))


def open_step(step: int, prompt: str | None = None):
    """The lesson at ``step`` (1-based), with ``prompt`` typed into its text box if given."""
    at = open_page(PAGE, {"step": str(step)}, timeout=300)
    if prompt is not None:
        at.text_area(key="smol_prompt").set_value(prompt)
        at = at.run()
    return at


def text_of(at) -> str:
    kinds = ("markdown", "caption", "success", "error", "warning", "info")
    return " ".join(str(element.value) for kind in kinds for element in at.get(kind))


def test_the_lesson_follows_the_trained_model_and_its_steps_open():
    assert registry.lesson_for(PAGE).number == registry.lesson_for("app_pages/trained_model.py").number + 1
    at = open_step(1)
    assert_clean(at)
    assert tuple(at.segmented_control(key="stepbar:smollm2").options) == tuple(
        f"{n}. {name}" for n, name in enumerate(STEPS, 1)
    )
    text = text_of(at)
    assert "4-bit quantized" in text and "differ slightly from the full-precision" in text
    assert sm.GGUF_SHA256 in text  # the checksum checked at load, as lesson 10 shows its own
    pieces = frames(at)[0]["piece"].tolist()
    assert pieces == ["The", "·cat", "·sat", "·on", "·the", "·mat", ".", "·The", "·cat"]


def test_the_next_token_matches_the_published_check_and_temperature_sharpens_it():
    at = open_step(2)
    assert_clean(at)
    table = next(e for e in [*(t.value for t in at.table), *frames(at)] if "p at t, top-k" in list(e.columns))
    assert table.index[0] == "·was" and abs(table["p at t = 1"].iloc[0] - sm.PUBLISHED_NEXT[1]) < 0.01
    at.slider(key="smol_temperature").set_value(0.3).run()
    sharper = next(e for e in [*(t.value for t in at.table), *frames(at)] if "p at t, top-k" in list(e.columns))
    assert sharper["p at t, top-k"].iloc[0] > 0.8 > 0.5 > table["p at t, top-k"].iloc[0]


def test_the_greedy_continuation_is_written_token_by_token():
    at = open_step(3)
    at.button(key="smol_continue").click().run()
    assert_clean(at)
    continued = next(e for e in [*(t.value for t in at.table), *frames(at)] if "its probability" in list(e.columns))
    assert len(continued) == 8 and continued.index[0] == "1. ·was"


def verdict_table(at):
    """The by-hand step's table of comparisons with the independent reference, indexed by what was compared."""
    return next(t.value for t in at.table if "verdict" in t.value.columns)


def open_head_by_hand():
    """The step "One head by hand" on the published prompt, layer 6, head 5, its last query."""
    at = open_page(PAGE, {"step": str(STEPS.index("One head by hand") + 1)}, timeout=300)
    at.session_state["smol_layer"] = 6
    at.session_state["smol_head"] = 5
    return at.run()


def test_the_head_by_hand_agrees_with_independent_code_and_says_what_it_compared():
    at = open_head_by_hand()
    assert_clean(at)
    table = verdict_table(at)
    assert list(table.index) == [
        "by hand: the row of 9 weights",
        "by hand: the context vector (64 numbers)",
        "the model's forward: the row of 9 weights",
        "the model's forward: the context vector (64 numbers)",
    ]
    assert list(table["verdict"]) == ["equal up to float32 rounding"] * 4
    pairs = zip(table["largest |difference|"], table["allowed"], strict=True)
    assert all(float(gap) < float(allowed) for gap, allowed in pairs)
    text = text_of(at)
    assert "scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)" in text and "torch.polar" in text
    assert "imports nothing of the lab" in text
    assert [s.value for s in at.success] == ["By hand and the model's forward both match the independent code."]
    assert "key/value head 2" in text  # head 5 (0-based 4) reads key/value head 4 // 3 + 1
    assert not at.error
    check = smol.independent_check(sm.PUBLISHED_PROMPT, 5, 4, 8)
    bound = format_number(check.score_bound)  # the allowance's factors are on the page
    assert f"{sm.ROUNDINGS} × {format_number(sm.FLOAT32_UNIT)} × {bound}" in text


def forget_forwards() -> None:
    """Empty the process-wide store of SmolLM2's forwards and the kept independent checks (a bug changes their
    numbers; a row by hand is recomputed on every run)."""
    from ui.models import smol

    store = smol.forward_ids.store
    with store.lock:
        store.items.clear()
        store.sizes.clear()
        store.bytes = 0
    smol._independent_check.clear()


# bug -> the verdicts of (by hand: weights, context; the model's forward: weights, context) on layer 6, head 5, the
# last query. A context vector's allowance is 8e-6 of the largest |v| it averages: these bugs move it less (None: not
# read), a weight's allowance is a few float32 roundings of the row's scores, which each of them exceeds.
EQUAL = "equal up to float32 rounding"
BUG_VERDICTS = {
    verdict_tests.SOFTMAX: ("different", None, EQUAL, EQUAL),
    verdict_tests.SCALE: ("different", None, EQUAL, EQUAL),
    verdict_tests.ROPE: ("different", None, "different", None),
}


@pytest.mark.parametrize("bug", list(BUG_VERDICTS))
def test_a_bug_in_the_labs_softmax_scaling_or_rope_turns_the_verdict_different(bug):
    """The lab's softmax x (1 + 1e-5), its scaling off by 1e-4 or RoPE's angles x (1 + 1e-3), swapped in for the
    whole process: the row by hand reads "different". The forward runs torch.softmax and its own scaling but the
    lab's RoPE, so its row stays equal under the first two bugs and reads "different" under the third."""
    forget_forwards()
    try:
        with verdict_tests.injected(bug):
            at = open_head_by_hand()
            assert_clean(at)
            verdicts = tuple(verdict_table(at)["verdict"])
            assert all(want in (None, found) for want, found in zip(BUG_VERDICTS[bug], verdicts, strict=True)), verdicts
            assert any("Not everything matches the independent code" in e.value for e in at.error)
            assert not at.success
    finally:
        forget_forwards()


def test_a_repeated_prompt_shows_an_induction_head_with_its_figure():
    at = open_step(STEPS.index("Patterns") + 1, REPEATED)
    assert_clean(at)
    ranked = next(frame for frame in frames(at) if "induction: head" in frame.columns)
    induction = [float(value) for value in ranked["induction: figure"]]  # written with 4 decimals
    assert induction[0] > 0.3 and induction == sorted(induction, reverse=True)
    assert ranked["induction: head"].iloc[0].startswith("layer ")
    assert len(ranked["induction: figure"].iloc[0].split(".")[1]) == 4


def test_a_typed_prompt_is_read_as_its_own_pieces():
    at = open_step(1, "Paris is the capital of")
    assert_clean(at)
    assert frames(at)[0]["piece"].tolist() == ["Paris", "·is", "·the", "·capital", "·of"]
    at = open_step(STEPS.index("Pick a head") + 1, "Paris is the capital of")
    assert_clean(at)
    assert at.selectbox(key="smol_query").value == 4  # the last piece, the one that predicts the next


@pytest.mark.parametrize(
    ("prompt", "message"),
    [("", "The prompt is empty"), ("word " * 200, f"this lesson runs at most {sm.MAX_TOKENS}")],
    ids=["empty", "huge"],
)
def test_a_refused_prompt_gets_a_clear_message(prompt, message):
    at = open_step(2, prompt)
    assert_clean(at)
    assert any(message in w.value for w in at.warning)
    assert not at.get("vega_lite_chart")


def test_without_the_model_package_the_page_explains_itself_and_other_pages_work(monkeypatch, tmp_path):
    monkeypatch.setenv(smol.FILE_VARIABLE, str(tmp_path / sm.GGUF_FILE))  # a file that is not there
    at = open_page(PAGE, {"step": "2"}, timeout=300)
    assert_clean(at)
    said = " ".join(i.value for i in at.info)
    assert "is missing" in said and "Community Cloud" in said
    assert not at.text_area  # no prompt box, no steps: nothing to run
    other = open_page("app_pages/softmax.py", {"step": "2"})
    assert_clean(other)
    assert frames(other) or other.table


def test_the_head_is_outlined_on_its_query_and_a_clicked_cell_shows_its_softmax():
    at = open_step(STEPS.index("Pick a head") + 1)
    spec = clickable_specs(at)[0]
    assert outlined_rows(spec) == ["·cat (2)"]  # the query: the last piece
    keep_cell(at, "smol_head_chart", "·sat", "·cat (1)")
    assert_clean(at)
    text = markdown(at)
    hand = smol.head_by_hand(sm.PUBLISHED_PROMPT, 0, 0, 2)  # layer 1, head 1, the query "·sat"
    assert "Weight of key “·cat (1)”" in text and format_number(float(hand.weights[1])) in text


def test_the_try_this_button_sets_a_repeated_prompt():
    at = open_step(len(STEPS))
    at.button(key="try:smollm2:2").click().run()  # the third experiment: "A repeated prompt"
    assert_clean(at)
    assert at.text_area(key="smol_prompt").value == "one two three four five one two three four five"
    ranked = next(frame for frame in frames(at) if "induction: head" in frame.columns)
    assert float(ranked["induction: figure"].iloc[0]) > 0.3
