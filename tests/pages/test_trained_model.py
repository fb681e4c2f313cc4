"""Lesson 10 (AppTest): the trained model's heads on a preset and on a typed sentence, and trained embeddings."""

from __future__ import annotations

import pytest

from attention_core import trained_model as tm
from attention_core.presets import JOURNEY
from tests.apptest_helpers import assert_clean, charts, lab_input, open_page, sentence_params
from ui import trained

PAGE = "app_pages/trained_model.py"


@pytest.fixture(scope="module")
def preset_page():
    """The page on the default preset (the first run loads the model into this process's cache)."""
    return open_page(PAGE, {"example": JOURNEY.name}, timeout=300)


def _metrics(at) -> list[str]:
    return [metric.value for metric in at.metric]


def test_preset_shows_every_section_and_agreement(preset_page):
    at = preset_page
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    assert at.title[0].value == "10. Inside a trained model"
    headers = [h.value for h in at.subheader]
    assert headers[0].startswith("1.") and any(h.startswith("3. Layer 1, head 1") for h in headers)
    assert "[CLS]  your  journey  starts  with  one  step  [SEP]" in [c.value for c in at.code]
    assert all(float(value) < 1e-5 for metric in _metrics(at) for value in metric.split(", "))
    assert any("all_heads" in str(spec.get("description", "")) or "72 heads" in str(spec.get("description", ""))
               for spec in _specs(at))  # fmt: skip
    assert at.get("download_button") and at.expander


def _specs(at) -> list[dict]:
    import json

    return [json.loads(chart.proto.spec) for chart in charts(at)]


def test_picking_a_layer_and_head_opens_it(preset_page):
    at = preset_page
    at.selectbox(key="tm_layer").set_value(3)
    at.selectbox(key="tm_head").set_value(7).run()
    assert_clean(at)
    assert any(h.value.startswith("3. Layer 3, head 7") for h in at.subheader)
    assert any(h.value == "4. The same head by hand (layer 3, head 7)" for h in at.subheader)
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
    assert any("Trained embeddings are unavailable" in e.value for e in refused.error)
    assert lab_input(refused).T >= 1  # the last good input stays


def test_grid_highlight_layer_is_valid_vega_lite():
    from ui import charts

    spec = charts.grid_highlight(2, 3).to_dict()  # validated against the schema (the page skips that)
    assert spec["mark"]["type"] == "rect"


def test_exercises_footer_and_clickable_heads(preset_page):
    from attention_core.exercises import TrainedMaterial
    from tests.learn_helpers import clickable_keys, has_exercises_and_footer, page_exercises, right_wrong_malformed
    from ui.format import format_number

    at = preset_page
    at.selectbox(key="tm_layer").set_value(1)
    at.selectbox(key="tm_head").set_value(1).run()
    has_exercises_and_footer(at)
    assert {"tm_head_weights", "tm_by_hand_square"} <= {key.rsplit("-", 1)[-1] for key in clickable_keys(at)}
    sentence = " ".join(lab_input(at).tokens)
    forward = tm.run_forward(trained.model(), sentence)
    items = page_exercises(at, PAGE, TrainedMaterial(forward, trained.model().model), (sentence,))
    right_wrong_malformed(at, PAGE, items["trained-entropy"])
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
