"""The "what it means" steps of lessons 1-3 (issue 24, item 3): the lesson's computation on trained word vectors
of the learner's sentence, and claims that name what the numbers on screen show."""

from __future__ import annotations

import math
import re

import pyarrow as pa
import pytest

from attention_core import meaning
from attention_core import trained_model as tm
from tests.apptest_helpers import assert_clean, charts, lab_input, open_page, sentence_params
from tests.apptest_helpers import frames as shown_frames
from ui.format import format_number
from ui.models import trained

SCORES = ("app_pages/scores.py", "What the scores mean")
SOFTMAX = ("app_pages/softmax.py", "What the weights mean")
CONTEXT = ("app_pages/context_vectors.py", "What the blend means")
SUGGESTED = sentence_params(meaning.SUGGESTED_SENTENCE)
PLAIN = "Your journey starts with one step"


def step_of(at, lesson: str, name: str) -> str:
    """The step number of the step called ``name`` in the lesson's step bar."""
    bar = at.segmented_control(key=f"stepbar:{lesson}")
    names = [re.sub(r"^(✓ )?\d+\. ", "", option) for option in bar.options]  # the labels as shown
    return str(names.index(name) + 1)


def open_step(page: str, name: str, params: dict[str, str]):
    lesson = page.removeprefix("app_pages/").removesuffix(".py")
    first = open_page(page, {**params, "step": "1"})
    at = open_page(page, {**params, "step": step_of(first, lesson, name)})
    assert_clean(at)
    return at


def heatmap_cells(at, title_part: str):
    """The cells (row, col, value) of the heatmap whose spec mentions ``title_part``."""
    for chart in charts(at):
        if title_part in chart.proto.spec:
            for dataset in chart.proto.datasets:
                if dataset.name == "heatmap_cells":
                    return pa.ipc.open_stream(dataset.data.data).read_all().to_pandas()
    raise AssertionError(f"no heatmap titled {title_part!r}")


def top_shown_pair(cells) -> tuple[set[str], float]:
    off = cells[cells["row"] != cells["col"]]
    best = off.loc[off["value"].idxmax()]
    return {best["row"], best["col"]}, float(best["value"])


def claim(at, start: str) -> str:
    return next(m.value for m in at.markdown if m.value.startswith(start))


@pytest.mark.parametrize("params", [SUGGESTED, sentence_params(PLAIN)], ids=["suggested", "plain"])
def test_the_scores_claim_names_the_highest_score_shown(params):
    at = open_step(*SCORES, params)
    pair, value = top_shown_pair(heatmap_cells(at, "cosines"))
    text = claim(at, ("The highest score", "No pair stands out"))
    named = set(re.findall(r"“([^”]+)” and “([^”]+)”", text)[0])
    assert named == pair and format_number(value) in text


def test_a_sentence_with_related_words_shows_them_and_one_click_sets_it():
    at = open_step(*SCORES, sentence_params(PLAIN))
    assert "No pair stands out" in claim(at, "No pair stands out")  # measured: journey/step 0.19, median 0.04
    button = next(b for b in at.button if meaning.SUGGESTED_SENTENCE in b.label)
    at = button.click().run()
    assert lab_input(at).tokens == tuple(meaning.SUGGESTED_SENTENCE.split())
    text = claim(at, "The highest score")
    assert "“cats” and “dogs”" in text and "stands out" in text


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


@pytest.mark.parametrize("page", [SCORES, SOFTMAX, CONTEXT], ids=lambda page: page[0])
def test_without_the_model_the_step_says_why_in_one_sentence(broken_model, page):
    at = open_step(*page, SUGGESTED)
    assert not at.error
    notes = [i.value for i in at.info if "all-MiniLM-L6-v2" in i.value]
    assert len(notes) == 1 and "the rest of the lesson works" in notes[0]
    assert not [c for c in charts(at) if "cosines" in c.proto.spec]


def weights_table(at):
    return frame_with(at, "weight at t = 1")


def frame_with(at, column: str):
    frames = [t.value for t in at.table] + shown_frames(at)
    return next(frame for frame in frames if column in frame.columns)


def test_the_weights_claim_names_the_heaviest_other_word_shown():
    at = open_step(*SOFTMAX, SUGGESTED)
    table = weights_table(at)
    sharp = table[f"weight at t = {meaning.MEANING_TEMPERATURE:g}"]
    others = sharp.drop(index="cats")
    text = claim(at, "At t = 1 the weights")
    assert f"“{others.idxmax()}” ({format_number(others.max())}) gets the most" in text
    assert others.idxmax() == "dogs" and "closest receives the most weight" in text
    assert f"keeps {format_number(sharp['cats'])} for itself" in text
    plain = table["weight at t = 1"]
    assert f"the largest is {format_number(plain.max())}" in text
    assert plain.max() / plain.min() <= math.exp(2) + 1e-6  # cosines differ by at most 2: flat at t = 1


def test_the_weights_claim_says_when_no_word_stands_out():
    at = open_step(*SOFTMAX, sentence_params(PLAIN))
    table = weights_table(at)
    sharp = table[f"weight at t = {meaning.MEANING_TEMPERATURE:g}"].drop(index="Your")
    text = claim(at, "At t = 1 the weights")
    ratio = sharp.max() / sharp.drop(index=sharp.idxmax()).median()
    assert ("no other word clearly stands out" in text) == (ratio < meaning.CLEAR_RATIO)
    assert format_number(ratio, 2) in text


@pytest.mark.parametrize(("params", "query"), [(SUGGESTED, "cats"), (sentence_params(PLAIN), "Your")])
def test_the_blend_claim_names_the_word_mixed_in_most_and_its_move(params, query):
    at = open_step(*CONTEXT, params)
    table = frame_with(at, "mixes in most")
    row = table.loc[query]
    text = claim(at, f"c(“{query}”)")
    assert f"mixes in the most of “{row['mixes in most']}”: {format_number(row['its weight'])}" in text
    assert f"keeps {format_number(row['own weight'])} of “{query}”" in text
    before, after = format_number(row["cos before (x)"]), format_number(row["cos after (c)"])
    moved = "rises" if row["cos after (c)"] > row["cos before (x)"] else "does not rise"
    assert f"{moved} from {before} (the input x) to {after}" in text
    closer = int((table["cos after (c)"] > table["cos before (x)"]).sum())
    assert f"{closer} of {len(table)} context vectors moved closer" in text
    if query == "cats":
        assert row["mixes in most"] == "dogs" and moved == "rises"
