"""attention_core.training: the toy tasks, the tiny transformer's attention against PyTorch, training itself."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch
import torch.nn.functional as F

import attention_core as ac
from attention_core import training as tr

FAST = tr.DEFAULTS["previous"]  # trains in well under a second on one thread


@pytest.fixture(scope="module")
def fast_run() -> tr.TrainingRun:
    """The default (previous-token) task trained once with its default settings."""
    return tr.train(FAST)


# --- tasks ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("task", list(tr.TASKS))
def test_batches_are_seeded_and_targets_follow_the_task(task):
    tokens, targets = tr.make_batch(task, 32, torch.Generator().manual_seed(3))
    again, _ = tr.make_batch(task, 32, torch.Generator().manual_seed(3))
    assert torch.equal(tokens, again)
    assert tokens.shape == (32, tr.sequence_length(task)) == targets.shape
    for row, target in zip(tokens, targets, strict=True):
        keys = tr.ideal_keys(task, row)
        scored = target != tr.IGNORE
        assert torch.equal(scored, keys >= 0), "the ideal pattern covers exactly the scored queries"
        if task == "induction":  # the ideal key holds the answer B, after the earlier A
            assert target[-1] == row[keys[-1]] and row[keys[-1] - 1] == row[-1]
        else:  # previous and reverse: the answer is the token at the ideal key
            assert torch.equal(target[scored], row[keys[scored]])


def test_ideal_pattern_and_closeness():
    tokens, _ = tr.make_batch("reverse", 1, torch.Generator().manual_seed(0))
    ideal = tr.ideal_pattern("reverse", tokens[0])
    T = tokens.shape[1]
    assert ideal.sum() == T - tr.HALF and ideal[tr.HALF, tr.HALF - 1] == 1  # '|' looks at the last symbol
    assert tr.closeness(ideal, ideal) == 1.0
    uniform = ac.softmax(ac.apply_mask(torch.zeros(T, T), ac.causal_mask(T)))  # (T, T)
    assert tr.closeness(uniform, ideal) == pytest.approx(
        float(torch.tensor([1 / (i + 1) for i in range(tr.HALF, T)]).mean())
    )


def test_settings_outside_their_limits_are_explained():
    with pytest.raises(ValueError, match="cannot be split into 3"):
        tr.check_settings(dataclasses.replace(FAST, heads=3))
    with pytest.raises(ValueError, match="steps must be from"):
        tr.check_settings(dataclasses.replace(FAST, steps=5))
    with pytest.raises(ValueError, match="learning rate"):
        tr.check_settings(dataclasses.replace(FAST, learning_rate=float("nan")))
    with pytest.raises(ValueError, match="Unknown task"):
        tr.check_settings(dataclasses.replace(FAST, task="sort"))
    with pytest.raises(ValueError, match="layers"):
        tr.check_settings(dataclasses.replace(FAST, layers=3))


# --- the model's attention is the lab's ------------------------------------------------------------


def test_batched_heads_use_split_heads_and_merge_heads():
    X = torch.randn(3, 5, 8, dtype=torch.float64)  # (B, T, d_model)
    heads = tr.heads_of(X, 4)  # (B, h, T, d_k)
    for b in range(3):
        assert torch.equal(heads[b], ac.split_heads(X[b], 4))
    assert torch.equal(tr.join_heads(heads), X)


@pytest.mark.parametrize("num_heads", [1, 2, 4])
def test_model_attention_equals_sdpa_and_the_lab_per_sequence(num_heads):
    generator = torch.Generator().manual_seed(1)
    X = torch.randn(2, 6, 8, generator=generator, dtype=torch.float64)  # (B, T, d_model)
    W_q, W_k, W_v = (torch.randn(8, 8, generator=generator, dtype=torch.float64) for _ in range(3))
    context, weights = tr.causal_attention(X, W_q, W_k, W_v, num_heads)
    Q, K, V = (tr.heads_of(X @ W, num_heads) for W in (W_q, W_k, W_v))  # (B, h, T, d_k)
    expected = F.scaled_dot_product_attention(Q, K, V, is_causal=True)  # (B, h, T, d_k)
    assert torch.allclose(context, tr.join_heads(expected), atol=1e-12)
    lab = ac.multi_head_attention(
        X[0], W_q, W_k, W_v, torch.eye(8, dtype=torch.float64), num_heads=num_heads, mask=ac.causal_mask(6)
    )
    assert torch.allclose(weights[0], lab.weights, atol=1e-12)
    assert torch.allclose(context[0], lab.output, atol=1e-12)


def test_untrained_attention_is_near_uniform_over_the_visible_keys():
    example, snapshot = tr.untrained_snapshot(FAST)
    T = example.shape[0]
    uniform = ac.softmax(ac.apply_mask(torch.zeros(T, T), ac.causal_mask(T)))
    assert snapshot.step == 0 and (snapshot.weights[0, 0] - uniform).abs().max() < 0.1
    assert snapshot.accuracy < 0.3


# --- training -------------------------------------------------------------------------------------


def test_default_task_reaches_the_accuracy_bar(fast_run):
    assert fast_run.accuracy >= 0.95
    assert fast_run.diverged_at is None and len(fast_run.losses) == FAST.steps
    assert fast_run.losses[-1] < fast_run.losses[0] / 10
    first, last = fast_run.snapshots[0], fast_run.snapshots[-1]
    assert (first.step, last.step) == (0, FAST.steps) and len(fast_run.snapshots) == tr.SNAPSHOTS
    ideal = tr.ideal_pattern(FAST.task, fast_run.example)
    assert tr.closeness(first.weights[0, 0], ideal) < 0.4 < 0.95 < tr.closeness(last.weights[0, 0], ideal)


def test_reverse_reaches_the_accuracy_bar():
    run = tr.train(dataclasses.replace(tr.DEFAULTS["reverse"], steps=150))
    assert run.accuracy >= 0.95


def test_training_is_deterministic_for_a_seed(fast_run):
    short = dataclasses.replace(FAST, steps=30, heads=2, mlp=True)
    first, second = tr.train(short), tr.train(short)
    assert first.losses == second.losses
    assert all(torch.equal(a.weights, b.weights) for a, b in zip(first.snapshots, second.snapshots, strict=True))
    assert tr.train(dataclasses.replace(short, seed=1)).losses != first.losses


def nn_initialised(settings: tr.TrainingSettings) -> dict[str, torch.Tensor]:
    """The drawn parameters as the lab first built them: torch.manual_seed(seed), then nn.Embedding's and
    nn.Linear's own initialisers and torch.randn from torch's global generator, in the model's order."""
    torch.manual_seed(settings.seed)
    V, T, d = len(tr.vocabulary(settings.task)), tr.sequence_length(settings.task), tr.D_MODEL
    drawn = {}
    drawn["token_embedding.weight"] = torch.nn.Embedding(V, d).weight
    drawn["position_embedding.weight"] = torch.nn.Embedding(T, d).weight
    for i in range(settings.layers):
        for name, factor in (("W_q", 0.02), ("W_k", 0.02), ("W_v", d**-0.5), ("W_o", d**-0.5)):
            drawn[f"layers.{i}.{name}"] = torch.randn(d, d) * factor
        if settings.mlp:
            for index, layer in ((1, torch.nn.Linear(d, 2 * d)), (3, torch.nn.Linear(2 * d, d))):
                drawn[f"layers.{i}.mlp.{index}.weight"] = layer.weight
                drawn[f"layers.{i}.mlp.{index}.bias"] = layer.bias
    unembed = torch.nn.Linear(d, V)
    drawn["unembed.weight"], drawn["unembed.bias"] = unembed.weight, unembed.bias
    return drawn


@pytest.mark.parametrize("task", list(tr.TASKS))
@pytest.mark.parametrize("mlp", [False, True])
def test_the_models_own_generator_draws_what_the_global_seed_and_nns_initialisers_drew(task, mlp):
    """build_model draws from a generator of its own (no lock, nothing process-wide): bit for bit the parameters
    torch.manual_seed(seed) and nn's initialisers gave, so every training run's numbers stay what they were."""
    settings = dataclasses.replace(tr.DEFAULTS[task], seed=7, layers=2, heads=2, mlp=mlp)
    state = tr.build_model(settings).state_dict()
    reference = nn_initialised(settings)
    assert set(reference) == {name for name in state if "norm" not in name and ".mlp.0." not in name}
    for name, value in reference.items():
        assert torch.equal(state[name], value.detach()), name


def test_building_a_model_leaves_torchs_global_generator_alone():
    torch.manual_seed(123)
    before = torch.get_rng_state()
    tr.build_model(dataclasses.replace(FAST, mlp=True, layers=2))
    assert torch.equal(torch.get_rng_state(), before)


def test_progress_is_reported_every_step():
    calls = []
    tr.train(dataclasses.replace(FAST, steps=12), progress=lambda step, steps, loss: calls.append((step, steps)))
    assert calls == [(step, 12) for step in range(1, 13)]


def test_a_diverging_learning_rate_stops_and_keeps_the_last_good_snapshot():
    run = tr.train(dataclasses.replace(FAST, learning_rate=100.0, steps=50))
    assert run.diverged_at is not None and run.diverged_at < 50
    assert run.snapshots[-1].step == run.diverged_at - 1
    assert all(torch.isfinite(p).all() for p in run.model.parameters())
    assert math.isfinite(run.snapshots[-1].loss) and torch.isfinite(run.snapshots[-1].weights).all()


def test_a_nan_loss_stops_training(monkeypatch):
    real = tr.masked_loss
    calls = iter(range(1000))

    def nan_at_step_4(logits, targets):
        loss = real(logits, targets)
        return loss * float("nan") if next(calls) == 4 else loss

    monkeypatch.setattr(tr, "masked_loss", nan_at_step_4)
    run = tr.train(dataclasses.replace(FAST, steps=20))
    assert run.diverged_at == 4 and len(run.losses) == 4
    assert run.snapshots[-1].step == 3 and math.isfinite(run.snapshots[-1].loss)


@pytest.mark.parametrize("task", list(tr.TASKS))
def test_position_labels_count_from_1(task):
    """Issue 22 part 3: the heatmaps' rows read '1:c', '2:f', … as every count the learner reads."""
    settings = tr.DEFAULTS[task]
    example, _ = tr.untrained_snapshot(settings)
    labels = tr.position_labels(task, example)
    symbols = tr.vocabulary(task)
    assert labels == [f"{i + 1}:{symbols[int(token)]}" for i, token in enumerate(example)]
    assert labels[0].startswith("1:") and not any(label.startswith("0:") for label in labels)


def test_each_snapshot_is_handed_over_as_it_is_taken():
    seen: list[int] = []
    run = tr.train(dataclasses.replace(FAST, steps=20), on_snapshot=lambda snapshot: seen.append(snapshot.step))
    assert seen == [snapshot.step for snapshot in run.snapshots] == tr.snapshot_steps(20)
