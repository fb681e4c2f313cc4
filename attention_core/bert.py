"""A BERT encoder (all-MiniLM-L6-v2's architecture) run by the lab's own code on the published weights.

Shape letters: T word pieces, d_model = 384, h = 12 heads, d_k = d_model / h = 32, d_ff = 1536 (the
intermediate layer), L = 6 layers, V = 30,522 vocabulary pieces.

The weights are read from the model folder's ``model.safetensors`` with ``safetensors.torch.load_file``
(float32, as published), the sizes from its ``config.json``, the WordPiece tokenizer from its
``tokenizer.json`` with ``tokenizers``. safetensors and tokenizers are imported inside the functions that
need them; this module never imports streamlit or transformers (the tests check every number against
transformers' own BertModel), and ``attention_core/__init__.py`` does not import it.

The encoder, as the code below computes it (every Linear is x W^T + b with W stored (out, in), as published):

    X = LayerNorm(E_word[ids] + E_position[0..T-1] + E_type[0])         the embeddings, (T, d_model)
    per layer:
        Q, K, V = X W_q^T + b_q, X W_k^T + b_k, X W_v^T + b_v           (T, h * d_k), split into h heads
        weights = softmax(mask(Q K^T / sqrt(d_k)))                       (h, T, T), the mask all True here
        context = weights V, the heads side by side                      (T, h * d_k)
        A = LayerNorm(X + context W_o^T + b_o)                           (T, d_model)
        X = LayerNorm(A + GELU(A W_1^T + b_1) W_2^T + b_2)               (T, d_ff) inside, (T, d_model) out
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import torch

from attention_core.attention import apply_mask, attention_scores, context_vectors, scale_scores, softmax

WEIGHTS_FILE = "model.safetensors"
CONFIG_FILE = "config.json"
TOKENIZER_FILE = "tokenizer.json"
UNKNOWN_PIECE = "[UNK]"


@dataclass(frozen=True)
class BertConfig:
    """The sizes the encoder reads from config.json."""

    num_layers: int  # L
    num_heads: int  # h
    d_model: int
    d_ff: int
    eps: float  # LayerNorm's epsilon

    @property
    def d_k(self) -> int:
        return self.d_model // self.num_heads


@dataclass(frozen=True)
class Linear:
    """A Linear layer's published weight (out, in) and bias (out,): y = x W^T + b."""

    weight: torch.Tensor
    bias: torch.Tensor


@dataclass(frozen=True)
class Norm:
    """A LayerNorm's gain and bias, each (d_model,)."""

    gain: torch.Tensor
    bias: torch.Tensor


@dataclass(frozen=True)
class EncoderLayer:
    """One layer's weights: self-attention (query, key, value, output) and the feed-forward block."""

    query: Linear  # (h * d_k, d_model)
    key: Linear  # (h * d_k, d_model)
    value: Linear  # (h * d_k, d_model)
    attention_output: Linear  # W_o: (d_model, h * d_k)
    attention_norm: Norm
    intermediate: Linear  # W_1: (d_ff, d_model)
    output: Linear  # W_2: (d_model, d_ff)
    output_norm: Norm


@dataclass(frozen=True)
class BertEncoder:
    """The whole encoder's weights (read-only once loaded)."""

    config: BertConfig
    word_embeddings: torch.Tensor  # (V, d_model)
    position_embeddings: torch.Tensor  # (max positions, d_model)
    token_type_embeddings: torch.Tensor  # (2, d_model)
    embedding_norm: Norm
    layers: tuple[EncoderLayer, ...]  # (L,)


@dataclass(frozen=True)
class EncoderOutput:
    """Every layer's input, attention weights and context of one sentence."""

    hidden_states: torch.Tensor  # (L + 1, T, d_model): hidden_states[l] is X entering layer l; [L] the output
    attentions: torch.Tensor  # (L, h, T, T)
    contexts: torch.Tensor  # (L, T, h * d_k): the self-attention output before the output Linear

    @property
    def last_hidden_state(self) -> torch.Tensor:
        return self.hidden_states[-1]  # (T, d_model)


# --- loading --------------------------------------------------------------------------------------


def read_config(path: Path) -> BertConfig:
    """The sizes from config.json; ValueError if it describes a model this encoder does not compute."""
    fields = json.loads(path.read_text(encoding="utf-8"))
    if fields.get("hidden_act") != "gelu" or fields.get("position_embedding_type", "absolute") != "absolute":
        raise ValueError("config.json describes a BERT variant this encoder does not compute.")
    return BertConfig(
        num_layers=int(fields["num_hidden_layers"]),
        num_heads=int(fields["num_attention_heads"]),
        d_model=int(fields["hidden_size"]),
        d_ff=int(fields["intermediate_size"]),
        eps=float(fields["layer_norm_eps"]),
    )


def build_encoder(config: BertConfig, tensors: dict[str, torch.Tensor]) -> BertEncoder:
    """The encoder from the checkpoint's tensors, named as BertModel's state dict names them."""

    def linear(name: str) -> Linear:
        return Linear(tensors[f"{name}.weight"], tensors[f"{name}.bias"])

    def norm(name: str) -> Norm:
        return Norm(tensors[f"{name}.weight"], tensors[f"{name}.bias"])

    def layer(n: int) -> EncoderLayer:
        prefix = f"encoder.layer.{n}"
        return EncoderLayer(
            query=linear(f"{prefix}.attention.self.query"),
            key=linear(f"{prefix}.attention.self.key"),
            value=linear(f"{prefix}.attention.self.value"),
            attention_output=linear(f"{prefix}.attention.output.dense"),
            attention_norm=norm(f"{prefix}.attention.output.LayerNorm"),
            intermediate=linear(f"{prefix}.intermediate.dense"),
            output=linear(f"{prefix}.output.dense"),
            output_norm=norm(f"{prefix}.output.LayerNorm"),
        )

    return BertEncoder(
        config=config,
        word_embeddings=tensors["embeddings.word_embeddings.weight"],
        position_embeddings=tensors["embeddings.position_embeddings.weight"],
        token_type_embeddings=tensors["embeddings.token_type_embeddings.weight"],
        embedding_norm=norm("embeddings.LayerNorm"),
        layers=tuple(layer(n) for n in range(config.num_layers)),
    )


def load_encoder(folder: Path) -> BertEncoder:
    """config.json and model.safetensors (float32, as published) of the folder, as a BertEncoder."""
    from safetensors.torch import load_file

    config = read_config(folder / CONFIG_FILE)
    tensors = {name: tensor.float() for name, tensor in load_file(folder / WEIGHTS_FILE).items()}
    return build_encoder(config, tensors)


def load_tokenizer(folder: Path):
    """tokenizer.json's WordPiece tokenizer (a ``tokenizers.Tokenizer``), without the file's truncation at 128
    and padding to 128: the lab refuses a long sentence instead of cutting it, and never pads."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder / TOKENIZER_FILE))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


# --- the forward ----------------------------------------------------------------------------------


def linear(x: torch.Tensor, layer: Linear) -> torch.Tensor:
    """x W^T + b."""
    return x @ layer.weight.T + layer.bias  # (T, in) @ (in, out) + (out,) -> (T, out)


def layer_norm(x: torch.Tensor, norm: Norm, eps: float) -> torch.Tensor:
    """(x - mean) / sqrt(var + eps) * gain + bias over each row (var without Bessel's correction)."""
    mean = x.mean(dim=-1, keepdim=True)  # (T, 1)
    var = x.var(dim=-1, unbiased=False, keepdim=True)  # (T, 1)
    return (x - mean) / torch.sqrt(var + eps) * norm.gain + norm.bias  # (T, d_model)


def gelu(x: torch.Tensor) -> torch.Tensor:
    """GELU(x) = x Phi(x) = x (1 + erf(x / sqrt 2)) / 2, the erf form BERT's "gelu" names."""
    return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))


def embed(model: BertEncoder, ids: list[int] | tuple[int, ...]) -> torch.Tensor:
    """LayerNorm(word + position + token type 0 embeddings): the input X of layer 1, (T, d_model)."""
    T = len(ids)
    words = model.word_embeddings[torch.tensor(ids, dtype=torch.long)]  # (T, d_model)
    positions = model.position_embeddings[:T]  # (T, d_model)
    segment = model.token_type_embeddings[0]  # (d_model,): every piece is in sentence A
    return layer_norm(words + positions + segment, model.embedding_norm, model.config.eps)


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(T, h * d_k) -> (h, T, d_k): head j takes columns j*d_k .. (j+1)*d_k."""
    T = x.shape[0]
    return x.view(T, num_heads, -1).transpose(0, 1)  # (T, h, d_k) -> (h, T, d_k)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(h, T, d_k) -> (T, h * d_k): the heads' contexts side by side."""
    h, T, d_k = x.shape
    return x.transpose(0, 1).reshape(T, h * d_k)  # (T, h, d_k) -> (T, h * d_k)


def self_attention(
    X: torch.Tensor, layer: EncoderLayer, num_heads: int, mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Every head's softmax(mask(Q K^T / sqrt(d_k))) and weights V: (h, T, T) weights, (T, h * d_k) context."""
    Q = split_heads(linear(X, layer.query), num_heads)  # (T, h * d_k) -> (h, T, d_k)
    K = split_heads(linear(X, layer.key), num_heads)  # (h, T, d_k)
    V = split_heads(linear(X, layer.value), num_heads)  # (h, T, d_k)
    scores = attention_scores(Q, K)  # (h, T, d_k) @ (h, d_k, T) -> (h, T, T)
    weights = softmax(apply_mask(scale_scores(scores, Q.shape[-1]), mask))  # (h, T, T)
    return weights, merge_heads(context_vectors(weights, V))  # (h, T, T), (T, h * d_k)


def feed_forward(A: torch.Tensor, layer: EncoderLayer) -> torch.Tensor:
    """GELU(A W_1^T + b_1) W_2^T + b_2."""
    return linear(gelu(linear(A, layer.intermediate)), layer.output)  # (T, d_ff) -> (T, d_model)


def encoder_layer(
    X: torch.Tensor, layer: EncoderLayer, config: BertConfig, mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One layer: the next X (T, d_model), its attention weights (h, T, T) and its context (T, h * d_k)."""
    weights, context = self_attention(X, layer, config.num_heads, mask)
    A = layer_norm(X + linear(context, layer.attention_output), layer.attention_norm, config.eps)  # (T, d_model)
    return layer_norm(A + feed_forward(A, layer), layer.output_norm, config.eps), weights, context


def every_piece_mask(T: int) -> torch.Tensor:
    """The attention mask of one unpadded sentence: every query may attend to every piece, (T, T) all True."""
    return torch.ones(T, T, dtype=torch.bool)


def forward(model: BertEncoder, ids: list[int] | tuple[int, ...]) -> EncoderOutput:
    """The pieces' ids through the encoder, keeping every layer's input, attention weights and context."""
    X = embed(model, ids)  # (T, d_model)
    mask = every_piece_mask(len(ids))  # (T, T)
    hidden, attentions, contexts = [X], [], []
    for layer in model.layers:
        X, weights, context = encoder_layer(X, layer, model.config, mask)
        hidden.append(X)
        attentions.append(weights)
        contexts.append(context)
    return EncoderOutput(
        hidden_states=torch.stack(hidden),  # (L + 1, T, d_model)
        attentions=torch.stack(attentions),  # (L, h, T, T)
        contexts=torch.stack(contexts),  # (L, T, h * d_k)
    )
