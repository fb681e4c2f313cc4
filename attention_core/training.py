"""Watching attention being learned: toy tasks, a tiny causal transformer, a training loop.

Shape letters: B sequences in a batch, T tokens, d_model embedding size, h heads, d_k = d_model / h,
L layers, V the vocabulary size. The attention inside the model is attention_core's own
(attention_scores -> scale_scores -> apply_mask(causal_mask) -> softmax -> context_vectors,
split_heads / merge_heads), so what the learner watches is the same arithmetic as lessons 1-7.

Tasks (each has a known right attention pattern):
- ``previous``: copy the previous token; position i must look at key i - 1.
- ``reverse``: after a separator, write the first half backwards; the query predicting the
  k-th reversed token must look at that token in the first half.
- ``induction``: distinct tokens, then one of them again at the end ("... A B ... A"): predict
  B; the last query must look at the token just after the earlier A (two layers needed).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

import torch
from torch import nn
from torch.nn import functional as F

from attention_core.attention import apply_mask, attention_scores, context_vectors, scale_scores, softmax
from attention_core.heads import head_size, merge_heads, split_heads
from attention_core.i18n import N_, _
from attention_core.masks import causal_mask

IGNORE = -100  # target of a position that is not scored (cross_entropy's ignore_index)
TASKS = {  # task -> its name, translated where shown
    "previous": N_("Copy the previous token"),
    "reverse": N_("Reverse the sequence"),
    "induction": N_("Induction: … A B … A → B"),
}
VOCAB = 12  # symbols a..l; the reverse task adds a separator "|"
LENGTH = 8  # tokens per sequence for previous and induction; reverse: 4 symbols, "|", 3 outputs
HALF = 4  # symbols the reverse task reverses
D_MODEL = 32
BATCH = 64
HELD_OUT = 256
SNAPSHOTS = 11  # step 0, then evenly spaced up to the last step
LIMITS = {"layers": (1, 2), "heads": (1, 4), "steps": (10, 2000), "learning_rate": (1e-4, 1000.0)}
SEED_LIMIT = 2**31 - 1
DIVERGENCE_FACTOR = 10.0  # a loss this many times the first one means the learning rate is too large


@dataclass(frozen=True)
class TrainingSettings:
    """What the learner chooses: plain values, so they can key a cache."""

    task: str = "previous"
    seed: int = 0
    layers: int = 1
    heads: int = 1
    steps: int = 150
    learning_rate: float = 0.003
    mlp: bool = False


DEFAULTS = {
    "previous": TrainingSettings("previous", 0, 1, 1, 150, 0.003),
    "reverse": TrainingSettings("reverse", 0, 1, 2, 300, 0.003),
    "induction": TrainingSettings("induction", 0, 2, 2, 500, 0.003),
}


LIMIT_ERRORS = {
    "layers": N_("The number of layers must be from {low} to {high}."),
    "heads": N_("The number of heads must be from {low} to {high}."),
    "steps": N_("The number of steps must be from {low} to {high}."),
}


def check_settings(settings: TrainingSettings) -> None:
    """ValueError with a sentence a learner understands when a setting is out of its limits."""
    if settings.task not in TASKS:
        raise ValueError(f"Unknown task {settings.task!r}: choose one of {', '.join(TASKS)}.")
    if not 0 <= settings.seed <= SEED_LIMIT:
        raise ValueError(_("The seed must be a whole number from 0 to {limit}.", limit=SEED_LIMIT))
    for name in ("layers", "heads", "steps"):
        low, high = LIMITS[name]
        if not low <= getattr(settings, name) <= high:
            raise ValueError(_(LIMIT_ERRORS[name], low=low, high=high))
    low, high = LIMITS["learning_rate"]
    if not (math.isfinite(settings.learning_rate) and low <= settings.learning_rate <= high):
        raise ValueError(_("The learning rate must be from {low} to {high}.", low=f"{low:g}", high=f"{high:g}"))
    head_size(D_MODEL, settings.heads)


# --- tasks -----------------------------------------------------------------------------------------


def vocabulary(task: str) -> list[str]:
    """The symbols of a task: a, b, c, … and, for reverse, the separator '|'."""
    symbols = [chr(ord("a") + i) for i in range(VOCAB)]
    return [*symbols, "|"] if task == "reverse" else symbols


def position_labels(task: str, tokens: torch.Tensor) -> list[str]:
    """Row and column labels of a sequence: '1:a', '2:b', … (position first, counted from 1 as everywhere in
    the lab, so repeats stay distinct)."""
    symbols = vocabulary(task)
    return [f"{i}:{symbols[int(token)]}" for i, token in enumerate(tokens, 1)]


def sequence_length(task: str) -> int:
    """T of a task: 2 * HALF for reverse (symbols, '|', outputs but the last), else LENGTH."""
    return 2 * HALF if task == "reverse" else LENGTH


def previous_batch(count: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Random symbols; position i must predict token i - 1 (position 0 is not scored)."""
    tokens = torch.randint(0, VOCAB, (count, LENGTH), generator=generator)  # (B, T)
    targets = torch.full_like(tokens, IGNORE)
    targets[:, 1:] = tokens[:, :-1]  # (B, T - 1)
    return tokens, targets


def reverse_batch(count: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """HALF symbols, '|', then the symbols backwards: from '|' on, each position predicts the next reversed one."""
    symbols = torch.randint(0, VOCAB, (count, HALF), generator=generator)  # (B, HALF)
    separator = torch.full((count, 1), VOCAB)  # (B, 1), the token after the symbols
    reversed_symbols = symbols.flip(1)  # (B, HALF)
    tokens = torch.cat([symbols, separator, reversed_symbols[:, :-1]], dim=1)  # (B, 2 HALF)
    targets = torch.full_like(tokens, IGNORE)
    targets[:, HALF:] = reversed_symbols  # (B, HALF)
    return tokens, targets


def induction_batch(count: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Distinct symbols with one of them, A, again at the end: the last position predicts B, the token after A."""
    keys = torch.rand(count, VOCAB, generator=generator)  # (B, V): argsort gives a random permutation
    tokens = keys.argsort(dim=1)[:, :LENGTH].clone()  # (B, T) distinct symbols
    earlier = torch.randint(0, LENGTH - 2, (count,), generator=generator)  # (B,) where A first occurs
    rows = torch.arange(count)
    tokens[:, -1] = tokens[rows, earlier]  # A again at the end
    targets = torch.full_like(tokens, IGNORE)
    targets[:, -1] = tokens[rows, earlier + 1]  # B
    return tokens, targets


BATCHES = {"previous": previous_batch, "reverse": reverse_batch, "induction": induction_batch}


def make_batch(task: str, count: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """(tokens, targets), both (count, T) integers; targets are IGNORE where nothing is scored."""
    return BATCHES[task](count, generator)


def ideal_keys(task: str, tokens: torch.Tensor) -> torch.Tensor:
    """For one sequence (T,), the key each query should attend to in the last layer (-1: not scored)."""
    T = tokens.shape[0]
    keys = torch.full((T,), -1)
    if task == "previous":
        keys[1:] = torch.arange(T - 1)
    elif task == "reverse":
        positions = torch.arange(HALF, T)
        keys[HALF:] = 2 * HALF - 1 - positions  # predicting reversed symbol k looks at symbol HALF-1-k
    else:
        earlier = int((tokens[:-1] == tokens[-1]).nonzero()[0, 0])
        keys[-1] = earlier + 1
    return keys


def ideal_pattern(task: str, tokens: torch.Tensor) -> torch.Tensor:
    """The right attention weights (T, T) for one sequence: 1 on the ideal key, 0 elsewhere (rows not scored: 0)."""
    keys = ideal_keys(task, tokens)  # (T,)
    T = tokens.shape[0]
    pattern = torch.zeros(T, T)
    scored = keys >= 0
    pattern[scored.nonzero().flatten(), keys[scored]] = 1.0  # (T, T)
    return pattern


def closeness(weights: torch.Tensor, ideal: torch.Tensor) -> float:
    """Mean over scored query rows of the weight on the ideal key: 1 = the right pattern, ~1/T = uniform."""
    scored = ideal.sum(dim=-1) > 0  # (T,)
    if not scored.any():
        return float("nan")
    return float((weights * ideal).sum(dim=-1)[scored].mean())


# --- the model --------------------------------------------------------------------------------------


def heads_of(M: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(B, T, d_model) -> (B, h, T, d_k) with attention_core's split_heads."""
    B, T, d_model = M.shape
    split = split_heads(M.reshape(B * T, d_model), num_heads)  # (h, B T, d_k)
    return split.reshape(num_heads, B, T, -1).transpose(0, 1)  # (B, h, T, d_k)


def join_heads(M: torch.Tensor) -> torch.Tensor:
    """(B, h, T, d_k) -> (B, T, d_model) with attention_core's merge_heads."""
    B, h, T, d_k = M.shape
    merged = merge_heads(M.transpose(0, 1).reshape(h, B * T, d_k))  # (B T, d_model)
    return merged.reshape(B, T, h * d_k)


def causal_attention(
    X: torch.Tensor, W_q: torch.Tensor, W_k: torch.Tensor, W_v: torch.Tensor, num_heads: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """(context, weights): softmax(causal(Q_h K_h^T / sqrt(d_k))) V_h per head, heads merged."""
    T = X.shape[1]
    Q = heads_of(X @ W_q, num_heads)  # (B, T, d_model) @ (d_model, d_model) -> (B, h, T, d_k)
    K = heads_of(X @ W_k, num_heads)  # (B, h, T, d_k)
    V = heads_of(X @ W_v, num_heads)  # (B, h, T, d_k)
    scores = attention_scores(Q, K)  # (B, h, T, d_k) @ (B, h, d_k, T) -> (B, h, T, T)
    scaled = scale_scores(scores, Q.shape[-1])  # (B, h, T, T)
    masked = apply_mask(scaled, causal_mask(T))  # (B, h, T, T), -inf above the diagonal
    weights = softmax(masked)  # (B, h, T, T)
    context = context_vectors(weights, V)  # (B, h, T, T) @ (B, h, T, d_k) -> (B, h, T, d_k)
    return join_heads(context), weights  # (B, T, d_model), (B, h, T, T)


def linear(n_in: int, n_out: int, generator: torch.Generator) -> nn.Linear:
    """nn.Linear(n_in, n_out) initialised as nn.Linear initialises itself, its draws from ``generator``:
    W uniform in ±1/sqrt(n_in) (kaiming_uniform_ with a = sqrt(5)), then b in the same range."""
    layer = nn.utils.skip_init(nn.Linear, n_in, n_out)
    nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)  # (n_out, n_in)
    bound = 1 / math.sqrt(n_in)
    nn.init.uniform_(layer.bias, -bound, bound, generator=generator)  # (n_out,)
    return layer


def embedding(count: int, d_model: int, generator: torch.Generator) -> nn.Embedding:
    """nn.Embedding(count, d_model) initialised as nn.Embedding initialises itself (standard normal), its draws
    from ``generator``."""
    return nn.Embedding(count, d_model, _weight=torch.randn(count, d_model, generator=generator))


class AttentionLayer(nn.Module):
    """x + W_o-projected causal multi-head attention of LayerNorm(x), then an optional small MLP.

    Every parameter is drawn from ``generator``, in the order of the lines below."""

    def __init__(self, d_model: int, num_heads: int, mlp: bool, generator: torch.Generator) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.norm = nn.LayerNorm(d_model)
        scale, small = d_model**-0.5, 0.02  # small W_q, W_k: the untrained attention starts near uniform
        self.W_q = nn.Parameter(torch.randn(d_model, d_model, generator=generator) * small)
        self.W_k = nn.Parameter(torch.randn(d_model, d_model, generator=generator) * small)
        self.W_v = nn.Parameter(torch.randn(d_model, d_model, generator=generator) * scale)
        self.W_o = nn.Parameter(torch.randn(d_model, d_model, generator=generator) * scale)
        self.mlp = (
            nn.Sequential(
                nn.LayerNorm(d_model),
                linear(d_model, 2 * d_model, generator),
                nn.ReLU(),
                linear(2 * d_model, d_model, generator),
            )
            if mlp
            else None
        )

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        context, weights = causal_attention(self.norm(x), self.W_q, self.W_k, self.W_v, self.num_heads)
        x = x + context @ self.W_o  # (B, T, d_model) @ (d_model, d_model) -> (B, T, d_model)
        if self.mlp is not None:
            x = x + self.mlp(x)  # (B, T, d_model)
        return x, weights


class TinyTransformer(nn.Module):
    """Token + learned position embeddings, L causal attention layers, a linear read-out to V logits.

    Every parameter is drawn from ``generator`` (its own, not torch's global one: sessions building models at once
    never share draws), in the order of the lines below."""

    def __init__(
        self,
        vocab_size: int,
        T: int,
        layers: int,
        num_heads: int,
        mlp: bool,
        generator: torch.Generator,
        d_model: int = D_MODEL,
    ):
        super().__init__()
        self.token_embedding = embedding(vocab_size, d_model, generator)
        self.position_embedding = embedding(T, d_model, generator)
        self.layers = nn.ModuleList(AttentionLayer(d_model, num_heads, mlp, generator) for _layer in range(layers))
        self.norm = nn.LayerNorm(d_model)
        self.unembed = linear(d_model, vocab_size, generator)

    def embed(self, tokens: torch.Tensor, start: int = 0) -> torch.Tensor:
        """X = token embedding + position embedding: (B, T) -> (B, T, d_model)."""
        positions = torch.arange(start, start + tokens.shape[1])  # (T,)
        return self.token_embedding(tokens) + self.position_embedding(positions)  # (B, T, d_model)

    def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits (B, T, V), weights (L, B, h, T, T))."""
        x = self.embed(tokens)  # (B, T, d_model)
        all_weights = []
        for layer in self.layers:
            x, weights = layer(x)  # (B, T, d_model), (B, h, T, T)
            all_weights.append(weights)
        return self.unembed(self.norm(x)), torch.stack(all_weights)  # (B, T, V), (L, B, h, T, T)


def build_model(settings: TrainingSettings) -> TinyTransformer:
    """The untrained model of these settings, its parameters drawn from a generator seeded with the seed: the same
    numbers torch.manual_seed(seed) and nn.Module's own initialisers gave (tests/test_training.py)."""
    size = (len(vocabulary(settings.task)), sequence_length(settings.task))
    generator = torch.Generator().manual_seed(settings.seed)
    return TinyTransformer(*size, settings.layers, settings.heads, settings.mlp, generator)


# --- training ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """The model at one step: the example's attention weights, its loss and held-out accuracy."""

    step: int
    weights: torch.Tensor  # (L, h, T, T) on the example sequence
    loss: float
    accuracy: float


@dataclass
class TrainingRun:
    """The result of a training run: loss per step, snapshots, the held-out example and the final model."""

    settings: TrainingSettings
    losses: list[float] = field(default_factory=list)  # one per completed step
    snapshots: list[Snapshot] = field(default_factory=list)
    example: torch.Tensor | None = None  # (T,) the held-out sequence the snapshots show
    diverged_at: int | None = None  # the step whose loss was not finite, if any
    model: TinyTransformer | None = None  # the last good parameters

    @property
    def accuracy(self) -> float:
        return self.snapshots[-1].accuracy if self.snapshots else float("nan")


def masked_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy over the scored positions (targets != IGNORE)."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=IGNORE)


def accuracy(model: TinyTransformer, tokens: torch.Tensor, targets: torch.Tensor) -> float:
    """Fraction of scored positions where the most likely token is the target."""
    with torch.no_grad():
        logits, _weights = model(tokens)  # (B, T, V)
    scored = targets != IGNORE  # (B, T)
    return float((logits.argmax(dim=-1) == targets)[scored].float().mean())


def diverged(loss: float, first_loss: float) -> bool:
    """True when the loss is NaN or infinite, or has grown past DIVERGENCE_FACTOR times the first loss."""
    return not math.isfinite(loss) or (math.isfinite(first_loss) and loss > DIVERGENCE_FACTOR * first_loss)


def snapshot_steps(steps: int, count: int = SNAPSHOTS) -> list[int]:
    """Step 0 and count - 1 more steps evenly spaced up to ``steps``."""
    return sorted({round(i * steps / (count - 1)) for i in range(count)})


def take_snapshot(model: TinyTransformer, step: int, example: torch.Tensor, held_out, loss: float) -> Snapshot:
    """The model's attention on the example and its held-out accuracy at this step."""
    with torch.no_grad():
        _logits, weights = model(example.unsqueeze(0))  # (L, 1, h, T, T)
    return Snapshot(step, weights[:, 0].clone(), loss, accuracy(model, *held_out))


def untrained_snapshot(settings: TrainingSettings) -> tuple[torch.Tensor, Snapshot]:
    """(example, snapshot at step 0) of the untrained model: what the page shows before training."""
    check_settings(settings)
    held_out = make_batch(settings.task, HELD_OUT, torch.Generator().manual_seed(settings.seed + 1))
    model = build_model(settings)
    with torch.no_grad():
        logits, _weights = model(held_out[0])  # (B, T, V)
    example = held_out[0][0]  # (T,)
    return example, take_snapshot(model, 0, example, held_out, float(masked_loss(logits, held_out[1])))


def train(settings: TrainingSettings, progress=None, on_snapshot=None) -> TrainingRun:
    """Train with AdamW on fresh seeded batches; stop when the loss diverges, keeping the last good model.

    ``progress(step, steps, loss)`` is called after every step (for a progress bar), and
    ``on_snapshot(snapshot)`` with each snapshot as it is taken (to watch the attention form), if given.
    """
    check_settings(settings)
    model = build_model(settings)
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate, weight_decay=0.01)
    batches = torch.Generator().manual_seed(settings.seed)
    held_out = make_batch(settings.task, HELD_OUT, torch.Generator().manual_seed(settings.seed + 1))
    run = TrainingRun(settings, example=held_out[0][0])
    wanted = set(snapshot_steps(settings.steps))
    last_good, last_loss = copy.deepcopy(model.state_dict()), float("nan")
    for step in range(settings.steps + 1):
        tokens, targets = make_batch(settings.task, BATCH, batches)  # (B, T), (B, T)
        logits, _weights = model(tokens)  # (B, T, V)
        loss = masked_loss(logits, targets)
        value = float(loss.detach())
        if diverged(value, run.losses[0] if run.losses else value):
            run.diverged_at = step
            model.load_state_dict(last_good)
            run.snapshots.append(take_snapshot(model, step - 1, run.example, held_out, last_loss))
            if on_snapshot is not None:
                on_snapshot(run.snapshots[-1])
            break
        if step in wanted:
            run.snapshots.append(take_snapshot(model, step, run.example, held_out, value))
            if on_snapshot is not None:
                on_snapshot(run.snapshots[-1])
        if step == settings.steps:
            break
        last_good, last_loss = copy.deepcopy(model.state_dict()), value
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        run.losses.append(value)
        if progress is not None:
            progress(step + 1, settings.steps, value)
    run.model = model.eval()
    return run
