"""Issue 22 part 6: every agreement verdict can fail. Each bug is injected in-process into the lab's own math
(the function's code is swapped, so every module that imported it runs the bug), and every verdict that checks
that math against an independent reference (PyTorch, the loops, the float64 table) must then read "different";
without the bug every one of them reads "equal" or "exactly equal".

Verdicts are read from what the page shows: the bold **verdict** in captions and text, and the "verdict" column
of a table. Lesson 1 has no agreement check (X Xᵀ is the reference itself), and none of the bugs touch it.
"""

from __future__ import annotations

import contextlib
import importlib
import re
import types

import pytest
import streamlit as st
import torch

from attention_core.presets import PRESETS
from tests.apptest_helpers import OWN_SENTENCE, assert_clean, frames, open_page, sentence_params
from tests.pages.answered import answered  # noqa: F401 (a fixture, used by pytestmark)

# Pages are read as the learner sees them once every question is answered: a step asks before it shows (issue 36).
pytestmark = pytest.mark.usefixtures("answered")

attention = importlib.import_module("attention_core.attention")  # the module (the package exports a function too)
heads = importlib.import_module("attention_core.heads")
VERDICT = re.compile(r"\*\*(exactly equal|equal up to float(?:32|64) rounding|different)\*\*")
SAME = ("exactly equal", "equal up to float32 rounding", "equal up to float64 rounding")
INPUT = sentence_params("the cat sat on the mat", d_model=4)  # d_model 4: two heads fit on lesson 9


def copy_of(function: types.FunctionType) -> types.FunctionType:
    """An untouched copy of a function, for the bug to call after its own code replaced the original's."""
    return types.FunctionType(function.__code__, function.__globals__, function.__name__, function.__defaults__)


def _scale_bug(scores, d_k):
    return _true_scale_scores(scores, d_k) / (1 + 1e-4)  # noqa: F821 (found in attention's globals)


def _weights_bug(scores, temperature=1.0):
    return _true_softmax(scores, temperature) * (1 + 1e-5)  # noqa: F821


def _mask_bug(scores, mask):
    if mask is None:
        return _true_apply_mask(scores, mask)  # noqa: F821
    wrong = mask.clone()
    wrong[..., 0, -1] = ~wrong[..., 0, -1]  # one cell of the mask the other way round
    return _true_apply_mask(scores, wrong)  # noqa: F821


def _head_bug(M):
    order = [1, 0, *range(2, M.shape[0])] if M.shape[0] > 1 else [0]
    return _true_merge_heads(M[order])  # noqa: F821 (heads 1 and 2 swapped before they are joined)


BUGS = {
    "scale off by 1e-4": (attention, "scale_scores", _scale_bug),
    "weights x (1 + 1e-5)": (attention, "softmax", _weights_bug),
    "one wrong mask cell": (attention, "apply_mask", _mask_bug),
    "swapped head": (heads, "merge_heads", _head_bug),
}


@contextlib.contextmanager
def injected(bug: str | None):
    """The lab with one bug in its math (the function's __code__ swapped), caches cleared before and after."""
    st.cache_data.clear()
    if bug is None:
        yield
        return
    module, name, buggy = BUGS[bug]
    original = getattr(module, name)
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(module.__dict__, f"_true_{name}", copy_of(original))
        patch.setattr(original, "__code__", buggy.__code__)
        patch.setattr(original, "__defaults__", buggy.__defaults__)
        try:
            yield
        finally:
            st.cache_data.clear()


def shown_verdicts(at) -> list[str]:
    """Every agreement verdict on the page, in order: bold in text and captions, or a table's verdict column."""
    texts = [element.value for element in (*at.markdown, *at.caption)]
    found = [match for text in texts for match in VERDICT.findall(text)]
    for frame in (*(table.value for table in at.table), *frames(at)):
        if "verdict" in getattr(frame, "columns", ()):
            found += list(frame["verdict"])
    return found


# page, the controls that put a mask and two heads on it, the bugs its verdicts must catch, and (for the swapped
# head) how many verdicts compare the joined heads' output: the others check each head alone, which stays right.
PAGES = {
    "softmax": ({}, ("weights x (1 + 1e-5)",)),
    "context_vectors": ({}, ("weights x (1 + 1e-5)",)),
    "qkv_projections": ({}, ("scale off by 1e-4", "weights x (1 + 1e-5)")),
    "scaling": ({}, ("scale off by 1e-4", "weights x (1 + 1e-5)")),
    "masking": ({}, ("scale off by 1e-4", "weights x (1 + 1e-5)", "one wrong mask cell")),
    "multi_head": (
        {"toggle": {"multi_head_causal": True}},
        ("scale off by 1e-4", "weights x (1 + 1e-5)", "one wrong mask cell", "swapped head"),
    ),
    "positions": ({}, ("scale off by 1e-4", "weights x (1 + 1e-5)")),
    "pipeline": (
        {"radio": {"pipeline_mask": "causal"}, "number_input": {"pipeline_heads": 2}},
        ("scale off by 1e-4", "weights x (1 + 1e-5)", "one wrong mask cell", "swapped head"),
    ),
    "generation": ({}, ("scale off by 1e-4", "weights x (1 + 1e-5)", "one wrong mask cell")),
}
# Verdicts that rightly stay "equal" under a bug because what they compare does not contain the bugged step:
STILL_EQUAL = {
    ("multi_head", "swapped head"): 1 + 2,  # weights and each head's context: only the joined output is wrong
    ("pipeline", "swapped head"): 2,  # the heads' contexts and weights; the output vs nn.MultiheadAttention fails
    ("generation", "scale off by 1e-4"): 1 + 1,  # online vs plain softmax: both read the same (mis)scaled row;
    # SmolLM2's cached vs recomputed run the same (bugged) lab functions on both sides
    ("generation", "weights x (1 + 1e-5)"): 1,  # SmolLM2's cached vs recomputed, both through the lab's softmax
    ("generation", "one wrong mask cell"): 2 + 1,  # the cache needs no mask; online vs plain read the same row
    ("positions", "scale off by 1e-4"): 1,  # RoPE shifted vs unshifted scores: no scaling and no softmax in either
    ("positions", "weights x (1 + 1e-5)"): 1,
}


def page_verdicts(page: str, bug: str | None) -> list[str]:
    controls, _ = PAGES[page]
    with injected(bug):
        at = open_page(f"app_pages/{page}.py", INPUT)
        for kind, values in controls.items():
            for key, value in values.items():
                getattr(at, kind)(key=key).set_value(value)
        at.run()
        assert_clean(at)
        return shown_verdicts(at)


@pytest.mark.parametrize("page", list(PAGES))
def test_every_verdict_reads_different_under_each_bug_and_same_without(page):
    clean = page_verdicts(page, None)
    assert clean and all(verdict in SAME for verdict in clean), clean
    for bug in PAGES[page][1]:
        verdicts = page_verdicts(page, bug)
        assert len(verdicts) == len(clean), (bug, verdicts)
        still_equal = STILL_EQUAL.get((page, bug), 0)
        assert verdicts.count("different") == len(verdicts) - still_equal >= 1, (bug, verdicts)


def test_the_bugs_are_injected_everywhere_and_removed_after():
    """The swapped code reaches a module that imported the function by name, and is gone afterwards."""
    from attention_core import generation

    scores = torch.tensor([[0.0, 1.0]])
    with injected("weights x (1 + 1e-5)"):
        assert float(generation.softmax(scores).sum()) == pytest.approx(1 + 1e-5, rel=1e-7)
    assert float(generation.softmax(scores).sum()) == pytest.approx(1.0, rel=1e-7)


NEAR_100 = "100_100_100_100~99.999_100_99.999_100~99.998_99.999_100_99.998~99.997_99.999_99.998_99.999"
NO_BUG_INPUTS = {
    **{preset.key: {"example": preset.name} for preset in PRESETS},
    "edited near 100": {"example": OWN_SENTENCE, "sentence": "a b c d", "embedding": "Edit by hand", "edits": NEAR_100},
    "one-hot typed": sentence_params("the cat sat on the mat", embedding="one-hot"),
}


@pytest.mark.parametrize("page", list(PAGES))
def test_no_false_alarm_on_presets_and_edited_inputs(page):
    """Issue 22 item 6c: without a bug no verdict reads "different" on any preset or on edits near ±100.

    The caches are cleared once, so nothing computed by another test (under a bug) is read here; between inputs a
    cached result is one computed from the same arguments in this test (lesson 13's KV-cache check on SmolLM2
    does not depend on the toy input: recomputing it for each input cost 2-3 s a time)."""
    st.cache_data.clear()
    for name, params in NO_BUG_INPUTS.items():
        at = open_page(f"app_pages/{page}.py", params)
        assert_clean(at)
        verdicts = shown_verdicts(at)
        assert verdicts and all(verdict in SAME for verdict in verdicts), (name, verdicts)


# --- lessons 10 and 11: the real models' heads against code that shares nothing with the lab (issue 38, item 6) ---
#
# attention_core.independent recomputes a head from its raw inputs (a layer's input, its weight matrices, the
# positions) with PyTorch's scaled_dot_product_attention and RoPE as a complex rotation. A bug in the lab's softmax,
# scaling or RoPE must turn those verdicts to "different" (the lab's forward of the BERT encoder runs the same lab
# functions; SmolLM2's forward runs torch.softmax and its own scaling but the lab's RoPE), and without a bug none of
# them may read "different", on short prompts and on prompts near the length limit.

rope = importlib.import_module("attention_core.rope")
independent = importlib.import_module("attention_core.independent")
tm = importlib.import_module("attention_core.trained_model")
sm = importlib.import_module("attention_core.smollm2")


def _rope_bug(positions, d, base=10_000.0, dtype=torch.float32):
    return _true_rope_angles(positions, d, base, dtype) * (1 + 1e-3)  # noqa: F821 (found in rope's globals)


BUGS["RoPE angles x (1 + 1e-3)"] = (rope, "rope_angles", _rope_bug)
SOFTMAX, SCALE, ROPE = "weights x (1 + 1e-5)", "scale off by 1e-4", "RoPE angles x (1 + 1e-3)"
EQUAL = "equal up to float32 rounding"
LONG_SENTENCE = "The history of the world is a long story of people, places, wars, inventions and ideas. " * 6


def test_the_independent_reference_imports_nothing_of_the_lab():
    """attention_core/independent.py imports torch and the standard library only: none of the lab's functions can
    reach the numbers it checks the lab's by."""
    import ast
    from pathlib import Path

    tree = ast.parse(Path(independent.__file__).read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported == {"__future__", "dataclasses", "torch", "torch.nn.functional"}, imported


def test_the_reference_is_right_against_transformers_own_rope_and_an_explicit_softmax():
    """RoPE as a complex rotation equals transformers' LlamaRotaryEmbedding + apply_rotary_pos_emb; the weights by
    scaled_dot_product_attention with the identity as values equal softmax(q k^T / sqrt(d_k)) written out, causal
    and grouped-query (each key/value head repeated for its 3 query heads)."""
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

    generator = torch.Generator().manual_seed(0)
    T, base = 7, 100_000.0
    q, k = torch.randn(9, T, 64, generator=generator), torch.randn(3, T, 64, generator=generator)
    v = torch.randn(3, T, 64, generator=generator)
    config = LlamaConfig(hidden_size=576, num_attention_heads=9, num_key_value_heads=3, head_dim=64, rope_theta=base)
    cos, sin = LlamaRotaryEmbedding(config=config)(q, torch.arange(T)[None])
    q_hf, k_hf = apply_rotary_pos_emb(q[None], k[None], cos, sin)  # (1, 9, T, 64), (1, 3, T, 64)
    q_ours, k_ours = (independent.rope_complex(x.double(), torch.arange(T), base) for x in (q, k))
    assert torch.allclose(q_ours, q_hf[0].double(), atol=1e-5) and torch.allclose(k_ours, k_hf[0].double(), atol=1e-5)

    reference = independent.sdpa_attention(q_ours, k_ours, v.double(), causal=True)
    keys = k_ours.repeat_interleave(3, dim=0)  # (9, T, 64)
    scores = (q_ours @ keys.transpose(-2, -1)) / 8  # (9, T, T)
    written = torch.softmax(scores.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf")), dim=-1)
    assert torch.allclose(reference.weights, written, atol=1e-12)
    assert torch.allclose(reference.contexts, written @ v.double().repeat_interleave(3, dim=0), atol=1e-12)
    assert reference.weights[:, 0, 1:].abs().max() == 0  # the first query sees only itself


@pytest.fixture(scope="module")
def bert():
    from ui.models import trained

    return trained.model()


def test_the_bert_reference_equals_transformers_attention_from_its_own_hidden_states(bert):
    """independent.bert_layer on transformers' BertModel's own hidden states and weights gives its attention weights:
    the reference is right without any of the lab's numbers."""
    from transformers import BertModel

    model = BertModel.from_pretrained(tm.model_folder(), local_files_only=True, attn_implementation="eager").eval()
    ids, _, _ = tm.encode(bert.tokenizer, "Your journey starts with one step")
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_attentions=True, output_hidden_states=True)
    for layer, block in enumerate(model.encoder.layer):
        own = block.attention.self
        reference = independent.bert_layer(
            out.hidden_states[layer][0],
            own.query.weight,
            own.query.bias,
            own.key.weight,
            own.key.bias,
            own.value.weight,
            own.value.bias,
            model.config.num_attention_heads,
        )
        assert torch.allclose(reference.weights, out.attentions[layer][0].double(), atol=1e-5), layer


def test_lesson_10_verdicts_read_different_under_each_bug_and_equal_without(bert):
    """Every head by hand and the lab's forward against the reference: equal without a bug, "different" with one."""
    sentence = "Your journey starts with one step"
    for bug in (None, SOFTMAX, SCALE):
        with injected(bug):
            check = tm.independent_check(bert.model, tm.run_forward(bert, sentence))
        verdicts = [comparison.verdict for comparison in check.comparisons]
        assert verdicts == [EQUAL] * 4 if bug is None else verdicts == ["different"] * 4, (bug, check.comparisons)
        assert check.agrees == (bug is None)


def test_lesson_10_no_false_alarm_near_the_length_limit(bert):
    """On a sentence of about 128 pieces float32 rounding of every head stays within the allowed difference."""
    forward = tm.run_forward(bert, LONG_SENTENCE)
    assert len(forward.pieces) > 100
    check = tm.independent_check(bert.model, forward)
    assert check.agrees, check.comparisons
    assert all(c.max_difference < c.allowed / 1.5 for c in check.comparisons), check.comparisons  # with a margin


@pytest.fixture(scope="module")
def smol():
    from ui.models import smol

    try:
        return smol.model()
    except sm.ModelUnavailable as error:
        pytest.skip(str(error))


def lesson_11_verdicts(model, bug: str | None, rows) -> dict[tuple[int, int, int], list[str]]:
    """Each (layer, head, query) row of the published prompt: the verdicts of by hand (weights, context) and of the
    model's forward (weights, context), with the bug injected into the lab."""
    found = {}
    with injected(bug):
        result = sm.forward(model, sm.encode(model, sm.PUBLISHED_PROMPT))
        for layer, head, query in rows:
            hand = sm.head_by_hand(model, result, layer, head, query)
            found[layer, head, query] = [c.verdict for c in sm.independent_check(model, result, hand).comparisons]
    return found


ROWS = ((5, 4, 8), (0, 0, 8), (17, 2, 6))  # lesson 11's page test's head, the default head, a middle query


def test_lesson_11_verdicts_read_different_under_each_bug_and_equal_without(smol):
    """The row by hand against the reference reads "different" under each bug; the forward's row too under the RoPE
    bug, while under the softmax and scaling bugs it stays equal: SmolLM2's forward runs torch.softmax and divides
    by math.sqrt(d_k) itself, so its numbers are right and the verdict says so."""
    assert all(verdicts == [EQUAL] * 4 for verdicts in lesson_11_verdicts(smol, None, ROWS).values())
    for bug in (SOFTMAX, SCALE):
        for row, verdicts in lesson_11_verdicts(smol, bug, ROWS).items():
            assert verdicts[0] == "different" and verdicts[2:] == [EQUAL, EQUAL], (bug, row, verdicts)
    for row, verdicts in lesson_11_verdicts(smol, ROPE, ROWS).items():
        assert verdicts[0] == verdicts[2] == "different", (row, verdicts)


def test_lesson_11_the_first_query_stays_right_under_a_scaling_bug(smol):
    """The first token sees only itself: its weight is 1 whatever the scaling, and the verdict reads exactly equal,
    because the numbers on screen are right."""
    verdicts = lesson_11_verdicts(smol, SCALE, ((3, 1, 0),))[3, 1, 0]
    assert verdicts[0] == verdicts[2] == "exactly equal", verdicts


def test_lesson_11_no_false_alarm_on_every_head_near_the_length_limit(smol, monkeypatch):
    """A prompt of 125 tokens: the last query of all 270 heads, and the rows where float32 rounding was largest
    when the allowances were measured, all within them (the dequantized matrices kept: the same numbers, faster)."""
    kept, dequantize = {}, sm.dequantize_q4

    def dequantized_once(W, work):
        if id(W) not in kept:
            kept[id(W)] = dequantize(W, work).clone()
        return kept[id(W)]

    monkeypatch.setattr(sm, "dequantize_q4", dequantized_once)
    prompt = " ".join(["The history of the world is a long story of people, places, wars, inventions and ideas that "
                       "changed how we live."] * 5)  # fmt: skip
    result = sm.forward(smol, sm.encode(smol, prompt))
    T = len(result.ids)
    assert T == 125
    config = smol.config
    rows = [(layer, head, T - 1) for layer in range(config.num_layers) for head in range(config.num_heads)]
    rows += [(17, 4, 121), (18, 7, 116), (19, 8, 88)]
    for layer, head, query in rows:
        check = sm.independent_check(smol, result, sm.head_by_hand(smol, result, layer, head, query))
        assert check.agrees, ((layer, head, query), check.comparisons)
