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
    """Issue 22 item 6c: without a bug no verdict reads "different" on any preset or on edits near ±100."""
    for name, params in NO_BUG_INPUTS.items():
        st.cache_data.clear()
        at = open_page(f"app_pages/{page}.py", params)
        assert_clean(at)
        verdicts = shown_verdicts(at)
        assert verdicts and all(verdict in SAME for verdict in verdicts), (name, verdicts)
