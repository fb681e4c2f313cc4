"""attention_core.embeddings: tokens, seeded and one-hot embeddings, and validation of edited matrices."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from attention_core.embeddings import (
    MAX_ABS_VALUE,
    MAX_D_MODEL,
    MAX_TOKENS,
    check_d_model,
    check_seed,
    distinct_tokens,
    one_hot_embeddings,
    random_embeddings,
    tokenize,
    validate_embedding_matrix,
)


@pytest.fixture
def tokens() -> list[str]:
    """A sentence with a repeated word: 'the' at positions 0 and 4."""
    return ["the", "cat", "sat", "on", "the", "mat"]


# --- tokenize -------------------------------------------------------------------------------------


def test_tokenize_splits_on_white_space_and_keeps_punctuation():
    assert tokenize("I can't find the light switch") == ["I", "can't", "find", "the", "light", "switch"]
    assert tokenize("  Hello,\tworld!\n  ") == ["Hello,", "world!"]
    assert tokenize("one") == ["one"]


@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
def test_tokenize_refuses_empty_text(text):
    with pytest.raises(ValueError, match="empty"):
        tokenize(text)


def test_tokenize_refuses_non_text():
    with pytest.raises(ValueError, match="text"):
        tokenize(None)  # type: ignore[arg-type]


def test_tokenize_limit():
    assert len(tokenize(" ".join(["w"] * MAX_TOKENS))) == MAX_TOKENS
    with pytest.raises(ValueError, match=f"at most {MAX_TOKENS:,}"):
        tokenize(" ".join(["w"] * (MAX_TOKENS + 1)))


def test_distinct_tokens_keep_first_appearance_order(tokens):
    assert distinct_tokens(tokens) == ["the", "cat", "sat", "on", "mat"]


# --- random embeddings ----------------------------------------------------------------------------


def test_random_embeddings_are_seeded(tokens):
    X = random_embeddings(tokens, 4, seed=42)
    assert X.shape == (6, 4) and X.dtype == torch.float32
    assert torch.equal(X, random_embeddings(tokens, 4, seed=42))
    assert not torch.equal(X, random_embeddings(tokens, 4, seed=43))


def test_random_embeddings_repeated_word_gets_identical_row(tokens):
    X = random_embeddings(tokens, 5, seed=0)
    assert torch.equal(X[0], X[4])
    assert not torch.equal(X[0], X[1])


def test_random_embeddings_float64(tokens):
    X64 = random_embeddings(tokens, 3, seed=1, dtype=torch.float64)
    assert X64.dtype == torch.float64
    assert torch.allclose(X64.to(torch.float32), random_embeddings(tokens, 3, seed=1))


@pytest.mark.parametrize("d_model", [0, -1, MAX_D_MODEL + 1, 2.5, "3", True])
def test_random_embeddings_bad_d_model(d_model, tokens):
    with pytest.raises(ValueError, match="d_model"):
        random_embeddings(tokens, d_model, seed=0)


@pytest.mark.parametrize("seed", [-1, 2**63, 1.5, "7", False])
def test_random_embeddings_bad_seed(seed, tokens):
    with pytest.raises(ValueError, match="seed"):
        random_embeddings(tokens, 3, seed=seed)


def test_checks_accept_numpy_integers():
    assert check_d_model(np.int64(8)) == 8 and type(check_d_model(np.int64(8))) is int
    assert check_seed(np.int32(3)) == 3
    assert check_seed(2**63 - 1) == 2**63 - 1


# --- one-hot --------------------------------------------------------------------------------------


def test_one_hot_embeddings(tokens):
    X = one_hot_embeddings(tokens)
    assert X.shape == (6, 5) and X.dtype == torch.float32  # one dimension per distinct word
    assert torch.equal(X.sum(-1), torch.ones(6))
    assert torch.equal(X[0], X[4])  # 'the' twice: same row
    assert torch.equal(X[[0, 1, 2, 3, 5]], torch.eye(5))
    assert one_hot_embeddings(tokens, dtype=torch.float64).dtype == torch.float64


def test_one_hot_refuses_too_many_words():
    with pytest.raises(ValueError, match="One-hot needs one dimension per distinct word"):
        one_hot_embeddings([f"w{i}" for i in range(MAX_D_MODEL + 1)])


# --- validate_embedding_matrix --------------------------------------------------------------------


@pytest.mark.parametrize(
    "values",
    [
        [[1, 2.5], [-3, 0]],
        np.array([[1, 2.5], [-3, 0]]),
        pd.DataFrame([[1, 2.5], [-3, 0]], columns=["d1", "d2"]),
        [["1", " 2.5 "], ["-3", "0e0"]],
        pd.DataFrame([["1", "2.5"], ["-3", "0"]]),
    ],
    ids=["list", "array", "frame", "strings", "frame-of-strings"],
)
def test_validate_accepts_numbers_and_numeric_strings(values):
    X = validate_embedding_matrix(values, n_tokens=2, d_model=2)
    assert torch.equal(X, torch.tensor([[1.0, 2.5], [-3.0, 0.0]]))
    assert validate_embedding_matrix(values, 2, dtype=torch.float64).dtype == torch.float64


def test_validate_accepts_values_at_the_bound():
    X = validate_embedding_matrix([[MAX_ABS_VALUE, -MAX_ABS_VALUE]], 1)
    assert X.tolist() == [[MAX_ABS_VALUE, -MAX_ABS_VALUE]]


@pytest.mark.parametrize(
    ("values", "n_tokens", "d_model", "message"),
    [
        ([[1.0, 2.0]], 2, None, "1 rows but the sentence has 2 tokens"),
        ([[1.0, 2.0], [3.0, 4.0]], 2, 3, "2 columns but d_model is 3"),
        ([[1.0, 2.0], [3.0]], 2, None, "must be a table"),
        ([1.0, 2.0], 2, None, "must be a table"),
        ([], 0, None, "empty"),
        ([[]], 1, None, "empty"),
        ([[1.0, float("nan")]], 1, None, "row 1, column 2 is empty or NaN"),
        ([[1.0], [float("inf")]], 2, None, "row 2, column 1 is infinite"),
        ([[1.0], [-float("inf")]], 2, None, "infinite"),
        ([["one", 2.0]], 1, None, "row 1, column 1 holds 'one', which is not a number"),
        ([[1.0, ""]], 1, None, "row 1, column 2 is empty"),
        ([[1.0, "  "]], 1, None, "row 1, column 2 is empty"),
        ([[None, 1.0]], 1, None, "row 1, column 1 is empty"),
        ([[1.0, 1e5]], 1, None, "keep values within ±100:"),
        ([[-100.5]], 1, None, "keep values within ±100:"),
        ([[True, 1.0]], 1, None, "true/false, not a number"),
        ([[np.True_, 1.0]], 1, None, "true/false, not a number"),
        (pd.DataFrame({"d1": [True], "d2": [1.0]}), 1, None, "true/false"),
        ([[0.0] * (MAX_D_MODEL + 1)], 1, None, "between 1 and"),
        ([["1,5"]], 1, None, "not a number"),
    ],
)
def test_validate_refuses_bad_input_with_a_readable_message(values, n_tokens, d_model, message):
    with pytest.raises(ValueError, match=message) as caught:
        validate_embedding_matrix(values, n_tokens, d_model)
    text = str(caught.value)
    assert text[0].isupper() and text.rstrip().endswith(".")  # a sentence, not a traceback
    assert "Traceback" not in text and "tensor" not in text


def test_validate_names_a_nullable_empty_cell():
    frame = pd.DataFrame({"d1": pd.array([1.0, None], dtype="Float64")})
    with pytest.raises(ValueError, match="row 2, column 1"):
        validate_embedding_matrix(frame, 2)


@pytest.mark.parametrize(
    ("sentence", "tokens"),
    [
        ("猫坐在垫子上。", ["猫", "坐", "在", "垫", "子", "上"]),  # one token per character, wide punctuation dropped
        ("我爱 NLP。", ["我", "爱", "NLP"]),  # a Latin run stays one token
        ("“注意力”是什么？", ["注", "意", "力", "是", "什", "么"]),
        ("GPT-2的注意力", ["GPT-2", "的", "注", "意", "力"]),  # with its ASCII punctuation, as in English
        ("你好,世界.", ["你", "好", "世", "界"]),  # half-width punctuation alone is dropped too
        ('他说:"好"!', ["他", "说", "好"]),
        ("the cat — sat.", ["the", "cat", "—", "sat."]),  # no Chinese character: split at spaces, as before
    ],
)
def test_a_chinese_sentence_is_split_one_token_per_character(sentence, tokens):
    assert tokenize(sentence) == tokens


def test_punctuation_between_chinese_words_is_dropped_and_alone_it_stays_as_written():
    assert tokenize("你好 ，。 世界") == ["你", "好", "世", "界"]
    assert tokenize("。") == ["。"]  # no Chinese character: split at spaces, as before
