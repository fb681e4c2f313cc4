"""The shared sidebar (ui/widgets/inputs.py): URL binding, fallbacks, reset, hand edits, and page switching."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import attention_core as ac
from attention_core.embeddings import parse_seed
from tests.apptest_helpers import ROOT, assert_clean, lab_input, open_page, sentence_params
from ui.widgets import inputs

EDITOR = "embedding_editor"


def edit_state(edited_rows: dict) -> dict:
    """The edit state st.data_editor keeps in session state."""
    return {"edited_rows": edited_rows, "added_rows": [], "deleted_rows": []}


def test_default_lesson_is_the_journey_preset():
    at = open_page()
    assert_clean(at)
    current = lab_input(at)
    assert current.preset is ac.DEFAULT_PRESET
    assert current.query_label == "starts"
    assert torch.equal(current.X, ac.DEFAULT_PRESET.matrix())


def test_url_parameters_open_the_same_lesson():
    at = open_page(params=sentence_params("dog bites man", seed=7, d_model=5, query="man"))
    assert_clean(at)
    current = lab_input(at)
    assert current.tokens == ("dog", "bites", "man")
    assert current.query_label == "man"
    assert torch.equal(current.X, ac.random_embeddings(["dog", "bites", "man"], 5, 7))


def test_a_preset_and_query_from_the_url():
    at = open_page(params={"example": "I can't find the light switch", "query": "switch"})
    current = lab_input(at)
    assert current.preset is ac.PRESETS_BY_KEY["light"]
    assert current.query_label == "switch"


@pytest.mark.parametrize(
    "params",
    [
        {"example": "no such preset"},
        {"seed": "-5", "d_model": "999", "query": "zzz"},
        {"example": "Your own sentence", "embedding": "garbage", "d_model": "abc", "seed": "1e999"},
        {"query": "<script>alert(1)</script>"},
    ],
)
def test_invalid_url_values_fall_back_to_defaults(params):
    at = open_page(params=params)
    assert_clean(at)
    current = lab_input(at)
    assert current.T >= 1 and torch.isfinite(current.X).all()
    assert 2 <= current.d_model <= 16 and 0 <= current.seed < 2**63


def test_a_seed_that_is_not_a_whole_number_is_explained():
    at = open_page(params=sentence_params("a b c") | {"seed": "1e999"})
    assert_clean(at)
    assert any("seed must be a whole number" in e.value for e in at.error)


def test_empty_sentence_keeps_the_last_good_lesson_with_a_message():
    at = open_page(params=sentence_params("a fine sentence"))
    good = lab_input(at)
    at.sidebar.text_input(key="sentence").set_value("   ").run()
    assert_clean(at)
    assert [e.value for e in at.error] and "empty" in at.error[0].value
    assert lab_input(at) is good


def test_typed_sentence_switches_to_random_embeddings():
    at = open_page()
    at.sidebar.selectbox(key="example").set_value("own").run()
    assert_clean(at)
    assert at.sidebar.radio(key="embedding").value == "random"
    assert lab_input(at).tokens == tuple(["the", "cat", "sat", "on", "the", "mat"])
    assert lab_input(at).labels[0] == "the (1)" and lab_input(at).labels[4] == "the (2)"


def test_one_hot_embeddings_from_the_sidebar():
    at = open_page()
    at.sidebar.radio(key="embedding").set_value("one-hot").run()
    assert torch.equal(lab_input(at).X, torch.eye(6))


def test_reset_returns_to_the_default_lesson():
    at = open_page(params=sentence_params("one two three", query="two"))
    at.sidebar.button[0].click().run()
    assert_clean(at)
    current = lab_input(at)
    assert current.preset is ac.DEFAULT_PRESET and current.query_label == "starts"


def test_a_valid_cell_edit_changes_the_embeddings():
    at = open_page(params={"embedding": "Edit by hand"})
    at.session_state[EDITOR] = edit_state({0: {"d1": "2.5"}})
    at.run()
    assert_clean(at)
    X = lab_input(at).X
    assert X[0, 0].item() == pytest.approx(2.5)
    assert X.dtype == torch.float64  # issue 22 item 5a: hand edits are computed in float64, as typed
    assert torch.equal(X[1:], ac.DEFAULT_PRESET.matrix(torch.float64)[1:])


@pytest.mark.parametrize(
    ("cell", "words"),
    [("abc", "not a number"), ("nan", "NaN"), ("inf", "infinite"), ("", "empty"), ("1e9", "keep values within")],
)
def test_a_bad_cell_shows_why_and_keeps_the_last_good_matrix(cell, words):
    at = open_page(params={"embedding": "Edit by hand"})
    good = lab_input(at)
    at.session_state[EDITOR] = edit_state({1: {"d2": cell}})
    at.run()
    assert_clean(at)
    assert any(words in e.value for e in at.error), [e.value for e in at.error]
    assert lab_input(at) is good


def test_the_sidebar_survives_switching_pages_and_rerunning():
    """Pins the app_pages/ layout: with a folder named pages/, AppTest reruns would skip the entry point."""
    at = open_page(params={"example": "Self Attention is good"})
    at.switch_page("app_pages/scores.py").run()
    at.run()
    assert_clean(at)
    assert at.sidebar.selectbox(key="example").value == "one-hot"
    assert at.sidebar.selectbox(key="query") is not None
    assert lab_input(at).preset is ac.PRESETS_BY_KEY["one-hot"]
    assert not (Path(ROOT) / "pages").exists()


def test_edited_values_beyond_100_are_refused_with_the_reason():
    at = open_page(params={"embedding": "Edit by hand"})
    good = lab_input(at)
    at.session_state[EDITOR] = edit_state({1: {"d2": "150"}})
    at.run()
    assert_clean(at)
    message = " ".join(e.value for e in at.error)
    assert "keep values within ±100" in message and "float64" in message  # issue 22 item 5a
    assert lab_input(at) is good
    at.session_state[EDITOR] = edit_state({1: {"d2": "-100"}})
    at.run()
    assert lab_input(at).X[1, 1].item() == -100.0


def test_the_editor_starts_from_the_embeddings_shown_with_every_digit():
    at = open_page()
    at.sidebar.radio(key="embedding").set_value("one-hot").run()
    at.sidebar.radio(key="embedding").set_value("edited").run()
    assert_clean(at)
    assert torch.equal(lab_input(at).X, torch.eye(6))  # one-hot stays one-hot
    at = open_page(params={"embedding": "Edit by hand"})
    editor = next(df for df in at.dataframe if df.editing_mode != "read_only")
    cells = editor.value.to_numpy().ravel().tolist()
    expected = [inputs.float32_text(v) for v in ac.DEFAULT_PRESET.matrix().reshape(-1).tolist()]
    assert cells == expected and all(len(c) <= 12 for c in cells)


def test_random_embeddings_stay_the_same_numbers_when_edited():
    at = open_page(params=sentence_params("a b c", seed=5, d_model=3))
    random_X = lab_input(at).X
    at.sidebar.radio(key="embedding").set_value("edited").run()
    assert torch.equal(lab_input(at).X.float(), random_X)  # the float64 numbers shown read back as the same float32


def test_hand_edits_travel_in_the_link():
    at = open_page(params={"embedding": "Edit by hand"})
    at.session_state[EDITOR] = edit_state({0: {"d1": "2.5"}, 2: {"d3": "0.1"}})
    at.run()
    edited = lab_input(at).X
    link = at.query_params["edits"]
    assert isinstance(link, str) and "2.5" in link and "0.1" in link
    assert any("link holds these edited embeddings" in c.value for c in at.sidebar.caption)
    again = open_page(params={"embedding": "Edit by hand", "edits": link})
    assert_clean(again)
    assert torch.equal(lab_input(again).X, edited)


def test_a_bad_edits_link_is_explained_and_ignored():
    at = open_page(params={"embedding": "Edit by hand", "edits": "1_2~zz"})
    assert_clean(at)
    assert torch.equal(lab_input(at).X, ac.DEFAULT_PRESET.matrix(torch.float64))
    assert any("hand-edited embeddings cannot be used" in w.value for w in at.warning)


def test_edits_beyond_the_link_size_say_the_link_does_not_hold_them():
    at = open_page(params=sentence_params(" ".join(f"w{i}" for i in range(20)), d_model=16, embedding="edited"))
    at.session_state[EDITOR] = edit_state({0: {"d1": "2.5"}})
    at.run()
    assert_clean(at)
    assert lab_input(at).X[0, 0].item() == 2.5
    assert "edits" not in at.query_params
    assert any("does not hold these edits" in w.value for w in at.sidebar.warning)


def test_edits_encode_in_shortest_form_and_decode_as_float64():
    X = torch.tensor([[0.1, -2.5, 1e-7], [100.0, 0.0, 3.0]])
    text = inputs.encode_edits(X)
    assert text == "0.1_-2.5_1e-07~100_0_3"
    assert torch.equal(
        inputs.decode_edits(text, 2, 3), torch.tensor([[0.1, -2.5, 1e-7], [100, 0, 3]], dtype=torch.float64)
    )
    typed = torch.tensor([[99.999, 0.123456789, -1e-9]], dtype=torch.float64)  # what a learner types, kept
    assert inputs.encode_edits(typed) == "99.999_0.123456789_-1e-09"
    assert torch.equal(inputs.decode_edits(inputs.encode_edits(typed), 1, 3), typed)
    for bad in ("0.1_2~3", "a_b_c~1_2_3", "1_2_3", "1_2_1000~1_1_1"):
        with pytest.raises(ValueError):
            inputs.decode_edits(bad, 2, 3)


def test_no_character_counter_is_drawn_over_the_sentence_or_seed_box():
    """A max_chars counter covers the end of the typed text; lengths are checked by the core instead."""
    at = open_page(params=sentence_params("the cat sat"))
    boxes = {box.label: box for box in at.sidebar.text_input}
    assert not boxes["Your sentence"].max_chars and not boxes["Seed"].max_chars  # 0: no limit, no counter


def test_overlong_sentence_and_seed_are_refused_with_a_sentence():
    with pytest.raises(ValueError, match="characters"):
        ac.tokenize("a" * 60_001)
    with pytest.raises(ValueError, match="whole number"):
        parse_seed("9" * 5_000)  # int() itself would fail with an unreadable message past 4,300 digits


# --- issue 25 item 5: every odd link value explains itself in one sentence --------------------------


@pytest.mark.parametrize("seed", ["²", "٣", "3²", "１２"])
def test_a_seed_in_other_digits_is_refused_with_one_sentence(seed):
    """'²' made int() fail with Python's own words; '٣' silently became 3. Both are refused with a sentence."""
    at = open_page("app_pages/scores.py", sentence_params("a b c") | {"seed": seed})
    assert_clean(at)
    errors = " ".join(e.value for e in at.error)
    assert "seed must be a whole number written with the digits 0 to 9" in errors
    assert "invalid literal" not in errors and "base 10" not in errors
    assert lab_input(at).seed == 0  # the last good state (the default), not 3


def test_a_repeated_sentence_in_a_link_says_which_one_is_used():
    params = sentence_params("first words") | {"sentence": ["first words", "second words"]}
    at = open_page("app_pages/scores.py", params)
    assert_clean(at)
    assert lab_input(at).tokens == ("second", "words")
    notes = [w.value for w in at.warning]
    assert any("sentence= 2 times" in n and "uses the last one" in n and "second words" in n for n in notes), notes


def test_edits_in_a_link_without_edit_by_hand_are_said_to_be_left_out():
    at = open_page("app_pages/scores.py", {"embedding": "One-hot", "edits": "1_2~3_4"})
    assert_clean(at)
    assert lab_input(at).embedding_mode == "one-hot"
    notes = " ".join(w.value for w in at.warning)
    assert "edits= were left out" in notes.replace("(edits=)", "edits=") and "Edit by hand" in notes
    assert "edits" not in at.query_params


@pytest.mark.parametrize("value", ["1e308", "101", "-150", "10000"])
def test_hand_edit_limits_are_one_number_in_one_sentence(value):
    """Once '1e308' said ±10000 and '101' said ±100: now every refusal and the editor's caption say ±100."""
    at = open_page(params={"embedding": "Edit by hand"})
    good = lab_input(at)
    at.session_state[EDITOR] = edit_state({0: {"d1": value}})
    at.run()
    assert_clean(at)
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "keep values within ±100:" in errors[0] and "±10000" not in errors[0]
    assert lab_input(at) is good
    caption = " ".join(c.value for c in at.sidebar.caption)
    assert "keep values within ±100:" in caption.lower() and "±10000" not in caption
    T, d_model = ac.DEFAULT_PRESET.matrix().shape
    link = "~".join("_".join(value if (i, j) == (0, 0) else "0" for j in range(d_model)) for i in range(T))
    linked = open_page(params={"embedding": "Edit by hand", "edits": link})
    assert any("keep values within ±100:" in w.value for w in linked.warning)
