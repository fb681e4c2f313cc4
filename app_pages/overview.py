"""Overview: what self-attention is, the lessons, how to use the lab, a glossary."""

import streamlit as st

from ui import inputs, lessons

lesson = inputs.current()

st.title("Attention Lab")
st.markdown(
    """
Self-attention is how a transformer lets every word of a sentence look at every other word
and mix in what it finds. This lab takes it apart **one step per page**, with every number
computed live from the input in the sidebar, so you can check each one by hand.
The examples come from five tutorial notebooks; where a tutorial made a mistake, the lab
shows the right numbers and labels the mistake as a pitfall.
"""
)
st.latex(r"\text{Attention}(Q, K, V) = \operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V")

st.subheader("The pipeline")
st.graphviz_chart(
    """
digraph {
  rankdir=LR; node [shape=box, style="rounded,filled", fillcolor="#eef2ff", fontname="sans-serif"];
  edge [fontname="sans-serif", fontsize=10];
  X [label="X\\nembeddings"]; QKV [label="Q, K, V"]; S [label="scores\\nQ Kᵀ"]; SC [label="scaled\\n÷ √d_k"];
  M [label="masked"]; W [label="weights\\nsoftmax"]; C [label="context\\nweights · V"];
  X -> QKV [label="(T, d_model) → (T, d_k)"]; QKV -> S [label="(T, T)"]; S -> SC; SC -> M; M -> W [label="rows sum to 1"];
  W -> C [label="(T, d_v)"];
}
""",
    width="content",
)

st.subheader("The lessons")
for entry in lessons.numbered():
    st.page_link(entry.path, label=f"**{entry.label}** — {entry.summary}", icon=entry.icon)

st.subheader("How to use the lab")
st.markdown(
    f"""
- **Pick an input in the sidebar**: a tutorial example, or your own sentence with random (seeded),
  one-hot or hand-edited embeddings. Every page uses the same input.
- **Pick a query token**: the word whose numbers each page works out in full.
- **Share a link**: the address bar holds the example, sentence, embeddings, seed and query, so a
  copied link opens the same lesson with the same numbers.
- Now: {lesson.description}.
"""
)

st.subheader("Before you start")
st.markdown(
    """
You need vectors and the **dot product** (multiply matching entries and add them up), matrix
multiplication (each entry of `A @ B` is a dot product of a row of `A` with a column of `B`),
and the exponential function. No calculus, no training: the lab shows a single attention
step with fixed numbers.
"""
)

st.subheader("Glossary")
GLOSSARY = {
    "token": 'A piece of the input; here, one word as split at spaces ("can\'t" is one token).',
    "embedding": "The vector of numbers that stands for a token: a row of the input matrix X (T tokens × d_model numbers).",
    "score": "How strongly a query matches a key before normalising: the dot product q · k (a row of Q Kᵀ).",
    "weight": "A score after softmax: positive, and each query's weights sum to 1 (attention weights, not trained parameters).",
    "query": "What a token is looking for: q = x W_q. The row of the score matrix it owns.",
    "key": "What a token offers to be matched on: k = x W_k. Scores compare queries with keys.",
    "value": "What a token passes on once attended to: v = x W_v. Outputs are weighted sums of values.",
    "context vector": "The output for one token: the weighted sum of all values, with that token's attention weights.",
    "head": "One complete attention computation with its own W_q, W_k, W_v. Multi-head attention runs several side by side.",
}
for term, meaning in GLOSSARY.items():
    st.markdown(f"**{term}** — {meaning}")
