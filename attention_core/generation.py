"""Generation, step by step: a KV cache, what it saves, the cost of attention, online softmax.

Shape letters: T tokens, t the current step (0-based), d_model embedding size, d_k query/key
size, d_v value size, h heads, L layers. At step t the new token is the only query; the keys and
values are those of tokens 0..t, kept in a cache that grows by one K row and one V row per step.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import pandas as pd
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from attention_core.attention import apply_mask, attention_scores, context_vectors, scale_scores, softmax
from attention_core.i18n import _
from attention_core.masks import causal_mask
from attention_core.reference import Agreement, agreement, sdpa_reference
from attention_core.training import HALF, TinyTransformer, heads_of, join_heads

FLOAT32_BYTES = 4
MAX_STEPPED = 32  # tokens the page steps through; a longer sidebar sentence is cut here, with a message


def max_difference(a: torch.Tensor, b: torch.Tensor) -> float:
    """max |a - b| over all entries (0 for equal tensors)."""
    return float((a - b).abs().max()) if a.numel() else 0.0


# --- one head, step by step with a cache ------------------------------------------------------------


@dataclass(frozen=True)
class CacheStep:
    """Step t of cached attention: the new query, the cache so far, its scores, weights and context."""

    t: int
    q: torch.Tensor  # (d_k,)
    K: torch.Tensor  # (t + 1, d_k)  the key cache after appending k_t
    V: torch.Tensor  # (t + 1, d_v)  the value cache after appending v_t
    scores: torch.Tensor  # (t + 1,)  q . k_j / sqrt(d_k)
    weights: torch.Tensor  # (t + 1,)
    context: torch.Tensor  # (d_v,)


def cached_step(x: torch.Tensor, K: torch.Tensor, V: torch.Tensor, W_q, W_k, W_v, t: int) -> CacheStep:
    """Append k_t = x W_k and v_t = x W_v to the cache, then attend with q_t = x W_q over keys 0..t."""
    q = x @ W_q  # (d_model,) @ (d_model, d_k) -> (d_k,)
    K = torch.cat([K, (x @ W_k).unsqueeze(0)])  # (t, d_k) -> (t + 1, d_k)
    V = torch.cat([V, (x @ W_v).unsqueeze(0)])  # (t, d_v) -> (t + 1, d_v)
    scores = scale_scores(attention_scores(q.unsqueeze(0), K), q.shape[-1])  # (1, d_k) @ (d_k, t + 1) -> (1, t + 1)
    weights = softmax(scores)  # (1, t + 1): no mask needed, the cache holds only the past
    context = context_vectors(weights, V)  # (1, t + 1) @ (t + 1, d_v) -> (1, d_v)
    return CacheStep(t, q, K, V, scores[0], weights[0], context[0])


def cached_attention(X: torch.Tensor, W_q, W_k, W_v) -> list[CacheStep]:
    """Every step of attention over X (T, d_model) token by token with a KV cache."""
    K = torch.zeros(0, W_k.shape[1], dtype=X.dtype)  # (0, d_k)
    V = torch.zeros(0, W_v.shape[1], dtype=X.dtype)  # (0, d_v)
    steps = []
    for t in range(X.shape[0]):
        step = cached_step(X[t], K, V, W_q, W_k, W_v, t)
        K, V = step.K, step.V
        steps.append(step)
    return steps


def masked_scores(X: torch.Tensor, W_q, W_k) -> torch.Tensor:
    """Q K^T / sqrt(d_k) with -inf above the diagonal (lesson 6's causal mask): (T, T)."""
    Q, K = X @ W_q, X @ W_k  # (T, d_k), (T, d_k)
    return apply_mask(scale_scores(attention_scores(Q, K), Q.shape[-1]), causal_mask(X.shape[0]))  # (T, T)


def recomputed_attention(X: torch.Tensor, W_q, W_k, W_v) -> tuple[torch.Tensor, torch.Tensor]:
    """(weights (T, T), context (T, d_v)) of the whole sequence at once with the causal mask of lesson 6."""
    Q, K, V = X @ W_q, X @ W_k, X @ W_v  # (T, d_k), (T, d_k), (T, d_v)
    scaled = scale_scores(attention_scores(Q, K), Q.shape[-1])  # (T, T)
    weights = softmax(apply_mask(scaled, causal_mask(X.shape[0])))  # (T, T)
    return weights, context_vectors(weights, V)  # (T, T), (T, d_v)


def reference_context(X: torch.Tensor, W_q, W_k, W_v) -> torch.Tensor:
    """PyTorch's F.scaled_dot_product_attention on X W_q, X W_k, X W_v with the causal mask: (T, d_v)."""
    mask = torch.tril(torch.ones(X.shape[0], X.shape[0], dtype=torch.bool))  # (T, T), built here, not by the lab
    return sdpa_reference(X @ W_q, X @ W_k, X @ W_v, mask=mask)  # (T, d_v)


def cache_checks(steps: list[CacheStep], X: torch.Tensor, W_q, W_k, W_v) -> dict[str, Agreement]:
    """The cached and the recomputed context, each against PyTorch's SDPA with the causal mask."""
    _weights, context = recomputed_attention(X, W_q, W_k, W_v)  # (T, d_v)
    cached_context = torch.stack([step.context for step in steps])  # (T, d_v)
    reference = reference_context(X, W_q, W_k, W_v)  # (T, d_v)
    return {
        "cached context vs F.scaled_dot_product_attention": agreement(cached_context, reference),
        "recomputed context vs F.scaled_dot_product_attention": agreement(context, reference),
    }


def cache_rows_as_matrix(steps: list[CacheStep]) -> torch.Tensor:
    """The cached weights rows stacked into a (T, T) matrix, zeros where a step had no key yet."""
    T = len(steps)
    weights = torch.zeros(T, T, dtype=steps[0].weights.dtype)
    for step in steps:
        weights[step.t, : step.t + 1] = step.weights  # row t covers keys 0..t
    return weights


# --- the trained model, with a cache per layer -----------------------------------------------------


def first_head(model: TinyTransformer, tokens: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """(X, W_q, W_k, W_v) of layer 1, head 1: X the normalised embeddings (T, d_model), W_* (d_model, d_k)."""
    layer = model.layers[0]
    d_k = layer.W_q.shape[1] // layer.num_heads
    with torch.no_grad():
        X = layer.norm(model.embed(tokens.unsqueeze(0)))[0]  # (T, d_model)
    return X, layer.W_q.detach()[:, :d_k], layer.W_k.detach()[:, :d_k], layer.W_v.detach()[:, :d_k]


def generation_prompt(task: str, example: torch.Tensor) -> tuple[torch.Tensor, int]:
    """(prompt, new tokens) for a task: reverse gets its symbols and '|', then writes them backwards."""
    if task == "reverse":
        return example[: HALF + 1], example.shape[0] - HALF - 1
    if task == "previous":
        return example[: example.shape[0] // 2], example.shape[0] - example.shape[0] // 2
    return example, 0  # induction: the whole sequence; the last position predicts B


@dataclass(frozen=True)
class Generation:
    """Greedy decoding with a KV cache, and the same logits recomputed over the whole sequence."""

    tokens: torch.Tensor  # (T,) prompt then generated tokens
    prompt_length: int
    cached_logits: torch.Tensor  # (T, V) logits of each position, computed one token at a time
    full_logits: torch.Tensor  # (T, V) logits of the whole sequence in one causal forward pass
    cache_lengths: list[int]  # keys in each layer's cache after each step (one more per step)
    weights: torch.Tensor  # (L, h, T, T) each step's weights rows from the cache

    @property
    def difference(self) -> float:
        return max_difference(self.cached_logits, self.full_logits)


def model_step(model: TinyTransformer, token: int, t: int, caches: list) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """Logits (V,) of position t from the new token alone, appending its K, V to each layer's cache."""
    x = model.embed(torch.tensor([[token]]), start=t)  # (1, 1, d_model)
    rows = []
    for layer, cache in zip(model.layers, caches, strict=True):
        h = layer.num_heads
        normed = layer.norm(x)  # (1, 1, d_model)
        q = heads_of(normed @ layer.W_q, h)  # (1, h, 1, d_k)
        cache["K"] = torch.cat([cache["K"], heads_of(normed @ layer.W_k, h)], dim=2)  # (1, h, t + 1, d_k)
        cache["V"] = torch.cat([cache["V"], heads_of(normed @ layer.W_v, h)], dim=2)  # (1, h, t + 1, d_k)
        scores = scale_scores(attention_scores(q, cache["K"]), q.shape[-1])  # (1, h, 1, t + 1)
        weights = softmax(scores)  # (1, h, 1, t + 1)
        context = context_vectors(weights, cache["V"])  # (1, h, 1, d_k)
        x = x + join_heads(context) @ layer.W_o  # (1, 1, d_model)
        if layer.mlp is not None:
            x = x + layer.mlp(x)
        rows.append(weights[0, :, 0])  # (h, t + 1)
    return model.unembed(model.norm(x))[0, 0], rows  # (V,)


def generate(model: TinyTransformer, prompt: torch.Tensor, new_tokens: int) -> Generation:
    """Greedy decoding: feed the prompt token by token, then append the most likely token new_tokens times."""
    T_max = model.position_embedding.num_embeddings
    if not 1 <= prompt.shape[0] <= T_max or prompt.shape[0] + new_tokens > T_max:
        raise ValueError(
            _("The model knows {count} positions: prompt plus new tokens must fit in {count}.", count=T_max)
        )
    L, h = len(model.layers), model.layers[0].num_heads
    d_k = model.layers[0].W_q.shape[1] // h
    caches = [{"K": torch.zeros(1, h, 0, d_k), "V": torch.zeros(1, h, 0, d_k)} for _layer in range(L)]
    tokens, logits, lengths = list(prompt.tolist()), [], []
    T = prompt.shape[0] + new_tokens
    weights = torch.zeros(L, h, T, T)
    with torch.no_grad():
        for t in range(T):
            step_logits, rows = model_step(model, tokens[t], t, caches)  # (V,)
            logits.append(step_logits)
            lengths.append(int(caches[0]["K"].shape[2]))
            for layer, row in enumerate(rows):
                weights[layer, :, t, : t + 1] = row  # (h, t + 1)
            if t + 1 == len(tokens) and len(tokens) < T:
                tokens.append(int(step_logits.argmax()))
        sequence = torch.tensor(tokens)  # (T,)
        full_logits, _weights = model(sequence.unsqueeze(0))  # (1, T, V)
    return Generation(sequence, prompt.shape[0], torch.stack(logits), full_logits[0], lengths, weights)


# --- what the cache saves: multiply-adds ------------------------------------------------------------


def step_multiply_adds(t: int, d_model: int, d_k: int, d_v: int, cached: bool) -> int:
    """Multiply-adds of step t (0-based, t + 1 tokens so far) for one head.

    With the cache: project the new token (d_model (2 d_k + d_v)), one row of scores ((t + 1) d_k)
    and one context row ((t + 1) d_v). Without: project all t + 1 tokens and compute the whole
    (t + 1) x (t + 1) scores and context again.
    """
    n = t + 1
    projections = d_model * (2 * d_k + d_v)  # q, k, v of one token
    if cached:
        return projections + n * d_k + n * d_v
    return n * projections + n * n * d_k + n * n * d_v


def multiply_add_frame(T: int, d_model: int, d_k: int, d_v: int) -> pd.DataFrame:
    """Per step t = 1..T: multiply-adds with and without the cache, and the running totals."""
    with_cache = [step_multiply_adds(t, d_model, d_k, d_v, True) for t in range(T)]
    without = [step_multiply_adds(t, d_model, d_k, d_v, False) for t in range(T)]
    frame = pd.DataFrame({"step": range(1, T + 1), "with cache": with_cache, "without cache": without})
    frame["total with cache"] = frame["with cache"].cumsum()
    frame["total without cache"] = frame["without cache"].cumsum()
    return frame


def total_multiply_adds(T: int, d_model: int, d_k: int, d_v: int, cached: bool) -> int:
    """Closed form of the sum over steps: T P + (d_k + d_v) T(T+1)/2 with the cache,
    P T(T+1)/2 + (d_k + d_v) T(T+1)(2T+1)/6 without (P = d_model (2 d_k + d_v))."""
    P = d_model * (2 * d_k + d_v)
    triangle, pyramid = T * (T + 1) // 2, T * (T + 1) * (2 * T + 1) // 6
    return T * P + (d_k + d_v) * triangle if cached else P * triangle + (d_k + d_v) * pyramid


# --- the cost of attention as T grows --------------------------------------------------------------

COST_SIZES = (64, 128, 256, 512, 1024)


def attention_matrix_bytes(T: int, dtype: torch.dtype = torch.float32) -> int:
    """Bytes of one (T, T) matrix (scores or weights) per head and layer: T^2 x 4 in float32."""
    return T * T * torch.empty(0, dtype=dtype).element_size()


class AllocationCounter(TorchDispatchMode):
    """Counts the bytes of every new tensor storage the torch operations inside it create (views and in-place
    results share their input's storage and are not counted). CPU torch has no allocation statistics of its own."""

    def __init__(self) -> None:
        super().__init__()
        self.bytes = 0

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        """False: nothing here is compiled, so torch need not wrap ``__torch_dispatch__`` in torch._dynamo.disable,
        whose first call imports torch._dynamo and sympy (68 MB of a server's memory, issue 37)."""
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        inputs = {t.untyped_storage().data_ptr() for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)}
        result = func(*args, **kwargs)
        outputs = {t.untyped_storage().data_ptr(): t for t in tree_leaves(result) if isinstance(t, torch.Tensor)}
        self.bytes += sum(t.untyped_storage().nbytes() for ptr, t in outputs.items() if ptr not in inputs)
        return result


def causal_head(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    """One causal attention head as the lab computes it: softmax(mask(Q K^T / sqrt(d_k))) V; (T, d_v)."""
    weights = softmax(apply_mask(scale_scores(attention_scores(Q, K), Q.shape[-1]), causal_mask(Q.shape[0])))
    return context_vectors(weights, V)  # (T, T) @ (T, d_v) -> (T, d_v)


def measure_attention(T: int, d_k: int, seed: int = 0, repeats: int = 3) -> tuple[float, int]:
    """(seconds, bytes): the fastest of ``repeats`` causal attentions of T tokens, and the bytes of every tensor
    one run allocates (the mask, scores, their scaled and masked copies, exponentials, weights, context).

    One untimed run comes first: a process's first attention of a size pays one-off costs (torch's kernels and
    allocator pools) that are not attention's. Time it on one torch thread, as the app runs: with two, a busy
    machine made each run wait for the other thread, and the fastest of 3 read a hundred times the work."""
    generator = torch.Generator().manual_seed(seed)
    Q, K, V = (torch.randn(T, d_k, generator=generator) for _matrix in range(3))  # (T, d_k) each
    causal_head(Q, K, V)  # untimed: the first run's one-off costs are not attention's
    best = math.inf
    for _repeat in range(repeats):
        start = time.perf_counter()
        causal_head(Q, K, V)  # (T, d_k)
        best = min(best, time.perf_counter() - start)
    with AllocationCounter() as counter:
        causal_head(Q, K, V)
    return best, counter.bytes


def cost_frame(sizes=COST_SIZES, d_k: int = 16) -> pd.DataFrame:
    """T, cells T^2, bytes by formula and measured, milliseconds measured and c T^2 (c fitted at the largest T)."""
    rows = [(T, *measure_attention(T, d_k)) for T in sizes]
    frame = pd.DataFrame(rows, columns=["T", "seconds", "allocated bytes (measured)"])
    frame["ms"] = frame["seconds"] * 1000
    frame["cells"] = frame["T"] ** 2
    frame["bytes (formula)"] = [attention_matrix_bytes(T) for T in frame["T"]]
    per_cell = frame["ms"].iloc[-1] / frame["cells"].iloc[-1]
    frame["ms (c·T²)"] = frame["cells"] * per_cell
    frame["allocated / formula"] = frame["allocated bytes (measured)"] / frame["bytes (formula)"]
    return frame[
        ["T", "cells", "bytes (formula)", "allocated bytes (measured)", "allocated / formula", "ms", "ms (c·T²)"]
    ]


def smallest_against_formula(frame: pd.DataFrame) -> tuple[int, float]:
    """(smallest T, measured ms / c·T² ms there) of a cost_frame: above 1 when a fixed cost per call dominates."""
    first = frame.iloc[0]
    return int(first["T"]), float(first["ms"] / first["ms (c·T²)"])


# --- online softmax: one row, block by block --------------------------------------------------------


@dataclass(frozen=True)
class OnlineStep:
    """One block of the online softmax: the running max and sum before and after it."""

    block: int
    start: int
    values: torch.Tensor  # (block_size,) the scores of this block
    block_max: float
    old_max: float
    new_max: float
    rescale: float  # exp(old_max - new_max): how much the old sum shrinks
    block_sum: float  # sum_j exp(s_j - new_max) over this block
    running_sum: float  # old sum * rescale + block sum


def online_softmax_steps(row: torch.Tensor, block_size: int) -> list[OnlineStep]:
    """Running max m and sum l over blocks: m' = max(m, max block), l' = l e^(m - m') + sum e^(s - m')."""
    if block_size < 1:
        raise ValueError("The block size must be at least 1.")
    m, total, steps = -math.inf, 0.0, []
    for index, start in enumerate(range(0, row.shape[0], block_size)):
        values = row[start : start + block_size]  # (block_size,)
        block_max = float(values.max())
        new_max = max(m, block_max)
        rescale = math.exp(m - new_max) if m != -math.inf else 0.0  # an empty sum stays 0
        block_sum = float(torch.exp(values - new_max).sum()) if new_max != -math.inf else 0.0
        total = total * rescale + block_sum
        steps.append(OnlineStep(index, start, values, block_max, m, new_max, rescale, block_sum, total))
        m = new_max
    return steps


def online_softmax(row: torch.Tensor, block_size: int) -> torch.Tensor:
    """softmax(row) from the final running max and sum: e^(s_j - m) / l (all zeros for an all -inf row)."""
    last = online_softmax_steps(row, block_size)[-1]
    if last.running_sum == 0:
        return torch.zeros_like(row)
    return torch.exp(row - last.new_max) / last.running_sum  # (T,)


def online_frame(steps: list[OnlineStep]) -> pd.DataFrame:
    """One row per block: its keys, its max, the running max before and after, the rescale, the sums."""
    return pd.DataFrame(
        {
            "block": [  # counted from 1, its keys in the learner's language (the column names are keys: see the page)
                _("{block}: keys {first}–{last}", block=s.block + 1, first=s.start + 1, last=s.start + len(s.values))
                for s in steps
            ],
            "block max": [s.block_max for s in steps],
            "m before": [s.old_max for s in steps],
            "m after": [s.new_max for s in steps],
            "rescale e^(m − m′)": [s.rescale for s in steps],
            "block sum": [s.block_sum for s in steps],
            "running sum l": [s.running_sum for s in steps],
        }
    ).set_index("block")


def block_frame(row: torch.Tensor, labels: list[str], block_size: int) -> pd.DataFrame:
    """Columns key, score (None where -inf), block: one row's scores coloured by the block that reads them."""
    return pd.DataFrame(
        {
            "key": labels,
            "score": [v if math.isfinite(v) else None for v in row.tolist()],
            "block": [f"block {j // block_size + 1}" for j in range(len(labels))],
        }
    )
