"""attention_core.presets: every example reproduces what its tutorial prints, and the tutorials' mistakes are named.

The tutorials print their inputs to 4 decimals, so recomputed numbers agree to about 1e-3
(the numpy notebook prints 8 decimals, so its numbers agree far more closely).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch

from attention_core.attention import (
    attention_scores,
    column_softmax,
    context_vectors,
    naive_normalize,
    scale_scores,
    self_attention,
    softmax,
)
from attention_core.presets import (
    DEFAULT_PRESET,
    JOURNEY,
    LIGHT,
    NUMPY_SEED_4,
    ONE_HOT,
    PRESETS,
    PRESETS_BY_KEY,
    SCALING_EXAMPLE,
    TRANSFORMER,
    Preset,
)
from attention_core.projections import recover_projection

SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"  # shared/ beside the checkout


def names_a_seed_file(source: str) -> bool:
    """The source is one of the five tutorial files (checked on disk where shared/ is present)."""
    well_formed = re.fullmatch(r"00[0-4]_[0-9a-f]{16}\.txt", source) is not None
    return well_formed and (not SEEDS.is_dir() or (SEEDS / source).is_file())


PRINTED_TOLERANCE = 1e-3


def t64(values) -> torch.Tensor:
    """Printed numbers as a float64 tensor."""
    return torch.tensor(values, dtype=torch.float64)


def max_diff(a, b) -> float:
    """max |a - b| of two same-shaped tensors or nested tuples."""
    a, b = torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64)
    assert a.shape == b.shape
    return (a - b).abs().max().item()


@pytest.fixture
def journey_projections() -> dict[str, torch.Tensor]:
    """002 section 2.3: W_q, W_k, W_v recovered by least squares from X and the printed queries, keys, values."""
    X = PRESETS_BY_KEY["journey"].matrix(torch.float64)
    recovered = {}
    for name, printed in (("W_q", "Q"), ("W_k", "K"), ("W_v", "V")):
        W, residual = recover_projection(X, t64(JOURNEY.printed[printed]))
        assert W.shape == (3, 3)
        assert residual < 2e-4, f"{name}: the printed projection is not X W for any W (residual {residual})"
        recovered[name] = W
    return recovered


# --- what every preset carries --------------------------------------------------------------------


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.key)
def test_preset_metadata(preset: Preset):
    assert preset.name and preset.key in PRESETS_BY_KEY and PRESETS_BY_KEY[preset.key] is preset
    assert len(preset.tokens) >= 2 and all(isinstance(t, str) and t for t in preset.tokens)
    X = preset.matrix()
    assert X.shape == (len(preset.tokens), preset.d_model) and X.dtype == torch.float32
    assert preset.matrix(torch.float64).dtype == torch.float64
    assert torch.isfinite(X).all()
    assert names_a_seed_file(preset.source), preset.source
    assert len(preset.origin) > 20
    assert preset.lesson.endswith(".") and len(preset.lesson.split()) >= 6  # one sentence
    assert 0 <= preset.query_index < len(preset.tokens)


def test_preset_registry():
    assert DEFAULT_PRESET in PRESETS
    assert len(PRESETS_BY_KEY) == len(PRESETS)  # keys are unique
    assert "Build a Large Language Model (From Scratch)" in PRESETS_BY_KEY["journey"].origin
    assert names_a_seed_file(SCALING_EXAMPLE.source)
    Q, K, V = SCALING_EXAMPLE.tensors()
    assert Q.shape == K.shape == V.shape == (len(SCALING_EXAMPLE.tokens), 2)


# --- 000: "How self attention works in Transformer" ------------------------------------------------


def test_000_transformer_reproduces_printed_numbers():
    printed = TRANSFORMER.printed
    steps = self_attention(PRESETS_BY_KEY["transformer"].matrix(torch.float64), scale=False)
    assert max_diff(steps.scores, printed["scores"]) < PRINTED_TOLERANCE
    assert max_diff(steps.weights, printed["weights"]) < PRINTED_TOLERANCE
    assert max_diff(steps.context, printed["context"]) < PRINTED_TOLERANCE
    assert max_diff(steps.scores[1], printed["query_scores"]) < PRINTED_TOLERANCE
    assert max_diff(steps.weights[1], printed["query_weights"]) < PRINTED_TOLERANCE
    assert max_diff(steps.context[1], printed["query_context"]) < PRINTED_TOLERANCE


def test_000_naive_sum_normalisation():
    scores = self_attention(PRESETS_BY_KEY["transformer"].matrix(torch.float64), scale=False).scores
    naive = naive_normalize(scores)[1]
    assert max_diff(naive, TRANSFORMER.printed["query_naive_weights"]) < PRINTED_TOLERANCE
    assert naive.min() < 0 and naive.max() > 1  # "This is not looking good": not weights at all


# --- 001: "I can't find the light switch" ----------------------------------------------------------


def test_001_light_reproduces_printed_numbers():
    printed = LIGHT.printed
    steps = self_attention(PRESETS_BY_KEY["light"].matrix(torch.float64), scale=False)
    assert max_diff(steps.scores, printed["scores"]) < PRINTED_TOLERANCE
    assert max_diff(steps.weights, printed["weights"]) < PRINTED_TOLERANCE
    assert max_diff(steps.context, printed["context"]) < PRINTED_TOLERANCE
    light = PRESETS_BY_KEY["light"].query_index
    assert PRESETS_BY_KEY["light"].tokens[light] == "light"
    assert max_diff(steps.scores[light], printed["query_scores"]) < PRINTED_TOLERANCE
    assert max_diff(steps.context[light], printed["query_context"]) < PRINTED_TOLERANCE


# --- 002: "Your journey starts with one step" -----------------------------------------------------


def test_002_starts_unscaled_reproduces_printed_numbers():
    printed = JOURNEY.printed
    steps = self_attention(PRESETS_BY_KEY["journey"].matrix(torch.float64), scale=False)
    starts = PRESETS_BY_KEY["journey"].query_index
    assert PRESETS_BY_KEY["journey"].tokens[starts] == "starts"
    assert max_diff(steps.scores[starts], printed["query_scores"]) < PRINTED_TOLERANCE
    assert max_diff(steps.weights[starts], printed["query_weights"]) < PRINTED_TOLERANCE
    assert max_diff(steps.context[starts], (0.4431, 0.6496, 0.5671)) < PRINTED_TOLERANCE
    assert max_diff(steps.context[starts], printed["query_context"]) < PRINTED_TOLERANCE
    assert max_diff(steps.scores, printed["scores"]) < PRINTED_TOLERANCE
    assert max_diff(steps.weights, printed["weights"]) < PRINTED_TOLERANCE
    assert max_diff(steps.context, printed["context"]) < PRINTED_TOLERANCE
    scaled = self_attention(PRESETS_BY_KEY["journey"].matrix(torch.float64), scale=True)
    assert max_diff(scaled.context[starts], printed["query_context"]) > PRINTED_TOLERANCE  # the tutorial did not scale


def test_002_section_2_3_projections(journey_projections):
    printed = JOURNEY.printed
    X = PRESETS_BY_KEY["journey"].matrix(torch.float64)
    steps = self_attention(X, **journey_projections, scale=False)
    assert max_diff(steps.Q, printed["Q"]) < PRINTED_TOLERANCE
    assert max_diff(steps.K, printed["K"]) < PRINTED_TOLERANCE
    assert max_diff(steps.V, printed["V"]) < PRINTED_TOLERANCE
    assert max_diff(steps.scores, printed["projected_scores"]) < PRINTED_TOLERANCE
    assert max_diff(steps.weights, printed["projected_weights"]) < PRINTED_TOLERANCE
    assert max_diff(steps.context, printed["projected_context"]) < PRINTED_TOLERANCE
    # the single values printed for 'journey' (index 1)
    assert max_diff(steps.Q[1], printed["q_journey"]) < PRINTED_TOLERANCE
    assert max_diff(steps.K[1], printed["k_journey"]) < PRINTED_TOLERANCE
    assert max_diff(steps.V[1], printed["v_journey"]) < PRINTED_TOLERANCE
    assert abs(steps.scores[1, 1].item() - 4.2447) < PRINTED_TOLERANCE  # omega_11
    assert abs(steps.scores[1, 1].item() - printed["projected_score_journey"][0]) < PRINTED_TOLERANCE


def test_002_section_2_2_4_inputs_times_wk_transposed_is_not_a_score(journey_projections):
    """2.2.4 prints inputs @ W_k.T as 'All Attention Scores for journey': a (6, 3) matrix of no meaning.

    Attention scores for 'journey' are query_journey . key_j: six numbers, one per token (row 1 of Q K^T).
    """
    X = PRESETS_BY_KEY["journey"].matrix(torch.float64)
    wrong = X @ journey_projections["W_k"].T  # what the tutorial computed (transposed W, no query at all)
    assert max_diff(wrong, JOURNEY.printed["wrong_scores"]) < PRINTED_TOLERANCE  # we reproduce its mistake exactly
    right = self_attention(X, **journey_projections, scale=False).scores[1]
    assert t64(JOURNEY.printed["wrong_scores"]).shape == (6, 3) and right.shape == (
        6,
    )  # not even the shape of a score row
    assert max_diff(right, JOURNEY.printed["projected_scores"][1]) < PRINTED_TOLERANCE
    assert (
        t64(JOURNEY.printed["wrong_scores"]).amax() - right.amin()
    ).item() < -0.5  # every printed value is far too small


def test_002_section_2_2_5_softmax_over_dim_0_normalises_columns():
    """2.2.5 takes F.softmax(..., dim=0): each column sums to 1, so no row is a distribution over tokens."""
    printed = t64(JOURNEY.printed["wrong_column_weights"])
    assert max_diff(column_softmax(t64(JOURNEY.printed["wrong_scores"])), printed) < PRINTED_TOLERANCE
    assert max_diff(printed.sum(dim=0), torch.ones(3)) < PRINTED_TOLERANCE  # columns sum to 1
    assert (printed.sum(dim=1) - 1).abs().min() > 0.3  # rows do not
    right = t64(JOURNEY.printed["projected_weights"][1])  # the real weights of 'journey': one row of 6
    assert abs(right.sum().item() - 1) < PRINTED_TOLERANCE


def test_002_section_2_2_6_context_vector_is_just_the_inputs(journey_projections):
    """2.2.6 sums (6, 1, 3) * (6, 3) over dim 0; as each column of the weights sums to 1, it returns the inputs."""
    X = PRESETS_BY_KEY["journey"].matrix(torch.float64)
    weights = column_softmax(t64(JOURNEY.printed["wrong_scores"]))  # (6, 3)
    printed_context = torch.sum(weights.unsqueeze(1) * X, dim=0)  # the tutorial's broadcast: (6, 3)
    assert max_diff(printed_context, X) < 1e-12  # "Context Vector for 'journey'" = the inputs, unchanged
    right = self_attention(X, **journey_projections, scale=False).context[1]
    assert max_diff(right, JOURNEY.printed["projected_context"][1]) < PRINTED_TOLERANCE
    assert right.shape == (3,) and max_diff(right, X[1]) > 0.5  # the real context vector is not the input


# --- 003: Q, K, V given -------------------------------------------------------------------------


@pytest.fixture
def scaling_steps() -> dict[str, torch.Tensor]:
    """003's example computed step by step from its Q, K, V (d_k = 2)."""
    Q, K, V = SCALING_EXAMPLE.tensors(torch.float64)
    scores = attention_scores(Q, K)
    scaled = scale_scores(scores, 2)
    weights = softmax(scaled)
    return {"V": V, "scores": scores, "scaled": scaled, "weights": weights, "context": context_vectors(weights, V)}


def test_003_scaled_dot_product_reproduces_printed_numbers(scaling_steps):
    printed = SCALING_EXAMPLE.printed
    assert max_diff(scaling_steps["scores"], printed["scores"]) < PRINTED_TOLERANCE
    assert max_diff(scaling_steps["scaled"], printed["scaled_scores"]) < PRINTED_TOLERANCE
    assert max_diff(scaling_steps["weights"], printed["weights"]) < PRINTED_TOLERANCE
    assert max_diff(scaling_steps["context"], printed["context"]) < PRINTED_TOLERANCE
    assert max_diff(scaling_steps["weights"].sum(-1), torch.ones(3)) < 1e-12  # rows sum to 1
    assert abs(scaling_steps["weights"][:, 1].sum().item() - printed["t2_column_sum"][0]) < PRINTED_TOLERANCE
    assert max_diff(torch.exp(scaling_steps["scaled"][0]), printed["t1_scaled_exps"]) < PRINTED_TOLERANCE


def test_003_last_cells_come_from_another_run(scaling_steps):
    """The cell printing 'row 3' gives (0.4905, 0.4635, 0.0460), but row 3 of the shown inputs is (0.6054, ...)."""
    other = t64(SCALING_EXAMPLE.printed["other_run_t3_weights"])
    assert abs(other.sum().item() - 1) < PRINTED_TOLERANCE  # a softmax row all right, of some other logits
    assert max_diff(scaling_steps["weights"][2], other) > 0.1
    unscaled = softmax(scaling_steps["scores"])
    for row in range(3):  # no row of the shown inputs gives it, scaled or not
        assert max_diff(scaling_steps["weights"][row], other) > 0.1
        assert max_diff(unscaled[row], other) > 0.1


# --- 004: numpy -------------------------------------------------------------------------------


def test_004_one_hot_weights():
    X = PRESETS_BY_KEY["one-hot"].matrix(torch.float64)
    steps = self_attention(X, scale=False)
    printed = ONE_HOT.printed["query_weights"]
    assert max_diff(steps.weights[0], printed) < 1e-8
    for i in range(4):  # "Weight for word i": the same numbers, rolled
        assert max_diff(steps.weights[i], np.roll(printed, i)) < 1e-8
    assert max_diff(steps.context, steps.weights) < 1e-15  # one-hot inputs: each output resembles its input


def test_004_numpy_seed_4_matrix_is_np_random_seed_4():
    np.random.seed(4)
    expected = np.random.randn(6, 4)
    X = PRESETS_BY_KEY["numpy-seed-4"].matrix(torch.float64).numpy()
    assert np.abs(X - expected).max() < 1e-8


def test_004_axis_0_normalisation_is_softmax_down_columns():
    """004 divides by np.sum(weights, axis=0), then reads rows: it prints column softmax, not attention."""
    X = PRESETS_BY_KEY["numpy-seed-4"].matrix(torch.float64)
    printed = NUMPY_SEED_4.printed
    scores = attention_scores(X, X)
    wrong_weights = column_softmax(scores)
    assert max_diff(wrong_weights, printed["wrong_axis_weights"]) < 1e-6
    assert max_diff(context_vectors(wrong_weights, X), printed["wrong_axis_outputs"]) < 1e-6
    assert max_diff(t64(printed["wrong_axis_weights"]).sum(dim=0), torch.ones(6)) < 1e-6  # columns sum to 1
    assert max_diff(t64(printed["wrong_axis_weights"]).sum(dim=1), torch.ones(6)) > 0.1  # rows do not

    right = self_attention(X, scale=False)
    assert max_diff(right.weights.sum(-1), torch.ones(6)) < 1e-12
    assert max_diff(right.weights, printed["wrong_axis_weights"]) > 0.1
    assert max_diff(right.context, printed["wrong_axis_outputs"]) > 0.1
