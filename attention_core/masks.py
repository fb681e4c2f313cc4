"""Attention masks: boolean (T, T) matrices where True means "query i may attend to key j".

Shape letters: T tokens. PyTorch's scaled_dot_product_attention uses this convention;
nn.MultiheadAttention uses the opposite one (True = blocked): see ``to_blocked``.
Also the masking page's comparison of five ways to mask (-inf, -1e9, -9e15, multiply, the lab's), and its
state in one call (masked_attention).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch

from attention_core.attention import AttentionSteps, apply_mask, self_attention, softmax
from attention_core.i18n import _

LARGE_NEGATIVE = -1e9


def no_mask(T: int) -> torch.Tensor:
    """mask[i, j] = True for all i, j: every token sees every token."""
    return torch.ones(T, T, dtype=torch.bool)  # (T, T)


def causal_mask(T: int) -> torch.Tensor:
    """mask[i, j] = (j <= i): a token sees itself and the tokens before it."""
    return torch.tril(torch.ones(T, T, dtype=torch.bool))  # (T, T)


def padding_mask(T: int, padded: Iterable[int]) -> torch.Tensor:
    """mask[i, j] = (j is not padding): padding tokens are hidden as keys, like key_padding_mask."""
    keep = torch.ones(T, dtype=torch.bool)  # (T,)
    for j in padded:
        if not 0 <= j < T:
            raise ValueError(
                _("Padding position {position} is outside the sentence of {T} tokens.", position=j + 1, T=T)
            )
        keep[j] = False
    return keep.unsqueeze(0).expand(T, T).clone()  # (1, T) -> (T, T)


def sliding_window_mask(T: int, window: int) -> torch.Tensor:
    """mask[i, j] = (i - window < j <= i): a token sees itself and the window - 1 tokens before it."""
    if window < 1:
        raise ValueError(_("The window must hold at least 1 token (the token itself)."))
    i = torch.arange(T).unsqueeze(1)  # (T, 1)
    j = torch.arange(T).unsqueeze(0)  # (1, T)
    return (j <= i) & (j > i - window)  # (T, T)


def to_blocked(mask: torch.Tensor) -> torch.Tensor:
    """The other convention: True = blocked (nn.MultiheadAttention's attn_mask, key_padding_mask)."""
    return ~mask  # (T, T)


def fully_masked_rows(mask: torch.Tensor) -> torch.Tensor:
    """rows[i] = True where query i may attend to nothing at all."""
    return ~mask.any(dim=-1)  # (T,)


def mask_with_constant(scores: torch.Tensor, mask: torch.Tensor, value: float = LARGE_NEGATIVE) -> torch.Tensor:
    """masked[i, j] = scores[i, j] where allowed, else a large negative constant (-1e9, or 003's -9e15)."""
    return scores.masked_fill(~mask, value)  # (T, T)


def multiply_and_renormalize(weights: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """w'_ij = w_ij m_ij / sum_k w_ik m_ik: softmax first, then zero the blocked weights and rescale.

    A fully masked row divides 0 by 0 and gives NaN: that is the lesson.
    """
    kept = weights * mask.to(weights.dtype)  # (T, T)
    return kept / kept.sum(dim=-1, keepdim=True)  # (T, T)


# --- lesson 6 (masking page): building masks by name, the masking methods compared ---

MASK_TYPES = ("none", "causal", "padding", "sliding window")
VERY_LARGE_NEGATIVE = -9e15  # the constant of the 003 tutorial
MASKING_METHODS = ("neg_inf", "minus_1e9", "minus_9e15", "multiply", "lab")


def mask_by_kind(kind: str, T: int, *, padded: Iterable[int] = (), window: int = 1) -> torch.Tensor:
    """The (T, T) mask named by ``kind`` (one of MASK_TYPES); True = may attend."""
    if kind == "none":
        return no_mask(T)
    if kind == "causal":
        return causal_mask(T)
    if kind == "padding":
        return padding_mask(T, padded)
    if kind == "sliding window":
        return sliding_window_mask(T, window)
    raise ValueError(f"Unknown mask type {kind!r}: choose one of {', '.join(MASK_TYPES)}.")


def block_query_row(mask: torch.Tensor, i: int) -> torch.Tensor:
    """mask with row i all False: query i may attend to nothing (a fully masked row)."""
    blocked = mask.clone()  # (T, T)
    blocked[i] = False
    return blocked


def key_padding_vector(T: int, padded: Iterable[int]) -> torch.Tensor:
    """key_padding_mask[j] = True where key j is padding: PyTorch's (T,) vector, True = blocked."""
    return ~padding_mask(T, padded)[0]  # (T,)


def blocked_weight(weights: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """leak_i = sum_j w_ij [mask_ij is False]: how much attention query i gives to keys the mask blocks."""
    return (weights * (~mask).to(weights.dtype)).sum(dim=-1)  # (T, T) -> (T,)


def softmax_after_neg_inf(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """torch.softmax(scores with -inf where blocked): exp(-inf) = 0, but a fully masked row gives 0/0 = NaN."""
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)  # (T, T)


def softmax_after_constant(scores: torch.Tensor, mask: torch.Tensor, value: float = LARGE_NEGATIVE) -> torch.Tensor:
    """torch.softmax(scores with ``value`` where blocked): a fully masked row becomes uniform, 1/T each."""
    return torch.softmax(mask_with_constant(scores, mask, value), dim=-1)  # (T, T)


def masking_methods(scores: torch.Tensor, mask: torch.Tensor) -> dict[str, torch.Tensor]:
    """The same masked softmax done five ways (keys: MASKING_METHODS); each (T, T)."""
    return {
        "neg_inf": softmax_after_neg_inf(scores, mask),
        "minus_1e9": softmax_after_constant(scores, mask, LARGE_NEGATIVE),
        "minus_9e15": softmax_after_constant(scores, mask, VERY_LARGE_NEGATIVE),
        "multiply": multiply_and_renormalize(torch.softmax(scores, dim=-1), mask),
        "lab": softmax(apply_mask(scores, mask)),
    }


def method_differences(methods: dict[str, torch.Tensor], mask: torch.Tensor) -> dict[str, float]:
    """max_ij |w_ij - lab_ij| for each method, over the rows that may attend to at least one key."""
    rows = mask.any(dim=-1)  # (T,)
    lab = methods["lab"][rows].to(torch.float64)  # (rows, T)
    return {
        name: float((weights[rows].to(torch.float64) - lab).abs().max().item()) if bool(rows.any()) else 0.0
        for name, weights in methods.items()
    }


def blocked_count(mask: torch.Tensor) -> int:
    """Number of (query, key) pairs the mask blocks: the False cells."""
    return int((~mask).sum().item())


# --- padding: [PAD] tokens the learner adds, and a row whose allowed weights underflow ---

PAD = "[PAD]"  # the padding token: never a real word


@dataclass(frozen=True)
class Padded:
    """A sentence padded to a length: its tokens, its X, and where the [PAD] tokens are."""

    tokens: tuple[str, ...]  # the sentence, then PAD until the length
    X: torch.Tensor  # (length, d_model): X, then one pad vector per [PAD]
    padded: tuple[int, ...]  # positions of the [PAD] tokens

    @property
    def key_padding_mask(self) -> torch.Tensor:
        """PyTorch's key_padding_mask: (length,), True where the key is [PAD] (True = blocked)."""
        return key_padding_vector(len(self.tokens), self.padded)  # (length,)


def pad_to_length(
    tokens: Sequence[str], X: torch.Tensor, length: int, pad_vector: torch.Tensor | None = None
) -> Padded:
    """tokens + [PAD] * (length - T), and X with a zero row (or ``pad_vector``) for each [PAD]."""
    T, d_model = X.shape
    if length < T:
        raise ValueError(
            _("Padding can only lengthen the sentence: {length} is shorter than its {T} tokens.", length=length, T=T)
        )
    pad = X.new_zeros(d_model) if pad_vector is None else pad_vector.to(X.dtype)  # (d_model,)
    rows = pad.expand(length - T, d_model)  # (length - T, d_model)
    return Padded((*tokens, *[PAD] * (length - T)), torch.cat([X, rows]), tuple(range(T, length)))


# --- lesson 6's state: the chosen mask on the padded sentence, in one call ---


@dataclass(frozen=True)
class MaskChoice:
    """What the learner chose on lesson 6: the mask type and its settings, and the two toggles."""

    kind: str  # one of MASK_TYPES
    pads: int  # [PAD] tokens appended (padding mask only)
    window: int  # the sliding window's width w
    enabled: bool  # False: the weights use no mask, to show what the mask prevents
    demo_row: bool  # True: the query's row is blocked entirely (a fully masked row)


def mask_phrase(choice: MaskChoice) -> str:
    """The mask the weights use inside a sentence, in the learner's language: "the causal mask", "the padding mask
    (2 [PAD])", "the mask switched off"."""
    if not choice.enabled:
        return _("the mask switched off")
    if choice.kind == "none":
        name = _("no mask")
    elif choice.kind == "causal":
        name = _("the causal mask")
    elif choice.kind == "padding":
        name = _("the padding mask ({pads} [PAD])", pads=choice.pads)
    else:
        name = _("the sliding-window mask (w = {window})", window=choice.window)
    return _("{mask} and the row of the query blocked", mask=name) if choice.demo_row else name


@dataclass(frozen=True)
class MaskedAttention:
    """Lesson 6's state: the padded input, the chosen mask, the mask the weights use, every step, the empty rows."""

    padded: Padded  # the sentence + [PAD] tokens: N = T + pads rows
    mask: torch.Tensor  # (N, N) the chosen mask, True = may attend
    active: torch.Tensor  # (N, N) the mask applied: ``mask``, or every cell True while the mask is off
    steps: AttentionSteps  # Q = K = V = X, scaled: scores, weights (N, N), context (N, d_model)
    empty_rows: torch.Tensor  # (N,) True where a query may attend to nothing


def masked_attention(tokens: Sequence[str], X: torch.Tensor, choice: MaskChoice, query_index: int) -> MaskedAttention:
    """weights = softmax(X Xᵀ / sqrt(d_model) + M) on X padded with choice.pads [PAD] rows, M from ``choice``."""
    T = X.shape[0]
    padded = pad_to_length(tokens, X, T + choice.pads)  # X: (T, d_model) -> (N, d_model)
    N = padded.X.shape[0]
    mask = mask_by_kind(choice.kind, N, padded=padded.padded, window=choice.window)  # (N, N)
    if choice.demo_row:
        mask = block_query_row(mask, query_index)  # (N, N), row query_index all False
    active = mask if choice.enabled else no_mask(N)  # (N, N)
    steps = self_attention(padded.X, mask=active, scale=True)  # weights (N, N), context (N, d_model)
    return MaskedAttention(padded, mask, active, steps, fully_masked_rows(active))


UNDERFLOW_GAP = 200.0  # the allowed key scores this much below a blocked one: e^-200 underflows in float32


def underflow_example(gap: float = UNDERFLOW_GAP) -> tuple[torch.Tensor, torch.Tensor]:
    """scores [[gap, 0]] with key 0 blocked: softmax first gives the allowed key e^-gap, 0 in float32."""
    scores = torch.tensor([[gap, 0.0]])  # (1, 2): the blocked key scores gap above the allowed one
    mask = torch.tensor([[False, True]])  # (1, 2): only key 1 may be attended to
    return scores, mask
