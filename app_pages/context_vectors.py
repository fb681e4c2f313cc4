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


def render(lab: LabInput) -> None:
    """The lesson's outline: one function per step."""
    steps = ac.self_attention(lab.X, scale=False)  # simplified attention: Q = K = V = X, no √d_k
    dims = dimension_labels(lab.d_model)
    page.lesson_title(__file__)
    lesson_steps(
        __file__,
        {
            "What a context vector is": lambda: intro(lab),
            "Worked example": lambda: worked_step(lab, steps.weights, steps.context, dims),
            "All context vectors": lambda: all_context_step(lab, steps, dims),
            "One entry by hand": lambda: by_hand_step(lab, steps, dims),
            "Loops or matrices": lambda: loops_and_matrices(lab, steps.weights, steps.context, dims),
            "The picture": lambda: picture_step(lab, steps.context),
            "One-hot inputs": lambda: one_hot_step(lab),
            "What the blend means": lambda: blend_meaning_step(lab),
        },
    )


def worked_step(lab: LabInput, weights: torch.Tensor, context: torch.Tensor, dims: list[str]) -> None:
    """The query's weights and the values they mix, the question on what each token adds, then the weighted sum
    written out (it answers it)."""
    st.subheader(f"Step by step for the query “{lab.query_label}”")
    weights_beside_values(lab, weights, dims)
    st.markdown("Answer the question below first: the weighted sum, row by row, appears after.")
    if exercises_section(__file__, lab, places=("top-contributor",)):
        worked_example(lab, weights, context, dims)


def all_context_step(lab: LabInput, steps: ac.AttentionSteps, dims: list[str]) -> None:
    """Every context vector at once, the weights and the values they come from."""
    all_context_vectors(lab, steps, dims)
    values_mixed(lab, dims)


def by_hand_step(lab: LabInput, steps: ac.AttentionSteps, dims: list[str]) -> None:
    """One entry of the query's context vector from its weights and one column of V, and equal weights."""
    q, query = lab.query_index, lab.query_label
    st.subheader(f"One entry of c(“{query}”) by hand")
    st.markdown(
        "Entry d of the context vector is the query's row of weights times column d of the values, added up. If "
        "every weight were the same 1/T instead, it would be the plain average of the column, the same for every "
        "query: the weights of softmax are what make each context vector its own blend."
    )
    st.latex(r"c_{i,d} = \sum_{j=1}^{T} w_{ij}\, v_{j,d}")
    weights_beside_values(lab, steps.weights, dims)
    if exercises_section(__file__, lab, places=("context-entry", "uniform")):
        page.table(
            steps.context[q].unsqueeze(0),  # (1, d_model)
            [f"c(“{query}”)"],
            [f"c {d}" for d in dims],
            alt_text=f"The context vector of {query}",
        )


def weights_beside_values(lab: LabInput, weights: torch.Tensor, dims: list[str]) -> None:
    """The query's row of weights beside the values V = X it mixes: what an entry of its context vector is made of."""
    query = lab.query_label
    page.table(
        torch.cat([weights[lab.query_index].unsqueeze(1), lab.X], dim=1),  # (T, 1) beside (T, d_model): no arithmetic
        lab.labels,
        [f"weight w_j of “{query}”", *(f"v {d}" for d in dims)],
        alt_text=f"The weights of {query} and the values V = X they mix",
    )


def values_mixed(lab: LabInput, dims: list[str]) -> None:
    """The vectors being mixed (V = X), so an entry of C can be checked by hand in this step."""
    st.markdown("The vectors being mixed: the values V = X (the embeddings from the sidebar), column v d for entry d.")
    page.table(lab.X, lab.labels, [f"v {d}" for d in dims], alt_text="The values X that the weights mix")


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
    st.subheader("What the blend means: context vectors of trained words")
    st.markdown(
        f"""
The same C = W X on the sentence's trained word vectors (length 1, as in lesson 1's step “What the scores
mean”), with the weights of lesson 2's step “What the weights mean”: W = softmax(X Xᵀ / t) at
**t = {MEANING_TEMPERATURE:g}**. Each context vector mixes in most of the word whose vector is closest, so it
should move towards that word: the table compares the cosine with that word before mixing (the input x) and
after (the context vector c).
"""
    )
    vectors = meaning.word_vectors(lab)  # (T, 384), or None when the model is unavailable
    if vectors is None:
        return
    frame = blend_frame(vectors, lab.tokens, lab.labels)
    number = st.column_config.NumberColumn(format="%.4f")
    page.frame_table(
        frame,
        width="stretch",
        column_config={name: number for name in frame.columns if name != "mixes in most"},
    )
    _, _, found = context_meaning(vectors, lab.tokens, lab.query_index)
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
        """
**A weighted average of the tokens.** The weights of lesson 2 say how much the query should take from each
token. The **context vector** takes it: multiply every token's vector by its weight and add the results up.
Because the weights are non-negative and sum to 1, this is a weighted **average**, a blend of the tokens that
leans towards the ones the query attends to most. It is the new, context-aware representation of the query:
the word “{q}” now carries a little of every word around it.
""".replace("{q}", learner_text(lab.query_label))
    )
    st.latex(r"c_i = \sum_{j=1}^{T} w_{ij}\, x_j \qquad C = W X")
    page.lesson_caption(lab.description)
    st.caption(
        "Simplified attention as in the first tutorials: the vectors being mixed are the embeddings X "
        "themselves (V = X), and the weights are softmax(X Xᵀ) without scaling."
    )


def worked_example(lab: LabInput, weights: torch.Tensor, context: torch.Tensor, dims: list[str]) -> None:
    """The query's weighted sum row by row, written out, and what each token adds."""
    X, labels, q, query = lab.X, lab.labels, lab.query_index, lab.query_label
    st.markdown(
        f"Each row is one token's vector multiplied by the weight “{query}” gives it; the last row, “sum”, adds "
        "the rows up. The weights add up to 1 and the other columns add up to the context vector."
    )
    page.table(
        weighted_sum_table(weights[q], X),  # (T + 1, 1 + d_model)
        [*labels, "sum"],
        ["weight w_j", *(f"w_j × x_j {d}" for d in dims)],
        alt_text=f"Weighted sum for the query {query}",
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
        title="What each token adds to the query's c",
        caption=f"The query is “{query}”. "
        "One bar per dimension; each coloured piece is one token's weight × value. Pieces below zero stack "
        "downwards, so read the context vector at the tick mark with its value: it is the signed sum of the pieces.",
    )


def printed_context_note(lab: LabInput) -> None:
    """The tutorial's printed context vector of its query, or a hint to pick that query."""
    preset_key, tutorial_query = printed_preset(lab)
    if preset_key in ("transformer", "light", "journey") and lab.query_label != tutorial_query:
        st.caption(f"The tutorial prints the context vector of “{tutorial_query}”: pick it as the query to compare.")
    elif preset_key == "transformer":
        st.caption(
            f"{page.tutorial_name('000', capital=True)} computes this by a loop and prints {vector_text(TRANSFORMER.printed['query_context'])} "
            "for “self” (the lab's last digits can differ by 1: it starts from the 4-decimal embeddings)."
        )
    elif preset_key == "light":
        st.caption(
            f"{page.tutorial_name('001', capital=True)} prints {vector_text(LIGHT.printed['query_context'])} "
            "for “light”."
        )
    elif preset_key == "journey":
        st.caption(
            f"{page.tutorial_name('002', capital=True)} prints {vector_text(JOURNEY.printed['query_context'])} "
            "for “starts”."
        )


def all_context_vectors(lab: LabInput, steps: ac.AttentionSteps, dims: list[str]) -> None:
    """C = W X for every token (each entry explains its weighted sum), and the weights that mix them."""
    labels = lab.labels
    st.subheader("All context vectors at once: C = W X")
    st.markdown(
        "Row *i* of the weight matrix mixes the rows of X into context vector *i*. The row of the query is "
        "the last row of the table above."
    )
    page.matrix(
        steps.context,
        labels,
        dims,
        kind="values",
        title="Context vectors W X",
        key="context_vectors_context_chart",
        explain=page.context_of(steps),
        row_title="token",
        col_title="entry",
        download="context_vectors.csv",
    )
    with st.expander("The weights W that mix the rows (from lesson 2)"):
        page.matrix(
            steps.weights,
            labels,
            labels,
            kind="weights",
            title="Attention weights softmax(X Xᵀ)",
            key="context_vectors_weights_chart",
            explain=page.weights_of(steps),
            highlight_row=lab.query_label,
        )


def loops_and_matrices(lab: LabInput, weights: torch.Tensor, context: torch.Tensor, dims: list[str]) -> None:
    """The tutorials' loop version beside the matrix version: the same numbers."""
    labels = lab.labels
    st.subheader("Loops or matrices: the same numbers")
    st.markdown(
        """
The tutorials first build each context vector with Python loops (one dot product, one exponential,
one weighted sum at a time), then switch to matrix products because, as the numpy “Self Attention is good” tutorial puts it,
*“we hate loops!”*. The two must agree. Here both run on the same input; the matrix version is what
every other page uses, the loop version is kept in `attention_core.loops` as an independent check.
"""
    )
    loop_weights, loop_context = cached_loop_attention(tuple(tuple(r) for r in lab.X.tolist()), lab.X.dtype)
    left, right = st.columns(2)
    with left:
        st.markdown("**Loops** (`loops.self_attention`)")
        page.table(loop_context, labels, dims, alt_text="Context vectors computed with loops")
    with right:
        st.markdown("**Matrices** (`softmax(X Xᵀ) X`)")
        page.table(context, labels, dims, alt_text="Context vectors computed with matrices")
    m1, m2 = st.columns(2)
    m1.metric("Largest |loops − matrices|, context", format_number(max_abs_difference(loop_context, context)))
    m2.metric("Largest |loops − matrices|, weights", format_number(max_abs_difference(loop_weights, weights)))
    precision_verdict(loop_context, context, loop_weights, weights)
    page.show_code(
        loops.dot, loops.softmax_row, loops.context_vector, loops.self_attention, title="The loop version's code"
    )


def precision_verdict(
    loop_context: torch.Tensor, context: torch.Tensor, loop_weights: torch.Tensor, weights: torch.Tensor
) -> None:
    """Whether the gap is rounding, judged relative to the size of the numbers; the explanation only if it is."""
    checks = {"context": agreement(context, loop_context), "weights": agreement(weights, loop_weights)}
    gap_text = ", ".join(f"{name} {format_number(check.relative_difference)}" for name, check in checks.items())
    precision = checks["context"].precision
    tolerance = tolerance_text(checks["context"].tolerance)
    how = (
        "The loops add in Python floats (float64) and store the result in the input's precision, while the matrix "
        f"version computes in {precision}"
    )
    verdicts = ", ".join(f"{name} **{check.verdict}**" for name, check in checks.items())
    if all(check.exact for check in checks.values()):
        why = f"{how}: here the two agree to the last bit."
    elif all(check.close for check in checks.values()):
        why = f"{how}: the gap is that rounding, not a different computation."
    else:
        why = (
            f"{how}; rounding alone stays within the tolerance, so the gap is more than {precision} rounding explains."
        )
    st.markdown(
        f"Relative gap (largest difference / largest value): {gap_text}. Compared cell by cell ({tolerance}): "
        f"{verdicts}. {why}"
    )


def picture_intro() -> None:
    """Why context vectors sit inside the cloud of inputs."""
    st.subheader("The picture: context vectors sit inside the cloud of inputs")
    st.markdown(
        """
A weighted average with non-negative weights that sum to 1 always lands **inside** the region spanned by
the points it averages (their convex hull). So attention pulls every token towards the others: the
context vectors (circles) are a shrunken, blended copy of the inputs (squares). Dashed lines join each
token's input to its context vector. A token with a strong weight on itself barely moves.
"""
    )


@st.fragment
def picture_section(lab: LabInput, context: torch.Tensor) -> None:
    """The 2-D picture and its projection choice: a fragment, so the choice reruns only this part."""
    projection_options = {"pca": "Best 2-D view (PCA)", "first two": "First two dimensions"}
    if lab.d_model > 2:
        method = inputs.radio(
            "Map to 2-D by",
            list(projection_options),
            format_func=projection_options.get,
            horizontal=True,
            key="context_vectors_projection",
            help="PCA finds the two directions along which the inputs spread most, and maps inputs and context "
            "vectors with the same map. The first two dimensions simply drop the rest.",
        )
    else:
        method = "first two"
    picture = project_2d(lab.X, context, method)
    page.chart(
        charts.scatter_2d,
        scatter_frame(picture, lab.labels),
        title="Inputs and their context vectors",
        x_title=picture.axis_titles[0],
        y_title=picture.axis_titles[1],
    )
    if picture.method == "pca":
        st.caption(
            f"Principal component analysis of the centred inputs (torch.linalg.svd): the two axes keep "
            f"{picture.explained:.1%} of the inputs' spread. The same shift and projection are "
            "applied to the context vectors, so blends stay blends in the picture."
        )
    elif lab.d_model > 2:
        st.caption(f"Only d1 and d2 are shown; d3 to d{lab.d_model} are dropped from the picture.")
    elif lab.d_model == 1:
        st.caption("With a single dimension every point lies on the horizontal axis.")
    if lab.T == 1:
        st.info("A single token can only attend to itself (weight 1), so its context vector is its own input.")


def one_hot_inputs(lab: LabInput) -> None:
    """The numpy tutorial's one-hot inputs: every output resembles its own input."""
    q, query = lab.query_index, lab.query_label
    st.subheader("Why one-hot inputs give outputs that look like the inputs")
    st.markdown(
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
    words = ac.distinct_tokens(lab.tokens)
    try:
        one_hot = ac.one_hot_embeddings(lab.tokens)  # (T, V)
    except ValueError as error:
        st.info(f"This lesson's words cannot be shown one-hot: {learner_text(error)}")
        return
    one_hot_steps = ac.self_attention(one_hot, scale=False)
    st.markdown(
        f"The tokens of this lesson as one-hot vectors ({len(words)} distinct words, so d = {len(words)}): "
        f"input and context vector of “{query}”."
    )
    page.table(
        torch.stack([one_hot[q], one_hot_steps.context[q]]),  # (2, V)
        [f"input x({query})", f"context c({query})"],
        words,
        alt_text="One-hot input and context vector of the query",
    )
    one_hot_weights_note(lab, len(words))


def one_hot_weights_note(lab: LabInput, distinct: int) -> None:
    """The one-hot weights e / (e + T − 1) and 1 / (e + T − 1), and tutorial 004's printed row."""
    if distinct == lab.T:
        self_weight, other_weight = one_hot_weights(lab.T)
        st.markdown(
            f"With T = {lab.T}: e / (e + {lab.T} − 1) = **{format_number(self_weight)}** for the word itself "
            f"and 1 / (e + {lab.T} − 1) = **{format_number(other_weight)}** for each other word, as in the table."
        )
    else:
        st.markdown(
            "Repeated words share one one-hot vector, so they score 1 with each other too and split the largest "
            "weights between them."
        )
    preset_key, tutorial_query = printed_preset(lab)
    if preset_key == "one-hot" and lab.query_label == tutorial_query:
        printed = "[" + ", ".join(f"{v:.8f}" for v in ONE_HOT.printed["query_weights"]) + "]"
        page.tutorial_note("004", "the weights (= output) of “Self”", printed)


render(inputs.current())
