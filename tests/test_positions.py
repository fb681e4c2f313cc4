"""attention_core.positions: sinusoidal and learned positions, permutations, permutation equivariance."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

import attention_core as ac
from attention_core.positions import (
    DOG_BITES_MAN,
    MAX_POSITIONS,
    attention_output,
    check_permutation,
    encoding_angles,
    equivariance_agreement,
    identical_rows,
    inverse_permutation,
    learned_positions,
    parse_order,
    permute_rows,
    permute_tokens,
    position_breakdown,
    reversal_permutation,
    row_spread,
    shuffle_permutation,
    sinusoidal_encoding,
)


@pytest.fixture
def weights():
    """Seeded (4, 4) W_q, W_k, W_v."""
    P = ac.random_projections(4, 4, seed=3)
    return P.W_q, P.W_k, P.W_v


@pytest.fixture
def sentence():
    """'the cat sat on the mat' with seeded random 4-d embeddings (both 'the' rows equal)."""
    tokens = ["the", "cat", "sat", "on", "the", "mat"]
    return tokens, ac.random_embeddings(tokens, 4, seed=1)


@pytest.mark.parametrize(("T", "d_model"), [(1, 1), (4, 3), (6, 4), (5, 7), (128, 16)])
def test_sinusoidal_matches_the_paper_formula_cell_by_cell(T, d_model):
    """PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(same angle), odd d_model included."""
    PE = sinusoidal_encoding(T, d_model, dtype=torch.float64)
    assert PE.shape == (T, d_model)
    for pos in range(T):
        for c in range(d_model):
            angle = pos / 10000 ** ((c - c % 2) / d_model)
            expected = math.sin(angle) if c % 2 == 0 else math.cos(angle)
            assert PE[pos, c].item() == pytest.approx(expected, abs=1e-12)


def test_sinusoidal_matches_the_pytorch_tutorial_implementation():
    """The exp/log form used by the PyTorch transformer tutorial gives the same matrix (even d_model)."""
    T, d_model = 50, 16
    position = torch.arange(T, dtype=torch.float64).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model))
    expected = torch.zeros(T, d_model, dtype=torch.float64)
    expected[:, 0::2] = torch.sin(position * div_term)
    expected[:, 1::2] = torch.cos(position * div_term)
    assert torch.allclose(sinusoidal_encoding(T, d_model, dtype=torch.float64), expected, atol=1e-12)


def test_sinusoidal_first_row_and_range():
    """Position 0 is [0, 1, 0, 1, ...]; every value lies in [-1, 1]; an odd d_model ends on a sine."""
    PE = sinusoidal_encoding(10, 5)
    assert PE[0].tolist() == [0.0, 1.0, 0.0, 1.0, 0.0]
    assert PE.abs().max().item() <= 1.0
    assert PE[3, 4].item() == pytest.approx(math.sin(3 / 10000 ** (4 / 5)), abs=1e-7)


def test_encoding_angles_pair_columns():
    """Columns 2i and 2i+1 share an angle; angle[pos, 0] = pos."""
    angles = encoding_angles(6, 4)
    assert torch.equal(angles[:, 0], angles[:, 1])
    assert torch.equal(angles[:, 2], angles[:, 3])
    assert angles[:, 0].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_position_breakdown_matches_the_encoding():
    """The per-column table of one position holds that row of the encoding and its angles."""
    frame = position_breakdown(3, 5)
    assert list(frame.index) == ["d1 = sin", "d2 = cos", "d3 = sin", "d4 = cos", "d5 = sin"]  # counted from 1
    assert torch.allclose(torch.tensor(frame["PE value"].to_numpy()), sinusoidal_encoding(4, 5, dtype=torch.float64)[3])
    assert frame["angle"].iloc[2] == pytest.approx(3 / 10000 ** (2 / 5))


def test_learned_positions_are_seeded_and_independent_of_T():
    """Same seed, same table; row pos does not depend on T; another seed differs; too long is refused."""
    assert torch.equal(learned_positions(6, 4, 7), learned_positions(6, 4, 7))
    assert torch.equal(learned_positions(6, 4, 7), learned_positions(40, 4, 7)[:6])
    assert not torch.equal(learned_positions(6, 4, 7), learned_positions(6, 4, 8))
    with pytest.raises(ValueError, match="fixed number of rows"):
        learned_positions(MAX_POSITIONS + 1, 4, 0)


def test_permutations():
    """Reversal, a seeded shuffle that always moves something, parsing and validation."""
    assert reversal_permutation(3).tolist() == [2, 1, 0]
    assert torch.equal(shuffle_permutation(8, 5), shuffle_permutation(8, 5))
    for T in range(2, 8):
        for seed in range(20):
            perm = shuffle_permutation(T, seed)
            assert sorted(perm.tolist()) == list(range(T))
            assert not torch.equal(perm, torch.arange(T))
    assert shuffle_permutation(1, 0).tolist() == [0]
    assert parse_order("3 1 2", 3).tolist() == [2, 0, 1]  # typed from 1, as the learner counts; perm from 0
    assert parse_order("2,1", 2).tolist() == [1, 0]
    with pytest.raises(ValueError, match="positions 1 to 3 exactly once"):
        parse_order("0 1 2", 3)
    for bad in ("1 1 2", "1 2", "0 1 2", "a b c", "1 2 3 4", "-1 0 1"):
        with pytest.raises(ValueError):
            parse_order(bad, 3)
    with pytest.raises(ValueError, match="exactly once"):
        check_permutation(torch.tensor([0, 0]), 2)


def test_permute_rows_tokens_and_inverse():
    """(P M)[i] = M[perm[i]]; the inverse tells where each original position went."""
    perm = torch.tensor([2, 0, 1])
    M = torch.tensor([[1.0], [2.0], [3.0]])
    assert permute_rows(M, perm).tolist() == [[3.0], [1.0], [2.0]]
    assert permute_tokens(["a", "b", "c"], perm) == ["c", "a", "b"]
    inv = inverse_permutation(perm)
    assert permute_rows(permute_rows(M, perm), inv).tolist() == M.tolist()
    assert inv.tolist() == [1, 2, 0]


def test_attention_output_matches_pytorch_sdpa(sentence, weights):
    """attention_output is softmax(Q K^T / sqrt(d_k)) V, as F.scaled_dot_product_attention computes it."""
    _, X = sentence
    W_q, W_k, W_v = weights
    E = sinusoidal_encoding(6, 4)
    Xp = X + E
    expected = F.scaled_dot_product_attention(Xp @ W_q, Xp @ W_k, Xp @ W_v)
    assert torch.allclose(attention_output(X, W_q, W_k, W_v, positions=E), expected, atol=1e-6)


@pytest.mark.parametrize(("T", "d_model", "seed"), [(2, 2, 0), (6, 4, 1), (17, 8, 2), (64, 16, 3)])
def test_attention_is_permutation_equivariant_without_positions(T, d_model, seed):
    """A(P X) = P A(X) up to float32 rounding; with sinusoidal or learned positions it no longer holds."""
    tokens = [f"w{i}" for i in range(T)]
    X = ac.random_embeddings(tokens, d_model, seed)
    P = ac.random_projections(d_model, d_model, seed)
    W = (P.W_q, P.W_k, P.W_v)
    perm = shuffle_permutation(T, seed)
    assert equivariance_agreement(X, perm, *W).close
    direct = attention_output(permute_rows(X, perm), *W)
    assert torch.allclose(direct, permute_rows(attention_output(X, *W), perm), atol=1e-6)
    for E in (sinusoidal_encoding(T, d_model), learned_positions(T, d_model, seed)):
        with_positions = equivariance_agreement(X, perm, *W, positions=E)
        assert with_positions.max_difference > 1e-3 and not with_positions.close


def test_equivariance_in_float64_is_near_exact():
    """In float64 the gap is at the 1e-15 level: only the order of the sums differs."""
    tokens = list("abcdef")
    X = ac.random_embeddings(tokens, 4, 0, dtype=torch.float64)
    P = ac.random_projections(4, 4, 0, dtype=torch.float64)
    assert equivariance_agreement(X, reversal_permutation(6), P.W_q, P.W_k, P.W_v).max_difference < 1e-12


def test_dog_bites_man():
    """Reversed, the same words get the same outputs; with positions, 'dog' first and last differ."""
    X = ac.one_hot_embeddings(DOG_BITES_MAN)
    P = ac.random_projections(3, 3, 0)
    W = (P.W_q, P.W_k, P.W_v)
    flip = reversal_permutation(3)
    assert permute_tokens(DOG_BITES_MAN, flip) == ["man", "bites", "dog"]
    out, flipped = attention_output(X, *W), attention_output(permute_rows(X, flip), *W)
    assert torch.allclose(out[0], flipped[2], atol=1e-6)  # dog
    E = sinusoidal_encoding(3, 3)
    out_p, flipped_p = attention_output(X, *W, positions=E), attention_output(permute_rows(X, flip), *W, positions=E)
    assert (out_p[0] - flipped_p[2]).abs().max().item() > 1e-3


def test_repeated_words_get_identical_rows(sentence, weights):
    """Both 'the' rows: identical embeddings, bit-identical outputs, different once positions are added."""
    _, X = sentence
    groups = identical_rows(X)
    assert groups == [[0, 4]]
    out = attention_output(X, *weights)
    assert row_spread(out, [0, 4]) == 0.0
    assert row_spread(attention_output(X, *weights, positions=sinusoidal_encoding(6, 4)), [0, 4]) > 1e-3
    assert identical_rows(torch.eye(3)) == []
