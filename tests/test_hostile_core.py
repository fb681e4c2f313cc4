"""The whole hostile corpus against the core's validators: a value, or a ValueError with a sentence.

No other exception type, no NaN or inf in anything that is accepted.
"""

from __future__ import annotations

import pytest
import torch

import attention_core as ac
from attention_core.embeddings import MAX_ABS_VALUE, parse_seed
from tests import hostile_corpus as corpus


@pytest.mark.parametrize("name", list(corpus.SENTENCES))
def test_sentences_give_tokens_or_a_readable_refusal(name):
    text = corpus.SENTENCES[name]
    expected_tokens = text.split()
    if not expected_tokens or len(expected_tokens) > corpus.SENTENCE_LIMIT:
        with pytest.raises(ValueError, match=r"(empty|at most)") as error:
            ac.tokenize(text)
        assert str(error.value).endswith(".")
        return
    tokens = ac.tokenize(text)
    assert tokens == expected_tokens
    X = ac.random_embeddings(tokens, 8, seed=1)  # (T, 8)
    assert X.shape == (len(tokens), 8) and torch.isfinite(X).all()
    labels = ac.token_labels(tokens)
    assert len(set(labels)) == len(labels) and all(len(label) <= 40 for label in labels)
    steps = ac.self_attention(X)
    assert torch.isfinite(steps.context).all()
    assert torch.allclose(steps.weights.sum(-1), torch.ones(len(tokens)), atol=1e-5)


@pytest.mark.parametrize("name", [name for name, text in corpus.SENTENCES.items() if text.split()])
def test_one_hot_is_built_or_refused_with_a_reason(name):
    tokens = corpus.SENTENCES[name].split()
    if len(set(tokens)) > 64:
        with pytest.raises(ValueError, match="One-hot needs one dimension per distinct word"):
            ac.one_hot_embeddings(tokens)
    else:
        X = ac.one_hot_embeddings(tokens)
        assert X.shape == (len(tokens), len(set(tokens))) and (X.sum(-1) == 1).all()


@pytest.mark.parametrize("name", list(corpus.SEEDS))
def test_seeds_parse_or_explain(name):
    text = corpus.SEEDS[name]
    cleaned = text.strip().replace(",", "")
    if cleaned.isdigit() and int(cleaned) < 2**63:
        assert parse_seed(text) == int(cleaned)
    else:
        with pytest.raises(ValueError, match="seed must be a whole number"):
            parse_seed(text)


@pytest.mark.parametrize("name", list(corpus.CELLS))
def test_edited_cells_are_numbers_or_refused_by_position(name):
    cell = corpus.CELLS[name]
    matrix = [["0.1", "0.2"], ["0.3", cell]]
    try:
        number = float(cell)  # type: ignore[arg-type]
        acceptable = not isinstance(cell, bool) and abs(number) <= MAX_ABS_VALUE
    except (TypeError, ValueError):
        acceptable = False
    if acceptable:
        X = ac.validate_embedding_matrix(matrix, 2, 2)
        assert torch.isfinite(X).all() and X[1, 1].item() == pytest.approx(float(cell))
    else:
        with pytest.raises(ValueError, match="row 2, column 2"):
            ac.validate_embedding_matrix(matrix, 2, 2)


@pytest.mark.parametrize(
    ("matrix", "n_tokens", "d_model", "words"),
    [
        ([], 2, 2, "empty"),
        ([["1", "2"]], 2, 2, "1 rows but the sentence has 2 tokens"),
        ([["1", "2", "3"], ["4", "5", "6"]], 2, 2, "3 columns but d_model is 2"),
        ([1, 2, 3], 3, None, "must be a table"),
        ([[1.0] * 65], 1, None, "between 1 and 64"),
    ],
)
def test_edited_matrices_of_the_wrong_shape_are_refused(matrix, n_tokens, d_model, words):
    with pytest.raises(ValueError, match=words):
        ac.validate_embedding_matrix(matrix, n_tokens, d_model)


@pytest.mark.parametrize("d_model", [0, -1, 65, 10**9, 2.5, True, "8"])
def test_bad_embedding_sizes_are_refused(d_model):
    with pytest.raises(ValueError, match="d_model"):
        ac.random_embeddings(["a", "b"], d_model, seed=0)  # type: ignore[arg-type]


def test_the_corpus_is_big_enough():
    total = len(corpus.SENTENCES) + len(corpus.SEEDS) + len(corpus.CELLS) + len(corpus.URL_PARAMS)
    assert total >= 40
