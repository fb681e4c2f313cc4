"""attention_core.similarity: dot product against cosine, checked with PyTorch's own cosine_similarity."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from attention_core.similarity import cosine_similarity, highest_score, lengths


def test_cosine_matches_torch_and_a_zero_vector_gives_zero() -> None:
    X = torch.randn(5, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    expected = F.cosine_similarity(X[2].unsqueeze(0), X, dim=-1)
    assert torch.allclose(cosine_similarity(X[2], X), expected, atol=1e-12)
    X[3] = 0.0
    assert cosine_similarity(X[2], X)[3].item() == 0.0
    assert torch.allclose(lengths(X), X.norm(dim=-1))


def test_a_longer_vector_can_outscore_the_query_itself() -> None:
    X = torch.tensor([[1.0, 0.0], [3.0, 1.0]])
    assert highest_score(X @ X[0]) == 1  # 3 > 1 although cos θ < 1
    assert int(cosine_similarity(X[0], X).argmax()) == 0
