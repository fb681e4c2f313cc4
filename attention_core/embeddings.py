"""Tokens and embeddings: the input matrix X of shape (T, d_model).

Shape letters: T tokens, d_model embedding size.
Bad input never reaches the math: every check here raises ``ValueError`` with a
sentence a learner can act on.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence

import numpy as np
import torch

from attention_core.i18n import _

MAX_TOKENS = 1024  # hard limit: longer sentences are refused with a message
MAX_D_MODEL = 64  # embeddings wider than this are refused
MAX_ABS_VALUE = 100.0  # the one limit on hand-edited cells (the sidebar's editor and links); see value_limit_text


MAX_SENTENCE_CHARS = 60_000  # a sentence longer than this is refused before it is split
MAX_SEED_DIGITS = 19  # 2**63 - 1 has 19 digits


# Characters written without spaces between words (Chinese, Japanese kana, Korean syllables): one token each.
CJK_CHARACTER = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af\U00020000-\U0002ffff]")


def wide_punctuation(character: str) -> bool:
    """Punctuation outside ASCII (。，、：“” …): dropped around Chinese characters."""
    return not character.isascii() and unicodedata.category(character).startswith("P")


def split_cjk(word: str) -> list[str]:
    """A space-separated word of a sentence with Chinese (Japanese, Korean) characters, as tokens: each such character
    is a token, punctuation is dropped (wide, or a half-width run of it: "你好,世界."), and a run of other characters
    ("NLP", "GPT-2") stays one token, with its ASCII punctuation as in English."""
    tokens: list[str] = []
    run = ""
    for character in word + " ":  # a space ends the last run
        if CJK_CHARACTER.match(character) or wide_punctuation(character) or character == " ":
            if run and not all(unicodedata.category(mark).startswith("P") for mark in run):
                tokens.append(run)  # a run of punctuation alone (",", "!", ':"' typed half-width) is dropped
            run = ""
            if CJK_CHARACTER.match(character):
                tokens.append(character)
        else:
            run += character
    return tokens


def tokenize(text: str) -> list[str]:
    """Split on white space, keeping punctuation with its word ("can't" is one token). A sentence with Chinese
    (Japanese, Korean) characters, written without spaces between words, is split by split_cjk: one token per such
    character, wide punctuation (。，“”) dropped ("我爱 NLP。" -> 我, 爱, NLP)."""
    if not isinstance(text, str):
        raise ValueError(_("The sentence must be text."))
    if len(text) > MAX_SENTENCE_CHARS:
        raise ValueError(
            _(
                "The sentence has {count} characters; the lab reads at most {limit}.",
                count=f"{len(text):,}",
                limit=f"{MAX_SENTENCE_CHARS:,}",
            )
        )
    tokens = text.split()
    if CJK_CHARACTER.search(text):
        tokens = [token for word in tokens for token in split_cjk(word)]
    if not tokens:
        raise ValueError(_("The sentence is empty: type at least one word."))
    if len(tokens) > MAX_TOKENS:
        raise ValueError(
            _(
                "The sentence has {count} tokens; the lab handles at most {limit}.",
                count=f"{len(tokens):,}",
                limit=f"{MAX_TOKENS:,}",
            )
        )
    return tokens


def distinct_tokens(tokens: Sequence[str]) -> list[str]:
    """The vocabulary: each distinct token once, in order of first appearance."""
    return list(dict.fromkeys(tokens))


def vocabulary_ids(tokens: Sequence[str]) -> list[int]:
    """ids[i] = position of tokens[i] in the vocabulary: an embedding lookup's row numbers."""
    index = {token: i for i, token in enumerate(distinct_tokens(tokens))}
    return [index[token] for token in tokens]


def check_d_model(d_model: int) -> int:
    """Refuse an embedding size the lab cannot draw or that makes no sense."""
    if isinstance(d_model, bool) or not isinstance(d_model, int | np.integer):
        raise ValueError(_("The embedding size d_model must be a whole number."))
    if not 1 <= d_model <= MAX_D_MODEL:
        raise ValueError(_("The embedding size d_model must be between 1 and {limit}.", limit=MAX_D_MODEL))
    return int(d_model)


def check_seed(seed: int) -> int:
    """Seeds are whole numbers from 0 to 2**63 - 1, as torch.Generator accepts."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise ValueError(_("The seed must be a whole number."))
    if not 0 <= seed < 2**63:
        raise ValueError(_("The seed must be a whole number from 0 to 9,223,372,036,854,775,807."))
    return int(seed)


def parse_seed(text: str) -> int:
    """A seed typed as text (or taken from a URL): a whole number from 0 to 2**63 - 1, in the digits 0-9.

    Other digits are refused, not converted: '²' is a digit to Python but not a number int() reads, and
    '٣' (Arabic-Indic three) would silently become 3, so a link would show one seed and compute another.
    """
    cleaned = str(text).strip().replace(",", "").replace("_", "")
    if not (cleaned.isascii() and cleaned.isdigit()) or len(cleaned) > MAX_SEED_DIGITS:
        raise ValueError(
            _(
                "The seed must be a whole number written with the digits 0 to 9, such as 0 or 42, not {typed}.",
                typed=repr(str(text)[:30]),
            )
        )
    return check_seed(int(cleaned))


def random_embeddings(
    tokens: Sequence[str], d_model: int, seed: int, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """X[i] = E[vocab(tokens[i])] with E ~ N(0, 1) drawn from a seeded generator; (T, d_model)."""
    d_model, seed = check_d_model(d_model), check_seed(seed)
    vocab = distinct_tokens(tokens)
    generator = torch.Generator().manual_seed(seed)
    table = torch.randn(len(vocab), d_model, generator=generator, dtype=torch.float64)  # (V, d_model)
    return table[vocabulary_ids(tokens)].to(dtype)  # (V, d_model) -> (T, d_model)


def one_hot_embeddings(tokens: Sequence[str], dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """X[i] = e_{vocab(tokens[i])}: one dimension per distinct token; (T, V)."""
    vocab = distinct_tokens(tokens)
    if len(vocab) > MAX_D_MODEL:
        raise ValueError(
            _(
                "One-hot needs one dimension per distinct word: {count} words is more than the {limit} dimensions "
                "the lab allows. Use random embeddings instead.",
                count=len(vocab),
                limit=MAX_D_MODEL,
            )
        )
    return torch.eye(len(vocab), dtype=dtype)[vocabulary_ids(tokens)]  # (V, V) -> (T, V)


def _cell_to_float(value: object, row: int, col: int) -> float:
    """One cell of an edited matrix as a float, or a ValueError naming the cell."""
    at = {"row": row + 1, "col": col + 1}
    if value is None or (isinstance(value, str) and not value.strip()):
        raise ValueError(_("The cell at row {row}, column {col} is empty: every cell needs a number.", **at))
    if isinstance(value, bool | np.bool_):
        raise ValueError(_("The cell at row {row}, column {col} is true/false, not a number.", **at))
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        held = repr(str(value)[:20])
        message = _("The cell at row {row}, column {col} holds {held}, which is not a number.", held=held, **at)
        raise ValueError(message) from None
    if math.isnan(number):
        raise ValueError(_("The cell at row {row}, column {col} is empty or NaN (not a number): type a number.", **at))
    if math.isinf(number):
        raise ValueError(_("The cell at row {row}, column {col} is infinite: type a finite number.", **at))
    if abs(number) > MAX_ABS_VALUE:
        limit = value_limit_text()
        raise ValueError(
            _("The cell at row {row}, column {col} is {number}; {limit}", number=f"{number:g}", limit=limit, **at)
        )
    return number


def value_limit_text() -> str:
    """The one sentence stating the limit on hand-edited values (errors and the editor's caption use it)."""
    return _(
        "keep values within ±{limit}: within that range the lab computes hand edits in float64 and every digit it "
        "shows is right; far beyond it the scores grow so large that even float64 rounds them visibly.",
        limit=f"{MAX_ABS_VALUE:g}",
    )


def validate_embedding_matrix(
    values: object, n_tokens: int, d_model: int | None = None, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """Check a user-edited matrix (list of rows, array or DataFrame) and return it as (T, d_model)."""
    if hasattr(values, "to_numpy"):
        values = values.to_numpy(dtype=object)  # a DataFrame from st.data_editor
    array = np.asarray(values, dtype=object)
    if array.size == 0:
        raise ValueError(_("The embedding matrix is empty: it needs one row per token."))
    if array.ndim != 2:
        raise ValueError(_("The embedding matrix must be a table: one row per token, one column per dimension."))
    rows, cols = array.shape
    if rows != n_tokens:
        raise ValueError(
            _(
                "The matrix has {rows} rows but the sentence has {tokens} tokens: one row per token.",
                rows=rows,
                tokens=n_tokens,
            )
        )
    if d_model is not None and cols != d_model:
        raise ValueError(
            _(
                "The matrix has {cols} columns but d_model is {d_model}: one column per dimension.",
                cols=cols,
                d_model=d_model,
            )
        )
    check_d_model(cols)
    numbers = [[_cell_to_float(array[i, j], i, j) for j in range(cols)] for i in range(rows)]
    return torch.tensor(numbers, dtype=dtype)  # (T, d_model)
