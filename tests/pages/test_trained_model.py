"""Lesson 10 (AppTest): the trained model's heads on a preset and on a typed sentence, and trained embeddings."""

from __future__ import annotations

import sys

import pytest

import tests.test_verdicts as verdict_tests  # the module: its tests are not collected again here
from attention_core import trained_model as tm
from attention_core.presets import JOURNEY
from tests.apptest_helpers import assert_clean, charts, frames, lab_input, open_page, sentence_params
from tests.pages.answered import answered, show_every_answer  # noqa: F401  (the fixture)
from ui.models import trained

PAGE = "app_pages/trained_model.py"
READ_ANSWERED = pytest.mark.usefixtures("answered")  # a test that reads the steps as once their questions are answered


@pytest.fixture(scope="module")
def preset_page():
    """The page on the default preset (the first run loads the model into this process's cache), its questions
    answered round after round (the tests using it read the page with ``answered``)."""
    return show_every_answer(open_page(PAGE, {"example": JOURNEY.name}, timeout=300), lambda at: at.run())


def _metrics(at) -> list[str]:
    return [metric.value for metric in at.metric]


@READ_ANSWERED
def test_preset_shows_every_section_and_agreement(preset_page):
    at = preset_page
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    assert at.title[0].value == "10. Inside a trained model"
    headers = [h.value for h in at.subheader]
    assert headers[0] == "The sentence as the model reads it" and any(h.startswith("Layer 1, head 1") for h in headers)
    assert "[CLS]  your  journey  starts  with  one  step  [SEP]" in [c.value for c in at.code]
    assert all(float(value) < 1e-5 for metric in _metrics(at) for value in metric.split(", "))
    assert any("all_heads" in str(spec.get("description", "")) or "72 heads" in str(spec.get("description", ""))
               for spec in _specs(at))  # fmt: skip
    assert at.get("download_button") and at.expander


def _specs(at) -> list[dict]:
    import json

    return [json.loads(chart.proto.spec) for chart in charts(at)]


@READ_ANSWERED
def test_picking_a_layer_and_head_opens_it(preset_page):
    at = preset_page
    at.selectbox(key="tm_layer").set_value(3)
    at.selectbox(key="tm_head").set_value(7).run()
    assert_clean(at)
    assert any(h.value.startswith("Layer 3, head 7") for h in at.subheader)
    assert any(h.value == "The same head by hand (layer 3, head 7)" for h in at.subheader)
    assert all(float(value) < 1e-5 for metric in _metrics(at) for value in metric.split(", "))


def test_own_sentence_with_split_words():
    at = open_page(PAGE, sentence_params("The river bank flooded unbelievably!"), timeout=300)
    assert_clean(at)
    assert not at.error
    assert any("unbelievably → un + ##bel + ##ie + ##va + ##bly" in i.value for i in at.info)
    assert charts(at)


def test_a_too_long_sentence_is_refused_with_a_message():
    at = open_page(PAGE, sentence_params(" ".join(["word"] * 200)), timeout=300)
    assert_clean(at)
    assert any("word pieces" in w.value and "at most 128" in w.value for w in at.warning)
    assert not at.subheader  # nothing half-drawn


def test_emoji_and_mixed_scripts_are_tokenised():
    at = open_page(PAGE, sentence_params("🙂 Hello Привет 你好"), timeout=300)
    assert_clean(at)
    assert not at.error and any("[UNK]" in c.value for c in at.code)


def test_trained_embeddings_on_another_page():
    params = sentence_params("the river bank and the money bank", embedding="trained", d_model=6)
    at = open_page("app_pages/scores.py", params, timeout=300)
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    lab = lab_input(at)
    assert lab.embedding_mode == "trained" and tuple(lab.X.shape) == (7, 6)
    assert at.sidebar.slider(key="d_model").value == 6
    assert any("principal component" in c.value for c in at.sidebar.caption)
    again = open_page("app_pages/scores.py", params, timeout=300)
    assert lab_input(again).X.equal(lab.X)  # deterministic, and in the URL


@pytest.fixture
def broken_model(tmp_path, monkeypatch):
    """ATTENTION_LAB_MODEL_DIR points at a copy of the model whose weights file is corrupt."""
    folder = tmp_path / "model"
    folder.mkdir()
    for name in tm.REQUIRED_FILES:
        (folder / name).symlink_to(tm.model_folder() / name)
    (folder / tm.WEIGHTS_FILE).unlink()
    (folder / tm.WEIGHTS_FILE).write_bytes(b"\0" * 1024)
    monkeypatch.setenv(trained.FOLDER_VARIABLE, str(folder))
    return folder


def test_a_corrupt_model_is_an_error_here_and_nowhere_else(broken_model):
    at = open_page(PAGE, {"example": JOURNEY.name})
    assert_clean(at)
    assert any("cannot be used" in e.value and "sha256" in e.value for e in at.error)
    other = open_page("app_pages/scores.py", {"example": JOURNEY.name})
    assert_clean(other)
    assert not other.error
    refused = open_page("app_pages/scores.py", sentence_params("the cat", embedding="trained"))
    assert_clean(refused)
    assert any("Trained embeddings are unavailable" in w.value for w in refused.sidebar.warning)
    assert lab_input(refused).tokens == ("the", "cat")  # the sentence stays, on random embeddings (issue 25)


def _clear_model_caches() -> None:
    for cached in (trained._load, trained._pca, trained.embeddings):
        cached.clear()


LOADER_LIBRARIES = ("safetensors", "tokenizers")  # what the lab's encoder reads the model files with


@pytest.fixture(params=LOADER_LIBRARIES)
def missing_library(request, monkeypatch):
    """One of the model's loader libraries fails to import in this process, as on a server without it; the model
    caches start empty. The value is the library's name."""
    monkeypatch.setitem(sys.modules, request.param, None)
    _clear_model_caches()
    yield request.param
    _clear_model_caches()  # the next test loads the real model again (the failure is cached otherwise)


def _page_text(at) -> str:
    kinds = ("error", "warning", "markdown", "caption", "exception", "code")
    return " ".join(str(element.value) for kind in kinds for element in at.get(kind))


def test_without_a_loader_library_lesson_10_explains_in_a_sentence(missing_library):
    at = open_page(PAGE, {"example": JOURNEY.name}, timeout=300)
    assert_clean(at)
    reason = f"{missing_library} is not installed"
    assert any(reason in e.value for e in at.error), [e.value for e in at.error]
    text = _page_text(at)
    assert "ModuleNotFoundError" not in text and "Traceback" not in text and "site-packages" not in text


def test_without_a_loader_library_a_trained_embedding_link_falls_back_with_a_note(missing_library):
    at = open_page("app_pages/scores.py", sentence_params("the cat sat", embedding="trained"), timeout=300)
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    notes = [w.value for w in at.sidebar.warning]
    assert any("Trained embeddings are unavailable" in n and f"{missing_library} is not installed" in n for n in notes)
    lab = lab_input(at)
    assert lab.tokens == ("the", "cat", "sat") and lab.embedding_mode == "random"
    assert "Traceback" not in _page_text(at) and "site-packages" not in _page_text(at)


def test_grid_highlight_layer_is_valid_vega_lite():
    from ui import charts

    spec = charts.grid_highlight(2, 3).to_dict()  # validated against the schema (the page skips that)
    assert spec["mark"]["type"] == "rect"


def test_exercises_footer_and_clickable_heads():
    """The whole lesson asks which key the query favours first; once that is settled, the entropy and the label
    (answered here: a malformed, a wrong and a right entropy), then the head by hand with its clickable cells."""
    from tests.learn_helpers import clickable_keys, has_exercises_and_footer, page_exercises, right_wrong_malformed
    from ui.format import format_number

    at = open_page(PAGE, {"example": JOURNEY.name}, timeout=300)
    has_exercises_and_footer(at)
    items = page_exercises(at, PAGE)
    assert not clickable_keys(at), "no weights before the first question is settled"
    at.button(key=f"exs:trained_model:{items['trained-top'].id}").click().run()
    right_wrong_malformed(at, PAGE, items["trained-entropy"])
    assert "tm_by_hand_square" not in {key.rsplit("-", 1)[-1] for key in clickable_keys(at)}, "the label is asked"
    at.button(key=f"exs:trained_model:{items['trained-label'].id}").click().run()
    assert {"tm_head_weights", "tm_by_hand_square"} <= {key.rsplit("-", 1)[-1] for key in clickable_keys(at)}
    sentence = " ".join(lab_input(at).tokens)
    at.radio(key="tm_step").set_value("K").run()
    at.session_state["_cell:tm_by_hand_wide"] = ("journey", "k3")
    at.session_state["_cell:tm_head_weights"] = ("journey", "[CLS]")
    at.run()
    assert_clean(at)
    params, steps = trained.head_steps(sentence, 0, 0)
    text = "\n".join(m.value for m in at.markdown)
    shown = format_number(float(steps.K[2, 2]))  # the result, or beside the written operands' one
    assert f"**{shown}**" in text or f"(unrounded: {shown})" in text, "K = X W_k + b_k, the bias included"
    assert f"(1.0000 × {format_number(float(params.b_k[2]))})" in text
    assert f"**{format_number(float(steps.weights[2, 0]))}**" in text


def grid_chart(at):
    """The 72-head grid's chart element (the one with the cells and frame datasets)."""
    return next(c for c in charts(at) if {d.name for d in c.proto.datasets} == {trained.GRID_CELLS, "highlight"})


@READ_ANSWERED
def test_another_head_only_moves_the_frames_data(preset_page):
    """The grid's spec is the same for every head (the browser swaps one row of data instead of
    re-drawing 72 heads), its cell layers read the cells dataset, and the frame sits on the chosen head."""
    import json

    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    from ui import charts as chart_builders

    at = preset_page
    at.selectbox(key="tm_layer").set_value(1)
    at.selectbox(key="tm_head").set_value(1).run()
    first = grid_chart(at).proto
    at.selectbox(key="tm_layer").set_value(4)
    at.selectbox(key="tm_head").set_value(7).run()
    assert_clean(at)
    second = grid_chart(at).proto
    assert second.spec == first.spec
    assert not second.data.data  # no unnamed data: every layer names its dataset
    spec = json.loads(second.spec)
    assert spec["data"] == {"name": trained.GRID_CELLS}
    named = [layer["data"]["name"] for layer in spec["layer"] if "name" in layer.get("data", {})]
    assert named == ["highlight"]
    datasets = {d.name: convert_arrow_bytes_to_pandas_df(d.data.data) for d in second.datasets}
    pieces = trained.forward(" ".join(lab_input(at).tokens)).pieces
    assert len(datasets[trained.GRID_CELLS]) == 72 * len(pieces) ** 2
    expected = chart_builders.grid_highlight_frame(4, 7)
    assert datasets["highlight"].to_dict("records") == expected.to_dict("records")


# --- issue 22: the sidebar's query, verdicts that can fail, measured claims, the heads linking two pieces ---

SPLIT_SENTENCE = "The river bank flooded, unbelievably!"


def _pieces(at) -> list[str]:
    from attention_core import token_labels

    return token_labels(trained.forward(" ".join(lab_input(at).tokens)).pieces)


def test_query_piece_follows_the_sidebar_and_says_which_piece():
    at = open_page(PAGE, sentence_params(SPLIT_SENTENCE, query="bank"), timeout=300)
    assert_clean(at)
    pieces = _pieces(at)
    assert pieces[at.selectbox(key="tm_query").value] == "bank"
    assert any("follows the sidebar's query “bank”" in c.value for c in at.caption)
    at.sidebar.selectbox(key="query").set_value("flooded,").run()
    assert pieces[at.selectbox(key="tm_query").value] == "flooded"  # "flooded," is read as two pieces
    note = next(c.value for c in at.caption if "sidebar's query “flooded,”" in c.value)
    assert "“flooded” + “,”" in note and "first piece, “flooded”" in note
    at.sidebar.selectbox(key="query").set_value("unbelievably!").run()
    assert pieces[at.selectbox(key="tm_query").value] == "un"
    assert any("“un” + “##bel”" in c.value for c in at.caption)
    at.selectbox(key="tm_query").set_value(pieces.index("river")).run()  # the learner's own pick stays
    at.selectbox(key="tm_layer").set_value(2).run()
    assert pieces[at.selectbox(key="tm_query").value] == "river"


def verdict_table(at):
    """The by-hand step's table of comparisons with the independent reference, indexed by what was compared."""
    return next(t.value for t in at.table if "verdict" in t.value.columns)


@READ_ANSWERED
def test_the_verdict_says_what_it_compared_and_a_swapped_head_reads_different(monkeypatch):
    """The table names each comparison with the independent code, its largest difference, the allowed one and the
    verdict; a swapped head (layer 3, head 6 recomputed by hand with head 7's parameters) reads "different" by
    hand, while the lab's forward, which that swap does not touch, still reads equal."""
    sentence = "A swapped head must be caught by the check"
    at = open_page(PAGE, sentence_params(sentence), timeout=300)
    table = verdict_table(at)
    assert list(table.index) == [
        f"by hand: all {tm.ALL_HEADS} heads' weights",
        f"by hand: all {tm.ALL_HEADS} heads' contexts",
        f"the lab's forward: all {tm.ALL_HEADS} heads' weights",
        f"the lab's forward: all {tm.ALL_HEADS} heads' contexts",
    ]
    assert list(table["verdict"]) == ["equal up to float32 rounding"] * 4
    pairs = zip(table["largest |difference|"], table["allowed"], strict=True)
    assert all(float(gap) < float(allowed) for gap, allowed in pairs)
    assert "scaled_dot_product_attention" in text_of(at) and "imports nothing of the lab" in text_of(at)
    assert any("match the independent code in all 72 heads" in s.value for s in at.success) and not at.error
    original = tm.head_params

    def swapped(model, layer: int, head: int):
        return original(model, layer, head + 1 if (layer, head) == (2, 5) else head)

    monkeypatch.setattr(tm, "head_params", swapped)
    trained.independent_check.clear()
    at.run()
    assert_clean(at)
    table = verdict_table(at)
    assert list(table["verdict"]) == ["different", "different", *["equal up to float32 rounding"] * 2]
    assert float(table["largest |difference|"].iloc[0]) > float(table["allowed"].iloc[0])
    assert any("Not everything matches the independent code" in e.value for e in at.error) and not at.success
    monkeypatch.undo()
    trained.independent_check.clear()  # no other test sees the injected bug


def text_of(at) -> str:
    return " ".join(str(element.value) for kind in ("markdown", "caption") for element in at.get(kind))


@READ_ANSWERED
@pytest.mark.parametrize("bug", [verdict_tests.SOFTMAX, verdict_tests.SCALE])
def test_a_bug_in_the_labs_softmax_or_scaling_turns_every_verdict_different(bug):
    """The lab's softmax x (1 + 1e-5) or its scaling off by 1e-4, swapped in for the whole process: the head by hand
    and the lab's forward (both run the lab's functions) read "different" against the independent code."""
    with verdict_tests.injected(bug):
        at = open_page(PAGE, {"example": JOURNEY.name, "step": "7"}, timeout=300)
        assert_clean(at)
        assert list(verdict_table(at)["verdict"]) == ["different"] * 4
        assert at.error and not at.success


@READ_ANSWERED
def test_metrics_are_one_readable_number_each(preset_page):
    at = preset_page
    assert [m.label for m in at.metric] == ["This head's weights", "This head's context"]
    for metric in at.metric:
        assert "," not in metric.value and float(metric.value) < tm.INDEPENDENT_TOLERANCE, metric.value
        assert len(metric.value) <= len("1.0000e-07")


@READ_ANSWERED
def test_head_claims_carry_the_figures_measured_on_the_sentence():
    import re

    at = open_page(PAGE, sentence_params("The chef who ran to the store was out of food."), timeout=300)
    assert_clean(at)
    attentions = trained.forward(" ".join(lab_input(at).tokens)).attentions
    claims = [m.value for m in at.markdown if "rows of this head put most weight on" in m.value]
    assert len(claims) == 3
    for claim, pattern in zip(claims, ("previous", "next", "CLS"), strict=True):
        layer, head, hit, rows = map(int, re.search(r"Layer (\d+), head (\d+).*?(\d+) of (\d+) rows", claim).groups())
        measured = tm.pattern_rows(attentions[layer - 1, head - 1], pattern)
        assert (hit, rows) == (measured.hit, measured.rows)
        assert f"({measured.fraction:.0%})" in claim
        best = max(tm.pattern_rows(w, pattern).fraction for layer_weights in attentions for w in layer_weights)
        assert measured.fraction == best  # "no other head does so on more rows" holds

    at.selectbox(key="tm_layer").set_value(3)
    at.selectbox(key="tm_head").set_value(1).run()
    summary = tm.head_summary(attentions[2, 0])
    heading = next(h.value for h in at.subheader if h.value.startswith("Layer 3, head 1"))
    assert f"{trained.SHORT_NAMES.get(summary.pattern, summary.pattern)} {summary.share:.2f}" in heading
    figures = next(m.value for m in at.markdown if m.value.startswith("**Measured on your sentence.**"))
    assert f"{summary.rows_on.hit} of {summary.rows_on.rows} rows" in figures
    query, key, weight = summary.link
    pieces = _pieces(at)
    assert f"“{pieces[query]}” → “{pieces[key]}” {weight:.4f}" in figures
    assert ("**weak**" in figures) == (summary.share < tm.LABEL_SHARE)

    weak = next((layer, head) for layer in range(6) for head in range(12) if tm.head_label(attentions[layer, head]) in
                ("broad", "mixed"))  # fmt: skip
    at.selectbox(key="tm_layer").set_value(weak[0] + 1)
    at.selectbox(key="tm_head").set_value(weak[1] + 1).run()
    summary = tm.head_summary(attentions[weak])
    figures = next(m.value for m in at.markdown if m.value.startswith("**Measured on your sentence.**"))
    assert "**weak**" in figures and f"label is **{summary.label}**" in figures
    assert f"{summary.entropy_fraction:.4f} of ln T" in figures


@READ_ANSWERED
def test_grid_labels_are_measured_and_say_when_weak():
    import json

    at = open_page(PAGE, sentence_params("The chef who ran to the store was out of food."), timeout=300)
    attentions = trained.forward(" ".join(lab_input(at).tokens)).attentions
    spec = json.loads(grid_chart(at).proto.spec)
    shown = {
        (row["layer"], row["head"]): row["label"]
        for layer in spec["layer"]
        for row in layer.get("data", {}).get("values", [])
        if "label" in row
    }
    assert len(shown) == tm.ALL_HEADS
    for (layer, head), text in shown.items():
        summary = tm.head_summary(attentions[layer - 1, head - 1])
        name = trained.SHORT_NAMES.get(summary.pattern, summary.pattern)
        assert text.endswith(f"{name} {summary.share:.2f}")
        assert text.startswith(("weak ", "broad ")) == (summary.share < tm.LABEL_SHARE)


def test_heads_linking_two_pieces_ranks_every_head():
    at = open_page(PAGE, sentence_params("The chef who ran to the store was out of food."), timeout=300)
    pieces = _pieces(at)
    query, key = pieces.index("who"), pieces.index("chef")
    at.selectbox(key="tm_link_query").set_value(query)
    at.selectbox(key="tm_link_key").set_value(key).run()
    assert_clean(at)
    forward = trained.forward(" ".join(lab_input(at).tokens))
    ranked = next(f for f in frames(at) if len(f) == tm.ALL_HEADS and str(f.index[0]).startswith("layer "))
    weights = forward.attentions[:, :, query, key]  # (L, h)
    layer, head = divmod(int(weights.argmax()), tm.NUM_HEADS)
    assert ranked.index[0] == f"layer {layer + 1}, head {head + 1}"
    assert abs(float(ranked.iloc[0, 0]) - float(weights.max())) < 1e-7
    assert list(ranked.iloc[:, 0]) == sorted(ranked.iloc[:, 0], reverse=True)
    assert any(f"layer {layer + 1}, head {head + 1}" in m.value and "“who” puts" in m.value for m in at.markdown)


# --- issue 24: lesson 10 in steps ---


@READ_ANSWERED
def test_in_steps_the_first_step_runs_no_forward_pass_and_a_picked_head_follows_the_learner(monkeypatch):
    """The model card's step needs no forward pass, so it runs none; the head picked in the explorer's step (its
    questions follow the pick) is the one the by-hand step recomputes, and a head to open leads back to it."""
    from ui.widgets.exercises import place_name

    sentence = "The chef who ran to the store was out of food."
    runs = []
    real_forward = trained.forward
    monkeypatch.setattr(trained, "forward", lambda text: runs.append(text) or real_forward(text))
    first = open_page(PAGE, {**sentence_params(sentence), "step": "1"}, timeout=300)
    assert_clean(first)
    assert first.expander and not runs, "step 1 shows the model card without running the sentence"

    at = open_page(PAGE, {**sentence_params(sentence), "step": "3"}, timeout=300)
    assert runs, "the explorer's step runs the forward pass"
    assert [place_name(item) for item in at.session_state["_exercises_shown:trained_model"]] == ["trained-label"]
    assert not any(h.value.startswith("The same head by hand") for h in at.subheader)
    at.selectbox(key="tm_layer").set_value(2)
    at.selectbox(key="tm_head").set_value(5).run()
    assert any(h.value.startswith("Layer 2, head 5") for h in at.subheader)
    assert "layer 2, head 5" in at.session_state["_exercises_shown:trained_model"][0].prompt
    at.button(key="stepnext:trained_model").click().run()
    assert_clean(at)
    assert at.query_params["step"] == "4", "the picked head's weights: a step of their own"
    assert "_exercises_shown:trained_model" not in at.session_state
    at.button(key="stepnext:trained_model").click().run()
    assert at.query_params["step"] == "5" and any(m.value.startswith("Row of the query") for m in at.markdown)
    cards = [m.value for m in at.markdown if m.value.startswith("**")]
    every = at.session_state["_exercises:trained_model"]
    asked = [item for item in every if any(card.endswith(item.prompt) for card in cards)]
    assert [place_name(item) for item in asked] == ["trained-top", "trained-entropy"], "the second once the first is"
    assert all("layer 2, head 5" in item.prompt for item in asked)
    at.button(key="stepnext:trained_model").click().run()
    assert at.query_params["step"] == "6" and any(m.value.startswith("**Line view**") for m in at.markdown)
    at.button(key="stepnext:trained_model").click().run()
    assert_clean(at)
    assert at.query_params["step"] == "7"
    assert any(h.value == "The same head by hand (layer 2, head 5)" for h in at.subheader)
    assert [place_name(item) for item in at.session_state["_exercises_shown:trained_model"]] == ["trained-no-bias"]
    assert all("layer 2, head 5" in item.prompt for item in at.session_state["_exercises_shown:trained_model"])
    at.button(key="stepnext:trained_model").click().run()
    pattern, layer, head, _ = trained.claims(sentence)[0]
    at.button(key=f"tm_open:{pattern}").click().run()
    assert_clean(at)
    assert at.query_params["step"] == "6", "a head to open opens with its line view"
    assert any(h.value.startswith(f"Layer {layer + 1}, head {head + 1}") for h in at.subheader)
