"""Lesson 1: attention scores, the dot product of the query with every token."""

import streamlit as st

import attention_core as ac
from attention_core.presets import PRINTED
from attention_core.similarity import asymmetry, most_and_least_similar
from ui import display, inputs
from ui.format import format_number

lesson = inputs.current()
X, labels, q = lesson.X, lesson.labels, lesson.query_index

st.title("1. Attention scores")
st.markdown(
    """
Attention starts by asking, for one word (the **query**), how much every word of the sentence
has in common with it. The simplest measure is the **dot product** of their embeddings: multiply
the vectors entry by entry and add the products up. Large and positive means the two vectors
point the same way; near zero means unrelated; negative means opposite.
"""
)
st.latex(r"\omega_{ij} = x_i \cdot x_j = \sum_{d=1}^{d_\text{model}} x_{i,d}\, x_{j,d} \qquad \Omega = X X^\top")
display.lesson_caption(lesson.description)

st.subheader(f"Step by step for the query “{lesson.query_label}”")
terms = ac.dot_product_terms(X[q], X)  # (T, d_model)
scores = ac.attention_scores(X, X)  # (T, T)
term_frame = ac.vector_frame(terms, labels, prefix="x_q·x_j d")
term_frame["score (sum)"] = ac.vector_frame(scores[q].unsqueeze(1), labels)["d1"]
st.markdown(
    "Each row multiplies the query's embedding with one token's embedding, dimension by dimension "
    "(columns), and the last column adds the products up: that sum is the score."
)
display.table(term_frame, alt="Dot-product terms per dimension and their sum")
key = (q + 1) % lesson.T if lesson.T > 1 else q
products = " + ".join(
    f"({format_number(a)} × {format_number(b)})" for a, b in zip(X[q].tolist(), X[key].tolist(), strict=True)
)
st.markdown(f"For example, with the key “{labels[key]}”: {products} = **{format_number(scores[q, key].item())}**")
PRINTED_SCORES = {
    "transformer": ("000", "scores_self"),
    "light": ("001", "scores_light"),
    "journey": ("002", "scores_starts"),
}
preset_key = lesson.preset.key if lesson.preset and lesson.embedding_mode == "printed" else None
if preset_key in PRINTED_SCORES and q == lesson.preset.query_index:
    tutorial, name = PRINTED_SCORES[preset_key]
    printed = " ".join(format_number(v) for v in PRINTED[tutorial][name])
    st.caption(
        f"Tutorial {tutorial} prints the scores of “{lesson.query_label}” as {printed}"
        + (
            " (the lab's last digit can differ by 1: it starts from the 4-decimal embeddings)."
            if preset_key == "transformer"
            else "."
        )
    )

most, least = most_and_least_similar(scores[q], q)
if most is not None:
    st.markdown(
        f"Among the other tokens, “{labels[most]}” scores highest ({format_number(scores[q, most].item())}) "
        f"and “{labels[least]}” lowest ({format_number(scores[q, least].item())}) against “{lesson.query_label}”."
    )
else:
    st.info("The sentence has a single token: its only score is with itself.")

st.subheader("All scores at once: Ω = X Xᵀ")
st.markdown(
    "Row *i* holds the scores of query *i* against every key *j*. The row of the query above is the "
    "column “score (sum)” of the first table."
)
display.matrix(scores, labels, labels, kind="scores", title="Attention scores X Xᵀ", download="attention_scores.csv")

gap = asymmetry(scores)
st.markdown(
    f"""
**Why the matrix is symmetric.** Here the query and the key are the same embedding, and
x_i · x_j = x_j · x_i, so Ω equals its transpose (largest |Ω_ij − Ω_ji| here: {format_number(gap)}).
Once queries and keys come from different projections (lesson 4, Q = X W_q and K = X W_k),
“how much *i* looks at *j*” and “how much *j* looks at *i*” can differ.
"""
)
if lesson.embedding_mode in ("random", "one-hot"):
    st.warning(
        "These embeddings are random or one-hot, not learned: a high score between two words says nothing "
        "about their meaning yet. In a trained model, related words get embeddings that point the same way.",
        icon=":material/info:",
    )
else:
    st.caption(
        "Caveat: tutorial embeddings are made up for illustration (and 000's are random), so similarity "
        "between them means nothing about the words yet."
    )

display.show_code(ac.dot_product_terms, ac.attention_scores)
