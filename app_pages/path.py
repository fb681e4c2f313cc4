"""The 15-minute path: one worked example, from Q, K and V to a trained model's next token.

One input (the sidebar's) and one set of weights, stated at the start and kept to the end: every stop computes from
the stop before, asks one question before it shows its result, and shows what goes wrong without its idea on the
same numbers. The lessons are the deep dives.
"""

import pandas as pd
import streamlit as st

from attention_core import story as sty
from attention_core.attention import attention
from attention_core.exercises.story import ORDER_OPTIONS, piece_label
from attention_core.i18n import N_, _
from attention_core.tables import dimension_labels, to_frame
from ui import page
from ui.models import story as stories
from ui.page import exercises_section, format_number, learner_text, lesson_steps
from ui.widgets import inputs, learning_checks
from ui.widgets.inputs import LabInput

QUESTION_LOOK = {"heading": N_("Your turn: predict first"), "note": False}  # one short heading per stop's question
STORY_KEY = ("story", sty.SEED)  # the toy stops' material key: the path's weights are fixed by its seed
DEEPER = (  # where each idea of the path is taken further
    ("scores", N_("length against direction")),
    ("softmax", N_("temperature, stability")),
    ("scaling", N_("the variance, measured")),
    ("masking", N_("padding, sliding windows")),
    ("multi_head", N_("checked against PyTorch")),
    ("positions", N_("positional encodings")),
    ("trained_model", N_("all 72 heads")),
    ("smollm2", N_("RoPE, grouped queries")),
    ("training", N_("attention being learned")),
)


def render(lab: LabInput) -> None:
    """The path's outline: one core call, then one function per stop."""
    s = stories.told(lab)  # every toy number of the path, computed once per input
    page.lesson_title(__file__)
    lesson_steps(
        __file__,
        {
            N_("Start"): lambda: start(lab, s),
            N_("Q, K, V"): lambda: qkv_stop(lab, s),
            N_("Scores"): lambda: scores_stop(lab, s),
            "√d_k": lambda: scaling_stop(lab, s),
            N_("Softmax"): lambda: softmax_stop(lab, s),
            N_("Mask"): lambda: mask_stop(lab, s),
            N_("Context"): lambda: context_stop(lab, s),
            N_("Heads"): lambda: heads_stop(lab, s),
            N_("Word order"): lambda: order_stop(lab, s),
            N_("One line"): lambda: one_line_stop(lab, s),
            N_("Trained model"): lambda: trained_stop(lab),
            N_("Next token"): lambda: next_token_stop(lab),
            N_("Finish"): lambda: finish(),
        },
    )


def ask(lab: LabInput, s: sty.Story, place: str) -> bool:
    """The stop's one question (predict first); True once it is answered or shown, so the stop may reveal."""
    return exercises_section(__file__, lab, material=s, material_key=STORY_KEY, places=(place,), **QUESTION_LOOK)


def start(lab: LabInput, s: sty.Story) -> None:
    """The check before the path, then the input and the weights, stated once."""
    st.markdown(
        _(
            "One worked example. Each stop computes from the one before and asks you one question **before** it "
            "shows its result. First, what do you know already?"
        )
    )
    learning_checks.pre_check()
    st.markdown(
        _(
            """
**The input** is the sidebar's sentence: {tokens}, each {d_model} numbers (the rows of X).
**The weights** are drawn once (seed {seed}) and kept to the end: W_q, W_k, W_v give each token
{numbers} numbers, {heads} heads of d_k = {d_k}. Stops 2-7 follow **head 1** (columns 1-2) and
the query **“{query}”**; stop 8 adds head 2 and W_o.
""",
            tokens=inputs.tokens_text(lab.T),
            d_model=lab.d_model,
            seed=sty.SEED,
            numbers=sty.HEADS * sty.D_K,
            heads=sty.HEADS,
            d_k=sty.D_K,
            query=lab.query_label,
        )
    )
    page.lesson_caption(lab.description)
    page.matrix(
        s.X,
        lab.labels,
        dimension_labels(lab.d_model),
        kind="values",
        title=_("The input X"),
        row_title=_("token"),
        col_title=_("dimension"),
        download="path_input.csv",
    )
    weight_tables(s)


def weight_tables(s: sty.Story) -> None:
    """W_q, W_k, W_v and W_o as tables, side by side."""
    columns = dimension_labels(sty.HEADS * sty.D_K, prefix="c")
    tabs = st.tabs(["W_q", "W_k", "W_v", "W_o"])
    rows = dimension_labels(s.d_model)
    for tab, name, W in zip(
        tabs[:3], ("W_q", "W_k", "W_v"), (s.weights_.W_q, s.weights_.W_k, s.weights_.W_v), strict=True
    ):
        with tab:
            page.table(to_frame(W, rows, columns), alt_text=name)
    with tabs[3]:
        page.table(to_frame(s.weights_.W_o, columns, rows), alt_text="W_o")


def qkv_stop(lab: LabInput, s: sty.Story) -> None:
    """Q = X W_q, K = X W_k, V = X W_v for head 1."""
    st.markdown(
        _(
            "Each token plays three roles: its **query** q looks, its **key** k is matched, its **value** v is "
            "passed on. Each is the embedding times a learned matrix: q = x W_q, k = x W_k, v = x W_v."
        )
    )
    page.table(
        pd.DataFrame(
            {
                _("x (row of X)"): s.X[s.query].tolist(),
                _("W_q column {n}", n=1): s.weights_.W_q[:, 0].tolist(),
                _("W_q column {n}", n=2): s.weights_.W_q[:, 1].tolist(),
            },
            index=dimension_labels(s.d_model),
        ),
        alt_text=_("The embedding of {query} and head 1's columns of W_q", query=lab.query_label),
    )
    if ask(lab, s, "q-entry"):
        qkv_tables(lab, s)


def qkv_tables(lab: LabInput, s: sty.Story) -> None:
    """Q, K and V of head 1, the numbers every later stop uses."""
    heads = dimension_labels(sty.D_K)
    tabs = st.tabs(["Q", "K", "V"])
    for tab, name, M in zip(tabs, ("Q", "K", "V"), (s.Q, s.K, s.V), strict=True):
        with tab:
            page.table(to_frame(M, lab.labels, [f"{name.lower()}{d[1:]}" for d in heads]), alt_text=name)
    st.markdown(_("The next stops score, scale, mask, softmax and blend these very Q, K and V."))


def scores_stop(lab: LabInput, s: sty.Story) -> None:
    """Scores q · k, and what Q = K = X would give instead."""
    st.markdown(_("A **score** is how well a query matches a key: q · k, with d_k = {d_k} two products.", d_k=sty.D_K))
    qk = pd.DataFrame(
        {"q1": s.Q[:, 0].tolist(), "q2": s.Q[:, 1].tolist(), "k1": s.K[:, 0].tolist(), "k2": s.K[:, 1].tolist()},
        index=list(lab.labels),
    )
    page.table(qk, alt_text=_("Q and K of head 1"))
    if not ask(lab, s, "score"):
        return
    left, right = st.columns(2)
    with left:
        page.heatmap(
            s.scores, lab.labels, lab.labels, kind="scores", title=_("Scores Q Kᵀ"), highlight_row=lab.query_label
        )
    with right:
        page.heatmap(s.plain_scores, lab.labels, lab.labels, kind="scores", title=_("Without W_q, W_k: X Xᵀ"))
    st.markdown(
        _(
            "**Why not score X against X?** Without W_q and W_k, Q = K = X and the scores are X Xᵀ: symmetric up to "
            "rounding (largest |s_ij − s_ji|: {plain_gap}), so i looks at j exactly as much as j looks at i, and "
            "{plain_self} of {T} tokens score highest with themselves. With W_q and W_k: largest |s_ij − s_ji| "
            "{gap}, and {self} of {T} tokens score highest with themselves. A word can look for something other "
            "than itself.",
            plain_gap=format_number(sty.asymmetry(s.plain_scores)),
            plain_self=sty.self_scored_rows(s.plain_scores),
            T=lab.T,
            gap=format_number(sty.asymmetry(s.scores)),
            self=sty.self_scored_rows(s.scores),
        )
    )


def scaling_stop(lab: LabInput, s: sty.Story) -> None:
    """Scores divided by √d_k, and softmax saturating without it as d_k grows."""
    st.markdown(
        _(
            "A score adds up d_k products, so its spread grows with d_k. Before softmax, each score is divided by "
            "√d_k = √{d_k}. The query's scores:",
            d_k=sty.D_K,
        )
    )
    page.table(
        to_frame(s.scores[s.query].unsqueeze(0), [lab.query_label], lab.labels), alt_text=_("The query's scores")
    )
    if not ask(lab, s, "scaled"):
        return
    page.table(
        to_frame(s.scaled[s.query].unsqueeze(0), [f"{lab.query_label} ÷ √{sty.D_K}"], lab.labels),
        alt_text=_("The query's scores divided by √d_k"),
    )
    sat = s.saturation
    st.markdown(
        _(
            "**Why divide?** Real heads have d_k = 64 or more, and the spread of the scores grows like √d_k. Grow "
            "the spread of the scores of “{query}” that way and watch its largest weight: without √d_k, softmax "
            "saturates, one key (or a few tied ones) takes almost everything and the rest get almost no gradient to "
            "learn from. Divided by √d_k, the weights stay where they are.",
            query=lab.query_label,
        )
    )
    page.table(
        pd.DataFrame(
            {
                _("spread of the scores"): sat.spread,
                _("largest weight, no √d_k"): sat.unscaled,
                _("largest weight, ÷ √d_k"): sat.scaled,
            },
            index=[f"d_k = {d}" for d in sat.d_ks],
        ),
        alt_text=_("Softmax saturating as d_k grows"),
    )


def softmax_stop(lab: LabInput, s: sty.Story) -> None:
    """Softmax of the query's scaled row, and why dividing by the sum fails."""
    st.markdown(
        _(
            "**Softmax** turns scaled scores into weights: exponentiate each (minus the row's largest, which changes "
            "nothing and avoids overflow), then divide by their sum. The weights are positive and sum to 1."
        )
    )
    page.table(
        pd.DataFrame(
            {_("scaled score"): s.scaled[s.query].tolist(), _("exp(score − max)"): s.exps.tolist()},
            index=list(lab.labels),
        ),
        alt_text=_("The query's scaled scores and their exponentials"),
    )
    if not ask(lab, s, "weight"):
        return
    page.heatmap(s.attn, lab.labels, lab.labels, title=_("Attention weights"), highlight_row=lab.query_label)
    st.markdown(
        _(
            "**Why not just divide by the sum?** Scores only mean something relative to each other: adding "
            "c = {shift} to every score of the row changes no softmax weight, but dividing by the sum gives weights "
            "that are negative or far above 1:",
            shift=format_number(s.shift),
        )
    )
    page.table(
        pd.DataFrame(
            {
                _("score ÷ sum"): s.divided.tolist(),
                _("(score + c) ÷ sum"): s.shifted_divided.tolist(),
                _("softmax(score + c)"): s.shifted_softmax.tolist(),
            },
            index=list(lab.labels),
        ),
        alt_text=_("Dividing by the sum against softmax"),
    )


def mask_stop(lab: LabInput, s: sty.Story) -> None:
    """The causal mask on a query it changes: blocked keys get 0, the rest are renormalized."""
    query = lab.labels[s.mask_query]
    if s.mask_query == s.query:
        text = _(
            "A GPT-style model writes left to right, so a token may not look at later tokens: a **causal mask** "
            "sets their scores to −∞ before softmax, and their weights become 0. Take “{query}”, without the mask:",
            query=query,
        )
    else:
        text = _(
            "A GPT-style model writes left to right, so a token may not look at later tokens: a **causal mask** "
            "sets their scores to −∞ before softmax, and their weights become 0. Take “{query}” (not “{chosen}”: "
            "it is last, and sees every token anyway), without the mask:",
            query=query,
            chosen=lab.query_label,
        )
    st.markdown(text)
    page.table(
        to_frame(s.attn[s.mask_query].unsqueeze(0), [query], lab.labels),
        alt_text=_("The weights of {query}, no mask", query=query),
    )
    kept, blocked = sty.mask_split(lab.labels, s.causal[s.mask_query])
    if blocked:
        st.markdown(_("The mask keeps {kept} and blocks {blocked}.", kept=", ".join(kept), blocked=", ".join(blocked)))
    else:
        st.markdown(_("The mask keeps {kept} and blocks nothing.", kept=", ".join(kept)))
    if not ask(lab, s, "masked-weight"):
        return
    page.heatmap(s.masked_attn, lab.labels, lab.labels, title=_("Weights with a causal mask"), highlight_row=query)
    st.markdown(
        _(
            "Each row now shares its weight among the tokens up to itself. The next stops go back to the weights "
            "without a mask, as an encoder (the trained model at stop 11) uses."
        )
    )


def context_stop(lab: LabInput, s: sty.Story) -> None:
    """The context vector: the weights of the query's row blend the value vectors."""
    st.markdown(
        _(
            "The output for “{query}” is its **context vector**: every token's value vector v (stop 2), "
            "weighted by the attention weight the query gives it (stop 5), added up.",
            query=lab.query_label,
        )
    )
    page.table(
        pd.DataFrame(
            {_("weight"): s.attn[s.query].tolist(), "v1": s.V[:, 0].tolist(), "v2": s.V[:, 1].tolist()},
            index=list(lab.labels),
        ),
        alt_text=_("The weights of {query} and the value vectors", query=lab.query_label),
    )
    if not ask(lab, s, "context"):
        return
    page.table(to_frame(s.context, lab.labels, ["c1", "c2"]), alt_text=_("Context vectors of head 1"))
    st.markdown(
        _("Each token gets a blend of the values, mostly of the tokens it attends to: what it takes from its sentence.")
    )


def heads_stop(lab: LabInput, s: sty.Story) -> None:
    """Head 2 from the other columns of the same matrices, the concatenation and W_o."""
    st.markdown(
        _(
            "**Head 2** runs the same steps with columns 3-4 of the same W_q, W_k, W_v, so a query can spread its "
            "attention two ways. The two context vectors are put side by side (**concatenated**) and multiplied by "
            "W_o, which mixes the heads back into d_model numbers per token."
        )
    )
    columns = [_("head {head}: {column}", head=h, column=c) for h in (1, 2) for c in ("c1", "c2")]
    page.table(
        to_frame(s.concat[s.query].unsqueeze(0), [lab.query_label], columns),
        alt_text=_("The concatenated heads of {query}", query=lab.query_label),
    )
    page.table(
        to_frame(s.weights_.W_o, dimension_labels(sty.HEADS * sty.D_K, prefix="c"), dimension_labels(s.d_model)),
        alt_text="W_o",
    )
    if not ask(lab, s, "output"):
        return
    page.heatmap(s.head2_attn, lab.labels, lab.labels, title=_("Head 2's weights"), highlight_row=lab.query_label)
    page.table(to_frame(s.output, lab.labels, dimension_labels(s.d_model)), alt_text=_("The block's output"))


def order_stop(lab: LabInput, s: sty.Story) -> None:
    """The block on the reversed sentence: each output moves with its token, unchanged."""
    reversed_labels = [lab.labels[int(j)] for j in s.order]
    st.markdown(
        _(
            "Now run the very same block (both heads and W_o) on the sentence backwards: “{sentence}”.",
            sentence=learner_text(" ".join(reversed_labels)),
        )
    )
    if not ask(lab, s, "order"):
        return
    left, right = st.columns(2)
    with left:
        st.markdown(_("**In order** (stop 8)"))
        page.table(to_frame(s.output, lab.labels, dimension_labels(s.d_model)), alt_text=_("Output, in order"))
    with right:
        st.markdown(_("**Reversed**"))
        page.table(
            to_frame(s.reordered_output, reversed_labels, dimension_labels(s.d_model)),
            alt_text=_("Output, reversed"),
        )
    st.markdown(
        _(
            "Every row is the same, only moved: {answer}. Attention alone does not know word order; real models add "
            "a position to each embedding first (lesson 8).",
            answer=_(ORDER_OPTIONS[0]).lower(),
        )
    )


def one_line_stop(lab: LabInput, s: sty.Story) -> None:
    """softmax(Q Kᵀ / √d_k) V in one call, equal to the step-by-step context vectors."""
    st.markdown(
        _(
            "Stops 2 to 7 (all but stop 6's mask) were one formula, which every transformer runs in one call. Here "
            "it is on the same Q, K and V of head 1 ({tokens}, d_k = {d_k}):",
            tokens=inputs.tokens_text(lab.T),
            d_k=sty.D_K,
        )
    )
    st.latex(r"\operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V")
    page.table(
        to_frame(s.qkv, lab.labels, ["q1", "q2", "k1", "k2", "v1", "v2"]),
        alt_text=_("Q, K and V of head 1, from stop 2"),
    )
    page.show_code(attention, sty.tell, title=_("Show the code: the formula, and the whole path"))
    if not ask(lab, s, "one-line"):
        return
    st.markdown(
        _(
            "It returns {count} numbers: one context vector of d_k = {d_k} per token.",
            count=s.one_line.numel(),
            d_k=sty.D_K,
        )
    )
    page.table(to_frame(s.one_line, lab.labels, ["c1", "c2"]), alt_text=_("PyTorch's scaled_dot_product_attention"))
    st.markdown(
        _(
            "PyTorch's `torch.nn.functional.scaled_dot_product_attention(Q, K, V)` against stop 7's context "
            "vectors, computed step by step: largest difference **{gap}** (rounding only).",
            gap=format_number(s.one_line_gap),
        )
    )


def model_result(model: str, problem: str | None, run):
    """A real model's stop result, run under a spinner (the first visit loads the model); None, with a sentence on
    the page, when the model is not installed here or cannot read the sentence."""
    if problem:
        st.info(
            _("{model} cannot run here: {problem}", model=model, problem=learner_text(problem)), icon=":material/info:"
        )
        return None
    try:
        with st.spinner(_("Running {model} on your sentence (the first time loads the model)…", model=model)):
            return run()
    except stories.Unavailable as error:
        st.info(
            _("{model} cannot read this sentence: {problem}", model=model, problem=learner_text(str(error))),
            icon=":material/info:",
        )
        return None


def trained_stop(lab: LabInput) -> None:
    """One head of all-MiniLM-L6-v2 on the same sentence, recomputed with the same functions."""
    st.markdown(
        _(
            "A trained model does exactly this with learned weights. all-MiniLM-L6-v2 (6 layers × 12 heads, "
            "d_k = 64) reads your sentence as word pieces between the markers [CLS] and [SEP]. Here is the head "
            "where “{query}” looks hardest at one other word.",
            query=lab.query_label,
        )
    )
    m = model_result(
        "all-MiniLM-L6-v2",
        stories.trained_problem(),
        lambda: stories.trained_stop(tuple(lab.tokens), lab.query_index),
    )
    if m is None:
        return
    if not exercises_section(
        __file__, lab, material=m, material_key=("trained", *lab.tokens), places=("trained",), **QUESTION_LOOK
    ):
        return
    page.heatmap(
        m.row.unsqueeze(0),
        [m.pieces[m.query]],
        list(m.pieces),
        title=_("One head of a trained model"),
        caption=_("Layer {layer}, head {head}", layer=m.layer + 1, head=m.head + 1),
    )
    st.markdown(
        _(
            "Recomputed by hand with the functions of stops 2-5 (Q = X W_q + b, softmax(Q Kᵀ / √64)): largest "
            "difference from the weights of the model's full forward pass **{gap}**. Lesson 10 shows all 72 heads.",
            gap=format_number(m.gap),
        )
    )


def next_token_stop(lab: LabInput) -> None:
    """SmolLM2 predicting the next token from the last position's context."""
    prompt = stories.sentence_of(lab)
    st.markdown(
        _(
            "SmolLM2 runs 30 layers of causal attention (stop 6). The **last position's** vector, which has attended "
            "to every token before it, is scored against all 49,152 tokens of the vocabulary; softmax turns the "
            "scores into each next token's probability."
        )
    )
    m = model_result("SmolLM2-135M", stories.smol_problem(), lambda: stories.next_stop(prompt))
    if m is None:
        return
    if not exercises_section(
        __file__, lab, material=m, material_key=("next", prompt), places=("next-token",), **QUESTION_LOOK
    ):
        return
    page.table(
        pd.DataFrame({_("probability"): list(m.probabilities)}, index=[piece_label(piece) for piece in m.pieces]),
        alt_text=_("SmolLM2's most likely next tokens"),
    )
    st.caption(_("A leading space inside the quotes is part of the piece: the model's pieces carry their spaces."))


def finish() -> None:
    """The check after the path, the result per idea, and where to go deeper."""
    learning_checks.note_path_finished()
    st.markdown(_("You followed one sentence from its embeddings to a next token. Now the matched check:"))
    learning_checks.post_check()
    st.subheader(_("Where to go deeper"), anchor=False)
    for name, what in DEEPER:
        lesson = page.BY_NAME[name]
        st.page_link(lesson.path, label=_("{lesson}: {what}", lesson=lesson.label, what=_(what)), icon=lesson.icon)


render(inputs.current())
