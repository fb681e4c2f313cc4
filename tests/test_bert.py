"""attention_core.bert: the lab's own encoder and tokenizer against transformers' BertModel and AutoTokenizer.

transformers is the independent reference here only (requirements-dev.txt); the app never imports it.
"""

from __future__ import annotations

import json

import pytest
import torch

from attention_core import bert
from attention_core import trained_model as tm
from attention_core.presets import JOURNEY

# Measured over the four sentences below: hidden states 5.0e-6 (at 128 pieces), attention weights 1.5e-6, contexts
# 3.4e-6, the last hidden state 2.2e-6 (float32 rounding of products computed in another order). 1e-5 is the lab's
# agreement tolerance; an erf GELU replaced by the tanh one moves the hidden states by about 1e-4.
ATOL = 1e-5


def _sentence_of(pieces: int) -> str:
    """A sentence the tokenizer splits into exactly ``pieces`` pieces, [CLS] and [SEP] included (one per word)."""
    return " ".join(["cat"] * (pieces - 2))


SENTENCES = {
    "lesson 10's default": " ".join(JOURNEY.tokens),
    "punctuation, a split word": "The bank of the river was flooded, unbelievably!",
    "accents and unicode": "Café naïve Ärger, I can't find the 💡 in the 暗い room",
    "the most pieces": _sentence_of(tm.MAX_PIECES),
}

TOKENIZER_SENTENCES = (
    " ".join(JOURNEY.tokens),
    "The bank of the river was flooded, unbelievably!",
    "Café naïve résumé: ÉCOLE, Ärger & Übermut",
    "I can't find the light switch 💡 in the 暗い room",
    "Hello Привет مرحبا 你好 שלום",
    "e\u0301te\u0301 vs été",
    "  spaces   and\ttabs\nnewline  ",
    "[CLS] inside [SEP] text [MASK] and [UNK]",
    "state-of-the-art self-attention (2017) cost $3.50 -- 100%",
    "antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
    "\u200bzero\u200bwidth and control\x07 chars",
)
SINGLE_WORDS = ("cat", "unbelievably", "Café", "暗い", "💡", "step,", "", "xq" * 60)


@pytest.fixture(scope="module")
def folder():
    return tm.model_folder()


@pytest.fixture(scope="module")
def encoder(folder) -> bert.BertEncoder:
    """The lab's encoder on the published weights."""
    return bert.load_encoder(folder)


@pytest.fixture(scope="module")
def tokenizer(folder):
    """The lab's tokenizer (tokenizers, from tokenizer.json)."""
    return bert.load_tokenizer(folder)


@pytest.fixture(scope="module")
def reference(folder):
    """transformers' BertModel on the same folder, eager attention (returns the attention weights)."""
    from transformers import BertModel

    return BertModel.from_pretrained(folder, local_files_only=True, attn_implementation="eager").eval()


@pytest.fixture(scope="module")
def reference_tokenizer(folder):
    """transformers' AutoTokenizer on the same folder: it reads tokenizer_config.json and the vocabulary too."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(folder, local_files_only=True)


def _reference_forward(reference, ids: list[int]):
    """transformers' hidden states, attentions, last hidden state, and each self-attention module's output."""
    contexts = []
    hooks = [
        layer.attention.self.register_forward_hook(lambda _m, _i, out: contexts.append(out[0][0]))
        for layer in reference.encoder.layer
    ]
    try:
        with torch.no_grad():
            output = reference(
                input_ids=torch.tensor([ids]),  # (1, T)
                attention_mask=torch.ones(1, len(ids), dtype=torch.long),  # (1, T)
                output_attentions=True,
                output_hidden_states=True,
            )
    finally:
        for hook in hooks:
            hook.remove()
    return output, torch.stack(contexts)  # contexts: (L, T, h * d_k)


@pytest.mark.parametrize("sentence", SENTENCES.values(), ids=SENTENCES.keys())
def test_forward_equals_transformers_bert_model(encoder, tokenizer, reference, sentence):
    ids, _, _ = tm.encode(tokenizer, sentence)
    expected, expected_contexts = _reference_forward(reference, ids)
    mine = bert.forward(encoder, ids)
    T = len(ids)
    assert mine.hidden_states.shape == (7, T, 384) and mine.attentions.shape == (6, 12, T, T)
    assert mine.contexts.shape == (6, T, 384)
    assert torch.allclose(mine.hidden_states, torch.stack([h[0] for h in expected.hidden_states]), atol=ATOL, rtol=0)
    assert torch.allclose(mine.attentions, torch.stack([a[0] for a in expected.attentions]), atol=ATOL, rtol=0)
    assert torch.allclose(mine.contexts, expected_contexts, atol=ATOL, rtol=0)
    assert torch.allclose(mine.last_hidden_state, expected.last_hidden_state[0], atol=ATOL, rtol=0)


def test_the_longest_sentence_has_the_most_pieces(tokenizer):
    ids, _, _ = tm.encode(tokenizer, SENTENCES["the most pieces"])
    assert len(ids) == tm.MAX_PIECES
    with pytest.raises(ValueError, match="word pieces"):
        tm.encode(tokenizer, _sentence_of(tm.MAX_PIECES + 1))


def test_a_wrong_gelu_is_caught_by_the_tolerance(encoder, tokenizer, reference, monkeypatch):
    """The check can fail: the tanh approximation of GELU (another BERT's "gelu_new") moves the numbers past ATOL."""
    ids, _, _ = tm.encode(tokenizer, SENTENCES["punctuation, a split word"])
    expected, _ = _reference_forward(reference, ids)
    monkeypatch.setattr(bert, "gelu", lambda x: torch.nn.functional.gelu(x, approximate="tanh"))
    wrong = bert.forward(encoder, ids)
    gap = (wrong.hidden_states - torch.stack([h[0] for h in expected.hidden_states])).abs().max().item()
    assert gap > ATOL


def test_encoder_reads_the_config(encoder):
    config = encoder.config
    assert (config.num_layers, config.num_heads, config.d_model, config.d_ff, config.d_k) == (6, 12, 384, 1536, 32)
    assert config.eps == 1e-12 and len(encoder.layers) == 6
    assert encoder.word_embeddings.shape == (30522, 384) and encoder.word_embeddings.dtype == torch.float32


def test_weights_are_the_published_tensors(encoder, reference):
    """Every tensor the encoder holds is BertModel's, byte for byte (the loader names them right)."""
    state = reference.state_dict()
    layer = encoder.layers[4]
    assert torch.equal(layer.key.weight, state["encoder.layer.4.attention.self.key.weight"])
    assert torch.equal(layer.output_norm.gain, state["encoder.layer.4.output.LayerNorm.weight"])
    assert torch.equal(layer.intermediate.bias, state["encoder.layer.4.intermediate.dense.bias"])
    assert torch.equal(encoder.position_embeddings, state["embeddings.position_embeddings.weight"])


def test_gelu_and_layer_norm_are_torchs(encoder):
    x = torch.linspace(-6, 6, 97)
    torch.testing.assert_close(bert.gelu(x), torch.nn.functional.gelu(x), atol=1e-6, rtol=0)
    X = torch.randn(5, 384, generator=torch.Generator().manual_seed(0)) * 3
    norm = encoder.embedding_norm
    expected = torch.nn.functional.layer_norm(X, (384,), norm.gain, norm.bias, encoder.config.eps)
    torch.testing.assert_close(bert.layer_norm(X, norm, encoder.config.eps), expected, atol=1e-5, rtol=0)


def test_split_and_merge_heads_are_inverse():
    x = torch.arange(5 * 12 * 32, dtype=torch.float32).reshape(5, 384)  # (T, h * d_k)
    heads = bert.split_heads(x, 12)
    assert heads.shape == (12, 5, 32) and torch.equal(heads[3], x[:, 96:128])
    assert torch.equal(bert.merge_heads(heads), x)


def test_an_unsupported_config_is_refused(tmp_path, folder):
    fields = json.loads((folder / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**fields, "hidden_act": "gelu_new"}))
    with pytest.raises(ValueError, match="does not compute"):
        bert.read_config(tmp_path / "config.json")


# --- the tokenizer: tokenizer.json alone gives what AutoTokenizer gives from all the tokenizer files ---


def test_tokenizer_json_normalizes_as_tokenizer_config_says(folder):
    """AutoTokenizer reads tokenizer_config.json; the lab reads tokenizer.json only: their settings agree."""
    settings = json.loads((folder / "tokenizer_config.json").read_text())
    normalizer = json.loads((folder / "tokenizer.json").read_text())["normalizer"]
    assert normalizer["type"] == "BertNormalizer"
    assert normalizer["lowercase"] is settings["do_lower_case"] is True
    assert normalizer["strip_accents"] is settings["strip_accents"] is None  # None: follows lowercase
    assert normalizer["handle_chinese_chars"] is settings["tokenize_chinese_chars"] is True
    assert settings["model_max_length"] == 512  # the lab refuses past MAX_PIECES = 128 before either limit


@pytest.mark.parametrize("sentence", TOKENIZER_SENTENCES)
def test_tokenizer_equals_autotokenizer(tokenizer, reference_tokenizer, sentence):
    expected = reference_tokenizer(sentence, add_special_tokens=True, truncation=False, return_offsets_mapping=True)
    mine = tokenizer.encode(sentence, add_special_tokens=True)
    assert mine.ids == expected["input_ids"]
    assert mine.tokens == reference_tokenizer.convert_ids_to_tokens(expected["input_ids"])
    assert mine.word_ids == expected.word_ids()
    assert [tuple(o) for o in mine.offsets] == [tuple(o) for o in expected["offset_mapping"]]
    ids, pieces, word_ids = tm.encode(tokenizer, sentence)
    assert (ids, pieces, word_ids) == (mine.ids, mine.tokens, mine.word_ids)


def test_a_long_sentence_is_neither_cut_nor_padded(tokenizer, reference_tokenizer):
    """tokenizer.json truncates and pads to 128; the lab's tokenizer does neither (AutoTokenizer with
    truncation=False neither), so a long sentence is refused by the lab, not silently cut."""
    sentence = _sentence_of(200)
    expected = reference_tokenizer(sentence, truncation=False)["input_ids"]
    assert len(tokenizer.encode(sentence).ids) == 200 == len(expected)
    assert len(tokenizer.encode("a cat").ids) == 4


@pytest.mark.parametrize("word", SINGLE_WORDS)
def test_a_word_without_special_tokens_equals_autotokenizer(tokenizer, reference_tokenizer, word):
    assert (
        tokenizer.encode(word, add_special_tokens=False).ids
        == reference_tokenizer(word, add_special_tokens=False)["input_ids"]
    )


def test_unknown_piece_is_autotokenizers(tokenizer, reference_tokenizer):
    unknown = tokenizer.token_to_id(bert.UNKNOWN_PIECE)
    assert unknown == reference_tokenizer.unk_token_id == 100
    assert tokenizer.encode("xq" * 60, add_special_tokens=False).ids == [unknown]  # past 100 characters: [UNK]
