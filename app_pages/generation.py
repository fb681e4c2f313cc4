"""Lesson 13: generation, step by step. A KV cache, what it saves, the cost of attention, online softmax."""

import dataclasses
import functools

import pandas as pd
import streamlit as st
import torch

import attention_core as ac
from attention_core import cell_math
from attention_core import generation as gen
from attention_core import training as tr
from attention_core.exercises import GenerationMaterial
from attention_core.exercises.models import query_block
from attention_core.i18n import N_, _
from attention_core.masks import causal_mask
from attention_core.reference import agreement, tolerance_text
from attention_core.tables import dimension_labels, long_columns
from ui import charts, page
from ui.models import generation
from ui.page import exercises_section, format_number, lesson_steps, vector_text, whole_lesson
from ui.widgets import inputs
from ui.widgets.inputs import LabInput

BLOCK_SIZES = (1, 2, 3, 4, 8)
NARROW_CACHE = 6  # dimensions up to which K, V and the query's row fit side by side
SIDE_BY_SIDE = 6  # tokens up to which the cached and the recomputed weights fit side by side
COUNTS = ("with cache", "without cache", "total with cache", "total without cache", "cells", "bytes (formula)")
ALLOCATED = "allocated bytes (measured)"
OVERHEAD_RATIO = 1.5  # from this measured / formula ratio on, a fixed cost per call is what shows at small T
COUNT_FORMAT = {name: st.column_config.NumberColumn(format="localized") for name in (*COUNTS, ALLOCATED)}
TIME_FORMAT = {name: st.column_config.NumberColumn(format="%.4f") for name in ("ms", "ms (c·T²)")}
RATIO_FORMAT = {"allocated / formula": st.column_config.NumberColumn(format="%.1f")}
CACHE, QUERY = "cache", "query"  # the stepped view's two parts of the KV cache: its K and V, the new query's row


def render(lab: LabInput) -> None:
    """The lesson's outline: one function per step (a later step, such as a real model's cache, is one more entry)."""
    page.lesson_title(__file__)
    whole = whole_lesson()  # one page: the cache and the new query's row are drawn together, under one slider
    run = generation.current_run()
    X, W_q, W_k, W_v, labels = source(lab, run)
    head = Head(X, W_q, W_k, W_v, tuple(labels), run)
    lesson_steps(
        __file__,
        {
            N_("One token at a time"): lambda: intro(lab, run),
            N_("The KV cache"): lambda: kv_cache_step(lab, head, part=None if whole else CACHE),
            N_("The new query"): lambda: None if whole else kv_cache_step(lab, head, part=QUERY),
            N_("Cache = recompute"): lambda: recompute_step(head),
            N_("What the cache saves"): lambda: saving_step(lab, head),
            N_("The cost of attention"): cost_of_attention,
            N_("Online softmax"): lambda: online_softmax_step(lab, head),
            N_("GQA and the KV cache"): lambda: (
                generation.real_model_step if whole else generation.gqa_questions_step
            )(__file__, lab),
            N_("Cached on SmolLM2"): lambda: None if whole else generation.cache_check_step(),
        },
    )


@dataclasses.dataclass(frozen=True)
class Head:
    """The head the lesson generates with (the model trained in the training lesson, or the sidebar's input) and its steps."""

    X: torch.Tensor  # (T, d_model)
    W_q: torch.Tensor  # (d_model, d_k)
    W_k: torch.Tensor
    W_v: torch.Tensor
    labels: tuple[str, ...]
    run: tr.TrainingRun | None  # this session's run of the training lesson's chosen settings, if any

    @functools.cached_property
    def steps(self) -> list[gen.CacheStep]:
        """Each generation step's cache, query, scores, weights and context."""
        return gen.cached_attention(self.X, self.W_q, self.W_k, self.W_v)

    @functools.cached_property
    def masked(self) -> torch.Tensor:
        return gen.masked_scores(self.X, self.W_q, self.W_k)  # (T, T)


def default_online(labels: tuple[str, ...]) -> tuple[int, int]:
    """The online softmax's query row and block size: the learner's picks, else the pickers' defaults."""
    rows = inputs.Choice(tuple(range(len(labels))), labels.__getitem__)
    row = inputs.linked("generation_row", len(labels) // 2, rows, _("Query row"))
    block = inputs.linked("generation_block", BLOCK_SIZES[1], inputs.Choice(BLOCK_SIZES), _("Block size"))
    return min(int(row), len(labels) - 1), int(block)


def picked_step(labels: tuple[str, ...]) -> int:
    """The generation step picked on the KV cache's slider (its last step before any pick), 0-based."""
    steps = inputs.Number(1, len(labels))
    return int(inputs.linked("generation_step", len(labels), steps, _("Step t (the new token)"))) - 1


def check_yourself(lab: LabInput, head: Head, step: int, online_row: int, block_size: int, places: tuple) -> bool:
    """The step's questions, made from the head the lesson generates with (one material for every step); whether
    they are settled."""
    run = head.run
    source_key = ("trained", *dataclasses.astuple(run.settings)) if run is not None else ("sidebar",)
    material = GenerationMaterial(head.X, head.W_q, head.W_k, head.W_v, head.labels, step, online_row, block_size)
    return exercises_section(
        __file__,
        lab,
        material=material,
        material_key=(*source_key, step, online_row, block_size),
        places=places,
    )


def kv_cache_step(lab: LabInput, head: Head, part: str | None = None) -> None:
    """The cache at a chosen step, its code, and the questions about that step. ``part`` None draws it all (the
    whole lesson); in steps, CACHE draws the K and V caches and the code, QUERY the new query's scores over them,
    the questions, then (once they are settled) its weights and the cache's size (each with the step slider)."""
    labels = list(head.labels)
    t = kv_cache(head.X, head.W_k, head.W_v, head.steps, labels, part)
    if part != QUERY:
        page.show_code(gen.cached_step)
    if part == CACHE:
        return
    step = head.steps[t]
    query_scores(step, labels[: t + 1], labels[t])
    places = ("cache-numbers", "step-top", "cache-unchanged")
    if check_yourself(lab, head, t, *default_online(head.labels), places=places):
        query_weights(step, labels[: t + 1], t + 1)


def recompute_step(head: Head) -> None:
    """The cached rows against the whole causal attention, and the trained model generating (once trained)."""
    cached_equals_recomputed(head.X, head.W_q, head.W_k, head.W_v, head.steps, head.masked, list(head.labels))
    if head.run is not None:
        trained_model_generates(head.run)


def saving_step(lab: LabInput, head: Head) -> None:
    """Multiply-adds with and without the cache, and the question of a sequence twice as long."""
    multiply_adds(len(head.labels), head.X.shape[1], head.W_k.shape[1])
    step = picked_step(head.labels)
    check_yourself(lab, head, step, *default_online(head.labels), places=("double-length",))


def online_softmax_step(lab: LabInput, head: Head) -> None:
    """Online softmax of one row up to the query's own block, the question of the running sum after it, then (once
    it is settled) every block, the weights and the code."""
    labels = list(head.labels)
    online_row, block_size = online_softmax(head.masked, labels)
    step = picked_step(head.labels)
    if check_yourself(lab, head, step, online_row, block_size, places=("running-sum",)):
        online_result(head.masked[online_row], labels, block_size)
        page.show_code(gen.online_softmax_steps)


def intro(lab: LabInput, run: tr.TrainingRun | None) -> None:
    st.markdown(
        _(
            """
A language model writes one token at a time. At step *t* only the **new token** asks a question:
its query is the only query, and the keys and values are those of every token so far. The keys
and values of earlier tokens do not change, so a model keeps them in a **KV cache** and adds one
K row and one V row per step, instead of recomputing the whole sequence. The causal mask of
lesson 6 is built in: the cache holds only the past.
"""
        )
    )
    st.latex(r"\text{context}_t = \operatorname{softmax}\!\left(\frac{q_t K_{1..t}^\top}{\sqrt{d_k}}\right) V_{1..t}")
    source_note(lab, run)


def source(lab: LabInput, run: tr.TrainingRun | None) -> tuple:
    """(X, W_q, W_k, W_v, labels): the first head of the model this session trained (``run``, only this session's
    own: generation.current_run), or the sidebar's input with seeded projections."""
    if run is not None:
        prompt, new_tokens = gen.generation_prompt(run.settings.task, run.example)
        tokens = gen.generate(run.model, prompt, new_tokens).tokens
        X, W_q, W_k, W_v = gen.first_head(run.model, tokens)
        return X, W_q, W_k, W_v, tr.position_labels(run.settings.task, tokens)
    X, labels = lab.X[: gen.MAX_STEPPED], list(lab.labels[: gen.MAX_STEPPED])
    params = ac.random_projections(lab.d_model, lab.d_model, lab.seed, X.dtype)
    return X, params.W_q, params.W_k, params.W_v, labels


def source_note(lab: LabInput, run: tr.TrainingRun | None) -> None:
    """Which head the lesson generates with: the model trained in the training lesson, or the sidebar's input."""
    trained_in = page.BY_NAME["training"].number
    if run is not None:
        st.success(
            _(
                "Using the model you trained in lesson {lesson} ({task}): layer 1, head 1.",
                lesson=trained_in,
                task=_(tr.TASKS[run.settings.task]),
            ),
            icon=":material/model_training:",
        )
        return
    st.info(
        _(
            "No model trained yet: you have not trained the settings chosen in lesson {lesson} in this session, so "
            "this uses the sidebar's input with seeded random W_q, W_k, W_v (d_k = d_model). Train a model there "
            "and come back to see it generate.",
            lesson=trained_in,
        ),
        icon=":material/info:",
    )
    if lab.T > gen.MAX_STEPPED:
        st.warning(
            _(
                "The sentence has {count} tokens: this page steps through the first {shown}.",
                count=lab.T,
                shown=gen.MAX_STEPPED,
            ),
            icon=":material/content_cut:",
        )


def kv_cache(
    X: torch.Tensor,
    W_k: torch.Tensor,
    W_v: torch.Tensor,
    steps: list[gen.CacheStep],
    labels: list[str],
    part: str | None = None,
) -> int:
    """The cache at a chosen step: one K row and one V row per token so far, and the new query's weights (``part``
    CACHE: the caches only; QUERY: the query's row only); returns the step shown, 0-based (the exercises ask about
    it)."""
    st.subheader(_("The KV cache, step by step") if part != QUERY else _("The new query over the cache"))
    if len(steps) > 1:
        number = inputs.slider(_("Step t (the new token)"), 1, len(steps), len(steps), key="generation_step")
    else:
        number = 1
    t = number - 1  # counted from 1 on screen, an index from 0 here
    step = steps[t]
    seen = labels[: t + 1]
    st.markdown(
        _(
            "Step {number}: the new token **{token}** gives q = {q}; its k and v are appended, so the cache holds "
            "{rows} K rows and {rows} V rows.",
            number=number,
            token=labels[t],
            q=vector_text(step.q),
            rows=t + 1,
        )
    )
    if part == QUERY:
        return t
    d_k, d_v = step.K.shape[1], step.V.shape[1]
    narrow = max(d_k, d_v) <= NARROW_CACHE  # side by side; wider caches get a row each
    left, middle = st.columns(2) if narrow else (st.container(), st.container())
    with left:
        page.heatmap(
            step.K,
            seen,
            dimension_labels(d_k),
            kind="values",
            title=_("K cache"),
            key="generation_k_cache",
            explain=page.projection_of(X, W_k),
            row_title=_("token"),
            col_title=_("dimension"),
        )
    with middle:
        page.heatmap(
            step.V,
            seen,
            dimension_labels(d_v),
            kind="values",
            title=_("V cache"),
            key="generation_v_cache",
            explain=page.projection_of(X, W_v),
            row_title=_("token"),
            col_title=_("dimension"),
        )
    return t


def query_scores(step: gen.CacheStep, seen: list[str], token: str) -> None:
    """The new token's scaled scores over the keys in the cache: what its weights are computed from."""
    st.markdown(_("**Query {token}** over the cache: its scaled scores q · k / √d_k, one per cached key.", token=token))
    page.table(step.scores.unsqueeze(1), seen, [_("score")], alt_text=_("Scores of the new query"))


def query_weights(step: gen.CacheStep, seen: list[str], number: int) -> None:
    """The new token's weights beside its scores, with their CSV, and how many numbers the cache holds."""
    row = pd.DataFrame({_("score"): step.scores.tolist(), _("weight"): step.weights.tolist()}, index=seen)
    st.markdown(_("Its weights, softmax of the scores:"))
    page.table(row, alt_text=_("Scores and weights of step {number}", number=number))
    page.download_csv(row, f"generation-step-{number}.csv", label=_("Download this step as CSV"))
    d_k, d_v = step.K.shape[1], step.V.shape[1]
    st.caption(
        _(
            "The cache now holds {rows} K rows of {d_k} and {rows} V rows of {d_v} numbers: "
            "{rows} × {width} = {total} numbers.",
            rows=number,
            d_k=d_k,
            d_v=d_v,
            width=d_k + d_v,
            total=step.K.numel() + step.V.numel(),
        )
    )


def cached_equals_recomputed(
    X, W_q, W_k, W_v, steps: list[gen.CacheStep], masked: torch.Tensor, labels: list[str]
) -> None:
    """The rows computed one step at a time, stacked, beside the whole causal attention at once."""
    st.subheader(_("With the cache = recomputing everything"))
    weights, context = gen.recomputed_attention(X, W_q, W_k, W_v)
    cached = gen.cache_rows_as_matrix(steps)
    cached_context = torch.stack([step.context for step in steps])  # (T, d_v)
    side_by_side = len(labels) <= SIDE_BY_SIDE  # two clickable heatmaps fit side by side; longer ones get a row each
    left, right = st.columns(2) if side_by_side else (st.container(), st.container())
    mask = causal_mask(len(labels))  # (T, T)
    with left:
        page.heatmap(
            cached,
            labels,
            labels,
            title=_("Weights, one row per step (cache)"),
            key="generation_cached",
            explain=weight_or_future(mask, lambda i: steps[i].scores),
        )
    with right:
        page.heatmap(
            weights,
            labels,
            labels,
            title=_("Weights, whole sequence with the causal mask"),
            key="generation_recomputed",
            explain=weight_or_future(mask, lambda i: masked[i]),
        )
    difference = max(gen.max_difference(cached, weights), gen.max_difference(cached_context, context))
    st.metric(_("Max difference, cached vs recomputed (weights and context)"), format_number(difference))
    checks = gen.cache_checks(steps, X, W_q, W_k, W_v)
    st.caption(
        _(
            "{verdicts} ({tolerance}).",
            verdicts="; ".join(
                _("{name}: **{verdict}**", name=_(name), verdict=_(check.verdict)) for name, check in checks.items()
            ),
            tolerance=tolerance_text(next(iter(checks.values())).tolerance),
        )
    )


def weight_or_future(mask: torch.Tensor, row_scores):
    """explain for a causal (T, T) weights matrix: why a future key is 0, else the softmax of row i's scores."""
    return lambda i, j: (
        cell_math.explain_masked(mask, i, j, rule="causal")
        if not bool(mask[i, j])
        else cell_math.explain_weight(row_scores(i), j)
    )


def trained_model_generates(run: tr.TrainingRun) -> None:
    """Greedy decoding with the trained model: every layer cached, logits equal to one full forward pass."""
    prompt, new_tokens = gen.generation_prompt(run.settings.task, run.example)
    result = gen.generate(run.model, prompt, new_tokens)
    symbols = tr.vocabulary(run.settings.task)
    predicted = [symbols[int(i)] for i in result.cached_logits.argmax(dim=-1)]
    frame = pd.DataFrame(
        {
            _("token"): [symbols[int(i)] for i in result.tokens],
            _("from"): [_("prompt") if i < result.prompt_length else _("generated") for i in range(len(result.tokens))],
            _("keys in cache"): result.cache_lengths,
            _("predicts next"): predicted,
        }
    )
    st.markdown(_("**The trained model generates** (greedy: the most likely token each step)"))
    page.frame_table(frame, hide_index=False)
    st.metric(_("Max difference of the logits, cached vs one full pass"), format_number(result.difference))


def multiply_adds(T: int, d_model: int, d_k: int) -> None:
    """Multiply-adds per step and in total, with and without the cache (one head)."""
    st.subheader(_("What the cache saves"))
    frame = gen.multiply_add_frame(T, d_model, d_k, d_k)
    with_cache = gen.total_multiply_adds(T, d_model, d_k, d_k, cached=True)
    without = gen.total_multiply_adds(T, d_model, d_k, d_k, cached=False)
    st.markdown(
        _(
            "For {T} tokens (d_model = {d_model}, d_k = d_v = {d_k}, one head): **{with_cache:,}** multiply-adds "
            "with the cache against **{without:,}** recomputing every step. "
            "Per step the cache costs one projection and one row of scores; without it, step t redoes a t × t "
            "matrix.",
            T=T,
            d_model=d_model,
            d_k=d_k,
            with_cache=with_cache,
            without=without,
        )
    )
    shown = frame.rename(columns=shown_column)
    step, way, adds = _("step"), _("way"), _("mult-adds")
    long = long_columns(shown, step, [_("with cache"), _("without cache")], way, adds)
    left, right = st.columns(2)
    with left:
        page.frame_table(shown.set_index(step), column_config=shown_config(COUNT_FORMAT))
    with right:
        page.chart(charts.lines, long, x=step, y=adds, color=way, title=_("Multiply-adds per step"))


# the column names the lesson's tables and charts show (attention_core's frames name them in English)
SHOWN_COLUMNS = (
    N_("step"),
    N_("with cache"),
    N_("without cache"),
    N_("total with cache"),
    N_("total without cache"),
    N_("cells"),
    N_("bytes (formula)"),
    N_("allocated bytes (measured)"),
    N_("allocated / formula"),
    N_("block"),
    N_("block max"),
    N_("m before"),
    N_("m after"),
    N_("rescale e^(m − m′)"),
    N_("block sum"),
    N_("running sum l"),
    N_("key"),
    N_("score"),
)
CHECK_NAMES = (  # gen.cache_checks' names, shown with their verdicts
    N_("cached context vs F.scaled_dot_product_attention"),
    N_("recomputed context vs F.scaled_dot_product_attention"),
)


def shown_column(name: str) -> str:
    """A column of attention_core's frames as the learner reads it (its name in the current language)."""
    return _(name) if name in SHOWN_COLUMNS else name


def shown_config(config: dict) -> dict:
    """A column_config keyed by the columns' English names, keyed by their shown names."""
    return {shown_column(name): value for name, value in config.items()}


def overhead_sentence(T: int, ratio: float) -> str:
    """What the measured time at the smallest T says about c·T², as measured (ratio = measured / formula)."""
    if ratio >= OVERHEAD_RATIO:
        return _(
            "At T = {T} the measured time is {ratio:.1f}× c·T²: a fixed cost per call (launching the "
            "operations, allocating the tensors) dominates there, so small T takes longer than T² alone predicts.",
            T=T,
            ratio=ratio,
        )
    if ratio >= 1:
        return _(
            "At T = {T} the measured time is {ratio:.1f}× c·T²: close to the formula, a little above it.",
            T=T,
            ratio=ratio,
        )
    return _("At T = {T} the measured time is {ratio:.2f}× c·T²: below the formula at this T.", T=T, ratio=ratio)


def cost_of_attention() -> None:
    """Time and memory of one head's attention as T grows, measured against T² x 4 bytes."""
    st.subheader(_("The cost of attention"))
    st.markdown(
        _(
            "Whatever the cache saves, each layer and head still holds a T × T matrix of weights: T² cells, "
            "4 bytes each in float32. Twice the tokens, four times the memory and (roughly) the time."
        )
    )
    frame = generation.measured_cost()
    shown = frame.rename(columns=shown_column)
    page.frame_table(shown.set_index("T"), column_config=shown_config(COUNT_FORMAT | TIME_FORMAT | RATIO_FORMAT))
    st.caption(
        _(
            "Time: the fastest of 3 runs of one causal attention head (d_k = 16) on this server; c·T² is the "
            "formula with c fitted at the largest T. {overhead} "
            "Bytes (formula): one T × T float32 matrix, T² × 4. Allocated bytes (measured): every new tensor one run "
            "of the head creates, counted operation by operation (the mask, the scores, their scaled and masked "
            "copies, the exponentials, the weights, the context): several T × T matrices, because each step makes a "
            "new one.",
            overhead=overhead_sentence(*gen.smallest_against_formula(frame)),
        )
    )
    series = _("series")
    timing = long_columns(shown, "T", ["ms", "ms (c·T²)"], series, _("milliseconds"))
    memory = long_columns(shown, "T", [_("bytes (formula)"), _(ALLOCATED)], series, "b")
    left, right = st.columns(2)
    with left:
        page.chart(
            charts.log_log_lines,
            timing,
            x="T",
            y=_("milliseconds"),
            color=series,
            title=_("Time, measured vs c·T²"),
        )
    with right:
        page.chart(
            charts.log_log_lines,
            memory,
            x="T",
            y="b",
            color=series,
            title=_("Bytes: one weights matrix vs allocated"),
            y_title=_("bytes"),
        )


def online_softmax(scores: torch.Tensor, labels: list[str]) -> tuple[int, int]:
    """One query row's softmax block by block, with a running max and sum (the idea behind FlashAttention), up to
    the block before the query's own: from that block on, the running sum is the question's; returns the row and
    block size shown (the exercises ask about them)."""
    st.subheader(_("Online softmax, block by block"))
    st.markdown(
        _(
            "FlashAttention never holds a whole row of scores: it reads the keys in blocks and keeps a running "
            "maximum m and a running sum l. When a block raises the maximum, the old sum is rescaled by e^(m − m′)."
        )
    )
    st.latex(r"m' = \max(m, \max_{j \in B} s_j),\qquad l' = l\,e^{m - m'} + \sum_{j \in B} e^{s_j - m'}")
    row_choice, block_choice = st.columns(2)
    i = inputs.selectbox(
        _("Query row"),
        range(len(labels)),
        index=len(labels) // 2,
        format_func=labels.__getitem__,
        key="generation_row",
        container=row_choice,
    )
    block_size = inputs.selectbox(_("Block size"), BLOCK_SIZES, index=1, key="generation_block", container=block_choice)
    row = scores[i]  # (T,) with -inf after position i
    bars = gen.block_frame(row, labels, block_size)
    page.chart(charts.online_blocks, bars, title=_("Scores of query {token} (−∞ keys are empty)", token=labels[i]))
    page.frame_table(
        bars.set_index("key").map(score_text).rename(columns=shown_column).rename_axis(_("key")),
        hide_index=False,
        alt=_("The row's scores by block"),
    )
    asked = query_block(i, block_size)
    frame = gen.online_frame(gen.online_softmax_steps(row, block_size)).map(format_number)
    frame.iloc[asked:, [frame.columns.get_loc("block sum"), frame.columns.get_loc("running sum l")]] = "?"
    page.frame_table(frame.rename(columns=shown_column).rename_axis(_("block")))
    st.caption(
        _(
            "Before the first block the sum is empty (l = 0, m = −∞), so its rescale factor is shown as 0. From "
            "block {block} (the one holding the query's own key) on, the sums are yours to work out first.",
            block=asked + 1,
        )
    )
    return i, block_size


def score_text(value) -> str:
    """A cell of the row's scores by block: a score as the lab writes it, −∞ where the key is masked, a block name."""
    if isinstance(value, str):
        return value
    return "−∞" if value is None or value != value else format_number(value)


def online_result(row: torch.Tensor, labels: list[str], block_size: int) -> None:
    """Every block's sums, then the weights from the final running max and sum beside plain softmax."""
    steps = gen.online_softmax_steps(row, block_size)
    page.frame_table(gen.online_frame(steps).map(format_number).rename(columns=shown_column).rename_axis(_("block")))
    online, plain = gen.online_softmax(row, block_size), ac.softmax(row)
    st.caption(_("At the end, each weight is e^(s_j − m) / l with the final m and l."))
    page.table(
        torch.stack([online, plain], dim=1),
        labels,
        [_("online"), _("plain softmax")],
        alt_text=_("Weights of the row"),
    )
    check = agreement(online, plain)
    st.metric(_("Max difference, online vs plain softmax"), format_number(check.max_difference))
    st.caption(
        _(
            "Online against plain softmax: **{verdict}** ({tolerance}).",
            verdict=_(check.verdict),
            tolerance=tolerance_text(check.tolerance),
        )
    )


render(inputs.current())
