"""The Mistakes museum's exhibits: each classic bug as wrong code, right code and its effect on the input.

The numbers come from ``attention_core.mistakes`` (one function per bug); this module holds the
code snippets, picks what to show of the results (the query's row of a (T, T) matrix) and draws
one exhibit. An exhibit asks before it tells: first a neutral "Exhibit N", the code, what it is
given and what it gives on the learner's input, and "spot the bug"; only once answered the bug's
name, the fix, the right numbers and the explanation are drawn (never sent to the browser before),
and the learner's answer and its verdict stay on the page.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import streamlit as st
import torch

import attention_core as ac
from attention_core import mistakes
from attention_core.i18n import N_, _
from attention_core.tables import dimension_labels, to_frame
from ui import charts, drawing
from ui.drawing import TUTORIALS
from ui.format import format_number, numbers_text, sum_text
from ui.widgets import progress

PAGE = "mistakes"  # the lesson name its answers are recorded under


@dataclass(frozen=True)
class Evidence:
    """What the code is given and what it gives on this input (the symptom), and what it should give."""

    given: torch.Tensor  # (given rows, given cols): what the wrong code starts from
    given_rows: tuple[str, ...]
    given_cols: tuple[str, ...]
    given_name: str  # in the code's own names; says nothing of the bug
    wrong: torch.Tensor | str  # (rows, cols), or the error the wrong code raises
    right: torch.Tensor  # (rows, cols)
    rows: tuple[str, ...]
    cols: tuple[str, ...]
    result_name: str  # what the code's result is, in its own names
    verdict: str  # the explanation, with the real numbers: what went wrong


@dataclass(frozen=True)
class Exhibit:
    """One classic bug."""

    key: str
    title: str  # marked N_(): shown through _()
    where: str  # where learners meet it, marked N_(): {t000}…{t004} name the tutorials (``source`` fills them in)
    wrong_code: str
    right_code: str
    bug_line: int  # 0-based line of wrong_code that is wrong
    evidence: Callable[..., Evidence]
    function: Callable  # the attention_core.mistakes function that computes both results

    @property
    def name(self) -> str:
        """The bug's name in the learner's language."""
        return _(self.title)

    @property
    def source(self) -> str:
        """Where learners meet it, in the learner's language, the tutorials named by their titles."""
        return _(self.where, **{f"t{key}": title for key, (title, _summary) in TUTORIALS.items()})

    @property
    def options(self) -> tuple[str, ...]:
        """Every line of the wrong code, in its order: the same wording and order whichever line is wrong."""
        return tuple(
            _("line {n}: {code}", n=n, code=line.strip()) for n, line in enumerate(self.wrong_code.splitlines(), 1)
        )

    @property
    def answer(self) -> str:
        return self.options[self.bug_line]


def _row(M: torch.Tensor, i: int) -> torch.Tensor:
    return M[i].unsqueeze(0)  # (1, T)


def _scores_row(lab, scores: torch.Tensor, name: str = "scores = X @ X.T") -> dict:
    """The Evidence fields of a given scores row: the query's row of ``scores``."""
    i = lab.query_index
    return {
        "given": _row(scores, i),
        "given_rows": (lab.query_label,),
        "given_cols": lab.labels,
        "given_name": _("{name}, row “{query}”", name=name, query=lab.query_label),
    }


def _weights_row(lab, wrong: torch.Tensor | str, right: torch.Tensor, name: str = N_("weights")) -> dict:
    """The Evidence fields of a result: the query's row of the wrong and of the right (T, T) weights."""
    i = lab.query_index
    return {
        "wrong": wrong if isinstance(wrong, str) else _row(wrong, i),
        "right": _row(right, i),
        "rows": (lab.query_label,),
        "cols": lab.labels,
        "result_name": _("{name}, row “{query}”", name=_(name), query=lab.query_label),
    }


def wrong_axis(lab) -> Evidence:
    scores = ac.attention_scores(lab.X, lab.X)  # (T, T)
    wrong, right = mistakes.softmax_wrong_axis(scores)
    i = lab.query_index
    return Evidence(
        **_scores_row(lab, scores),
        **_weights_row(lab, wrong, right),
        verdict=_(
            "With dim=0 row “{query}” adds up to {sum}: softmax normalised each column (the columns sum to 1) "
            "instead of each query's row. With dim=-1 every row sums to 1.",
            query=lab.query_label,
            sum=sum_text(wrong[i], float(wrong[i].sum())),
        ),
    )


def divide_by_sum(lab) -> Evidence:
    scores = ac.attention_scores(lab.X, lab.X)  # (T, T)
    wrong, right = mistakes.divide_by_sum(scores)
    i = lab.query_index
    low, high = float(wrong[i].min()), float(wrong[i].max())
    if low < 0 or high > 1:
        verdict = _(
            "Dividing by the sum gives 'weights' from {low} to {high} here: they sum to 1, but a negative score "
            "makes them negative or larger than 1.",
            low=format_number(low),
            high=format_number(high),
        )
    else:
        verdict = _(
            "Every score of this row is positive, so the 'weights' ({low} to {high}) look plausible, yet they are "
            "not softmax's; a negative score (try the “{tutorial}” tutorial) makes them negative.",
            low=format_number(low),
            high=format_number(high),
            tutorial=TUTORIALS["000"][0],
        )
    return Evidence(**_scores_row(lab, scores), **_weights_row(lab, wrong, right), verdict=verdict)


def no_scaling(lab) -> Evidence:
    Q, K = lab.X, lab.X
    wrong, right = mistakes.no_scaling(Q, K)
    i = lab.query_index
    return Evidence(
        **_scores_row(lab, ac.attention_scores(Q, K), f"Q @ K.T (Q = K = X, d_k = {Q.shape[-1]})"),
        **_weights_row(lab, wrong, right),
        verdict=_(
            "Largest weight of the row: {wrong} without √d_k, {right} with it (d_k = {d_k}); the gap grows with d_k.",
            wrong=format_number(float(wrong[i].max())),
            right=format_number(float(right[i].max())),
            d_k=Q.shape[-1],
        ),
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
    name = _("Q_h @ K_h.T of head 1 (h = {h}, d_model = {d_model})", h=h, d_model=lab.d_model)
    return Evidence(
        **_scores_row(lab, ac.attention_scores(Q_head, K_head), name),
        **_weights_row(lab, wrong, right),
        verdict=_(
            "With h = {h} heads each head has d_k = {d_k}: dividing by √d_model = {root_model} instead of √d_k = "
            "{root_k} flattens head 1's row to a largest weight of {wrong} (right: {right}).",
            h=h,
            d_k=Q_head.shape[-1],
            root_model=format_number(lab.d_model**0.5),
            root_k=format_number(Q_head.shape[-1] ** 0.5),
            wrong=format_number(float(wrong[i].max())),
            right=format_number(float(right[i].max())),
        ),
    )


def mask_after_softmax(lab) -> Evidence:
    scores = ac.attention_scores(lab.X, lab.X)  # (T, T)
    wrong, right = mistakes.mask_after_softmax(scores, ac.causal_mask(lab.T))
    i = lab.query_index
    return Evidence(
        **_scores_row(lab, scores),
        **_weights_row(lab, wrong, right, N_("weights (causal)")),
        verdict=_(
            "Row “{query}” of the causal weights adds up to {sum} when the mask comes after softmax; masking the "
            "scores first keeps every row summing to 1.",
            query=lab.query_label,
            sum=sum_text(wrong[i], float(wrong[i].sum())),
        ),
    )


def inverted_mask(lab) -> Evidence:
    scores = ac.scale_scores(ac.attention_scores(lab.X, lab.X), lab.d_model)  # (T, T): what SDPA computes
    wrong, right = mistakes.inverted_mask(scores, ac.causal_mask(lab.T))
    i = lab.query_index
    return Evidence(
        **_scores_row(lab, scores, f"Q @ K.T / √d_k (Q = K = V = X, d_k = {lab.d_model})"),
        **_weights_row(lab, wrong, right, N_("the attention weights inside")),
        verdict=_(
            "With the inverted mask “{query}” attends only to the future: {count} non-zero weights on later "
            "tokens, and the last token (nothing after it) gets a row of zeros.",
            query=lab.query_label,
            count=sum(1 for w in wrong[i].tolist() if w > 0),
        ),
    )


def half_precision(lab) -> Evidence:
    X = lab.X.to(torch.float64)  # the exact answer is computed in float64 from the exhibit's input
    scores = ac.attention_scores(X, X)  # (T, T)
    mask = ac.causal_mask(lab.T)
    wrong, right = mistakes.large_negative_in_half(scores, mask)
    i = lab.query_index
    fixed = mistakes.finfo_min_in_half(scores, mask)  # (T, T): the fix, still rounding the scores to float16
    gap = float((fixed[i].double() - right[i]).abs().max())
    return Evidence(
        **_scores_row(lab, scores, _("Q @ K.T (Q = K = X) before .half()")),
        **_weights_row(lab, wrong, right, N_("weights (causal)")),
        verdict=_(
            "float16 stops at ±65504: -1e9 does not fit, so PyTorch refuses it (or, cast first, it becomes -∞ and a "
            "fully masked row turns into NaN). torch.finfo(scores.dtype).min fits every dtype. What it should be is "
            "the exact answer (computed in float64); the fixed code, which still rounds the scores to float16, is "
            "off from it by up to {gap} in this row.",
            gap=format_number(gap),
        ),
    )


def keys_transposed(lab) -> Evidence:
    params = ac.random_projections(lab.d_model, lab.d_model, lab.seed)
    wrong, right = mistakes.keys_transposed(lab.X, params.W_k)
    i = lab.query_index
    cols = tuple(dimension_labels(lab.d_model))
    return Evidence(
        given=_row(lab.X, i),
        given_rows=(lab.query_label,),
        given_cols=cols,
        given_name=_("{name}, row “{query}”", name="X", query=lab.query_label),
        wrong=_row(wrong, i),
        right=_row(right, i),
        rows=(lab.query_label,),
        cols=cols,
        result_name=_("{name}, row “{query}”", name="K", query=lab.query_label),
        verdict=_(
            "X W_kᵀ multiplies by the rows of W_k instead of its columns: the key of “{query}” becomes {wrong} "
            "instead of {right}. It only runs because W_k is square here; with d_k ≠ d_model it fails with a shape "
            "error.",
            query=lab.query_label,
            wrong=numbers_text(wrong[i][:6]),
            right=numbers_text(right[i][:6]),
        ),
    )


def other_run(lab) -> Evidence:
    wrong, right = mistakes.printed_from_another_run()
    Q, K, _V = ac.SCALING_EXAMPLE.tensors()  # (3, 2) each
    return Evidence(
        given=torch.cat([Q, K], dim=-1),  # (3, 4)
        given_rows=ac.SCALING_EXAMPLE.tokens,
        given_cols=tuple(dimension_labels(2, "Q d")) + tuple(dimension_labels(2, "K d")),
        given_name=_("Q and K as the “{tutorial}” tutorial prints them", tutorial=TUTORIALS["003"][0]),
        wrong=wrong.unsqueeze(0),
        right=right.unsqueeze(0),
        rows=(_("row 3"),),
        cols=ac.SCALING_EXAMPLE.tokens,
        result_name=_("weights[2] as the tutorial prints it"),
        verdict=_(
            "The “{tutorial}” tutorial prints row 3 of the weights as {wrong}, but its own Q and K give {right}: the "
            "printed numbers come from another run (unseeded random inputs). Print and compute in the same run, with "
            "a seed.",
            tutorial=TUTORIALS["003"][0],
            wrong=numbers_text(wrong),
            right=numbers_text(right),
        ),
    )


def forgotten_w_o(lab) -> Evidence:
    h = _heads(lab.d_model)
    params = ac.random_projections(lab.d_model, lab.d_model, lab.seed)
    W_o = ac.random_output_projection(lab.d_model, lab.seed)
    wrong, right = mistakes.forgotten_output_projection(lab.X, params.W_q, params.W_k, params.W_v, W_o, h)
    i = lab.query_index
    cols = tuple(dimension_labels(lab.d_model))
    return Evidence(
        given=_row(lab.X, i),
        given_rows=(lab.query_label,),
        given_cols=cols,
        given_name=(
            _("X, row “{query}” ({h} head)", query=lab.query_label, h=h)
            if h == 1
            else _("X, row “{query}” ({h} heads)", query=lab.query_label, h=h)
        ),
        wrong=_row(wrong, i),
        right=_row(right, i),
        rows=(lab.query_label,),
        cols=cols,
        result_name=_("{name}, row “{query}”", name=_("the returned output"), query=lab.query_label),
        verdict=(
            _(
                "Without W_o each of the {h} heads keeps its own {d} column: nothing mixes what the heads found, and "
                "the layer loses d_model² learnable weights.",
                h=h,
                d=lab.d_model // h,
            )
            if lab.d_model // h == 1
            else _(
                "Without W_o each of the {h} heads keeps its own {d} columns: nothing mixes what the heads found, "
                "and the layer loses d_model² learnable weights.",
                h=h,
                d=lab.d_model // h,
            )
        ),
    )


EXHIBITS: tuple[Exhibit, ...] = (
    Exhibit(
        "wrong-axis",
        N_("Softmax over the wrong axis"),
        N_("the “{t004}” tutorial (and section 2.2.5 of the “{t002}” tutorial)"),
        "scores = X @ X.T\nweights = torch.softmax(scores, dim=0)\ncontext = weights @ X",
        "scores = X @ X.T\nweights = torch.softmax(scores, dim=-1)\ncontext = weights @ X",
        1,
        wrong_axis,
        mistakes.softmax_wrong_axis,
    ),
    Exhibit(
        "divide-by-sum",
        N_("Dividing by the sum instead of softmax"),
        N_("the first attempt of the “{t000}” tutorial"),
        "scores = X @ X.T\nweights = scores / scores.sum(dim=-1, keepdim=True)\ncontext = weights @ X",
        "scores = X @ X.T\nweights = torch.softmax(scores, dim=-1)\ncontext = weights @ X",
        1,
        divide_by_sum,
        mistakes.divide_by_sum,
    ),
    Exhibit(
        "no-scaling",
        N_("No scaling by √d_k"),
        N_("the simplified attention of the first three tutorials"),
        "scores = Q @ K.T\nweights = torch.softmax(scores, dim=-1)\ncontext = weights @ V",
        "scores = Q @ K.T / math.sqrt(d_k)\nweights = torch.softmax(scores, dim=-1)\ncontext = weights @ V",
        0,
        no_scaling,
        mistakes.no_scaling,
    ),
    Exhibit(
        "sqrt-d-model",
        N_("√d_model instead of √d_k in a head"),
        N_("multi-head code that reuses d_model"),
        "Q_h, K_h = split_heads(Q, h)[0], split_heads(K, h)[0]\nscores = Q_h @ K_h.T / math.sqrt(d_model)\n"
        "weights = torch.softmax(scores, dim=-1)",
        "Q_h, K_h = split_heads(Q, h)[0], split_heads(K, h)[0]\nscores = Q_h @ K_h.T / math.sqrt(d_model // h)\n"
        "weights = torch.softmax(scores, dim=-1)",
        1,
        sqrt_d_model,
        mistakes.sqrt_d_model,
    ),
    Exhibit(
        "mask-after-softmax",
        N_("Masking after softmax"),
        N_("a common shortcut"),
        "weights = torch.softmax(scores, dim=-1)\nweights = weights * causal_mask\ncontext = weights @ V",
        "scores = scores.masked_fill(~causal_mask, float('-inf'))\nweights = torch.softmax(scores, dim=-1)\n"
        "context = weights @ V",
        1,
        mask_after_softmax,
        mistakes.mask_after_softmax,
    ),
    Exhibit(
        "inverted-mask",
        N_("The inverted boolean mask"),
        N_("PyTorch SDPA (True = may attend) vs nn.MultiheadAttention (True = blocked)"),
        "blocked = ~torch.tril(torch.ones(T, T, dtype=torch.bool))  # MHA's convention\n"
        "out = F.scaled_dot_product_attention(Q, K, V, attn_mask=blocked)",
        "allowed = torch.tril(torch.ones(T, T, dtype=torch.bool))  # SDPA's convention\n"
        "out = F.scaled_dot_product_attention(Q, K, V, attn_mask=allowed)",
        1,
        inverted_mask,
        mistakes.inverted_mask,
    ),
    Exhibit(
        "half-precision",
        N_("-1e9 in float16"),
        N_("mask constants copied into mixed-precision code"),
        "scores = (Q @ K.T).half()\nscores = scores.masked_fill(~mask, -1e9)\nweights = torch.softmax(scores, dim=-1)",
        "scores = (Q @ K.T).half()\nscores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)\n"
        "weights = torch.softmax(scores.float(), dim=-1)",
        1,
        half_precision,
        mistakes.large_negative_in_half,
    ),
    Exhibit(
        "keys-transposed",
        N_("X W_kᵀ instead of X W_k"),
        N_("the “{t002}” tutorial, section 2.2.4"),
        "Q = X @ W_q\nK = X @ W_k.T\nscores = Q @ K.T",
        "Q = X @ W_q\nK = X @ W_k\nscores = Q @ K.T",
        1,
        keys_transposed,
        mistakes.keys_transposed,
    ),
    Exhibit(
        "other-run",
        N_("Printed values from another run"),
        N_("the “{t003}” tutorial, last cells"),
        "Q, K = torch.randn(3, 2), torch.randn(3, 2)\nweights = torch.softmax(Q @ K.T / math.sqrt(2), dim=-1)\n"
        "print(weights[2])",
        "torch.manual_seed(0)\nQ, K = torch.randn(3, 2), torch.randn(3, 2)\n"
        "weights = torch.softmax(Q @ K.T / math.sqrt(2), dim=-1)\nprint(weights[2])",
        0,
        other_run,
        mistakes.printed_from_another_run,
    ),
    Exhibit(
        "forgotten-w-o",
        N_("Forgetting W_o"),
        N_("hand-written multi-head attention"),
        "heads = [attention(X @ W_q[:, s], X @ W_k[:, s], X @ W_v[:, s]) for s in slices]\n"
        "concat = torch.cat(heads, dim=-1)\nreturn concat",
        "heads = [attention(X @ W_q[:, s], X @ W_k[:, s], X @ W_v[:, s]) for s in slices]\n"
        "concat = torch.cat(heads, dim=-1)\nreturn concat @ W_o",
        2,
        forgotten_w_o,
        mistakes.forgotten_output_projection,
    ),
)


def exhibit(item: Exhibit, lab, number: int) -> None:
    """One bug: 'Exhibit N', the code, what it is given and gives, 'spot the bug'; once answered, all the rest."""
    heading = st.empty()  # filled last: it names the bug only once the learner has answered
    lab = replace(lab, X=lab.X.float())  # the museum's bugs are float32 bugs (hand edits run in float64)
    evidence = item.evidence(lab)
    st.markdown(_("**The code**"))
    st.code(item.wrong_code, language="python", line_numbers=True, wrap_lines=True)
    symptom(evidence, number)
    picture = st.container()  # filled once the answer (if any) is known: the picture names the bug after it
    entry = spot_the_bug(item, number)
    if item.key == "wrong-axis":
        with picture:
            wrong_axis_picture(lab, number, answered=entry["tries"] > 0)
    if entry["tries"]:
        verdict(item, entry)
        reveal(item, evidence, number)
    if entry["tries"]:
        title = _("Exhibit {number}: {title}", number=number, title=item.name)
    else:
        title = _("Exhibit {number}", number=number)
    heading.subheader(title, anchor=f"exhibit-{number}")


def symptom(evidence: Evidence, number: int) -> None:
    """What the code is given and, beside it, what it gives: the buggy numbers, nothing that names the bug."""
    given_column, result_column = st.columns(2)
    with given_column:
        st.markdown(_("**It is given** {name}", name=evidence.given_name))
        drawing.table(
            evidence.given,
            evidence.given_rows,
            evidence.given_cols,
            alt_text=_("Exhibit {number}: what the code is given", number=number),
        )
    with result_column:
        st.markdown(_("**It gives** {name}", name=evidence.result_name))
        if isinstance(evidence.wrong, str):
            st.code(evidence.wrong, language="text", wrap_lines=True)
        else:
            drawing.table(
                evidence.wrong,
                evidence.rows,
                evidence.cols,
                alt_text=_("Exhibit {number}: what the code gives", number=number),
            )


def spot_the_bug(item: Exhibit, number: int) -> dict:
    """The choice of the wrong line in a form, until answered; the first answer counts and stays (its record)."""
    entry = progress.record(PAGE, item.key)
    if entry["tries"]:
        return entry
    slot = st.empty()  # the form, gone as soon as it is answered: the first answer counts
    with slot.container(), st.form(key=f"exf:museum:exhibit-{number}", border=True):
        choice = st.radio(_("Spot the bug: which line is wrong?"), item.options, index=None, key=f"ex:museum:{number}")
        submitted = st.form_submit_button(_("Check"), icon=":material/task_alt:")
    if submitted:
        if choice is None:
            st.warning(_("Pick a line first."), icon=":material/edit:")
        else:
            entry = progress.note_try(PAGE, item.key, choice == item.answer)
            entry["choice"] = item.options.index(choice)  # its place: shown in the language of the page that shows it
            slot.empty()
    return entry


def verdict(item: Exhibit, entry: dict) -> None:
    """The learner's answer and whether it was right, on screen for as long as the session keeps it."""
    if entry["correct"]:
        st.success(_("Right: {answer}.", answer=item.answer), icon=":material/check:")
    else:
        st.error(
            _(
                "Not this one: you picked {choice}; the bug is {answer}.",
                choice=item.options[entry["choice"]] if isinstance(entry.get("choice"), int) else entry.get("choice"),
                answer=item.answer,
            ),
            icon=":material/close:",
        )


def reveal(item: Exhibit, evidence: Evidence, number: int) -> None:
    """Drawn only after an answer: where the bug comes from, the fix, the right numbers and why."""
    st.caption(_("Where you meet it: {source}.", source=item.source))
    st.markdown(_("**The fix**"))
    st.code(item.right_code, language="python", line_numbers=True, wrap_lines=True)
    if isinstance(evidence.wrong, str) or evidence.wrong.shape != evidence.right.shape:
        st.markdown(_("**What it should be:** {name}", name=evidence.result_name))
        drawing.table(
            evidence.right, evidence.rows, evidence.cols, alt_text=_("{title}: right result", title=item.name)
        )
    else:  # one table, the bug's rows right above the right ones: each column compares one number
        st.markdown(_("**What the bug gives and what it should be:** {name}", name=evidence.result_name))
        both = torch.cat([evidence.wrong, evidence.right.to(evidence.wrong.dtype)])  # (2 rows, cols)
        labels = [_("bug: {row}", row=row) for row in evidence.rows] + [
            _("right: {row}", row=row) for row in evidence.rows
        ]
        drawing.table(both, labels, evidence.cols, alt_text=_("{title}: wrong and right results", title=item.name))
    st.markdown(evidence.verdict)
    drawing.show_code(item.function, title=_("Show the code of exhibit {number}", number=number))


MUSEUM_PANEL_PX = 260  # a heatmap of the museum fits a 390 px phone: cells of 43 px at 6 tokens, values printed


def museum_heatmap(weights: torch.Tensor, lab, title: str, domain) -> None:
    """One heatmap of weights as a panel that fits a phone (no legend: the caption names the colours)."""
    drawing.heatmap(
        weights,
        lab.labels,
        lab.labels,
        kind="weights",
        title=title,
        highlight_row=lab.query_label,
        domain=domain,
        compact=True,
        panel_px=MUSEUM_PANEL_PX,
    )


def wrong_axis_picture(lab, number: int, *, answered: bool) -> None:
    """Every row of the code's weights as a heatmap; once answered, beside softmax along the rows. Panels that fit a
    phone, one colour scale for both (named in the caption above them)."""
    wrong, right = mistakes.softmax_wrong_axis(ac.attention_scores(lab.X, lab.X))
    shared = drawing.weights_domain(wrong, right) if answered else drawing.weights_domain(wrong)
    values = {"query": lab.query_label, "legend": charts.weights_legend(shared)}
    if answered:
        st.caption(_("Rows: query, columns: key; row “{query}” outlined. Colours: {legend}, shared by both.", **values))
    else:
        st.caption(_("Rows: query, columns: key; row “{query}” outlined. Colours: {legend}.", **values))
    if not answered:
        museum_heatmap(wrong, lab, _("It gives: every row of weights"), shared)
        return
    left, right_column = st.columns(2)
    with left:
        museum_heatmap(wrong, lab, _("softmax(dim=0): columns sum to 1"), shared)
    with right_column:
        museum_heatmap(right, lab, _("softmax(dim=-1): rows sum to 1"), shared)
    drawing.download_csv(
        to_frame(wrong, lab.labels, lab.labels),
        f"exhibit_{number}_wrong_axis_weights.csv",
        label=_("Download the wrong-axis weights as CSV"),
    )


def scorecard() -> str:
    """Which exhibits the learner got right, which wrong, which are still open (markdown)."""
    right, wrong, open_ = [], [], []
    for number, item in enumerate(EXHIBITS, 1):
        entry = progress.record(PAGE, item.key)
        if not entry["tries"]:
            open_.append(str(number))
        elif entry["correct"]:
            right.append(_("{number} ({title})", number=number, title=item.name))
        else:
            wrong.append(_("{number} ({title})", number=number, title=item.name))
    parts = [
        _(
            "Bugs spotted in this session: **{right} of {answered}** answered.",
            right=len(right),
            answered=len(right) + len(wrong),
        ),
        _exhibits(right, N_("Spotted: exhibit {exhibits}."), N_("Spotted: exhibits {exhibits}.")),
        _exhibits(wrong, N_("Missed: exhibit {exhibits}."), N_("Missed: exhibits {exhibits}.")),
        _exhibits(open_, N_("Not answered yet: exhibit {exhibits}."), N_("Not answered yet: exhibits {exhibits}.")),
    ]
    return "  \n".join(part for part in parts if part)


def _exhibits(names: list[str], one: str, several: str) -> str:
    """'Spotted: exhibit 3.' or 'Spotted: exhibits 1, 4, 7.' (``one`` or ``several``, translated here); '' for none."""
    if not names:
        return ""
    return _(one if len(names) == 1 else several, exhibits=", ".join(names))
