"""Lesson 3: context vectors, each token's weighted average of all the tokens' vectors."""

import pandas as pd
import streamlit as st
import torch

import attention_core as ac
from attention_core import loops
from attention_core.geometry import (
    contributions_frame,
    loop_self_attention,
    pca_basis,
    project_2d,
    scatter_frame,
    weighted_sum_table,
)
from attention_core.i18n import N_, _
from attention_core.meaning import MEANING_TEMPERATURE, blend_frame, closer_count, context_meaning
from attention_core.normalization import one_hot_weights
from attention_core.presets import JOURNEY, LIGHT, ONE_HOT, TRANSFORMER
from attention_core.reference import agreement, max_abs_difference, tolerance_text
from attention_core.tables import dimension_labels
from ui import charts, page
from ui.page import exercises_section, format_number, learner_text, lesson_steps, vector_text, weighted_vectors_text
from ui.widgets import inputs, meaning
from ui.widgets.inputs import LabInput

MAX_WRITTEN_TERMS = 6  # beyond this many tokens the written-out sum sums its other terms as one (together …)
# The columns of attention_core.meaning.blend_frame (English: closer_count reads them) as the table shows them.
BLEND_COLUMNS = {
    "mixes in most": N_("mixes in most"),
    "its weight": N_("its weight"),
    "own weight": N_("own weight"),
    "cos before (x)": N_("cos before (x)"),
    "cos after (c)": N_("cos after (c)"),
}
PROJECTIONS = {"pca": N_("Best 2-D view (PCA)"), "first two": N_("First two dimensions")}  # option -> its label


def render(lab: LabInput) -> None:
    """The lesson's outline: one function per step."""
    steps = ac.self_attention(lab.X, scale=False)  # simplified attention: Q = K = V = X, no √d_k
    dims = dimension_labels(lab.d_model)
    page.lesson_title(__file__)
    lesson_steps(
        __file__,
        {
            N_("What a context vector is"): lambda: intro(lab),
            N_("Worked example"): lambda: worked_step(lab, steps.weights, steps.context, dims),
            N_("All context vectors"): lambda: all_context_step(lab, steps, dims),
            N_("One entry by hand"): lambda: by_hand_step(lab, steps, dims),
            N_("Loops or matrices"): lambda: loops_and_matrices(lab, steps.weights, steps.context, dims),
            N_("The picture"): lambda: picture_step(lab, steps.context),
            N_("One-hot inputs"): lambda: one_hot_step(lab),
            N_("What the blend means"): lambda: blend_meaning_step(lab),
        },
    )


def worked_step(lab: LabInput, weights: torch.Tensor, context: torch.Tensor, dims: list[str]) -> None:
    """The query's weights and the values they mix, the question on what each token adds, then the weighted sum
    written out (it answers it)."""
    st.subheader(_("Step by step for the query “{query}”", query=lab.query_label))
    weights_beside_values(lab, weights, dims)
    st.markdown(_("Answer the question below first: the weighted sum, row by row, appears after."))
    if exercises_section(__file__, lab, places=("top-contributor",)):
        worked_example(lab, weights, context, dims)


def all_context_step(lab: LabInput, steps: ac.AttentionSteps, dims: list[str]) -> None:
    """Every context vector at once, the weights and the values they come from."""
    all_context_vectors(lab, steps, dims)
    values_mixed(lab, dims)


def by_hand_step(lab: LabInput, steps: ac.AttentionSteps, dims: list[str]) -> None:
    """One entry of the query's context vector from its weights and one column of V, and equal weights."""
    q, query = lab.query_index, lab.query_label
    st.subheader(_("One entry of c(“{query}”) by hand", query=query))
    st.markdown(
        _(
            "Entry d of the context vector is the query's row of weights times column d of the values, added up. "
            "If every weight were the same 1/T instead, it would be the plain average of the column, the same for "
            "every query: the weights of softmax are what make each context vector its own blend."
        )
    )
    st.latex(r"c_{i,d} = \sum_{j=1}^{T} w_{ij}\, v_{j,d}")
    weights_beside_values(lab, steps.weights, dims)
    if exercises_section(__file__, lab, places=("context-entry", "uniform")):
        page.table(
            steps.context[q].unsqueeze(0),  # (1, d_model)
            [f"c(“{query}”)"],
            [f"c {d}" for d in dims],
            alt_text=_("The context vector of {query}", query=query),
        )


def weights_beside_values(lab: LabInput, weights: torch.Tensor, dims: list[str]) -> None:
    """The query's row of weights beside the values V = X it mixes: what an entry of its context vector is made of."""
    query = lab.query_label
    page.table(
        torch.cat([weights[lab.query_index].unsqueeze(1), lab.X], dim=1),  # (T, 1) beside (T, d_model): no arithmetic
        lab.labels,
        [_("weight w_j of “{query}”", query=query), *(f"v {d}" for d in dims)],
        alt_text=_("The weights of {query} and the values V = X they mix", query=query),
    )


def values_mixed(lab: LabInput, dims: list[str]) -> None:
    """The vectors being mixed (V = X), so an entry of C can be checked by hand in this step."""
    st.markdown(
        _("The vectors being mixed: the values V = X (the embeddings from the sidebar), column v d for entry d.")
    )
    page.table(lab.X, lab.labels, [f"v {d}" for d in dims], alt_text=_("The values X that the weights mix"))


def picture_step(lab: LabInput, context: torch.Tensor) -> None:
    """Why context vectors sit inside the cloud of inputs, and the picture."""
    picture_intro()
    picture_section(lab, context)


def one_hot_step(lab: LabInput) -> None:
    """One-hot inputs give outputs that look like the inputs; the lesson's code."""
    one_hot_inputs(lab)
    page.show_code(ac.contributions, ac.context_vectors, weighted_sum_table, pca_basis, project_2d)


def blend_meaning_step(lab: LabInput) -> None:
    """Context vectors of trained word vectors: mixing in a related word moves a word towards it."""
    st.subheader(_("What the blend means: context vectors of trained words"))
    st.markdown(
        _(
            """
The same C = W X on the sentence's trained word vectors (length 1, as in lesson 1's step “What the scores
mean”), with the weights of lesson 2's step “What the weights mean”: W = softmax(X Xᵀ / t) at
**t = {t:g}**. Each context vector mixes in most of the word whose vector is closest, so it
should move towards that word: the table compares the cosine with that word before mixing (the input x) and
after (the context vector c).
""",
            t=MEANING_TEMPERATURE,
        )
    )
    vectors = meaning.word_vectors(lab)  # (T, 384), or None when the model is unavailable
    if vectors is None:
        return
    frame = blend_frame(vectors, lab.tokens, lab.labels)
    number = st.column_config.NumberColumn(format="%.4f")
    page.frame_table(
        frame.rename(columns=lambda name: _(BLEND_COLUMNS.get(name, name))),  # the English names stay the logic's
        width="stretch",
        column_config={_(BLEND_COLUMNS.get(name, name)): number for name in frame.columns if name != "mixes in most"},
    )
    _context, _closeness, found = context_meaning(vectors, lab.tokens, lab.query_index)
    st.markdown(meaning.blend_claim(lab, found, closer_count(frame)))
    meaning.vectors_note()
    meaning.suggest_sentence(lab, "context_vectors")


def printed_preset(lab: LabInput) -> tuple[str | None, str | None]:
    """(preset key, the token whose row its tutorial prints) when the input is a preset as printed, else Nones."""
    preset = lab.printed_preset
    return (preset.key, preset.tokens[preset.query_index]) if preset else (None, None)


@st.cache_data(max_entries=16, show_spinner=False)
def cached_loop_attention(
    rows: tuple[tuple[float, ...], ...], dtype: torch.dtype = torch.float32
) -> tuple[torch.Tensor, torch.Tensor]:
    """The loop version on plain tuples, results stored in the input's precision (cached: slow for long sentences)."""
    return loop_self_attention(torch.tensor(rows, dtype=dtype))


def intro(lab: LabInput) -> None:
    """What a context vector is, and its formula."""
    st.markdown(
        _(
            """
**A weighted average of the tokens.** The weights of lesson 2 say how much the query should take from each
token. The **context vector** takes it: multiply every token's vector by its weight and add the results up.
Because the weights are non-negative and sum to 1, this is a weighted **average**, a blend of the tokens that
leans towards the ones the query attends to most. It is the new, context-aware representation of the query:
the word “{q}” now carries a little of every word around it.
""",
            q=learner_text(lab.query_label),
        )
    )
    st.latex(r"c_i = \sum_{j=1}^{T} w_{ij}\, x_j \qquad C = W X")
    page.lesson_caption(lab.description)
    st.caption(
        _(
            "Simplified attention as in the first tutorials: the vectors being mixed are the embeddings X "
            "themselves (V = X), and the weights are softmax(X Xᵀ) without scaling."
        )
    )


def worked_example(lab: LabInput, weights: torch.Tensor, context: torch.Tensor, dims: list[str]) -> None:
    """The query's weighted sum row by row, written out, and what each token adds."""
    X, labels, q, query = lab.X, lab.labels, lab.query_index, lab.query_label
    st.markdown(
        _(
            "Each row is one token's vector multiplied by the weight “{query}” gives it; the last row, “sum”, "
            "adds the rows up. The weights add up to 1 and the other columns add up to the context vector.",
            query=query,
        )
    )
    page.table(
        weighted_sum_table(weights[q], X),  # (T + 1, 1 + d_model)
        [*labels, _("sum")],
        [_("weight w_j"), *(f"w_j × x_j {d}" for d in dims)],
        alt_text=_("Weighted sum for the query {query}", query=query),
    )
    st.markdown(f"c(“{query}”) = {weighted_vectors_text(weights[q], X, context[q], limit=MAX_WRITTEN_TERMS)}")
    printed_context_note(lab)
    parts = contributions_frame(weights[q], X, labels)
    totals = pd.DataFrame({"dimension": dims, "total": context[q].tolist()})
    page.chart(
        charts.contributions_with_totals,
        parts,
        totals,
        labels,
        title=_("What each token adds to the query's c"),
        caption=_(
            "The query is “{query}”. One bar per dimension; each coloured piece is one token's weight × value. "
            "Pieces below zero stack downwards, so read the context vector at the tick mark with its value: it is "
            "the signed sum of the pieces.",
            query=query,
        ),
    )


def printed_context_note(lab: LabInput) -> None:
    """The tutorial's printed context vector of its query, or a hint to pick that query."""
    preset_key, tutorial_query = printed_preset(lab)
    if preset_key in ("transformer", "light", "journey") and lab.query_label != tutorial_query:
        st.caption(
            _(
                "The tutorial prints the context vector of “{query}”: pick it as the query to compare.",
                query=tutorial_query,
            )
        )
    elif preset_key == "transformer":
        st.caption(
            _(
                "The “{tutorial}” tutorial computes this by a loop and prints {vector} for “{query}” (the lab's last "
                "digits can differ by 1: it starts from the 4-decimal embeddings).",
                tutorial=page.TUTORIALS["000"][0],
                vector=vector_text(TRANSFORMER.printed["query_context"]),
                query="self",
            )
        )
    elif preset_key == "light":
        st.caption(
            _(
                "The “{tutorial}” tutorial prints {vector} for “{query}”.",
                tutorial=page.TUTORIALS["001"][0],
                vector=vector_text(LIGHT.printed["query_context"]),
                query="light",
            )
        )
    elif preset_key == "journey":
        st.caption(
            _(
                "The “{tutorial}” tutorial prints {vector} for “{query}”.",
                tutorial=page.TUTORIALS["002"][0],
                vector=vector_text(JOURNEY.printed["query_context"]),
                query="starts",
            )
        )


def all_context_vectors(lab: LabInput, steps: ac.AttentionSteps, dims: list[str]) -> None:
    """C = W X for every token (each entry explains its weighted sum), and the weights that mix them."""
    labels = lab.labels
    st.subheader(_("All context vectors at once: C = W X"))
    st.markdown(
        _(
            "Row *i* of the weight matrix mixes the rows of X into context vector *i*. The row of the query is "
            "the last row of the table above."
        )
    )
    page.matrix(
        steps.context,
        labels,
        dims,
        kind="values",
        title=_("Context vectors W X"),
        key="context_vectors_context_chart",
        explain=page.context_of(steps),
        row_title=_("token"),
        col_title=_("entry"),
        download="context_vectors.csv",
    )
    with st.expander(_("The weights W that mix the rows (from lesson 2)")):
        page.matrix(
            steps.weights,
            labels,
            labels,
            kind="weights",
            title=_("Attention weights softmax(X Xᵀ)"),
            key="context_vectors_weights_chart",
            explain=page.weights_of(steps),
            highlight_row=lab.query_label,
        )


def loops_and_matrices(lab: LabInput, weights: torch.Tensor, context: torch.Tensor, dims: list[str]) -> None:
    """The tutorials' loop version beside the matrix version: the same numbers."""
    labels = lab.labels
    st.subheader(_("Loops or matrices: the same numbers"))
    st.markdown(
        _(
            """
The tutorials first build each context vector with Python loops (one dot product, one exponential,
one weighted sum at a time), then switch to matrix products because, as the numpy “Self Attention is good” tutorial puts it,
*“we hate loops!”*. The two must agree. Here both run on the same input; the matrix version is what
every other page uses, the loop version is kept in `attention_core.loops` as an independent check.
"""
        )
    )
    loop_weights, loop_context = cached_loop_attention(tuple(tuple(r) for r in lab.X.tolist()), lab.X.dtype)
    left, right = st.columns(2)
    with left:
        st.markdown(_("**Loops** (`loops.self_attention`)"))
        page.table(loop_context, labels, dims, alt_text=_("Context vectors computed with loops"))
    with right:
        st.markdown(_("**Matrices** (`softmax(X Xᵀ) X`)"))
        page.table(context, labels, dims, alt_text=_("Context vectors computed with matrices"))
    m1, m2 = st.columns(2)
    m1.metric(_("Largest |loops − matrices|, context"), format_number(max_abs_difference(loop_context, context)))
    m2.metric(_("Largest |loops − matrices|, weights"), format_number(max_abs_difference(loop_weights, weights)))
    precision_verdict(loop_context, context, loop_weights, weights)
    page.show_code(
        loops.dot, loops.softmax_row, loops.context_vector, loops.self_attention, title=_("The loop version's code")
    )


def precision_verdict(
    loop_context: torch.Tensor, context: torch.Tensor, loop_weights: torch.Tensor, weights: torch.Tensor
) -> None:
    """Whether the gap is rounding, judged relative to the size of the numbers; the explanation only if it is."""
    checks = {"context": agreement(context, loop_context), "weights": agreement(weights, loop_weights)}
    gap_text = _(
        "context {context}, weights {weights}",
        context=format_number(checks["context"].relative_difference),
        weights=format_number(checks["weights"].relative_difference),
    )
    precision = checks["context"].precision
    tolerance = tolerance_text(checks["context"].tolerance)
    verdicts = _(
        "context **{context}**, weights **{weights}**",
        context=_(checks["context"].verdict),
        weights=_(checks["weights"].verdict),
    )
    if all(check.exact for check in checks.values()):
        why = _(
            "The loops add in Python floats (float64) and store the result in the input's precision, while the "
            "matrix version computes in {precision}: here the two agree to the last bit.",
            precision=precision,
        )
    elif all(check.close for check in checks.values()):
        why = _(
            "The loops add in Python floats (float64) and store the result in the input's precision, while the "
            "matrix version computes in {precision}: the gap is that rounding, not a different computation.",
            precision=precision,
        )
    else:
        why = _(
            "The loops add in Python floats (float64) and store the result in the input's precision, while the "
            "matrix version computes in {precision}; rounding alone stays within the tolerance, so the gap is more "
            "than {precision} rounding explains.",
            precision=precision,
        )
    st.markdown(
        _(
            "Relative gap (largest difference / largest value): {gaps}. Compared cell by cell ({tolerance}): "
            "{verdicts}. {why}",
            gaps=gap_text,
            tolerance=tolerance,
            verdicts=verdicts,
            why=why,
        )
    )


def picture_intro() -> None:
    """Why context vectors sit inside the cloud of inputs."""
    st.subheader(_("The picture: context vectors sit inside the cloud of inputs"))
    st.markdown(
        _(
            """
A weighted average with non-negative weights that sum to 1 always lands **inside** the region spanned by
the points it averages (their convex hull). So attention pulls every token towards the others: the
context vectors (circles) are a shrunken, blended copy of the inputs (squares). Dashed lines join each
token's input to its context vector. A token with a strong weight on itself barely moves.
"""
        )
    )


@st.fragment
def picture_section(lab: LabInput, context: torch.Tensor) -> None:
    """The 2-D picture and its projection choice: a fragment, so the choice reruns only this part."""
    if lab.d_model > 2:
        method = inputs.radio(
            _("Map to 2-D by"),
            list(PROJECTIONS),
            format_func=lambda option: _(PROJECTIONS[option]),  # the label in the learner's language at each call
            horizontal=True,
            key="context_vectors_projection",
            help=_(
                "PCA finds the two directions along which the inputs spread most, and maps inputs and context "
                "vectors with the same map. The first two dimensions simply drop the rest."
            ),
        )
    else:
        method = "first two"
    picture = project_2d(lab.X, context, method)
    page.chart(
        charts.scatter_2d,
        scatter_frame(picture, lab.labels),
        title=_("Inputs and their context vectors"),
        x_title=picture.axis_titles[0],
        y_title=picture.axis_titles[1],
    )
    if picture.method == "pca":
        st.caption(
            _(
                "Principal component analysis of the centred inputs (torch.linalg.svd): the two axes keep "
                "{share:.1%} of the inputs' spread. The same shift and projection are applied to the context "
                "vectors, so blends stay blends in the picture.",
                share=picture.explained,
            )
        )
    elif lab.d_model > 2:
        st.caption(_("Only d1 and d2 are shown; d3 to d{d_model} are dropped from the picture.", d_model=lab.d_model))
    elif lab.d_model == 1:
        st.caption(_("With a single dimension every point lies on the horizontal axis."))
    if lab.T == 1:
        st.info(_("A single token can only attend to itself (weight 1), so its context vector is its own input."))


def one_hot_inputs(lab: LabInput) -> None:
    """The numpy tutorial's one-hot inputs: every output resembles its own input."""
    q, query = lab.query_index, lab.query_label
    st.subheader(_("Why one-hot inputs give outputs that look like the inputs"))
    st.markdown(
        _(
            """
The numpy “Self Attention is good” tutorial starts with one-hot vectors (four words, four dimensions, a
single 1 each). Two different one-hot vectors have dot product 0 and a vector with itself has 1, so
every score row is a 1 at the query's own position and 0 elsewhere. The softmax gives the query
e / (e + T − 1) and every other word 1 / (e + T − 1), and since x_j = e_j the context vector **is**
that row of weights: the largest entry sits where the input's 1 was. *No two words are similar, so
each output resembles its own input*: nothing useful gets mixed in. Embeddings in which related words
point the same way are what make attention useful.
"""
        )
    )
    words = ac.distinct_tokens(lab.tokens)
    try:
        one_hot = ac.one_hot_embeddings(lab.tokens)  # (T, V)
    except ValueError as error:
        st.info(_("This lesson's words cannot be shown one-hot: {reason}", reason=learner_text(error)))
        return
    one_hot_steps = ac.self_attention(one_hot, scale=False)
    st.markdown(
        _(
            "The tokens of this lesson as one-hot vectors ({count} distinct words, so d = {count}): "
            "input and context vector of “{query}”.",
            count=len(words),
            query=query,
        )
    )
    page.table(
        torch.stack([one_hot[q], one_hot_steps.context[q]]),  # (2, V)
        [_("input x({query})", query=query), _("context c({query})", query=query)],
        words,
        alt_text=_("One-hot input and context vector of the query"),
    )
    one_hot_weights_note(lab, len(words))


def one_hot_weights_note(lab: LabInput, distinct: int) -> None:
    """The one-hot weights e / (e + T − 1) and 1 / (e + T − 1), and tutorial 004's printed row."""
    if distinct == lab.T:
        self_weight, other_weight = one_hot_weights(lab.T)
        st.markdown(
            _(
                "With T = {T}: e / (e + {T} − 1) = **{self_weight}** for the word itself "
                "and 1 / (e + {T} − 1) = **{other_weight}** for each other word, as in the table.",
                T=lab.T,
                self_weight=format_number(self_weight),
                other_weight=format_number(other_weight),
            )
        )
    else:
        st.markdown(
            _(
                "Repeated words share one one-hot vector, so they score 1 with each other too and split the "
                "largest weights between them."
            )
        )
    preset_key, tutorial_query = printed_preset(lab)
    if preset_key == "one-hot" and lab.query_label == tutorial_query:
        printed = "[" + ", ".join(f"{v:.8f}" for v in ONE_HOT.printed["query_weights"]) + "]"
        page.tutorial_note("004", _("the weights (= output) of “{query}”", query="Self"), printed)


render(inputs.current())
