"""The Mistakes museum's exhibits: each classic bug as wrong code, right code and its effect on the input.

The numbers come from ``attention_core.mistakes`` (one function per bug); this module holds the
code snippets, picks what to show of the results (the query's row of a (T, T) matrix) and draws
one "spot the bug" exhibit: a choice of the wrong code's lines, answered in a form before the fix
is shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import streamlit as st
import torch

import attention_core as ac
from attention_core import mistakes
from attention_core.tables import dimension_labels
from ui import display, progress
from ui.format import format_number, numbers_text, plural

PAGE = "app_pages/mistakes.py"


@dataclass(frozen=True)
class Evidence:
    """What the wrong and the right code give on this input, ready for two tables side by side."""

    wrong: torch.Tensor | str  # (rows, cols), or the error the wrong code raises
    right: torch.Tensor  # (rows, cols)
    rows: tuple[str, ...]
    cols: tuple[str, ...]
    verdict: str  # one sentence with the real numbers: what went wrong


@dataclass(frozen=True)
class Exhibit:
    """One classic bug."""

    key: str
    title: str
    source: str  # where learners meet it
    wrong_code: str
    right_code: str
    bug_line: int  # 0-based line of wrong_code that is wrong
    evidence: Callable[..., Evidence]

    @property
    def options(self) -> tuple[str, ...]:
        return tuple(f"line {n}: {line.strip()}" for n, line in enumerate(self.wrong_code.splitlines(), 1))

    @property
    def answer(self) -> str:
        return self.options[self.bug_line]


def _row(M: torch.Tensor, i: int) -> torch.Tensor:
    return M[i].unsqueeze(0)  # (1, T)


def _sums(M: torch.Tensor) -> str:
    return numbers_text(M.sum(dim=-1)[:8])


def wrong_axis(lab) -> Evidence:
    scores = ac.attention_scores(lab.X, lab.X)  # (T, T)
    wrong, right = mistakes.softmax_wrong_axis(scores)
    i = lab.query_index
    return Evidence(
        _row(wrong, i),
        _row(right, i),
        (lab.query_label,),
        lab.labels,
        f"Row “{lab.query_label}” sums to {format_number(float(wrong[i].sum()))} with dim=0 "
        f"(the columns sum to 1 instead); with dim=-1 every row sums to 1.",
    )


def divide_by_sum(lab) -> Evidence:
    scores = ac.attention_scores(lab.X, lab.X)  # (T, T)
    wrong, right = mistakes.divide_by_sum(scores)
    i = lab.query_index
    low, high = float(wrong[i].min()), float(wrong[i].max())
    if low < 0 or high > 1:
        verdict = (
            f"Dividing by the sum gives 'weights' from {format_number(low)} to {format_number(high)} here: "
            "they sum to 1, but a negative score makes them negative or larger than 1."
        )
    else:
        verdict = (
            f"Every score of this row is positive, so the 'weights' ({format_number(low)} to {format_number(high)}) "
            "look plausible, yet they are not softmax's; a negative score (try tutorial 000) makes them negative."
        )
    return Evidence(_row(wrong, i), _row(right, i), (lab.query_label,), lab.labels, verdict)


def no_scaling(lab) -> Evidence:
    Q, K = lab.X, lab.X
    wrong, right = mistakes.no_scaling(Q, K)
    i = lab.query_index
    return Evidence(
        _row(wrong, i),
        _row(right, i),
        (lab.query_label,),
        lab.labels,
        f"Largest weight of the row: {format_number(float(wrong[i].max()))} without √d_k, "
        f"{format_number(float(right[i].max()))} with it (d_k = {Q.shape[-1]}); the gap grows with d_k.",
    )


def _heads(d_model: int) -> int:
    return next((h for h in (4, 3, 2) if d_model % h == 0), 1)


def sqrt_d_model(lab) -> Evidence:
    h = _heads(lab.d_model)
    params = ac.random_projections(lab.d_model, lab.d_model, lab.seed)
    Q_head = ac.split_heads(lab.X @ params.W_q, h)[0]  # (T, d_model) -> (h, T, d_k) -> (T, d_k)
    K_head = ac.split_heads(lab.X @ params.W_k, h)[0]  # (T, d_k)
    wrong, right = mistakes.sqrt_d_model(Q_head, K_head, lab.d_model)
    i = lab.query_index
    return Evidence(
        _row(wrong, i),
        _row(right, i),
        (lab.query_label,),
        lab.labels,
        f"With h = {h} heads each head has d_k = {Q_head.shape[-1]}: dividing by √d_model = "
        f"{format_number(lab.d_model**0.5)} instead of √d_k = {format_number(Q_head.shape[-1] ** 0.5)} "
        f"flattens head 1's row to a largest weight of {format_number(float(wrong[i].max()))} "
        f"(right: {format_number(float(right[i].max()))}).",
    )


def mask_after_softmax(lab) -> Evidence:
    scores = ac.attention_scores(lab.X, lab.X)  # (T, T)
    wrong, right = mistakes.mask_after_softmax(scores, ac.causal_mask(lab.T))
    i = lab.query_index
    return Evidence(
        _row(wrong, i),
        _row(right, i),
        (lab.query_label,),
        lab.labels,
        f"Row “{lab.query_label}” of the causal weights sums to {format_number(float(wrong[i].sum()))} "
        "when the mask comes after softmax; masking the scores first keeps every row summing to 1.",
    )


def inverted_mask(lab) -> Evidence:
    scores = ac.attention_scores(lab.X, lab.X)  # (T, T)
    wrong, right = mistakes.inverted_mask(scores, ac.causal_mask(lab.T))
    i = lab.query_index
    return Evidence(
        _row(wrong, i),
        _row(right, i),
        (lab.query_label,),
        lab.labels,
        f"With the inverted mask “{lab.query_label}” attends only to the future: "
        f"{sum(1 for w in wrong[i].tolist() if w > 0)} non-zero weights on later tokens, "
        "and the last token (nothing after it) gets a row of zeros.",
    )


def half_precision(lab) -> Evidence:
    scores = ac.attention_scores(lab.X, lab.X)  # (T, T)
    wrong, right = mistakes.large_negative_in_half(scores, ac.causal_mask(lab.T))
    i = lab.query_index
    shown = wrong if isinstance(wrong, str) else _row(wrong, i)
    return Evidence(
        shown,
        _row(right, i),
        (lab.query_label,),
        lab.labels,
        "float16 stops at ±65504: -1e9 does not fit, so PyTorch refuses it (or, cast first, it becomes -∞ "
        "and a fully masked row turns into NaN). torch.finfo(scores.dtype).min fits every dtype.",
    )


def keys_transposed(lab) -> Evidence:
    params = ac.random_projections(lab.d_model, lab.d_model, lab.seed)
    wrong, right = mistakes.keys_transposed(lab.X, params.W_k)
    i = lab.query_index
    cols = tuple(dimension_labels(lab.d_model))
    return Evidence(
        _row(wrong, i),
        _row(right, i),
        (lab.query_label,),
        cols,
        f"X W_kᵀ multiplies by the rows of W_k instead of its columns: the key of “{lab.query_label}” "
        f"becomes {numbers_text(wrong[i][:6])} instead of {numbers_text(right[i][:6])}. It only runs "
        "because W_k is square here; with d_k ≠ d_model it fails with a shape error.",
    )


def other_run(lab) -> Evidence:
    wrong, right = mistakes.printed_from_another_run()
    return Evidence(
        wrong.unsqueeze(0),
        right.unsqueeze(0),
        ("row 3",),
        ac.SCALING_EXAMPLE.tokens,
        "Tutorial 003 prints row 3 of the weights as "
        f"{numbers_text(wrong)}, but its own Q and K give {numbers_text(right)}: the printed numbers "
        "come from another run (unseeded random inputs). Print and compute in the same run, with a seed.",
    )


def forgotten_w_o(lab) -> Evidence:
    h = _heads(lab.d_model)
    params = ac.random_projections(lab.d_model, lab.d_model, lab.seed)
    W_o = ac.random_output_projection(lab.d_model, lab.seed)
    wrong, right = mistakes.forgotten_output_projection(lab.X, params.W_q, params.W_k, params.W_v, W_o, h)
    i = lab.query_index
    return Evidence(
        _row(wrong, i),
        _row(right, i),
        (lab.query_label,),
        tuple(dimension_labels(lab.d_model)),
        f"Without W_o each of the {h} heads keeps its own {plural(lab.d_model // h, 'column')}: nothing mixes what "
        "the heads found, and the layer loses d_model² learnable weights.",
    )


EXHIBITS: tuple[Exhibit, ...] = (
    Exhibit(
        "wrong-axis",
        "Softmax over the wrong axis",
        "tutorial 004 (and 002's section 2.2.5)",
        "scores = X @ X.T\nweights = torch.softmax(scores, dim=0)\ncontext = weights @ X",
        "scores = X @ X.T\nweights = torch.softmax(scores, dim=-1)\ncontext = weights @ X",
        1,
        wrong_axis,
    ),
    Exhibit(
        "divide-by-sum",
        "Dividing by the sum instead of softmax",
        "tutorial 000's first attempt",
        "scores = X @ X.T\nweights = scores / scores.sum(dim=-1, keepdim=True)\ncontext = weights @ X",
        "scores = X @ X.T\nweights = torch.softmax(scores, dim=-1)\ncontext = weights @ X",
        1,
        divide_by_sum,
    ),
    Exhibit(
        "no-scaling",
        "No scaling by √d_k",
        "tutorials 000-002 (simplified attention)",
        "scores = Q @ K.T\nweights = torch.softmax(scores, dim=-1)\ncontext = weights @ V",
        "scores = Q @ K.T / math.sqrt(d_k)\nweights = torch.softmax(scores, dim=-1)\ncontext = weights @ V",
        0,
        no_scaling,
    ),
    Exhibit(
        "sqrt-d-model",
        "√d_model instead of √d_k in a head",
        "multi-head code that reuses d_model",
        "Q_h, K_h = split_heads(Q, h)[0], split_heads(K, h)[0]\nscores = Q_h @ K_h.T / math.sqrt(d_model)\n"
        "weights = torch.softmax(scores, dim=-1)",
        "Q_h, K_h = split_heads(Q, h)[0], split_heads(K, h)[0]\nscores = Q_h @ K_h.T / math.sqrt(d_model // h)\n"
        "weights = torch.softmax(scores, dim=-1)",
        1,
        sqrt_d_model,
    ),
    Exhibit(
        "mask-after-softmax",
        "Masking after softmax",
        "a common shortcut",
        "weights = torch.softmax(scores, dim=-1)\nweights = weights * causal_mask\ncontext = weights @ V",
        "scores = scores.masked_fill(~causal_mask, float('-inf'))\nweights = torch.softmax(scores, dim=-1)\n"
        "context = weights @ V",
        1,
        mask_after_softmax,
    ),
    Exhibit(
        "inverted-mask",
        "The inverted boolean mask",
        "PyTorch SDPA (True = may attend) vs nn.MultiheadAttention (True = blocked)",
        "blocked = ~torch.tril(torch.ones(T, T, dtype=torch.bool))  # MHA's convention\n"
        "out = F.scaled_dot_product_attention(Q, K, V, attn_mask=blocked)",
        "allowed = torch.tril(torch.ones(T, T, dtype=torch.bool))  # SDPA's convention\n"
        "out = F.scaled_dot_product_attention(Q, K, V, attn_mask=allowed)",
        1,
        inverted_mask,
    ),
    Exhibit(
        "half-precision",
        "-1e9 in float16",
        "mask constants copied into mixed-precision code",
        "scores = (Q @ K.T).half()\nscores = scores.masked_fill(~mask, -1e9)\nweights = torch.softmax(scores, dim=-1)",
        "scores = (Q @ K.T).half()\nscores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)\n"
        "weights = torch.softmax(scores.float(), dim=-1)",
        1,
        half_precision,
    ),
    Exhibit(
        "keys-transposed",
        "X W_kᵀ instead of X W_k",
        "tutorial 002, section 2.2.4",
        "Q = X @ W_q\nK = X @ W_k.T\nscores = Q @ K.T",
        "Q = X @ W_q\nK = X @ W_k\nscores = Q @ K.T",
        1,
        keys_transposed,
    ),
    Exhibit(
        "other-run",
        "Printed values from another run",
        "tutorial 003, last cells",
        "Q, K = torch.randn(3, 2), torch.randn(3, 2)\nweights = torch.softmax(Q @ K.T / math.sqrt(2), dim=-1)\n"
        "print(weights[2])",
        "torch.manual_seed(0)\nQ, K = torch.randn(3, 2), torch.randn(3, 2)\n"
        "weights = torch.softmax(Q @ K.T / math.sqrt(2), dim=-1)\nprint(weights[2])",
        0,
        other_run,
    ),
    Exhibit(
        "forgotten-w-o",
        "Forgetting W_o",
        "hand-written multi-head attention",
        "heads = [attention(X @ W_q[:, s], X @ W_k[:, s], X @ W_v[:, s]) for s in slices]\n"
        "concat = torch.cat(heads, dim=-1)\nreturn concat",
        "heads = [attention(X @ W_q[:, s], X @ W_k[:, s], X @ W_v[:, s]) for s in slices]\n"
        "concat = torch.cat(heads, dim=-1)\nreturn concat @ W_o",
        2,
        forgotten_w_o,
    ),
)


def exhibit(item: Exhibit, lab, number: int) -> None:
    """One bug: the wrong code, what it does to the numbers, then 'spot the bug' and, once answered, the fix."""
    st.subheader(f"{number}. {item.title}", anchor=item.key)
    st.caption(f"Where you meet it: {item.source}.")
    code_column, fix_column = st.columns(2)
    with code_column:
        st.markdown("**The code**")
        st.code(item.wrong_code, language="python", line_numbers=True, wrap_lines=True)
    evidence = item.evidence(replace(lab, X=lab.X.float()))  # the museum's bugs are float32 bugs
    answered = spot_the_bug(item)
    with fix_column:
        st.markdown("**The fix**")
        if answered:
            st.code(item.right_code, language="python", line_numbers=True, wrap_lines=True)
        else:
            st.caption("Shown once you have picked the wrong line.")
    if isinstance(evidence.wrong, str) or evidence.wrong.shape != evidence.right.shape:
        wrong_column, right_column = st.columns(2)
        with wrong_column:
            st.markdown("**What the bug gives on your input**")
            if isinstance(evidence.wrong, str):
                st.code(evidence.wrong, language="text", wrap_lines=True)
            else:
                display.table(evidence.wrong, evidence.rows, evidence.cols, alt=f"{item.title}: wrong result")
        with right_column:
            st.markdown("**What it should be**")
            display.table(evidence.right, evidence.rows, evidence.cols, alt=f"{item.title}: right result")
    else:  # one table, the bug's rows right above the right ones: each column compares one number
        st.markdown("**What the bug gives on your input, and what it should be**")
        both = torch.cat([evidence.wrong, evidence.right])  # (2 rows, cols)
        labels = [f"bug: {row}" for row in evidence.rows] + [f"right: {row}" for row in evidence.rows]
        display.table(both, labels, evidence.cols, alt=f"{item.title}: wrong and right results")
    st.markdown(evidence.verdict)


def spot_the_bug(item: Exhibit) -> bool:
    """The choice of the wrong line in a form; True once the learner has committed an answer."""
    entry = progress.record(PAGE, item.key)
    with st.form(key=f"exf:museum:{item.key}", border=True):
        choice = st.radio("Spot the bug: which line is wrong?", item.options, index=None, key=f"ex:museum:{item.key}")
        submitted = st.form_submit_button("Check", icon=":material/task_alt:")
    if submitted:
        if choice is None:
            st.warning("Pick a line first.", icon=":material/edit:")
        else:
            entry = progress.note_try(PAGE, item.key, choice == item.answer)
            if choice == item.answer:
                st.success(f"Right: {item.answer}.", icon=":material/check:")
            else:
                st.error(f"Not this one: the bug is {item.answer}.", icon=":material/close:")
    return entry["tries"] > 0


MISTAKE_FUNCTIONS = (
    mistakes.softmax_wrong_axis,
    mistakes.divide_by_sum,
    mistakes.no_scaling,
    mistakes.sqrt_d_model,
    mistakes.mask_after_softmax,
    mistakes.inverted_mask,
    mistakes.large_negative_in_half,
    mistakes.keys_transposed,
    mistakes.printed_from_another_run,
    mistakes.forgotten_output_projection,
)
