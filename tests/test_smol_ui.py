"""ui.models.smol: SmolLM2 loaded once per server, why it cannot load as text, its forwards kept within bytes."""

from __future__ import annotations

import pytest
import torch

from attention_core import smollm2 as sm
from runtime.cache import approx_bytes
from ui.models import smol


def fake_forward(ids: tuple[int, ...]) -> sm.Forward:
    """A Forward of the real shapes for ids (L = 30, h = 9), without running the model."""
    T = len(ids)
    return sm.Forward(
        ids=ids,
        pieces=tuple(str(i) for i in ids),
        positions=torch.arange(T),
        layer_inputs=torch.zeros(30, T, 576),
        scores=torch.empty(0),
        attentions=torch.zeros(30, 9, T, T),
        contexts=torch.zeros(30, 9, T, 64),
        logits=torch.zeros(1, 49152),
    )


def test_a_forward_counts_its_tensors_and_the_store_keeps_within_its_budget(monkeypatch):
    monkeypatch.setattr(smol, "model", lambda: None)
    monkeypatch.setattr(sm, "forward", lambda _model, ids: fake_forward(tuple(ids)))
    one = fake_forward(tuple(range(sm.MAX_TOKENS)))
    assert approx_bytes(one) >= one.attentions.numel() * 4  # its tensors, not 32 bytes
    store = smol.forward_ids.store
    for start in range(12):
        smol.forward_ids(tuple(range(start, start + sm.MAX_TOKENS)))  # 128 tokens: about 35 MB each
        assert store.bytes <= smol.FORWARD_BYTES
    assert 0 < len(store.items) <= 2
    store.items.clear(), store.sizes.clear()
    store.bytes = 0


def test_a_corrupt_file_is_a_reason_in_words(monkeypatch, tmp_path):
    broken = tmp_path / sm.GGUF_FILE
    broken.write_bytes(b"GGUF not the model")
    monkeypatch.setenv(smol.FILE_VARIABLE, str(broken))
    problem = smol.load_problem()
    assert problem is not None and "sha256" in problem and "does not load it" in problem
    with pytest.raises(sm.ModelUnavailable, match="sha256"):
        smol.model()


def test_the_real_model_through_the_app_helpers(monkeypatch):
    monkeypatch.delenv(smol.FILE_VARIABLE, raising=False)
    assert smol.load_problem() is None
    result = smol.forward(sm.PUBLISHED_PROMPT)
    assert smol.forward(sm.PUBLISHED_PROMPT) is result  # kept: one forward per prompt for every session
    assert smol.next_token(sm.PUBLISHED_PROMPT).pieces[0] == " was"
    hand = smol.head_by_hand(sm.PUBLISHED_PROMPT, 5, 4, len(result.ids) - 1)
    assert hand.agrees and hand.a.untyped_storage().data_ptr() != result.layer_inputs.untyped_storage().data_ptr()
    repeated = smol.patterns(" one two three four", repeated=True)
    assert repeated.induction_queries == 4
    assert smol.cache_bytes_per_token() == (23_040, 69_120)
