"""Overview: what self-attention is, the lessons, how to use the lab, a glossary."""

import streamlit as st

from attention_core.i18n import N_, _
from ui import page
from ui.widgets import diagrams, inputs, learning_checks
from ui.widgets.inputs import LabInput

TITLE = N_("Attention Lab")  # the overview keeps the lab's name as its title, not its registry label
SYMBOLS = {  # defined under the formula, before the pipeline diagram uses them
    "T": N_("the number of tokens in the input"),
    "d_model": N_("the number of values in each token's embedding (a row of X)"),
    "d_k": N_("the length of each query and key vector (scores divide by √d_k)"),
    "d_v": N_("the length of each value vector, and so of each context vector"),
    "h": N_("the number of heads; each head has d_k = d_model / h"),
}
GLOSSARY = {  # term (translated where shown) -> meaning
    N_("token"): N_('A piece of the input; here, one word as split at spaces ("can\'t" is one token).'),
    N_("embedding"): N_(
        "The vector of numbers that stands for a token: a row of the input matrix X (T tokens × d_model numbers)."
    ),
    N_("score"): N_("How strongly a query matches a key before normalising: the dot product q · k (a row of Q Kᵀ)."),
    N_("weight"): N_(
        "A score after softmax: non-negative (exactly 0 where a mask blocks a key, or where exp underflows), "
        "and each query's weights sum to 1 (attention weights, not trained parameters)."
    ),
    N_("query"): N_("What a token is looking for: q = x W_q. The row of the score matrix it owns."),
    N_("key"): N_("What a token offers to be matched on: k = x W_k. Scores compare queries with keys."),
    N_("value"): N_("What a token passes on once attended to: v = x W_v. Outputs are weighted sums of values."),
    N_("context vector"): N_(
        "The output for one token: the weighted sum of all values, with that token's attention weights."
    ),
    N_("head"): N_(
        "One complete attention computation with its own W_q, W_k, W_v. Multi-head attention runs several side by side."
    ),
}


def render(lab: LabInput) -> None:
    st.title(_(TITLE))
    intro()
    learning_checks.review_offer()
    two_ways(page.BY_NAME["path"], page.steps_seen("path"))
    symbols(SYMBOLS)
    pipeline_diagram()
    counting()
    lesson_list(page.numbered(), page.sections()[page.PRACTICE])
    your_progress()
    how_to_use(lab.description)
    prerequisites(page.lesson_for("app_pages/training.py").number)
    tutorials(page.TUTORIALS)
    glossary(SYMBOLS | GLOSSARY)


def intro() -> None:
    st.markdown(
        _(
            """
Self-attention is how a transformer lets every word of a sentence look at every other word
and mix in what it finds. This lab takes it apart **one idea per step, one concept per lesson**, with every number
computed live from the input in the sidebar, so you can check each one by hand.
The examples come from five tutorial notebooks (listed below); where a tutorial made a mistake, the
lab shows the right numbers and labels the mistake as a pitfall.
"""
        )
    )
    st.latex(r"\text{Attention}(Q, K, V) = \operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V")


def two_ways(path: page.Lesson, seen: tuple[int, ...]) -> None:
    """The 15-minute path (one worked example, a question at every stop) beside the full course, step by step."""
    short, full = st.columns(2, border=True)
    with short:
        st.markdown(
            _(
                "**The 15-minute path.** One sentence followed from its embeddings to a trained model's next token: "
                "Q, K, V, scores, √d_k, softmax, a mask, context vectors, heads, word order, the one-line formula, "
                "then all-MiniLM-L6-v2 and SmolLM2. Each stop asks you one question before it shows its result. "
                "Start here for the big picture."
            )
        )
        reached = max(seen, default=0)  # a learner who left the path part-way picks it up there
        label = _("Continue the path at stop {stop}", stop=reached) if reached > 1 else _("Take the 15-minute path")
        params = {page.STEP_PARAM: str(reached)} if reached > 1 else {page.STEP_PARAM: "1"}
        st.page_link(path.path, label=label, icon=path.icon, query_params=params)
    with full:
        first = page.numbered()[0]
        st.markdown(
            _(
                "**The full course.** Every lesson, one idea per step, with exercises that check you; a switch on "
                "each lesson shows it whole on one page."
            )
        )
        st.page_link(first.path, label=_("Start with {lesson}", lesson=first.label), icon=":material/school:")


def symbols(terms: dict[str, str]) -> None:
    """The shape letters of the formula and the diagram, defined where they first appear."""
    entries = [_("**{letter}**: {meaning}", letter=letter, meaning=_(meaning)) for letter, meaning in terms.items()]
    st.caption(_("{entries}.", entries=_("; ").join(entries)))


def pipeline_diagram() -> None:
    st.subheader(_("The pipeline"))
    st.graphviz_chart(diagrams.attention_steps(), width="content")


def counting() -> None:
    """The lab's one counting convention, said once."""
    st.markdown(
        _(
            "**Counting:** everything you read counts from 1 (the first token, position, dimension d1, head, layer "
            "and step is number 1); only the Python code shown indexes from 0, as Python does."
        )
    )


def lesson_list(entries: tuple[page.Lesson, ...], practice: list[page.Lesson]) -> None:
    """Every numbered lesson in order, then the practice pages (the Mistakes museum)."""
    st.subheader(_("The lessons"))
    for entry in entries:
        st.page_link(entry.path, label=lesson_line(entry), icon=entry.icon)
    st.markdown(_("**Practice**"))
    for entry in practice:
        st.page_link(entry.path, label=lesson_line(entry), icon=entry.icon)


def lesson_line(entry: page.Lesson) -> str:
    """'**3. Context vectors** — Each output is a weighted blend of the inputs.'"""
    return _("**{lesson}** — {summary}", lesson=entry.label, summary=_(entry.summary))


def your_progress() -> None:
    """Answered / correct exercises per lesson, kept in this browser, with forget, download and load."""
    st.subheader(_("Your progress"))
    st.markdown(_("Each lesson ends with **Check yourself** exercises made from your input. Your answers so far:"))
    page.progress_table()


def how_to_use(description: str) -> None:
    st.subheader(_("How to use the lab"))
    st.markdown(
        _(
            """
- **Pick an input in the sidebar**: a tutorial example, or your own sentence with random (seeded),
  one-hot or hand-edited embeddings. Every page uses the same input.
- **Pick a query token**: the word whose numbers each page works out in full.
- **Share a link**: the address bar holds the example, sentence, embeddings, seed and query, so a
  copied link opens the same lesson with the same numbers.
- Now: {description}.
""",
            description=description,
        )
    )


def prerequisites(training_lesson: int) -> None:
    st.subheader(_("Before you start"))
    st.markdown(
        _(
            """
You need vectors and the **dot product** (multiply matching entries and add them up), matrix
multiplication (each entry of `A @ B` is a dot product of a row of `A` with a column of `B`),
and the exponential function. Every lesson runs attention with fixed numbers (seeded, typed by
hand or from a trained model) except lesson {training_lesson}, which trains a tiny model live so you
can watch its attention form. Only one part uses calculus: lesson 5 explains *why* scaling helps with gradients,
and that part is **optional**; skip it and the rest still reads.
""",
            training_lesson=training_lesson,
        )
    )


def tutorials(names: dict[str, tuple[str, str]]) -> None:
    """One line per tutorial notebook the examples come from, named by its example."""
    st.subheader(_("The five tutorials"))
    st.markdown("\n".join(_("- **“{name}”**: {what}.", name=name, what=_(what)) for name, what in names.values()))


def glossary(terms: dict[str, str]) -> None:
    st.subheader(_("Glossary"))
    for term, meaning in terms.items():
        st.markdown(_("**{term}** — {meaning}", term=_(term), meaning=_(meaning)))


render(inputs.current())
