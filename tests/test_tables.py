"""attention_core.tables: token labels and the wide and long DataFrames the pages and charts use."""

from __future__ import annotations

import pandas as pd
import pytest
import torch

from attention_core.generation import multiply_add_frame
from attention_core.tables import (
    MAX_LABEL_CHARS,
    long_columns,
    long_frame,
    short_label,
    to_frame,
    token_labels,
    vector_frame,
)


@pytest.fixture
def tokens() -> list[str]:
    """A sentence with 'the' twice (positions 1 and 5, counting from 1)."""
    return ["the", "cat", "sat", "on", "the", "mat"]


@pytest.fixture
def matrix() -> torch.Tensor:
    """A (6, 6) float32 matrix whose entry [i, j] is 10 i + j, so every cell says where it belongs."""
    return (10 * torch.arange(6).unsqueeze(1) + torch.arange(6)).to(torch.float32)


def test_labels_of_distinct_tokens_are_the_tokens():
    assert token_labels(["Your", "journey", "starts"]) == ["Your", "journey", "starts"]


def test_repeated_tokens_get_their_occurrence(tokens):
    labels = token_labels(tokens)
    assert labels == ["the (1)", "cat", "sat", "on", "the (2)", "mat"]
    assert len(set(labels)) == len(labels)


def test_a_word_keeps_its_label_with_cls_in_front():
    """The k-th 'the' is 'the (k)' whether [CLS] comes first (lesson 10's pieces) or not (the lessons)."""
    words = ["the", "cat", "sat", "on", "the", "mat", "by", "the", "door"]
    assert token_labels(["[CLS]", *words, "[SEP]"])[1:-1] == token_labels(words)


@pytest.fixture(scope="module")
def tokenizer():
    """Lesson 10's WordPiece tokenizer, from the local model folder only (no network)."""
    from attention_core import bert
    from attention_core import trained_model as tm

    return bert.load_tokenizer(tm.model_folder())


@pytest.mark.parametrize(
    "sentence", ["the cat sat on the mat by the door", "attention is all you need and it is all we have"]
)
def test_the_lessons_and_lesson_10_label_the_same_word_alike(tokenizer, sentence):
    """Same sentence through both label paths: the lessons' words and lesson 10's pieces ([CLS] ... [SEP])."""
    from attention_core import tokenize
    from attention_core import trained_model as tm

    lesson_labels = token_labels(tokenize(sentence))
    _, pieces, word_ids = tm.encode(tokenizer, sentence)
    piece_labels = token_labels(pieces)
    assert pieces[0] == "[CLS]" and len(pieces) == len(lesson_labels) + 2  # one piece per word here
    for label, word in zip(piece_labels, word_ids, strict=True):
        if word is not None:
            assert label == lesson_labels[word]
    assert any("(2)" in label for label in lesson_labels)  # the sentence does repeat a word


def test_long_tokens_are_shortened():
    long = "x" * 10_000
    assert short_label(long) == "x" * (MAX_LABEL_CHARS - 1) + "…"
    assert len(short_label(long)) == MAX_LABEL_CHARS
    assert short_label("short") == "short"
    labels = token_labels([long, "b", long[:-1] + "y"])  # two long tokens that differ only at the end
    assert labels == [short_label(long) + " (1)", "b", short_label(long) + " (2)"]
    assert all(len(label) <= MAX_LABEL_CHARS + 6 for label in labels)


@pytest.mark.parametrize(
    "sentence",
    [
        ["the", "the", "the (1)"],
        ["the (2)", "the", "the"],
        ["a", "a (1)", "a", "a (1)"],
        ["a (1) [3]", "a", "a (1)", "a"],
    ],
)
def test_labels_stay_unique_when_a_token_looks_like_a_generated_label(sentence):
    labels = token_labels(sentence)
    assert len(labels) == len(sentence)
    assert len(set(labels)) == len(labels)
    for token, label in zip(sentence, labels, strict=True):
        assert label.startswith(token)  # still readable as the token it labels


def test_to_frame_of_a_token_matrix(tokens, matrix):
    labels = token_labels(tokens)
    frame = to_frame(matrix, labels, labels)
    assert frame.shape == (6, 6)
    assert list(frame.index) == labels and list(frame.columns) == labels
    assert (frame.dtypes == "float64").all()
    assert frame.loc["the (2)", "cat"] == 41.0  # rows are queries, columns are keys
    assert (frame.to_numpy() == matrix.numpy()).all()


def test_vector_frame(tokens):
    values = torch.arange(18, dtype=torch.float64).reshape(6, 3)
    frame = vector_frame(values, tokens)
    assert list(frame.columns) == ["d1", "d2", "d3"]
    assert list(frame.index) == token_labels(tokens)
    assert frame.iloc[4, 2] == 14.0
    assert list(vector_frame(values, tokens, prefix="q").columns) == ["q1", "q2", "q3"]


def test_long_frame(tokens, matrix):
    labels = token_labels(tokens)
    frame = long_frame(matrix, labels, labels, value_name="weight")
    assert list(frame.columns) == ["row", "col", "row_pos", "col_pos", "weight"]
    assert len(frame) == 36
    assert list(frame["row"][:7]) == ["the (1)"] * 6 + ["cat"]  # row-major, sentence order
    assert list(frame["col"][:6]) == labels
    for record in frame.itertuples():
        assert record.weight == 10 * record.row_pos + record.col_pos
        assert record.row == labels[record.row_pos] and record.col == labels[record.col_pos]


def test_long_frame_of_a_rectangular_matrix(tokens):
    values = torch.arange(12, dtype=torch.float64).reshape(6, 2)
    frame = long_frame(values, token_labels(tokens), ["d1", "d2"])
    assert len(frame) == 12 and frame["value"].tolist() == list(range(12))
    assert frame["col_pos"].max() == 1 and frame["row_pos"].max() == 5


@pytest.mark.parametrize("value_columns", [["a", "b"], ["b", "a", "c"], ["c"]])
def test_long_columns_equals_pandas_melt(value_columns):
    frame = pd.DataFrame({"T": [64, 128, 256], "a": [1, 2, 3], "b": [0.5, 0.25, 0.125], "c": [7, 8, 9]})
    expected = frame.melt(id_vars="T", value_vars=value_columns, var_name="series", value_name="y")
    pd.testing.assert_frame_equal(long_columns(frame, "T", value_columns, "series", "y"), expected)


def test_long_columns_of_the_generation_pages_cost_frames():
    frame = multiply_add_frame(6, 4, 4, 4)
    melted = frame.melt(id_vars="step", value_vars=["with cache", "without cache"], var_name="way", value_name="n")
    pd.testing.assert_frame_equal(long_columns(frame, "step", ["with cache", "without cache"], "way", "n"), melted)
