"""attention_core.rope: RoPE on toy vectors, checked against Hugging Face's Llama implementation."""

from __future__ import annotations

import math

import pytest
import torch

from attention_core import rope


def test_angles_are_position_times_frequency():
    angles = rope.rope_angles(torch.arange(4), 4, base=100.0)
    assert angles.shape == (4, 2)
    assert angles[:, 0].tolist() == [0.0, 1.0, 2.0, 3.0]  # theta_0 = 1
    assert angles[1, 1].item() == pytest.approx(0.1)  # theta_1 = 100^(-2/4)


def test_one_pair_turns_by_its_angle():
    x = torch.tensor([[1.0, 0.0, 0.0, 0.0]])  # pair 0 is (x_0, x_2) in the rotate-half pairing
    turned = rope.rotate_pairs(x, torch.tensor([[math.pi / 2, 0.0]]))
    assert torch.allclose(turned, torch.tensor([[0.0, 0.0, 1.0, 0.0]]), atol=1e-7)


def test_rotation_keeps_every_pair_length_and_adds_the_angle():
    torch.manual_seed(0)
    x = torch.randn(3, 6, 8)
    angles = rope.rope_angles(torch.arange(6), 8)
    turned = rope.rotate_pairs(x, angles)
    assert torch.allclose(rope.pair_norms(turned), rope.pair_norms(x), atol=1e-6)
    assert torch.allclose(turned.norm(dim=-1), x.norm(dim=-1), atol=1e-5)
    gap = torch.remainder(rope.pair_angles(turned) - rope.pair_angles(x) - angles + math.pi, 2 * math.pi) - math.pi
    assert gap.abs().max() < 1e-4


def test_score_depends_only_on_the_distance():
    torch.manual_seed(1)
    q, k = torch.randn(16), torch.randn(16)
    same_distance = [rope.relative_scores(q, k, m, m - 3) for m in (3, 10, 57, 200)]
    assert max(same_distance) - min(same_distance) < 1e-4
    assert abs(rope.relative_scores(q, k, 10, 7) - rope.relative_scores(q, k, 10, 2)) > 1e-3


def test_equals_hugging_face_apply_rotary_pos_emb():
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    torch.manual_seed(2)
    d, T, base = 64, 12, 100_000.0
    config = LlamaConfig(hidden_size=9 * d, num_attention_heads=9, head_dim=d, rope_theta=base)
    config.rope_parameters = {"rope_type": "default", "rope_theta": base}
    q, k = torch.randn(1, 9, T, d), torch.randn(1, 3, T, d)
    positions = torch.arange(T)[None, :]
    cos, sin = LlamaRotaryEmbedding(config)(q, positions)
    q_hf, k_hf = apply_rotary_pos_emb(q, k, cos, sin)
    angles = rope.rope_angles(torch.arange(T), d, base)
    assert torch.allclose(rope.rotate_pairs(q, angles), q_hf, atol=1e-6)
    assert torch.allclose(rope.apply_rope(k, torch.arange(T), base), k_hf, atol=1e-6)


def test_odd_sizes_are_refused():
    with pytest.raises(ValueError, match="even"):
        rope.rope_angles(torch.arange(3), 5)
    with pytest.raises(ValueError, match="dimensions"):
        rope.rotate_pairs(torch.zeros(3, 8), torch.zeros(3, 3))
