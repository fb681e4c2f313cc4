"""Page 8 (word order and positions): runs for every input and shows the core's numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

import attention_core as ac
from attention_core.positions import (
    DOG_BITES_MAN,
    add_positions,
    attention_output,
    learned_positions,
    parse_order,
    permute_rows,
    reversal_permutation,
    shuffle_permutation,
    sinusoidal_encoding,
)
from attention_core.presets import PRESETS
from attention_core.projections import random_projections
from tests.apptest_helpers import assert_clean, charts, frames, lab_input, open_page, sentence_params
from tests.pages.answered import answered  # noqa: F401  (the fixture)
from tests.pages.cell_click_helpers import clickable_specs, has_footer, keep_cell, markdown, outlined_rows
from ui.format import format_number

pytestmark = pytest.mark.usefixtures("answered")  # the tests read each step as once its questions are answered

preset_names = {p.key: p.name for p in PRESETS}
PAGE = "app_pages/positions.py"


def has_frame(shown: list[pd.DataFrame], values: torch.Tensor, index: list[str] | None = None) -> bool:
    """True if one of the page's tables holds exactly these numbers (and these row labels)."""
    expected = values.detach().double().numpy()
    for frame in shown:
        same = frame.shape == expected.shape and np.allclose(frame.to_numpy(dtype=float), expected, atol=1e-6)
        if same and (index is None or list(frame.index) == list(index)):
            return True
    return False


def weights_for(at, seed: int = 0):
    X = lab_input(at).X
    P = random_projections(X.shape[1], X.shape[1], seed)
    return X, (P.W_q, P.W_k, P.W_v)


@pytest.mark.parametrize("preset", [p.key for p in PRESETS])
def test_every_preset_runs_and_shows_the_shuffle(preset):
    """No exception; the shuffled outputs equal the shuffled original outputs, as the core computes them."""
    at = open_page(PAGE, {"example": preset_names[preset]})
    assert_clean(at)
    assert lab_input(at).preset.key == preset
    assert at.title[0].value.startswith("8.")
    assert len(charts(at)) >= 2  # sinusoidal and learned heatmaps
    X, W = weights_for(at)
    labels = list(lab_input(at).labels)
    perm = shuffle_permutation(len(labels), 0)
    shuffled_labels = [labels[int(p)] for p in perm]
    shown = frames(at)
    assert has_frame(shown, attention_output(permute_rows(X, perm), *W), shuffled_labels)
    assert has_frame(shown, permute_rows(attention_output(X, *W), perm), shuffled_labels)
    E = sinusoidal_encoding(len(labels), X.shape[1])
    assert has_frame(shown, E)
    assert has_frame(shown, attention_output(permute_rows(X, perm), *W, positions=E), shuffled_labels)
    metrics = [float(m.value) for m in at.metric]
    assert len(metrics) == 4 and metrics[0] == metrics[1] < 1e-5
    assert all(value > 1e-3 for value in metrics[2:])  # with positions the shuffle changes the numbers


def test_dog_bites_man_demo_is_shown():
    """The built-in demo: both sentences' outputs, with the 'dog' row identical without positions."""
    at = open_page(PAGE)
    P = random_projections(3, 3, 0)
    W = (P.W_q, P.W_k, P.W_v)
    X = torch.eye(3)
    shown = frames(at)
    assert has_frame(shown, attention_output(X, *W), list(DOG_BITES_MAN))
    flipped = attention_output(permute_rows(X, reversal_permutation(3)), *W)
    assert has_frame(shown, flipped, ["man", "bites", "dog"])
    assert any("Attention cannot tell who bit whom" in md.value for md in at.markdown)


def test_typed_sentence_with_a_repeated_word():
    """'the cat sat on the mat': the two 'the' rows are named and identical without positions."""
    at = open_page(PAGE, sentence_params("the cat sat on the mat", d_model=8))
    assert_clean(at)
    assert any("“the (1)”, “the (2)” have the same embedding" in md.value for md in at.markdown)
    X, W = weights_for(at)
    out = attention_output(X, *W)
    assert has_frame(frames(at), out[[0, 4]], ["the (1)", "the (2)"])


@pytest.mark.parametrize("sentence", ["solo", " ".join(f"w{i}" for i in range(32))])
def test_single_token_and_long_sentence(sentence):
    """T = 1 and T = 32 run cleanly and still show the encodings."""
    at = open_page(PAGE, sentence_params(sentence, d_model=5))
    assert_clean(at)
    T = len(sentence.split())
    assert has_frame(frames(at), sinusoidal_encoding(T, 5))


def test_order_controls_and_learned_positions():
    """Reverse, a typed order, a bad typed order (clear error), learned positions and another seed."""
    at = open_page(PAGE)
    at.radio(key="positions_order").set_value("reverse").run()
    X, W = weights_for(at)
    labels = list(lab_input(at).labels)
    perm = reversal_permutation(len(labels))
    assert has_frame(frames(at), attention_output(permute_rows(X, perm), *W), labels[::-1])

    at.radio(key="positions_order").set_value("type an order").run()
    at.text_input(key="positions_typed_order").set_value("2 1 3 4 6 5").run()  # positions counted from 1
    assert_clean(at)
    perm = parse_order("2 1 3 4 6 5", len(labels))
    assert perm.tolist() == [1, 0, 2, 3, 5, 4]
    assert has_frame(frames(at), attention_output(permute_rows(X, perm), *W), [labels[int(p)] for p in perm])

    at.text_input(key="positions_typed_order").set_value("1 1 2").run()
    assert_clean(at)
    assert at.error and "exactly once" in at.error[0].value

    at.radio(key="positions_kind").set_value("learned (seeded)").run()
    at.number_input(key="positions_seed").set_value(4).run()
    assert_clean(at)
    X, W = weights_for(at, seed=4)
    E = learned_positions(len(labels), X.shape[1], 4)
    assert has_frame(frames(at), E)
    perm = reversal_permutation(len(labels))
    assert has_frame(frames(at), attention_output(permute_rows(X, perm), *W, positions=E), labels[::-1])


def test_verdicts_come_from_the_relative_tolerance_comparison():
    """Issue 9 item 10: each verdict is the core's agreement verdict, never a number labelled as rounding."""
    at = open_page(PAGE)
    assert_clean(at)
    captions = [c.value for c in at.caption]
    verdicts = [c for c in captions if c.startswith("Verdict:")]
    assert verdicts and verdicts[0].startswith(("Verdict: exactly equal", "Verdict: equal up to float32 rounding"))
    assert captions.count("different: the word order now matters") == 2  # sinusoidal and learned positions
    text = " ".join(m.value for m in at.markdown)
    assert "(float32 rounding: equal)" not in text and "(float32 rounding)" not in " ".join(captions)
    assert "4e-06 × the largest |reference|" in at.metric[0].proto.help  # issue 22 item 6c: measured tolerance


def test_causal_mask_exception_and_one_counting_convention():
    """Issue 9: word order matters once lesson 6's causal mask is on. Issue 22: positions and dimensions count
    from 1 as everywhere in the lab, and the formula's pos = position - 1 is said."""
    at = open_page(PAGE)
    text = " ".join(m.value for m in at.markdown)
    assert "causal mask" in text and "shuffling changes the outputs" in text
    assert "nothing so far" not in text.lower()
    assert "Original: 1: " in text and "count **from 1**" in text and "position 1 has\npos = 0 in the formula" in text
    current = lab_input(at)
    E = sinusoidal_encoding(current.T, current.d_model)
    encodings = [f for f in frames(at) if f.shape == tuple(E.shape) and np.allclose(f.to_numpy(float), E.numpy())]
    assert list(encodings[0].columns) == [f"d{i}" for i in range(1, current.d_model + 1)]
    assert str(encodings[0].index[0]).startswith("1: ")
    breakdown = next(f for f in frames(at) if str(f.index[0]).endswith("= sin"))
    assert breakdown.index[0] == "d1 = sin"
    q = current.query_index
    assert any(
        f"For example position {q + 1}, d1 (pos = {q}, 2i = 0): sin({q} / 10000⁰)" in c.value for c in at.caption
    )
    assert all("d0" not in f.columns for f in frames(at))
    assert all("d0" not in str(index) for f in frames(at) for index in f.index)


def test_the_weights_with_and_without_positions_are_clickable_and_outline_the_query():
    """Issue 11: the T × T weights of X and of X + E, clickable, query row outlined; a kept cell shows the
    core's weight of X + E; exercises and the footer close the page."""
    at = open_page(PAGE)
    assert_clean(at)
    query = lab_input(at).query_label
    specs = clickable_specs(at)
    assert len(specs) == 2 and all(outlined_rows(spec) == [query] for spec in specs)
    assert has_footer(at, PAGE)
    labels = list(lab_input(at).labels)
    keep_cell(at, "positions_weights_sin", labels[4], labels[0])
    assert_clean(at)
    X, W = weights_for(at)
    placed = ac.self_attention(add_positions(X, sinusoidal_encoding(len(labels), X.shape[1])), *W)
    assert f"**{format_number(float(placed.weights[4, 0]))}**" in markdown(at)
