"""Lesson 5: dividing the scores by sqrt(d_k), and why softmax needs it."""

from dataclasses import dataclass

import pandas as pd
import streamlit as st
import torch

import attention_core as ac
from attention_core.attention import AttentionSteps
from attention_core.exercises import ProjectedShown, projected_shown
from attention_core.i18n import N_, _
from attention_core.normalization import column_sums, row_sums, softmax_row_steps
from attention_core.presets import SCALING_EXAMPLE
from attention_core.projections import MAX_D_K, Comparison, random_projections
from attention_core.reference import sdpa_agreement, tolerance_text
from attention_core.saturation import (
    SERIES_SCALED,
    SERIES_UNSCALED,
    d_k_grid,
    dot_product_variance,
    entry_variances,
    gradient_to_query,
    long_series,
    projected_scores,
    reproduce_003,
    saturation,
    scaling_effect,
    summary,
)
from attention_core.tables import dimension_labels
from ui import charts, page
from ui.page import (
    exercises_section,
    format_number,
    lesson_steps,
    numbers_text,
    products_sum_text,
    quotient_text,
    sum_text,
    written_sum,
)
from ui.widgets import inputs
from ui.widgets.inputs import LabInput, keep, kept

N_SAMPLES = 2000  # pairs (q, k) per d_k in the variance simulation
N_TRIALS = 200  # queries per d_k in the saturation simulation
N_KEYS = 16  # keys per query in the saturation simulation
LARGE_D_K = 256  # the same sentence with this d_k shows where scaling matters
SERIES = (SERIES_UNSCALED, SERIES_SCALED)
DEFAULT_D_K = 16  # the d_k slider's start
D_K = inputs.Number(1, MAX_D_K)  # what the d_k slider (and a link's scaling_d_k=) takes
D_K_LABEL = N_("d_k (size of queries and keys; vector length in the simulations)")  # translated where shown
SEED_LABEL = N_("Seed for W_q, W_k, W_v and the simulations")
SERIES_NAMES = {  # the simulations' series (attention_core.saturation's names) as the charts and tables show them
    SERIES_UNSCALED: N_("without scaling: q·k"),
    SERIES_SCALED: N_("with scaling: q·k / √d_k"),
}
SUMMARY_ROWS = {  # the rows of attention_core.saturation.summary as the tables show them
    "spread of the scores (std)": N_("spread of the scores (std)"),
    "largest weight (mean over rows)": N_("largest weight (mean over rows)"),
    "entropy (mean over rows, nats)": N_("entropy (mean over rows, nats)"),
}
QUANTITIES = {  # the gradient's quantiles (attention_core.saturation.QUANTILES) as the table shows them
    "10th percentile": N_("10th percentile"),
    "median": N_("median"),
    "90th percentile": N_("90th percentile"),
}
CONTROLS = ("scaling_seed", "scaling_d_k", "scaling_scale")  # the widgets of the step "Your input"


def render(lab: LabInput) -> None:
    """The lesson's outline: one function per step."""
    page.lesson_title(__file__)
    chosen: dict[str, Chosen] = {}  # the settings drawn in the step "Your input" this run (the whole lesson)
    lesson_steps(
        __file__,
        {
            N_("Why √d_k"): lambda: intro(lab, keeping=True),
            N_("Tutorial example"): tutorial_example_step,
            N_("Beside the printout"): printout_step,
            N_("Printout: weights"): printout_weights_step,
            N_("Your input"): lambda: your_input_step(lab, chosen),
            N_("The query's row"): lambda: query_row_step(lab, chosen_settings(lab, chosen)),
            N_("Large d_k"): lambda: why_it_matters_here(lab, chosen_settings(lab, chosen)),
            N_("Weights"): lambda: weights_step(lab, chosen_settings(lab, chosen)),
            N_("Variance"): lambda: variance_simulation(*grid_settings(lab, chosen)),
            N_("Saturation"): lambda: saturation_simulation(*grid_settings(lab, chosen)),
            N_("Gradient"): lambda: gradient_step(lab, chosen),
        },
    )


@dataclass(frozen=True)
class Chosen:
    """The seed, d_k and scaling chosen in the step "Your input", and the attention on the sidebar's input."""

    seed: int
    d_k: int
    shown: ProjectedShown  # the scaled and unscaled steps, and the scaling choice

    @property
    def steps(self) -> tuple[AttentionSteps, AttentionSteps]:
        """(the steps as chosen, the steps with scaling switched the other way)."""
        return (self.shown.scaled, self.shown.raw) if self.shown.scale else (self.shown.raw, self.shown.scaled)


def chosen_for(lab: LabInput, seed: int, d_k: int, scale: bool) -> Chosen:
    params = random_projections(lab.d_model, d_k, seed, lab.X.dtype)
    origin = N_("the seeded random W_q, W_k above")  # English in the exercises' material, translated where shown
    return Chosen(seed, d_k, projected_shown(lab.X, params, scale, origin))


def chosen_settings(lab: LabInput, chosen: dict[str, Chosen]) -> Chosen:
    """The settings of the step "Your input": drawn this run (the whole lesson), or, in a step of their own, the
    values kept from that step, named in one caption."""
    if "settings" not in chosen:
        seed, d_k, scale = (
            int(kept("scaling_seed", 0, inputs.SEED, _(SEED_LABEL))),
            int(kept("scaling_d_k", DEFAULT_D_K, D_K, _(D_K_LABEL))),
            kept("scaling_scale", True, inputs.Switch(), _("Divide the scores by √d_k")),
        )
        st.caption(
            _("Seed {seed}, d_k = {d_k}, scaling on: change them in the step “Your input”.", seed=seed, d_k=d_k)
            if scale
            else _("Seed {seed}, d_k = {d_k}, scaling off: change them in the step “Your input”.", seed=seed, d_k=d_k)
        )
        chosen["settings"] = chosen_for(lab, seed, d_k, bool(scale))
    return chosen["settings"]


def grid_settings(lab: LabInput, chosen: dict[str, Chosen]) -> tuple[tuple[int, ...], int, int]:
    """(the simulations' d_k grid, the chosen d_k, the seed)."""
    settings = chosen_settings(lab, chosen)
    return d_k_grid(settings.d_k), settings.d_k, settings.seed


def tutorial_example_step() -> None:
    """The scaled_dot_product tutorial's Q, K and V, and every step for its first query by hand."""
    keep(*CONTROLS)  # the controls are in the step "Your input": a visit here forgets nothing
    example, _comparisons = reproduce_003()
    example_003(example)
    by_hand(example)


def printout_step() -> None:
    """How close every step comes to the tutorial's printout, and the scores beside it."""
    keep(*CONTROLS)
    _example, comparisons = reproduce_003()
    printout_differences(comparisons)
    beside_printout(comparisons[:2])


def printout_weights_step() -> None:
    """The weights and context vectors beside the printout, rows and columns, and the cells from another run."""
    keep(*CONTROLS)
    example, comparisons = reproduce_003()
    st.markdown(_("The weights and the context vectors for all three queries, beside the tutorial's printout:"))
    beside_printout(comparisons[2:])
    rows_and_columns(example)
    pitfall_other_run(example)


def your_input_step(lab: LabInput, chosen: dict[str, Chosen]) -> None:
    """The lesson's controls and the spread of the scores on the sidebar's input, without and with scaling."""
    seed, d_k, scale = your_input_controls()
    chosen["settings"] = settings = chosen_for(lab, seed, d_k, scale)
    spread_with_and_without(lab, settings.steps[0], scale)


def query_row_step(lab: LabInput, settings: Chosen) -> None:
    """The query's scores key by key, the questions on scaling them, then the divided scores and the weights without
    and with scaling (they answer them)."""
    steps, other_steps = settings.steps
    st.subheader(_("The query's row: without and with scaling"))
    query_scores(lab, steps)
    if exercises_section(__file__, lab, material=settings.shown):
        query_row(lab, steps, other_steps, settings.shown.scale)


def weights_step(lab: LabInput, settings: Chosen) -> None:
    weight_matrices(lab, settings.steps[0], settings.shown.scale)


def gradient_step(lab: LabInput, chosen: dict[str, Chosen]) -> None:
    """The gradient simulation, and the code of the lesson."""
    gradient_simulation(*grid_settings(lab, chosen))
    page.show_code(
        ac.attention,
        ac.attention_scores,
        ac.scale_scores,
        ac.softmax,
        dot_product_variance,
        saturation,
        gradient_to_query,
        projected_scores,
    )


@st.cache_data(show_spinner=False)
def variance_curve(d_ks: tuple[int, ...], n_samples: int, seed: int) -> dict[str, list[float]]:
    return dot_product_variance(d_ks, n_samples, seed)


@st.cache_data(show_spinner=False)
def saturation_curves(d_ks: tuple[int, ...], n_keys: int, n_trials: int, seed: int) -> dict:
    return saturation(d_ks, n_keys, n_trials, seed)


@st.cache_data(show_spinner=False)
def gradient_curves(d_ks: tuple[int, ...], n_keys: int, n_trials: int, seed: int) -> dict:
    return gradient_to_query(d_ks, n_keys, n_trials, seed)


@st.cache_data(max_entries=16, show_spinner=False)
def large_d_k_scores(rows: tuple[tuple[float, ...], ...], d_k: int, seed: int, dtype: torch.dtype = torch.float32):
    return projected_scores(torch.tensor(rows, dtype=dtype), d_k, seed)


def intro(lab: LabInput, *, keeping: bool = False) -> None:
    """Why the variance of q · k grows with d_k, and the formula (``keeping``: the controls of the step "Your input"
    keep their values through it)."""
    if keeping:
        keep(*CONTROLS)
    st.markdown(
        _(
            """
A score q · k adds up d_k products. **Assume** the entries of q and k are independent, with mean 0
and variance 1 (roughly true at initialisation): each product q_d k_d then has mean 0 and variance 1,
and the sum of d_k independent products has variance **d_k**. With d_k = 64 the scores spread over
roughly ±8 instead of ±1. Softmax turns such large gaps into weights close to 0 and 1 (one-hot): most
rows then pass almost no gradient back to q (and so to W_q and W_k), and the few rows near a tie pass
large ones. Dividing by √d_k keeps the spread of the scores (the logits) from growing with d_k at
initialisation, so rows do not saturate; training can still make scores larger where that helps.
"""
        )
    )
    st.latex(
        r"\text{weights} = \operatorname{softmax}\!\Big(\frac{Q K^\top}{\sqrt{d_k}}\Big) \qquad"
        r"\operatorname{Var}(q \cdot k) = \sum_{d=1}^{d_k} \operatorname{Var}(q_d\, k_d) = d_k"
        r"\quad\Rightarrow\quad \operatorname{Var}\Big(\frac{q \cdot k}{\sqrt{d_k}}\Big) = 1"
    )
    page.lesson_caption(lab.description)


def example_003(example: AttentionSteps) -> None:
    """The scaled_dot_product tutorial's given Q, K and V."""
    st.subheader(_("The “scaled_dot_product” tutorial's example: Q, K and V given, d_k = 2"))
    st.markdown(
        _(
            "The “scaled_dot_product” tutorial skips the projections and starts from three tokens' Q, K and V "
            "(d_k = 2). The lab runs every step on them and puts its numbers beside the tutorial's printout."
        )
    )
    matrices = (("Q", example.Q), ("K", example.K), ("V", example.V))
    for column, (name, matrix) in zip(st.columns(3), matrices, strict=True):
        with column:
            st.markdown(f"**{name}** (3 × 2)")
            page.table(
                ac.vector_frame(matrix, list(SCALING_EXAMPLE.tokens), prefix=name.lower()),
                alt_text=_("The scaled_dot_product tutorial's {name}", name=name),
            )


def by_hand(example: AttentionSteps) -> None:
    """Every step for query t1, written out with its numbers, each result checkable from the numbers before it."""
    row = softmax_row_steps(example.scaled_scores[0])
    first_context = products_sum_text(
        example.weights[0].tolist(), example.V[:, 0].tolist(), example.context[0, 0].item()
    )
    score = products_sum_text(example.Q[0].tolist(), example.K[0].tolist(), example.scores[0, 0].item())
    scaled = quotient_text(example.scores[0, 0].item(), f"√{example.Q.shape[-1]}", example.scaled_scores[0, 0].item())
    exp_sum = sum_text(row.raw_exps, row.raw_exp_sum)
    weights = ", ".join(
        quotient_text(e, written_sum(row.raw_exps), w)
        for e, w in zip(row.raw_exps.tolist(), example.weights[0].tolist(), strict=True)
    )
    st.markdown(
        _(
            """
**By hand, for query t1:**

1. Score with key t1: q₁ · k₁ = {score}
2. Scaled: {scaled}
   (the whole row: {row})
3. Exponentials of the scaled row: {exps}
   (the tutorial prints {printed_exps}); their sum is
   {exp_sum}
4. Weights = each exponential / the sum: {weights}
5. Context of t1 = Σⱼ wⱼ vⱼ, first entry: {first_context}
""",
            score=score,
            scaled=scaled,
            row=numbers_text(example.scaled_scores[0], ", "),
            exps=numbers_text(row.raw_exps, ", "),
            printed_exps=numbers_text(SCALING_EXAMPLE.printed["t1_scaled_exps"], ", "),
            exp_sum=exp_sum,
            weights=weights,
            first_context=first_context,
        )
    )


def printout_differences(comparisons: list[Comparison]) -> None:
    """How far each step of the lab is from the tutorial's printout."""
    st.markdown(_("Every step for all three queries, beside the “scaled_dot_product” tutorial's printout:"))
    page.table(
        pd.DataFrame(
            {_("largest |lab − printed|"): [c.max_difference for c in comparisons]},
            index=[_(c.name) for c in comparisons],  # named as ui.drawing.printed_beside_ours names them
        ),
        alt_text=_("Largest difference between the lab and the tutorial's printed numbers"),
    )
    st.caption(_("Differences below 0.0005 are rounding: the tutorial prints 4 decimals."))


def beside_printout(comparisons: list[Comparison]) -> None:
    """Some steps for all three queries, beside the tutorial's printout, one tab each."""
    labels = list(SCALING_EXAMPLE.tokens)
    for tab, comparison in zip(st.tabs([_(c.name) for c in comparisons]), comparisons, strict=True):
        columns = labels if comparison.ours.shape[1] == len(labels) else dimension_labels(2, "c")
        with tab:
            page.printed_beside_ours(comparison, labels, columns, page.tutorial_name("003"))


def rows_and_columns(example: AttentionSteps) -> None:
    """Rows of the weights sum to 1, columns do not."""
    st.markdown(
        _(
            "Softmax runs along each **row** (`dim=-1`): the rows sum to {rows}, while the columns sum to "
            "{columns} (the tutorial prints {printed} for the second column). A column says how much attention one "
            "key receives in total, which is not a probability.",
            rows=numbers_text(row_sums(example.weights), ", "),
            columns=numbers_text(column_sums(example.weights), ", "),
            printed=format_number(SCALING_EXAMPLE.printed["t2_column_sum"][0]),
        )
    )


def pitfall_other_run(example: AttentionSteps) -> None:
    """The tutorial's last cells come from a run whose inputs are not shown."""
    with st.expander(_("Pitfall: the tutorial's last cells come from another run"), icon=":material/warning:"):
        st.markdown(
            _(
                """
Near its end the “scaled_dot_product” tutorial prints `exp(attn_logits[2, :]) / sum(...)` = **{printed}**,
but row t3 of its own weights (printed a few cells earlier, and recomputed here) is
**{ours}**. The cells that follow use a lowercase
`v` whose numbers differ from V and print `attention[0, :]` = 0.2965, 0.3237, 0.3798 and context vectors
0.1270, 0.9533, …: they come from **another run whose inputs are not shown** (the cell numbers jump back
to In [27]). No Q, K, V on the page produce them, so the lab does not try to reproduce them.
""",
                printed=numbers_text(SCALING_EXAMPLE.printed["other_run_t3_weights"], ", "),
                ours=numbers_text(example.weights[2], ", "),
            )
        )


def your_input_controls() -> tuple[int, int, bool]:
    """The seed, d_k and scaling for the sidebar input and the simulations."""
    st.subheader(_("On your input: random W_q, W_k with a chosen d_k"))
    seed_column, d_k_column = st.columns(2)
    seed = inputs.seed_input(_(SEED_LABEL), "scaling_seed", container=seed_column)
    d_k = int(
        inputs.slider(
            _(D_K_LABEL),
            D_K.low,
            D_K.high,
            DEFAULT_D_K,
            container=d_k_column,
            key="scaling_d_k",
            help=_("The number of columns of W_q and W_k here, and the length of the random q and k below."),
        )
    )
    return seed, d_k, inputs.scale_toggle(key="scaling_scale", label=_("Divide the scores by √d_k"))


def series_name(series: str) -> str:
    """A simulation's series (attention_core.saturation's name) as the page shows it."""
    return _(SERIES_NAMES[series])


def shown_series(curves: dict[str, list[float]]) -> dict[str, list[float]]:
    """A simulation's curves keyed by the series' shown names (the charts' legend and colours follow them)."""
    return {series_name(series): values for series, values in curves.items()}


def summary_table(scores: torch.Tensor, d_k: int) -> pd.DataFrame:
    """attention_core.saturation.summary with its rows and columns named as the page shows them."""
    frame = summary(scores, d_k)
    return frame.rename(index=lambda row: _(SUMMARY_ROWS[row]), columns=series_name)


def spread_with_and_without(lab: LabInput, steps: AttentionSteps, scale: bool) -> None:
    """The shapes on the sidebar input, and the spread of its scores without and with scaling."""
    T, d_model, d_k = lab.T, lab.d_model, steps.Q.shape[1]
    st.markdown(
        _(
            "Q = X W_q and K = X W_k with seeded random weights: ({T}, {d_model}) @ ({d_model}, {d_k}) → ({T}, "
            "{d_k}). Scores Q Kᵀ are ({T}, {T}); they are divided by √{d_k} before softmax.",
            T=T,
            d_model=d_model,
            d_k=d_k,
        )
        if scale
        else _(
            "Q = X W_q and K = X W_k with seeded random weights: ({T}, {d_model}) @ ({d_model}, {d_k}) → ({T}, "
            "{d_k}). Scores Q Kᵀ are ({T}, {T}); scaling is **off**: softmax sees Q Kᵀ as it is.",
            T=T,
            d_model=d_model,
            d_k=d_k,
        )
    )
    st.markdown(_("Without and with scaling, on the same scores:"))
    page.table(
        summary_table(steps.scores, d_k),
        alt_text=_("Spread of the scores and sharpness of the weights, without and with scaling"),
    )
    st.caption(_("Entropy is ln T for uniform weights and 0 for one-hot weights."))


def why_it_matters_here(lab: LabInput, settings: Chosen) -> None:
    """Why scaling matters little or much on this input, and the same sentence with a large d_k."""
    steps, seed = settings.steps[0], settings.seed
    d_k = steps.Q.shape[1]
    var_q, var_k = entry_variances(steps.Q, steps.K)
    st.subheader(_("Does scaling matter on your input?"))
    st.markdown(
        _(
            "The variance argument assumes entries of q and k with variance 1. Here the entries of Q have variance "
            "{var_q} and those of K {var_k} (with W's entries N(0, 1) / √d_model, an entry of q has about the mean "
            "square of the embedding's entries as variance), and d_k = {d_k}: {effect}",
            var_q=format_number(var_q),
            var_k=format_number(var_k),
            d_k=d_k,
            effect=effect_text(scaling_effect(steps.scores, d_k), d_k),
        )
    )
    big = large_d_k_scores(tuple(tuple(r) for r in lab.X.tolist()), LARGE_D_K, seed, lab.X.dtype)  # (T, T)
    st.markdown(
        _(
            "**The same sentence with d_k = {d_k}** (random W_q, W_k drawn the same way, seed {seed}): {effect}",
            d_k=LARGE_D_K,
            seed=seed,
            effect=effect_text(scaling_effect(big, LARGE_D_K), LARGE_D_K),
        )
    )
    page.table(
        summary_table(big, LARGE_D_K),
        alt_text=_("The same sentence with d_k = {d_k}, without and with scaling", d_k=LARGE_D_K),
    )


def effect_text(effect: str, d_k: int) -> str:
    """One sentence for scaling_effect's verdict."""
    if effect == "saturated":
        return _(
            "without scaling the rows are nearly one-hot (saturated), as the lesson describes; dividing by √{d_k} "
            "spreads the weights again.",
            d_k=d_k,
        )
    if effect == "barely":
        return _(
            "the scores are small, so the rows are far from one-hot either way and scaling barely changes the "
            "largest weights."
        )
    if effect == "visible":
        return _(
            "the unscaled scores are large enough for scaling by √{d_k} to change the weights visibly, though the "
            "rows are not yet one-hot.",
            d_k=d_k,
        )
    raise KeyError(effect)


def query_scores(lab: LabInput, steps: AttentionSteps) -> None:
    """The query's scores q · k_j, key by key: what the questions divide and compare."""
    d_k = steps.Q.shape[1]
    st.markdown(
        _(
            "The row of “{query}”, key by key, at d_k = {d_k}. Answer the questions below first: the divided "
            "scores and the weights appear after.",
            query=lab.query_label,
            d_k=d_k,
        )
    )
    page.table(
        pd.DataFrame({_("score q·k_j"): steps.scores[lab.query_index].tolist()}, index=list(lab.labels)),
        alt_text=_("Scores of the query token"),
    )


def query_row(lab: LabInput, steps: AttentionSteps, other_steps: AttentionSteps, scale: bool) -> None:
    """The query's scores and weights, key by key, without and with scaling."""
    q, d_k = lab.query_index, steps.Q.shape[1]
    on, off = (steps, other_steps) if scale else (other_steps, steps)
    st.markdown(_("The row of “{query}”, key by key:", query=lab.query_label))
    page.table(
        pd.DataFrame(
            {
                _("score q·k_j"): steps.scores[q].tolist(),
                f"÷ √{d_k}": on.scaled_scores[q].tolist(),
                _("weight without scaling"): off.weights[q].tolist(),
                _("weight with scaling"): on.weights[q].tolist(),
            },
            index=list(lab.labels),
        ),
        alt_text=_("Scores and weights of the query token without and with scaling"),
    )


def weight_matrices(lab: LabInput, steps: AttentionSteps, scale: bool) -> None:
    """The weights and the scores softmax sees (each cell explains itself), and PyTorch's check."""
    labels, d_k = lab.labels, steps.Q.shape[1]
    title = _("Attention weights (scaled)") if scale else _("Attention weights (unscaled)")
    page.matrix(
        steps.weights,
        labels,
        labels,
        kind="weights",
        title=title,
        key="scaling_weights_chart",
        explain=page.weights_of(steps),
        caption=_("The weights below are at d_k = {d_k}, the value of the slider above.", d_k=d_k),
        download="scaled_attention_weights.csv",
        highlight_row=lab.query_label,
    )
    with st.expander(
        _("The scores softmax sees: Q Kᵀ / √d_k") if scale else _("The scores softmax sees: Q Kᵀ, not scaled")
    ):
        page.matrix(
            steps.scaled_scores,
            labels,
            labels,
            kind="scores",
            title="Q Kᵀ / √d_k" if scale else _("Q Kᵀ (not scaled)"),
            key="scaling_scores_chart",
            explain=page.scores_of(steps, scaled=scale),
            highlight_row=lab.query_label,
        )
    check = sdpa_agreement(steps, mask=None, scale=scale)
    st.caption(
        _(
            "Check: the context vectors against PyTorch's torch.nn.functional.scaled_dot_product_attention on the "
            "same Q, K, V: largest difference {difference}, **{verdict}** ({tolerance}).",
            difference=format_number(check.max_difference),
            verdict=_(check.verdict),
            tolerance=tolerance_text(check.tolerance),
        )
    )


def variance_simulation(grid: tuple[int, ...], d_k: int, seed: int) -> None:
    """The variance of random dot products per d_k, without and with division by √d_k."""
    st.subheader(_("Simulation: the variance of q · k grows with d_k"))
    variance = variance_curve(grid, N_SAMPLES, seed)
    st.markdown(
        _(
            "For each d_k, {samples} pairs of random vectors q, k with N(0, 1) entries (seed {seed}); the chart "
            "shows the variance of their dot products without and with division by √d_k.",
            samples=f"{N_SAMPLES:,}",
            seed=seed,
        )
    )
    page.chart(
        charts.log_x_lines,
        long_series(grid, shown_series(variance), "d_k", "variance"),
        x="d_k",
        y="variance",
        title=_("Variance of the scores"),
        y_title=_("variance (log scale)"),
        log_y=True,
        marker=d_k,
        series_order=[series_name(series) for series in SERIES],
        legend=False,
        st_width="content",
    )
    st.caption(_("Red: without scaling (q·k). Blue: with scaling (q·k / √d_k). Dashed line: your d_k."))
    at_d_k = grid.index(d_k)
    st.markdown(
        _(
            "At your d_k = {d_k}: var(q · k) = **{unscaled}** (theory: d_k = {d_k}), var(q · k / √d_k) = **{scaled}** "
            "(theory: 1).",
            d_k=d_k,
            unscaled=format_number(variance[SERIES_UNSCALED][at_d_k]),
            scaled=format_number(variance[SERIES_SCALED][at_d_k]),
        )
    )
    with st.expander(_("The simulated variances as a table")):
        page.table(
            pd.DataFrame(shown_series(variance), index=[f"d_k = {d}" for d in grid]),
            alt_text=_("Simulated variances per d_k"),
        )


def saturation_simulation(grid: tuple[int, ...], d_k: int, seed: int) -> None:
    """Largest weight and entropy per d_k: unscaled softmax saturates."""
    st.subheader(_("Softmax saturation: big scores, one-hot weights"))
    curves = saturation_curves(grid, N_KEYS, N_TRIALS, seed)
    st.markdown(
        _(
            """
For each d_k, {trials} random queries each score {keys} random keys (entries N(0, 1), as the variance
argument assumes). **Without scaling** the scores spread as √d_k, so softmax puts almost all the weight on the
largest one: the largest weight climbs towards 1 and the entropy falls towards 0 (uniform would be
ln {keys} = {uniform}). **With scaling** both stay where they are at d_k = 1.
""",
            trials=N_TRIALS,
            keys=N_KEYS,
            uniform=format_number(ac.uniform_entropy(N_KEYS)),
        )
    )
    measures = (("max weight", _("largest weight (mean)")), ("entropy", _("entropy (nats, mean)")))
    for column, (measure, y_title) in zip(st.columns(2), measures, strict=True):
        with column:
            page.chart(
                charts.log_x_lines,
                long_series(grid, shown_series(curves[measure]), "d_k", measure),
                x="d_k",
                y=measure,
                title=y_title,
                y_title=y_title,
                marker=d_k,
                series_order=[series_name(series) for series in SERIES],
                legend=False,
                width=300,
                st_width="content",
            )
    st.caption(_("Red: without scaling (q·k). Blue: with scaling (q·k / √d_k). Dashed line: your d_k."))
    at_d_k = grid.index(d_k)
    st.markdown(
        _(
            "At your d_k = {d_k}: largest weight **{unscaled}** without scaling vs **{scaled}** with.",
            d_k=d_k,
            unscaled=format_number(curves["max weight"][SERIES_UNSCALED][at_d_k]),
            scaled=format_number(curves["max weight"][SERIES_SCALED][at_d_k]),
        )
    )


def gradient_simulation(grid: tuple[int, ...], d_k: int, seed: int) -> None:
    """The gradient reaching q, scaled vs unscaled: the same quantity, median and spread per d_k."""
    st.subheader(_("The gradient that reaches q"))
    curves = gradient_curves(grid, N_KEYS, N_TRIALS, seed)
    st.markdown(
        _(
            """
To compare like with like, take the same queries and keys as above, a fixed random upstream gradient g on
the weights (loss L = g · w), and measure the gradient with respect to the **same input q** in both versions:
dL/dq = c (w ∘ (g − w·g)) K, with c = 1 or 1/√d_k and ∘ entry by entry. The chart shows its median size
over the {trials} queries; the table adds the 10th and 90th percentiles, the spread.
""",
            trials=N_TRIALS,
        )
    )
    page.chart(
        charts.log_x_lines,
        long_series(grid, shown_series(curves["median"]), "d_k", "median gradient"),
        x="d_k",
        y="median gradient",
        title=_("Gradient reaching q (median)"),
        y_title=_("median |dL/dq| (log scale)"),
        log_y=True,
        marker=d_k,
        series_order=[series_name(series) for series in SERIES],
        legend=False,
        st_width="content",
    )
    st.caption(_("Red: without scaling (q·k). Blue: with scaling (q·k / √d_k). Dashed line: your d_k."))
    gradient_numbers(grid, d_k, curves)


def gradient_numbers(grid: tuple[int, ...], d_k: int, curves: dict[str, dict[str, list[float]]]) -> None:
    """The gradient's median and spread at the largest d_k and at yours, and the quantiles as a table."""
    last, at_d_k = len(grid) - 1, grid.index(d_k)
    unscaled, scaled = SERIES_UNSCALED, SERIES_SCALED
    st.markdown(
        _(
            "At d_k = {largest}: without scaling, the middle 80 % of queries get gradients from **{low}** to "
            "**{high}** (median {median}): saturated rows pass almost nothing back, rows near a tie pass a lot. With "
            "scaling: **{scaled_low}** to **{scaled_high}** (median {scaled_median}), about as at d_k = 1. At your "
            "d_k = {d_k}: median {yours} without, {scaled_yours} with.",
            largest=grid[last],
            low=format_number(curves["10th percentile"][unscaled][last]),
            high=format_number(curves["90th percentile"][unscaled][last]),
            median=format_number(curves["median"][unscaled][last]),
            scaled_low=format_number(curves["10th percentile"][scaled][last]),
            scaled_high=format_number(curves["90th percentile"][scaled][last]),
            scaled_median=format_number(curves["median"][scaled][last]),
            d_k=d_k,
            yours=format_number(curves["median"][unscaled][at_d_k]),
            scaled_yours=format_number(curves["median"][scaled][at_d_k]),
        )
    )
    with st.expander(_("The gradient's quantiles as a table")):
        page.table(
            pd.DataFrame(
                {
                    _("{quantity}, {series}", quantity=_(QUANTITIES[name]), series=series_name(series)): values
                    for name, by_series in curves.items()
                    for series, values in by_series.items()
                },
                index=[f"d_k = {d}" for d in grid],
            ),
            alt_text=_("Quantiles of |dL/dq| per d_k, without and with scaling"),
        )


render(inputs.current())
