"""Lesson 1: attention scores, the dot product of the query with every token."""

import pandas as pd
import streamlit as st
import torch

import attention_core as ac
from attention_core.i18n import N_, _
from attention_core.meaning import cosine_scores, scores_meaning
from attention_core.similarity import asymmetry, cosine_similarity, highest_score, lengths, most_and_least_similar
from attention_core.tables import dimension_labels, to_frame
from ui import page
from ui.page import exercises_section, format_number, lesson_steps, numbers_text, products_sum_text
from ui.widgets import inputs, meaning
from ui.widgets.inputs import LabInput

TUTORIAL_OF_PRESET = {"transformer": "000", "light": "001", "journey": "002"}  # preset key -> tutorial


def render(lab: LabInput) -> None:
    """The lesson's outline: one function per step."""
    steps = ac.self_attention(lab.X, scale=False)  # Q = K = V = X, so steps.scores = X Xᵀ
    scores = steps.scores  # (T, d_model) @ (d_model, T) -> (T, T)
    page.lesson_title(__file__)
    lesson_steps(
        __file__,
        {
            N_("What a score is"): lambda: intro(lab),
            N_("Worked example"): lambda: worked_step(lab, scores),
            N_("All scores"): lambda: all_scores_step(lab, steps),
            N_("Length and direction"): lambda: length_step(lab, scores[lab.query_index]),
            N_("Symmetry"): lambda: symmetry_step(lab, scores),
            N_("What the scores mean"): lambda: scores_meaning_step(lab),
        },
    )


def worked_step(lab: LabInput, scores: torch.Tensor) -> None:
    """The embeddings, the question on one score, then the query's scores term by term (they answer it)."""
    embeddings(lab)
    if exercises_section(__file__, lab, places=("score",)):
        worked_example(lab, scores)


def length_step(lab: LabInput, row: torch.Tensor) -> None:
    """Length against direction: the lengths and cosines, the question on the query's highest score, then the dot
    products that answer it."""
    lengths_and_cosines(lab)
    if exercises_section(__file__, lab, places=("top-score",)):
        length_and_direction(lab, row)


def all_scores_step(lab: LabInput, steps: ac.AttentionSteps) -> None:
    """The whole score matrix and its question."""
    all_scores(lab, steps)
    exercises_section(__file__, lab, places=("double-key",))


def symmetry_step(lab: LabInput, scores: torch.Tensor) -> None:
    """Why Ω is symmetric, what made-up embeddings do not mean, and the lesson's code."""
    symmetry(lab, scores)
    page.show_code(ac.dot_product_terms, ac.attention_scores, cosine_similarity)


def intro(lab: LabInput) -> None:
    """What a score is, and its formula."""
    st.markdown(
        _(
            """
Attention starts by asking, for one word (the **query**), how much every word of the sentence
has in common with it. The simplest measure is the **dot product** of their embeddings: multiply
the vectors entry by entry and add the products up. The sign follows the angle: positive when the two
vectors point roughly the same way, near zero when they are at right angles, negative when they point
apart. The size also grows with the vectors' lengths, so a large score can come from long vectors as much
as from a shared direction (the next section separates the two).
"""
        )
    )
    st.latex(r"\omega_{ij} = x_i \cdot x_j = \sum_{d=1}^{d_\text{model}} x_{i,d}\, x_{j,d} \qquad \Omega = X X^\top")
    page.lesson_caption(lab.description)


def embeddings(lab: LabInput) -> None:
    """The input X: one row per token, the numbers every score is computed from."""
    st.subheader(_("The input: X, one embedding per token"))
    st.markdown(
        _(
            "Each token is a vector of d_model = {d_model} numbers; stacked as rows they form X "
            "({T} × {d_model}). Every score below is computed from these rows. Answer the question below "
            "first: the step-by-step table appears after.",
            d_model=lab.d_model,
            T=lab.T,
        )
    )
    page.matrix(
        lab.X,
        lab.labels,
        dimension_labels(lab.d_model),
        kind="values",
        title=_("Embeddings X"),
        row_title=_("token"),
        col_title=_("dimension"),
        download="embeddings.csv",
    )


def worked_example(lab: LabInput, scores: torch.Tensor) -> None:
    """The query's scores term by term, one written-out sum, the tutorial's numbers and the extremes."""
    X, labels, q = lab.X, lab.labels, lab.query_index
    st.subheader(_("Step by step for the query “{query}”", query=lab.query_label))
    terms = ac.dot_product_terms(X[q], X)  # (d_model,) * (T, d_model) -> (T, d_model)
    columns = [_("x_q,d · x_j,d for d = {d}", d=d + 1) for d in range(lab.d_model)]
    term_frame = to_frame(terms, labels, columns)
    term_frame[_("score: the sum over d")] = scores[q].tolist()
    st.markdown(
        _(
            "Row *j* multiplies the query's embedding x_q (the row “{query}” of X) with token *j*'s "
            "embedding x_j, dimension by dimension (one column per dimension d), and the last column adds the "
            "products up: that sum is the score.",
            query=lab.query_label,
        )
    )
    page.table(term_frame, alt_text=_("Dot-product terms per dimension and their sum"))
    key = (q + 1) % lab.T if lab.T > 1 else q
    products = products_sum_text(X[q].tolist(), X[key].tolist(), scores[q, key].item())
    st.markdown(_("For example, with the key “{key}”: {products}", key=labels[key], products=products))
    with page.slot():
        printed_scores_note(lab)
    most_and_least(lab, scores[q])


def printed_scores_note(lab: LabInput) -> None:
    """The tutorial's printed scores, when the input is its preset as printed and its query is chosen."""
    preset = lab.printed_preset
    if preset is None or preset.key not in TUTORIAL_OF_PRESET or lab.query_index != preset.query_index:
        return
    tutorial = TUTORIAL_OF_PRESET[preset.key]
    printed = numbers_text(preset.printed["query_scores"])
    if preset.key == "transformer":
        printed = _(
            "{numbers} (the lab's last digit can differ by 1: it starts from the 4-decimal embeddings)",
            numbers=printed,
        )
    page.tutorial_note(tutorial, _("the scores of “{query}”", query=lab.query_label), printed)


def most_and_least(lab: LabInput, row: torch.Tensor) -> None:
    """Which other token scores highest and which lowest against the query."""
    most, least = most_and_least_similar(row, lab.query_index)
    if most is None:
        st.info(_("The sentence has a single token: its only score is with itself."))
        return
    st.markdown(
        _(
            "Among the other tokens, “{most}” scores highest ({most_score}) "
            "and “{least}” lowest ({least_score}) against “{query}”.",
            most=lab.labels[most],
            most_score=format_number(row[most].item()),
            least=lab.labels[least],
            least_score=format_number(row[least].item()),
            query=lab.query_label,
        )
    )


def all_scores(lab: LabInput, steps: ac.AttentionSteps) -> None:
    """The whole score matrix Ω = X Xᵀ; a clicked cell shows its dot product term by term."""
    st.subheader(_("All scores at once: Ω = X Xᵀ"))
    st.markdown(
        _(
            "Row *i* holds the scores of query *i* against every key *j*. The row of the query above is the "
            "column “score: the sum over d” of the table above."
        )
    )
    page.matrix(
        steps.scores,
        lab.labels,
        lab.labels,
        kind="scores",
        title=_("Attention scores X Xᵀ"),
        key="scores_scores_chart",
        explain=page.scores_of(steps),
        download="attention_scores.csv",
        highlight_row=lab.query_label,
    )


def lengths_and_cosines(lab: LabInput) -> None:
    """x_q · x_j = |x_q| |x_j| cos θ: each token's length and its cosine with the query, what a score is made of."""
    X, labels, q, query = lab.X, lab.labels, lab.query_index, lab.query_label
    st.subheader(_("Length counts too: x_q · x_j = |x_q| |x_j| cos θ"))
    st.markdown(
        _(
            "The dot product mixes two things: the **direction** (cos θ, from −1 for opposite to 1 for the same "
            "direction) and the **lengths** of the two vectors. **Cosine similarity** divides the lengths out "
            "and compares direction only: every word has cosine 1 with itself. Below, each token's length and its "
            "cosine with “{query}”; predict the highest score before the dot products appear.",
            query=query,
        )
    )
    page.table(
        pd.DataFrame(
            {_("length |x_j|"): lengths(X).tolist(), _("cosine cos θ"): cosine_similarity(X[q], X).tolist()},
            index=list(labels),
        ),
        alt_text=_("Length of every token and its cosine similarity with {query}", query=query),
    )


def length_and_direction(lab: LabInput, row: torch.Tensor) -> None:
    """The dot products beside length and cosine: why a word need not score highest with itself."""
    X, labels, q, query = lab.X, lab.labels, lab.query_index, lab.query_label
    st.markdown(
        _(
            "A long embedding scores high against many words, so a word does not always score highest with "
            "itself. The dot products beside their lengths and cosines:"
        )
    )
    cosines = cosine_similarity(X[q], X)  # (T,)
    norms = lengths(X)  # (T,)
    page.table(
        pd.DataFrame(
            {
                _("dot product x_q · x_j"): row.tolist(),
                _("length |x_j|"): norms.tolist(),
                _("cosine cos θ"): cosines.tolist(),
            },
            index=list(labels),
        ),
        alt_text=_("Dot product and cosine similarity of {query} with every token", query=query),
    )
    best = highest_score(row)
    if row[best] > row[q]:
        st.markdown(
            _(
                "Against “{query}”, “{best}” scores **{best_score}**, more than "
                "“{query}” itself (**{own_score}**): its embedding is longer "
                "(|x| = {best_length} against {own_length}) although it "
                "points less the same way (cos θ = {best_cosine} against "
                "{own_cosine}). By cosine, “{query}” is most similar to itself.",
                query=query,
                best=labels[best],
                best_score=format_number(row[best].item()),
                own_score=format_number(row[q].item()),
                best_length=format_number(norms[best].item()),
                own_length=format_number(norms[q].item()),
                best_cosine=format_number(cosines[best].item()),
                own_cosine=format_number(cosines[q].item()),
            )
        )
    else:
        st.markdown(
            _(
                "Here “{query}” scores highest with itself ({own_score}): no other token is "
                "long enough to beat its perfect alignment. Try another query or sentence: a longer embedding "
                "can outscore the query's own.",
                query=query,
                own_score=format_number(row[q].item()),
            )
        )


def symmetry(lab: LabInput, scores: torch.Tensor) -> None:
    """Why X Xᵀ is symmetric, and what the scores of made-up embeddings do not mean."""
    st.markdown(
        _(
            """
**Why the matrix is symmetric.** Here the query and the key are the same embedding, and
x_i · x_j = x_j · x_i, so Ω equals its transpose (largest |Ω_ij − Ω_ji| here: {asymmetry}).
Once queries and keys come from different projections (lesson 4, Q = X W_q and K = X W_k),
“how much *i* looks at *j*” and “how much *j* looks at *i*” can differ.
""",
            asymmetry=format_number(asymmetry(scores)),
        )
    )
    if lab.embedding_mode in ("random", "one-hot"):
        st.warning(
            _(
                "These embeddings are random or one-hot, not learned: a high score between two words says "
                "nothing about their meaning yet. In a trained model, related words get embeddings that point the "
                "same way."
            ),
            icon=":material/info:",
        )
    else:
        st.caption(
            _(
                "Caveat: tutorial embeddings are made up for illustration (and those of the “How self attention "
                "works in Transformer” tutorial are random), so similarity between them means nothing about the "
                "words yet."
            )
        )


def scores_meaning_step(lab: LabInput) -> None:
    """The same scores on trained word vectors of the sentence: related words score high."""
    st.subheader(_("What the scores mean: the same Ω on trained embeddings"))
    st.markdown(
        _(
            "So far the embeddings were made up, so a high score meant nothing. A trained model learns embeddings "
            "in which related words point the same way. Here each word of the sentence gets its trained vector, "
            "scaled to length 1, and the scores are the same Ω = X Xᵀ: now every score is a cosine between −1 "
            "and 1."
        )
    )
    vectors = meaning.word_vectors(lab)  # (T, 384), or None when the model is unavailable
    if vectors is None:
        return
    scores = cosine_scores(vectors)  # (T, 384) @ (384, T) -> (T, T)
    page.heatmap(
        scores,
        lab.labels,
        lab.labels,
        kind="scores",
        title=_("Scores X Xᵀ of the trained unit vectors (cosines)"),
        highlight_row=lab.query_label,
    )
    st.markdown(meaning.scores_claim(lab, scores, scores_meaning(scores, lab.tokens, lab.query_index)))
    meaning.vectors_note()
    meaning.suggest_sentence(lab, "scores")


render(inputs.current())
