"""Lesson 2: softmax turns a row of scores into attention weights that are non-negative and sum to 1."""

import pandas as pd
import streamlit as st
import torch

import attention_core as ac
from attention_core.i18n import N_, _
from attention_core.meaning import MEANING_TEMPERATURE, cosine_scores, weights_meaning
from attention_core.normalization import (
    all_positive,
    first_overflow_offset,
    max_weight,
    offset_choices,
    one_hot_weights,
    overflow_demo,
    row_sums,
    softmax_row_steps,
    with_sums,
)
from attention_core.presets import JOURNEY, NUMPY_SEED_4, TRANSFORMER
from attention_core.reference import agreement, tolerance_text
from attention_core.tables import to_frame
from ui import charts, page
from ui.page import (
    exercises_section,
    exp_text,
    format_number,
    lesson_steps,
    numbers_text,
    quotient_text,
    sum_text,
    texts,
    whole_lesson,
    written_sum,
)
from ui.widgets import inputs, meaning
from ui.widgets.inputs import LabInput

SIDE_BY_SIDE_TOKENS = 8  # up to this many tokens, the temperature heatmap and bars share a row (whole lesson)
TEMPERATURE_KEY = "softmax_temperature"  # the slider of the step "Temperature", kept in the step after it
TEMPERATURE = inputs.Number(0.1, 5.0, whole=False, step=0.1)  # what the slider (and a link) takes


def render(lab: LabInput) -> None:
    """The lesson's outline: one function per step."""
    steps = ac.self_attention(lab.X, scale=False)  # simplified attention: Q = K = V = X, no √d_k
    page.lesson_title(__file__)
    lesson_steps(
        __file__,
        {
            N_("Why softmax"): lambda: intro(lab),
            N_("Worked example"): lambda: worked_step(lab, steps.scores[lab.query_index]),
            N_("Divide by the sum?"): lambda: pitfall_divide_by_sum(lab, steps.scores, steps.weights),
            N_("All rows"): lambda: all_rows(lab, steps),
            N_("Temperature"): lambda: temperature_step(lab, steps.weights),
            N_("All rows at t"): lambda: hot_rows_step(lab),
            N_("What the weights mean"): lambda: weights_meaning_step(lab),
            N_("Stability"): lambda: stability_step(lab, steps.scores, steps.weights),
            N_("Wrong axis"): lambda: pitfall_wrong_axis(lab, steps.scores),
        },
    )


def temperature_step(lab: LabInput, weights: torch.Tensor) -> None:
    """What a temperature does, the slider, and its question."""
    temperature_intro()
    temperature_section(lab, weights)
    exercises_section(__file__, lab, places=("temperature",))


def hot_rows_step(lab: LabInput) -> None:
    """Every query's weights at the temperature chosen in the step "Temperature" (the whole lesson draws them
    beside the slider instead, where moving it redraws them)."""
    if whole_lesson():
        return
    temperature = float(inputs.kept(TEMPERATURE_KEY, 1.0, TEMPERATURE, _("Temperature t")))
    st.subheader(_("All rows at the temperature t"))
    st.markdown(
        _(
            "The temperature divides every row of scores, not only the query's: a low t makes every query's "
            "weights peaked, a high t makes every row flatter, closer to 1/T."
        )
    )
    st.caption(_("t = {t:g}: change it in the step “Temperature”.", t=temperature))
    hot_heatmap(lab, ac.self_attention(lab.X, scale=False, temperature=temperature))  # scores / t, then softmax


def stability_step(lab: LabInput, scores: torch.Tensor, weights: torch.Tensor) -> None:
    """The question on a shifted row, then why the maximum is subtracted and the overflow demonstration (they
    answer it)."""
    st.subheader(_("Stability: subtract the maximum before exp"))
    if exercises_section(__file__, lab, places=("shift",)):
        stability_intro()
        stability_section(lab, scores, weights)


def weights_meaning_step(lab: LabInput) -> None:
    """Softmax of trained cosine scores: flat at t = 1, and at a stated temperature the related word gains."""
    st.subheader(_("What the weights mean: softmax of trained scores"))
    st.markdown(
        _(
            """
On trained word vectors of length 1 (lesson 1's step “What the scores mean”) every score is a cosine between
−1 and 1. Softmax of such close scores is **flat**: at t = 1 no weight can be more than e² ≈ 7.4 times another.
So here the cosines are divided by a temperature **t = {t:g}** (the step before), which
stretches the gaps between them.
""",
            t=MEANING_TEMPERATURE,
        )
    )
    vectors = meaning.word_vectors(lab)  # (T, 384), or None when the model is unavailable
    if vectors is None:
        return
    scores = cosine_scores(vectors)  # (T, T)
    found = weights_meaning(scores, lab.tokens, lab.query_index)
    t_label = f"t = {MEANING_TEMPERATURE:g}"
    page.table(
        pd.DataFrame(
            {
                _("cosine score"): scores[lab.query_index].tolist(),
                _("weight at t = {t:g}", t=1): found.plain.tolist(),
                _("weight at t = {t:g}", t=MEANING_TEMPERATURE): found.sharp.tolist(),
            },
            index=list(lab.labels),
        ),
        alt_text=_("Cosine scores of {query} and their weights at two temperatures", query=lab.query_label),
    )
    row_bars(
        lab.labels,
        {"t = 1": found.plain, t_label: found.sharp},
        title=_("The query's weights on trained vectors"),
        y_title=_("weight"),
    )
    st.markdown(meaning.weights_claim(lab, found))
    meaning.vectors_note()
    meaning.suggest_sentence(lab, "softmax")


def printed_preset(lab: LabInput) -> tuple[str | None, str | None]:
    """(preset key, the token whose row its tutorial prints) when the input is a preset as printed, else Nones."""
    preset = lab.printed_preset
    return (preset.key, preset.tokens[preset.query_index]) if preset else (None, None)


def row_bars(labels: tuple[str, ...], rows: dict[str, torch.Tensor], *, title: str, y_title: str) -> None:
    """Draw bars of several (T,) rows per token, side by side (colour = which row). The column names are the
    chart's axis and legend titles, so they are in the learner's language."""
    row_of, token, value_of = _("row of"), _("token"), _("value")
    data = pd.DataFrame(
        [
            {row_of: name, token: label, value_of: value}
            for name, values in rows.items()
            for label, value in zip(labels, values.tolist(), strict=True)
        ]
    )
    page.chart(charts.bars, data, x=token, y=value_of, order=labels, title=title, color=row_of, y_title=y_title)


def intro(lab: LabInput) -> None:
    """Why scores need turning into weights, and the softmax formula."""
    st.markdown(
        _(
            """
**From scores to weights.** Scores say how similar the query is to each token, but they can be any size and
any sign. To **mix** the tokens we need *weights*: every weight at least 0, and the weights of one query
adding up to 1, so the result is a weighted **average**. Softmax does exactly that: the exponential
makes every score non-negative, then it divides by the total. Bigger scores get a larger share,
and the order of the scores is kept.
"""
        )
    )
    st.latex(
        r"w_{ij} = \operatorname{softmax}(\omega_i)_j = \frac{e^{\omega_{ij}}}{\sum_{k=1}^{T} e^{\omega_{ik}}}"
        r"\qquad W = \operatorname{softmax}_{\text{rows}}(X X^\top)"
    )
    why_softmax()
    page.lesson_caption(lab.description)
    st.caption(
        _(
            "Scores here are the simplified ones of lesson 1, Ω = X Xᵀ (queries, keys and values are all X, no "
            "scaling by √d_k yet), so the numbers match the tutorials."
        )
    )


def why_softmax() -> None:
    """Why softmax, and not dividing by the sum or taking the largest score."""
    st.markdown(
        _(
            """
**Why softmax, and not something simpler?** Dividing by the sum breaks on negative scores (pitfall below).
Keeping only the largest score (argmax: weight 1 for the best key, 0 for the rest) throws away every other
word, jumps when two scores swap, and has a zero gradient almost everywhere, so training could not learn
from it. Softmax is **smooth** (a small change in a score moves the weights a little), **keeps the order**
of the scores, gives **non-negative** weights that sum to 1, and is **differentiable** everywhere, so
gradient descent can train whatever produced the scores.
"""
        )
    )


def worked_step(lab: LabInput, scores_row: torch.Tensor) -> None:
    """The query's row of scores, the questions on its weights, then softmax worked step by step (it answers them)."""
    st.subheader(_("Step by step for the query “{query}”", query=lab.query_label))
    st.markdown(
        _(
            "Softmax turns the query's row of scores into weights: take e^(s_j − max) for every score, then "
            "divide each by their sum. Answer the questions below from these scores first: the worked table "
            "appears after."
        )
    )
    page.table(
        pd.DataFrame({_("score s_j"): scores_row.tolist()}, index=list(lab.labels)),
        alt_text=_("The scores of the query {query}", query=lab.query_label),
    )
    if exercises_section(__file__, lab, places=("weight", "top-weight")):
        worked_example(lab, scores_row)


def worked_example(lab: LabInput, scores_row: torch.Tensor) -> None:
    """Softmax of the query's row, step by step, and the tutorial's printed weights."""
    labels, query = lab.labels, lab.query_label
    row = softmax_row_steps(scores_row)
    worked = pd.DataFrame(
        {
            _("score s_j"): row.scores.tolist(),
            "s_j − max": row.shifted.tolist(),
            "exp(s_j − max)": row.exps.tolist(),
            _("weight w_j"): row.weights.tolist(),
        },
        index=list(labels),
    )
    if bool(row.raw_exps.isfinite().all()):
        worked.insert(1, "exp(s_j)", row.raw_exps.tolist())
    st.markdown(
        _(
            """
1. Take the query's row of scores. Its largest score is **{row_max}**.
2. Subtract that maximum from every score (column “s_j − max”). This does not change the result,
   because it divides the top and the bottom of the fraction by the same e^max; it only keeps the
   exponentials small (see *Stability* below).
3. Take the exponential of each: all non-negative (a very negative one underflows to 0), the largest is exactly 1.
4. Add them up: Σ = {exp_sum}.
5. Divide each exponential by Σ: those are the weights.
""",
            row_max=format_number(row.row_max),
            exp_sum=sum_text(row.exps, row.exp_sum),
        )
    )
    page.table(worked, alt_text=_("Softmax worked for the query {query}", query=query))
    top, top_weight = max_weight(row.weights)
    first = 0
    st.markdown(
        _(
            "For example, the weight of “{first}”: e^(s − max) / Σ = {quotient}, where {exp}. The weights of "
            "“{query}” add up to **{total}**, and the largest goes to “{top}” ({top_weight}).",
            first=labels[first],
            quotient=quotient_text(row.exps[first].item(), written_sum(row.exps), row.weights[first].item()),
            exp=exp_text(row.scores[first].item(), row.row_max, row.exps[first].item()),
            query=query,
            total=format_number(row_sums(row.weights).item()),
            top=labels[top],
            top_weight=format_number(top_weight),
        )
    )
    printed_weights_note(lab)


def printed_weights_note(lab: LabInput) -> None:
    """The tutorial's printed weights of its query, or a hint to pick that query."""
    preset_key, tutorial_query = printed_preset(lab)
    if preset_key in ("transformer", "journey") and lab.query_label != tutorial_query:
        st.caption(
            _("The tutorial prints the weights of “{query}”: pick it as the query to compare.", query=tutorial_query)
        )
    elif preset_key == "transformer":
        page.tutorial_note(
            "000",
            _("the softmax of the row of “{query}”", query="self"),
            TRANSFORMER.printed["query_weights"],
            _("the same numbers"),
        )
    elif preset_key == "journey":
        page.tutorial_note(
            "002",
            _("the attention weights of “{query}”", query="starts"),
            JOURNEY.printed["query_weights"],
            _("the same numbers"),
        )


def pitfall_divide_by_sum(lab: LabInput, scores: torch.Tensor, weights: torch.Tensor) -> None:
    """Dividing by the sum: negative or exploding 'weights', beside softmax."""
    labels, q, query = lab.labels, lab.query_index, lab.query_label
    st.subheader(_("Pitfall: why not just divide by the sum?"))
    st.markdown(
        _(
            """
The “How self attention works in Transformer” tutorial first tries the obvious normalisation, s_j / Σ_k s_k. The results do add up to 1,
but scores can be **negative**, so the "weights" can be negative too, and when the scores nearly
cancel out, the sum is close to 0 and the division makes them **explode**. A weighted average with
negative or huge weights is no longer an average: it can land far outside the input vectors.
Softmax never has these problems: every exponential is non-negative and, after subtracting the row's
maximum, their sum is at least 1.
"""
        )
    )
    naive = ac.naive_normalize(scores)[q]  # (T,)
    st.markdown(
        _(
            "The scores of “{query}” add up to Σ s = {total}.",
            query=query,
            total=sum_text(scores[q], row_sums(scores)[q].item()),
        )
    )
    if not bool(naive.isfinite().all()):
        st.warning(
            _(
                "Demonstration of the pitfall: these scores add up to exactly 0, so dividing by their sum gives "
                "∞ or NaN (not a number). Softmax is still fine."
            ),
            icon=":material/warning:",
        )
        page.frame_table(pitfall_table(labels, scores[q], naive, weights[q]).apply(texts), width="stretch")
    elif all_positive(scores[q]):
        st.markdown(
            _(
                "Every score of “{query}” is positive, so here dividing by the sum happens to give a proper "
                "average. The “{tutorial}” tutorial's example (query “self”, computed live beside it) has "
                "negative scores:",
                query=query,
                tutorial=page.TUTORIALS["000"][0],
            )
        )
        pitfall_beside_000(lab, scores[q], naive, weights[q])
    else:
        left, right = st.columns([2, 3])
        with left:
            page.table(
                pitfall_table(labels, scores[q], naive, weights[q]), alt_text=_("Divide by the sum versus softmax")
            )
        with right:
            pitfall_bars(labels, naive, weights[q])
    with page.slot():
        printed_pitfall_note(lab)


def pitfall_table(
    labels: tuple[str, ...], scores_row: torch.Tensor, naive: torch.Tensor, weights_row: torch.Tensor
) -> pd.DataFrame:
    """One query's scores, divide-by-sum 'weights' and softmax weights, one row per key."""
    return pd.DataFrame(
        {
            _("score s_j"): scores_row.tolist(),
            _("s_j / Σ s (pitfall)"): naive.tolist(),
            _("softmax w_j"): weights_row.tolist(),
        },
        index=list(labels),
    )


def pitfall_bars(labels: tuple[str, ...], naive: torch.Tensor, weights_row: torch.Tensor) -> None:
    """Bars of divide-by-sum beside softmax for one query."""
    row_bars(
        labels,
        {_("s / Σ s (pitfall)"): naive, "softmax": weights_row},
        title=_("The query's row: divide by the sum vs softmax"),
        y_title=_("weight"),
    )


def pitfall_beside_000(lab: LabInput, scores_row: torch.Tensor, naive: torch.Tensor, weights_row: torch.Tensor) -> None:
    """The current query (all scores positive) beside the first tutorial's “self”, whose negative scores break it."""
    example = ac.self_attention(TRANSFORMER.matrix(), scale=False)  # 000's sentence, Q = K = V = X
    q_000 = TRANSFORMER.query_index
    labels_000 = tuple(ac.token_labels(TRANSFORMER.tokens))
    naive_000 = ac.naive_normalize(example.scores)[q_000]  # (T,)
    left, right = st.columns(2)
    with left:
        st.markdown(_("**This input, “{query}”**: all “weights” between 0 and 1", query=lab.query_label))
        page.table(
            pitfall_table(lab.labels, scores_row, naive, weights_row), alt_text=_("Divide by the sum, this input")
        )
    with right:
        st.markdown(
            _(
                "**The “{tutorial}” tutorial, “{query}”**: Σ s = {total}",
                tutorial=page.TUTORIALS["000"][0],
                query=labels_000[q_000],
                total=sum_text(example.scores[q_000], row_sums(example.scores)[q_000].item()),
            )
        )
        page.table(
            pitfall_table(labels_000, example.scores[q_000], naive_000, example.weights[q_000]),
            alt_text=_("Divide by the sum, the “How self attention works in Transformer” tutorial's self"),
        )
    pitfall_bars(lab.labels, naive, weights_row)  # the learner's query, as the chart's title says
    st.caption(
        _(
            "The bars show “{query}”. The tutorial's scores are negative for some keys and nearly cancel, so "
            "dividing by their small sum gives negative and exploding “weights”; softmax's stay between 0 and 1.",
            query=lab.query_label,
        )
    )


def printed_pitfall_note(lab: LabInput) -> None:
    """The tutorial's printed pitfall values, and why the lab's differ."""
    preset_key, tutorial_query = printed_preset(lab)
    if preset_key == "transformer" and lab.query_label == tutorial_query:
        page.tutorial_note(
            "000",
            _("these pitfall values for “{query}”", query="self"),
            _(
                "{numbers}. The lab's differ in the third decimal because it starts from the embeddings as printed "
                "(4 decimals): the sum of the scores is close to 0, so dividing by it magnifies every tiny "
                "rounding difference. That sensitivity is the pitfall too",
                numbers=numbers_text(TRANSFORMER.printed["query_naive_weights"]),
            ),
        )


def all_rows(lab: LabInput, steps: ac.AttentionSteps) -> None:
    """The whole weight matrix (each cell explains its softmax), with row sums (all 1) and column sums (not)."""
    labels, weights = lab.labels, steps.weights
    st.subheader(_("All queries at once: every row sums to 1, the columns do not"))
    st.markdown(
        _(
            """
Softmax is taken **along each row** (over the keys, `dim=-1`): every query shares out exactly one unit of
attention. Nothing constrains the columns: a column sum is the total attention one key *receives* from
all queries, anywhere between 0 and T. The “scaled_dot_product” tutorial checks this with its own numbers (a column sum of 0.8194).
"""
        )
    )
    page.matrix(
        weights,
        labels,
        labels,
        kind="weights",
        title=_("Attention weights softmax(X Xᵀ)"),
        key="softmax_weights_chart",
        explain=page.weights_of(steps),
        download="attention_weights.csv",
        highlight_row=lab.query_label,
    )
    st.markdown(
        _(
            "The same weights with their sums: the last column (row sums) is all 1; the last row (column sums) "
            "need not be."
        )
    )
    page.table(
        with_sums(weights),  # (T + 1, T + 1)
        [*labels, _("column sum")],
        [*labels, _("row sum")],
        alt_text=_("Weights with row sums and column sums"),
    )


def temperature_intro() -> None:
    """What a temperature does, and entropy as the measure of spread."""
    st.subheader(_("Temperature: how peaked the weights are"))
    st.markdown(
        _(
            """
Dividing the scores by a **temperature** t before the softmax changes how sharp the weights are.
A small t stretches the gaps between scores, so the largest score takes almost everything; a large t
shrinks the gaps, so the weights approach the uniform 1/T. The **entropy** of a row measures the
spread: 0 when one weight is 1, ln T when all are equal. (Lesson 5's division by √d_k is a fixed
temperature of this kind.)
"""
        )
    )
    st.latex(r"w_{ij} = \frac{e^{\omega_{ij}/t}}{\sum_k e^{\omega_{ik}/t}} \qquad H_i = -\sum_j w_{ij} \ln w_{ij}")


@st.fragment
def temperature_section(lab: LabInput, weights: torch.Tensor) -> None:
    """The temperature slider and what it changes: a fragment, so moving it reruns only this part."""
    labels, q, query = lab.labels, lab.query_index, lab.query_label
    temperature = inputs.slider(
        _("Temperature t"),
        min_value=TEMPERATURE.low,
        max_value=TEMPERATURE.high,
        value=1.0,
        step=TEMPERATURE.step,
        key=TEMPERATURE_KEY,
        help=_("The scores are divided by t before the softmax. t = 1 is the plain softmax."),
    )
    hot_steps = ac.self_attention(lab.X, scale=False, temperature=temperature)  # scores / t, then softmax
    hot = hot_steps.weights  # (T, T)
    hot_entropy = ac.row_entropy(hot)[q].item()
    hot_top, hot_max = max_weight(hot[q])
    col1, col2, col3 = st.columns(3)
    col1.metric(
        _("Entropy of “{query}” at t = {t:g}", query=query, t=temperature),
        _("{value} nats", value=format_number(hot_entropy)),
        help=_("At t = 1 it is {value} nats.", value=format_number(ac.row_entropy(weights)[q].item())),
    )
    col2.metric(
        _("Uniform maximum ln T"),
        _("{value} nats", value=format_number(ac.uniform_entropy(lab.T))),
        help=_("The entropy when every weight is 1/T."),
    )
    col3.metric(
        _("Largest weight of “{query}”", query=query),
        format_number(hot_max),
        help=_("On the key “{key}”.", key=labels[hot_top]),
    )
    page.table(
        pd.DataFrame(
            {
                _("score s_j"): hot_steps.scores[q].tolist(),
                f"s_j / {temperature:g}": hot_steps.scaled_scores[q].tolist(),
                _("weight at t = {t:g}", t=1): weights[q].tolist(),
                _("weight at t = {t:g}", t=temperature): hot[q].tolist(),
            },
            index=list(labels),
        ),
        alt_text=_("The scores of {query} divided by the temperature, and its weights", query=query),
    )
    hot_title = _("The query's weights at t = 1 and at the t above")
    hot_rows = {"t = 1": weights[q], f"t = {temperature:g}": hot[q]}  # one series at t = 1
    st.caption(
        _("Bars: the weights of “{query}” at t = 1; move t to set another temperature's bars beside them.", query=query)
        if temperature == 1
        else _("Bars: the weights of “{query}” at t = 1 and at t = {t:g}.", query=query, t=temperature)
    )
    if not whole_lesson():  # the heatmap of every row is the next step's
        row_bars(labels, hot_rows, title=hot_title, y_title=_("weight"))
    elif lab.T <= SIDE_BY_SIDE_TOKENS:
        hot_left, hot_right = st.columns(2)
        with hot_left:
            hot_heatmap(lab, hot_steps)
        with hot_right:
            row_bars(labels, hot_rows, title=hot_title, y_title=_("weight"))
    else:  # a wide heatmap needs the full width
        row_bars(labels, hot_rows, title=hot_title, y_title=_("weight"))
        hot_heatmap(lab, hot_steps)


def hot_heatmap(lab: LabInput, hot_steps: ac.AttentionSteps) -> None:
    """The weights at temperature t; a clicked cell shows its softmax of scores / t (reruns the fragment only)."""
    page.heatmap(
        hot_steps.weights,
        lab.labels,
        lab.labels,
        kind="weights",
        title=_("Weights at the temperature t above"),
        key="softmax_temperature_chart",
        explain=page.weights_of(hot_steps),
        highlight_row=lab.query_label,
    )


def stability_intro() -> None:
    """Why the maximum is subtracted before exp."""
    st.markdown(
        _(
            """
In float32, e^x overflows to infinity once x passes about 88.7. Scores that large happen (long vectors,
no scaling), and then the textbook formula computes ∞ / ∞, which is **NaN**. Because adding the same
constant c to every score does not change the softmax, we can subtract the row's maximum first: the
largest exponential becomes e⁰ = 1 and nothing can overflow. Below, every score of the query's row is
shifted up by c to show it.
"""
        )
    )


OFFSET_KEY = "softmax_offset"  # the stability demo's constant c
OFFSET_ROW_KEY = "_softmax_offset_first"  # the first overflowing c of the row the slider was last set for


@st.fragment
def stability_section(lab: LabInput, scores: torch.Tensor, weights: torch.Tensor) -> None:
    """The overflow demonstration for one constant c: a fragment, so changing c reruns only this part."""
    q = lab.query_index
    first = first_overflow_offset(scores[q])  # the largest score just overflows: a few ∞, not a wall of them
    if st.session_state.get(OFFSET_ROW_KEY) != first or OFFSET_KEY not in st.session_state:
        st.session_state[OFFSET_ROW_KEY] = first  # a new row brings its own first overflowing c
        st.session_state[OFFSET_KEY] = first
    offset = inputs.select_slider(
        _("Add this constant c to every score"),
        options=offset_choices(scores[q]),
        value=first,  # the row's own start, declared: the URL holds c only when it differs
        format_func=lambda c: f"{c:g}",
        key=OFFSET_KEY,  # one key for every row: the slider stays in place while its options and value change
        help=_("At c = {c:g} the largest score plus c first passes 88.72, where exp overflows in float32.", c=first),
    )
    demo = overflow_demo(scores[q], float(offset))
    st.info(
        _(
            "Demonstration on purpose: the naive columns below may show ∞ (overflow) and NaN (not a number), "
            "which the stable columns never do."
        ),
        icon=":material/science:",
    )
    demo_table = pd.DataFrame(
        {
            "s_j + c": texts(demo.scores),
            _("naive exp(s_j + c)"): texts(demo.naive_exps),
            _("naive weight"): texts(demo.naive_weights),
            "s_j + c − max": texts(demo.shifted),
            "exp(s_j + c − max)": texts(demo.stable_exps),
            _("stable weight"): texts(demo.stable_weights),
        },
        index=list(lab.labels),
    )
    page.frame_table(demo_table, width="stretch", height="auto" if lab.T <= 16 else 420)
    check = agreement(weights[q], demo.stable_weights)  # the lab's softmax of s against the shifted table
    st.markdown(
        _(
            "Naive sum of exponentials: **{naive_sum}**. The lab's weights of the unshifted scores against the "
            "stable weights of s + c (kept in float64, so the shift itself rounds nothing): largest difference "
            "{difference}, relative gap {relative}: **{verdict}** ({tolerance}).",
            naive_sum=format_number(demo.naive_sum),
            difference=format_number(check.max_difference),
            relative=format_number(check.relative_difference),
            verdict=_(check.verdict),
            tolerance=tolerance_text(check.tolerance),
        )
    )


def pitfall_wrong_axis(lab: LabInput, scores: torch.Tensor) -> None:
    """Softmax down the columns (the numpy tutorial): columns sum to 1, rows do not."""
    labels = lab.labels
    st.subheader(_("Pitfall: softmax along the wrong axis"))
    st.markdown(
        _(
            """
The numpy “Self Attention is good” tutorial writes `np.exp(w) / np.sum(np.exp(w), axis=0)`: that divides by **column** sums, so each
column sums to 1 and the rows do not. It then reads the rows as if they were each query's weights.
With a symmetric score matrix like X Xᵀ the mistake is easy to miss (the matrix looks plausible), but
query i's "weights" no longer add up to 1, so its output is not an average of the inputs.
"""
        )
    )
    wrong = ac.column_softmax(scores)  # (T, T)
    st.markdown(
        _(
            "The pitfall's matrix with its sums, to compare with the right one above: now the last **row** is all "
            "1 and the last column is not. Because X Xᵀ is symmetric, this matrix is exactly the transpose of the "
            "right one: the pitfall's row for a query holds how much every other query attends *to it*."
        )
    )
    page.table(
        with_sums(wrong),  # (T + 1, T + 1)
        [*labels, _("column sum")],
        [*labels, _("row sum")],
        alt_text=_("Pitfall: softmax down the columns, with row and column sums"),
    )
    page.download_csv(
        to_frame(wrong, labels, labels),
        "wrong_axis_weights.csv",
        label=_("Download the pitfall matrix as CSV"),
    )
    st.markdown(
        _(
            'For the query “{query}” the pitfall\'s row of "weights" adds up to {total} instead of 1.',
            query=lab.query_label,
            total=sum_text(wrong[lab.query_index], row_sums(wrong)[lab.query_index].item()),
        )
    )
    wrong_axis_notes(lab)
    page.show_code(softmax_row_steps, ac.softmax, ac.naive_normalize, ac.column_softmax, ac.row_entropy, overflow_demo)


def wrong_axis_notes(lab: LabInput) -> None:
    """The numpy tutorial's printed row, and why distinct one-hot inputs hide the mistake."""
    preset_key, _query = printed_preset(lab)
    if preset_key == "numpy-seed-4":
        page.tutorial_note(
            "004",
            _("the first row of its column-normalised weights"),
            NUMPY_SEED_4.printed["wrong_axis_weights"][0],
            _("the pitfall table above"),
        )
    if lab.embedding_mode == "one-hot" and len(ac.distinct_tokens(lab.tokens)) == lab.T:
        self_weight, other_weight = one_hot_weights(lab.T)
        st.caption(
            _(
                "With distinct one-hot inputs, X Xᵀ is the identity, so both axes give the same matrix: "
                "{self_weight} on the diagonal and {other_weight} elsewhere.",
                self_weight=format_number(self_weight),
                other_weight=format_number(other_weight),
            )
        )


render(inputs.current())
