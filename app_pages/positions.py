"""Lesson 8: attention alone ignores word order; position encodings put it back."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st
import torch

import attention_core as ac
from attention_core.embeddings import MAX_TOKENS
from attention_core.exercises import PositionsShown
from attention_core.i18n import N_, _
from attention_core.positions import (
    DOG_BITES_MAN,
    MAX_POSITIONS,
    add_positions,
    attention_output,
    encoding_angles,
    equivariance_agreement,
    identical_rows,
    inverse_permutation,
    learned_positions,
    output_check,
    parse_order,
    permute_rows,
    permute_tokens,
    position_breakdown,
    reversal_permutation,
    row_spread,
    shuffle_permutation,
    sinusoidal_encoding,
)
from attention_core.projections import random_projections
from attention_core.reference import TOLERANCE, Agreement, agreement
from attention_core.tables import dimension_labels
from ui import charts, page
from ui.page import exercises_section, format_number, learner_text, lesson_steps, vector_text
from ui.widgets import inputs
from ui.widgets.inputs import LabInput
from ui.widgets.rope_view import rope_step

# attention_core's words shown on this page, translated where they are shown (the core keeps them in English)
VERDICTS = (
    N_("exactly equal"),
    N_("equal up to float32 rounding"),
    N_("equal up to float64 rounding"),
    N_("different"),
)
ORDER_ERRORS = (  # attention_core.positions.parse_order's two refusals ({T}: the sentence's length)
    N_("Type the new order as positions counted from 1, separated by spaces, e.g. '3 1 2'."),
    N_("An order must list each of the positions 1 to {T} exactly once."),
)
ORDERS = {"shuffle (seeded)": N_("shuffle (seeded)"), "reverse": N_("reverse"), "type an order": N_("type an order")}
KINDS = {"sinusoidal": N_("sinusoidal"), "learned (seeded)": N_("learned (seeded)")}
Params = tuple[torch.Tensor, torch.Tensor, torch.Tensor]  # W_q, W_k, W_v
TYPED_ORDER_CHARACTERS = 6 * MAX_TOKENS  # room for every position of the longest sentence, "1024, " each


def render(lab: LabInput) -> None:
    """The lesson's outline: the seed and the new word order (several steps use them), then one function per step."""
    page.lesson_title(__file__)
    seed, order_kind = controls()
    perm = new_order(lab.T, order_kind, seed)
    projections = random_projections(lab.d_model, lab.d_model, seed, lab.X.dtype)
    params = (projections.W_q, projections.W_k, projections.W_v)
    output = attention_output(lab.X, *params)  # (T, d_model)
    gap_none = equivariance_agreement(lab.X, perm, *params)  # A(P X) against P A(X)
    E_sin = sinusoidal_encoding(lab.T, lab.d_model, dtype=lab.X.dtype)  # (T, d_model)
    E_learned = learned_positions(lab.T, lab.d_model, seed, lab.X.dtype)  # (T, d_model)
    plain = ac.self_attention(lab.X, *params)  # (T, T) weights of the words alone
    placed = ac.self_attention(add_positions(lab.X, E_sin), *params)  # (T, T) weights of X + E
    shown = PositionsShown(plain, placed, E_sin)
    lesson_steps(
        __file__,
        {
            N_("Order is invisible"): lambda: intro(lab.description),
            N_("Dog bites man"): lambda: dog_bites_man(seed),
            N_("Positions tell them apart"): lambda: dog_bites_man_with_positions(seed),
            N_("Your input, shuffled"): lambda: shuffled_input(lab, params, perm, output, gap_none),
            N_("The query, moved"): lambda: moved_query_step(lab, params, perm, output, gap_none, shown),
            N_("Repeated words"): lambda: repeated_words(lab, params, output),
            N_("Adding positions"): lambda: encodings_step(lab, E_sin, E_learned, shown),
            N_("One position worked out"): lambda: position_worked_out(lab, E_sin),
            N_("Weights with positions"): lambda: weights_step(lab, plain, placed, shown),
            N_("Shuffle with positions"): lambda: shuffle_with_positions_step(
                lab, params, perm, gap_none, E_sin, E_learned
            ),
            N_("Rotary positions"): lambda: rope_step(lab),
        },
    )


def moved_query_step(
    lab: LabInput,
    params: Params,
    perm: torch.Tensor,
    output: torch.Tensor,
    gap_none: Agreement,
    shown: PositionsShown,
) -> None:
    """Where the query moves, the question on its output, then (once it is answered) its output before and after
    the shuffle."""
    moved = query_moves(lab, perm)
    if exercises_section(__file__, lab, material=shown, places=("shuffled-context",)):
        moved_query(lab, params, perm, output, gap_none, moved)


def encodings_step(lab: LabInput, E_sin: torch.Tensor, E_learned: torch.Tensor, shown: PositionsShown) -> None:
    """The sinusoidal formula, the question on one entry, then (once it is answered) the encodings of this input
    and the learned-style table."""
    encoding_formula()
    if exercises_section(__file__, lab, material=shown, places=("sinusoid",)):
        position_encodings(lab, E_sin)
        learned_table(lab, E_learned)


def weights_step(lab: LabInput, plain: ac.AttentionSteps, placed: ac.AttentionSteps, shown: PositionsShown) -> None:
    """The weights without and with positions, and the what-if on reversing the sentence."""
    weights_with_positions(lab, plain, placed)
    exercises_section(__file__, lab, material=shown, places=("reversed-weight",))


def shuffle_with_positions_step(
    lab: LabInput,
    params: Params,
    perm: torch.Tensor,
    gap_none: Agreement,
    E_sin: torch.Tensor,
    E_learned: torch.Tensor,
) -> None:
    """The same shuffle with positions added (sinusoidal or learned-style), and the code behind the page."""
    shuffle_with_positions(lab, params, perm, gap_none, E_sin, E_learned)
    page.show_code(
        sinusoidal_encoding,
        encoding_angles,
        learned_positions,
        shuffle_permutation,
        permute_rows,
        attention_output,
        equivariance_agreement,
        output_check,
        agreement,
        identical_rows,
    )


def full_vector(values: torch.Tensor) -> str:
    """A row of numbers as [a, b, c] with 4 decimals, every entry written out."""
    return vector_text(values, limit=len(values))


def tolerance_words(tolerance: float) -> str:
    """attention_core.reference.tolerance_text in the learner's language."""
    return _(
        "|ours − reference| ≤ {tolerance} × the largest |reference| in every cell", tolerance=format(tolerance, "g")
    )


def verdict_help() -> str:
    """What the 'Largest difference' metrics measure, and when their verdict reads 'equal'."""
    return _(
        "max |A(P X + E) − P A(X + E)| over all cells. The verdict compares cell by cell: equal up to float32 "
        "rounding when {tolerance} (the tolerance float32 keeps on these sizes, measured).",
        tolerance=tolerance_words(TOLERANCE[torch.float32]),
    )


def order_error(error: ValueError, T: int) -> str:
    """parse_order's refusal in the learner's language (its text as it is if it is not one of ORDER_ERRORS)."""
    for message in ORDER_ERRORS:
        if str(error) == message.format(T=T):
            return _(message, T=T)
    return learner_text(error)


def gap_text(check: Agreement) -> str:
    """The largest difference and the verdict of the cell-by-cell comparison (relative tolerance)."""
    return _("{difference} ({verdict})", difference=format_number(check.max_difference), verdict=_(check.verdict))


def side_by_side(cols: Sequence[str], *tables: tuple[str, str, torch.Tensor, Sequence[str]]) -> None:
    """Tables (title, note, matrix, row labels) in columns, each under a bold title and an optional note."""
    for column, (title, note, matrix, rows) in zip(st.columns(len(tables)), tables, strict=True):
        with column:
            st.markdown(f"**{title}** {note}".strip())
            page.table(matrix, rows, cols, alt_text=f"{title} {note}".strip())


def intro(description: str) -> None:
    st.markdown(
        _(
            """
Look at the formulas of lessons 1 to 5 and 7: nothing in them says where a word stands. Each output
is a weighted mix of *all* the values, and the weights depend only on the vectors. So if you shuffle
the sentence, every word gets exactly the same output vector as before, just in its new place:
attention is **permutation-equivariant**. “dog bites man” and “man bites dog” would mean the same.
Transformers fix this by adding a **position vector** to each embedding before attention.

One exception: lesson 6's **causal mask** does depend on order (token *i* sees only the tokens up to *i*),
so with it on, shuffling changes the outputs. It tells a token which words came before it, but not how far
back each one stands. This page uses no mask.

**Counting:** as everywhere in the lab, positions and dimensions count **from 1**: the first word is
position 1 and the first column is d1. Only the sinusoidal formula below counts from 0: position 1 has
pos = 0 in the formula, and column d1 has index 2i = 0.
"""
        )
    )
    st.latex(
        r"\operatorname{Attention}(P X) = P \operatorname{Attention}(X) \qquad\text{but}\qquad \operatorname{Attention}(P X + E) \ne P \operatorname{Attention}(X + E)"
    )
    st.caption(
        _(
            "P is a permutation matrix (it reorders rows: row i of P X is row perm[i] of X); E holds one position "
            "vector per slot."
        )
    )
    page.lesson_caption(description)


def controls() -> tuple[int, str]:
    """The seed of W_q, W_k, W_v (and the shuffle), and how to reorder the words."""
    left, right = st.columns(2)
    seed = inputs.seed_input(
        _("Seed for W_q, W_k, W_v (and the shuffle)"),
        "positions_seed",
        left,
        help=_("The weights are random (seeded) d_model × d_model matrices, as in the pipeline lesson."),
    )
    order_kind = inputs.radio(
        _("New word order"),
        list(ORDERS),
        format_func=lambda option: _(ORDERS[option]),
        horizontal=True,
        key="positions_order",
        container=right,
    )
    return seed, order_kind


def dog_bites_man(seed: int) -> None:
    """The built-in demo: without positions, 'dog' gets the same output in both sentences."""
    st.subheader(_("“dog bites man” vs “man bites dog”"))
    dims = dimension_labels(len(DOG_BITES_MAN))
    demo_X, flip, flipped, demo_params = demo_example(seed)
    st.markdown(
        _(
            "A built-in example, independent of the sidebar: each word is a one-hot vector (dog = [1, 0, 0], "
            "bites = [0, 1, 0], man = [0, 0, 1]), with seeded random W_q, W_k, W_v of 3 × 3. "
            "The second sentence is the first one reversed: the same rows of X in another order."
        )
    )
    demo_out = attention_output(demo_X, *demo_params)  # (3, 3)
    flip_out = attention_output(permute_rows(demo_X, flip), *demo_params)  # (3, 3)
    side_by_side(
        dims,
        (_("Outputs for “dog bites man”"), _("(no positions)"), demo_out, DOG_BITES_MAN),
        (_("Outputs for “man bites dog”"), _("(no positions)"), flip_out, flipped),
    )
    st.markdown(
        _(
            "The row of “dog” is **{row}** in both sentences (and so are the rows of “bites” and “man”): the "
            "largest difference between a word's two outputs is **{gap}**. Attention cannot tell who bit whom.",
            row=full_vector(demo_out[0]),
            gap=gap_text(equivariance_agreement(demo_X, flip, *demo_params)),
        )
    )


def demo_example(seed: int):
    """The built-in demo's sentence X, its reversal, the reversed words and the seeded W_q, W_k, W_v."""
    n = len(DOG_BITES_MAN)
    demo_X = ac.one_hot_embeddings(DOG_BITES_MAN)  # (3, 3) one-hot rows for dog, bites, man
    flip = reversal_permutation(n)
    demo_W = random_projections(n, n, seed)
    return demo_X, flip, permute_tokens(DOG_BITES_MAN, flip), (demo_W.W_q, demo_W.W_k, demo_W.W_v)


def dog_bites_man_with_positions(seed: int) -> None:
    """The built-in demo with sinusoidal positions added: 'dog' now gets different outputs."""
    st.subheader(_("“dog bites man” + positions"))
    n = len(DOG_BITES_MAN)
    dims = dimension_labels(n)
    demo_X, flip, flipped, demo_params = demo_example(seed)
    st.markdown(
        _(
            "The same two sentences and the same W_q, W_k, W_v, now with the sinusoidal position vectors of the 3 "
            "slots added to the words (“Adding positions” shows how they are made)."
        )
    )
    demo_E = sinusoidal_encoding(n, n)
    demo_pos = attention_output(demo_X, *demo_params, positions=demo_E)
    flip_pos = attention_output(permute_rows(demo_X, flip), *demo_params, positions=demo_E)
    side_by_side(
        dims,
        (_("“dog bites man” + sinusoidal positions"), "", demo_pos, DOG_BITES_MAN),
        (_("“man bites dog” + sinusoidal positions"), "", flip_pos, flipped),
    )
    st.markdown(
        _(
            "With positions, “dog” as the first word gives {first} and as the last word {last}: the largest "
            "difference is now **{gap}**.",
            first=full_vector(demo_pos[0]),
            last=full_vector(flip_pos[2]),
            gap=gap_text(equivariance_agreement(demo_X, flip, *demo_params, positions=demo_E)),
        )
    )


def new_order(T: int, order_kind: str, seed: int) -> torch.Tensor:
    """The permutation of the sidebar's tokens: seeded shuffle, reversal or typed (reversal while invalid)."""
    if order_kind == "type an order":
        typed = inputs.text_input(
            _("New order: the positions 1 to {T} in any order", T=T),
            value=" ".join(str(i) for i in range(T, 0, -1)),
            key="positions_typed_order",
            max_chars=TYPED_ORDER_CHARACTERS,
            help=_("Positions count from 1: '3 1 2' puts the third word first, then the first, then the second."),
        )
        try:
            return parse_order(typed, T)
        except ValueError as error:
            st.error(
                _("{reason} Showing the reversed sentence until then.", reason=order_error(error, T)),
                icon=":material/error:",
            )
            return reversal_permutation(T)
    if order_kind == "reverse":
        return reversal_permutation(T)
    return shuffle_permutation(T, seed)


def shuffled_input(
    lab: LabInput, params: Params, perm: torch.Tensor, output: torch.Tensor, gap_none: Agreement
) -> None:
    """A(P X) beside P A(X): equal, so shuffling the words only shuffles the outputs."""
    labels = list(lab.labels)
    dims = dimension_labels(lab.d_model)
    st.subheader(_("Your input, shuffled"))
    shuffled_labels = permute_tokens(labels, perm)
    if lab.T == 1:
        st.info(
            _("A single token has only one order: type a longer sentence in the sidebar to shuffle it."),
            icon=":material/info:",
        )
    st.markdown(
        _(
            "Original: {original}  \nShuffled: {shuffled}",
            original=" · ".join(f"{i}: {label}" for i, label in enumerate(labels, 1)),
            shuffled=" · ".join(f"{i}: {label}" for i, label in enumerate(shuffled_labels, 1)),
        )
    )
    shuffled_output = attention_output(permute_rows(lab.X, perm), *params)  # (T, d_model)
    side_by_side(
        dims,
        (_("Attention of the shuffled input"), "A(P X)", shuffled_output, shuffled_labels),
        (_("The original outputs, shuffled"), "P A(X)", permute_rows(output, perm), shuffled_labels),
    )
    st.metric(
        _("Largest difference between the two tables"),
        format_number(gap_none.max_difference),
        help=verdict_help(),
    )
    st.caption(
        _(
            "Verdict: {verdict} (largest value {scale}).",
            verdict=_(gap_none.verdict),
            scale=format_number(gap_none.scale),
        )
    )
    check = output_check(lab.X, *params)
    st.caption(
        _(
            "Check: A(X) against PyTorch's torch.nn.functional.scaled_dot_product_attention on the same Q, K, V: "
            "largest difference {difference}, **{verdict}** ({tolerance}).",
            difference=format_number(check.max_difference),
            verdict=_(check.verdict),
            tolerance=tolerance_words(check.tolerance),
        )
    )


def query_moves(lab: LabInput, perm: torch.Tensor) -> int:
    """Where the query stands before and after the shuffle; returns its row in the shuffled sentence."""
    q = lab.query_index
    st.subheader(_("The query “{query}”, moved", query=lab.query_label))
    moved = int(inverse_permutation(perm)[q])
    st.markdown(
        _(
            "The query “{query}” stands at position {before} in the original and at position {after} in the "
            "shuffled sentence.",
            query=lab.query_label,
            before=q + 1,
            after=moved + 1,
        )
    )
    return moved


def moved_query(
    lab: LabInput, params: Params, perm: torch.Tensor, output: torch.Tensor, gap_none: Agreement, moved: int
) -> None:
    """The query's output before and after the shuffle."""
    q = lab.query_index
    shuffled_output = attention_output(permute_rows(lab.X, perm), *params)  # (T, d_model)
    st.markdown(
        _(
            "Its output is {before} in the original and {after} after the shuffle: {verdict}. Differences within "
            "the tolerance come from float32 sums taken in another order, not from the word order.",
            before=full_vector(output[q]),
            after=full_vector(shuffled_output[moved]),
            verdict=_(gap_none.verdict),
        )
    )


def repeated_words(lab: LabInput, params: Params, output: torch.Tensor) -> None:
    """Tokens with the same embedding get identical outputs, until positions are added."""
    labels = lab.labels
    groups = identical_rows(lab.X)
    st.subheader(_("A repeated word gets identical rows"))
    if not groups:
        st.info(
            _(
                "No two tokens of this input share an embedding. Type a sentence with a repeated word in the "
                "sidebar, for example “the cat sat on the mat”, with random or one-hot embeddings."
            ),
            icon=":material/info:",
        )
        return
    with_positions = attention_output(
        lab.X, *params, positions=sinusoidal_encoding(lab.T, lab.d_model, dtype=lab.X.dtype)
    )
    for group in groups:
        names = ", ".join(f"“{labels[i]}”" for i in group)
        st.markdown(
            _(
                "{names} have the same embedding, so without positions their outputs are identical (largest "
                "difference **{without}**); with sinusoidal positions added they differ by up to **{with_positions}**.",
                names=names,
                without=format_number(row_spread(output, group)),
                with_positions=format_number(row_spread(with_positions, group)),
            )
        )
        group_labels = [labels[i] for i in group]
        page.table(
            output[group],
            group_labels,
            dimension_labels(lab.d_model),
            alt_text=_("Outputs of {names} without positions", names=names),
        )


def encoding_formula() -> None:
    """Why positions are added, and the sinusoidal formula."""
    st.subheader(_("Adding positions"))
    st.markdown(
        _(
            """
The fix is to add to each embedding a vector that depends only on its position: X' = X + E. The original
transformer uses fixed **sinusoidal encodings**: each pair of columns is a sine and a cosine of the position
at its own frequency, from one turn every 2π tokens (first pair) down to very slow waves (last pairs), so every
position gets a distinct pattern and nearby positions get similar ones. GPT-style models instead **learn** a
table with one row per position (here a seeded random stand-in of {rows} rows; a learned table cannot handle
sentences longer than its row count).
""",
            rows=format(MAX_POSITIONS, ","),
        )
    )
    st.latex(
        r"E_{pos,\,2i} = \sin\!\Big(\frac{pos}{10000^{2i/d_\text{model}}}\Big), \qquad "
        r"E_{pos,\,2i+1} = \cos\!\Big(\frac{pos}{10000^{2i/d_\text{model}}}\Big)"
    )


def position_encodings(lab: LabInput, E_sin: torch.Tensor) -> None:
    """The sinusoidal encodings' table for this input."""
    T, d_model = lab.T, lab.d_model
    dims = dimension_labels(d_model)
    pos_labels = [f"{i}: {label}" for i, label in enumerate(lab.labels, 1)]
    st.markdown(
        _(
            "**Sinusoidal encodings for T = {T}, d_model = {d_model}** (rows: positions 1 to {T}; position p has "
            "*pos* = p − 1 in the formula)",
            T=T,
            d_model=d_model,
        )
    )
    page.matrix(
        E_sin,
        pos_labels,
        dims,
        kind="values",
        title=_("Sinusoidal position encodings E"),
        row_title=_("position"),
        col_title=_("dimension"),
        download="sinusoidal_positions.csv",
    )


def position_worked_out(lab: LabInput, E_sin: torch.Tensor) -> None:
    """The query's position: its angle and sin/cos column by column, and its first entry written out."""
    d_model, q = lab.d_model, lab.query_index
    st.subheader(_("Position {position}, worked out", position=q + 1))
    st.markdown(
        _(
            "Position {position} (the query “{query}”, pos = {pos}), column by column: the angle is "
            "{pos} / 10000^(2i/{d_model}), then sin for d1, d3, … and cos for d2, d4, …",
            position=q + 1,
            query=lab.query_label,
            pos=q,
            d_model=d_model,
        )
    )
    breakdown = position_breakdown(q, d_model).rename(columns={"angle": _("angle"), "PE value": _("PE value")})
    page.table(breakdown, alt_text=_("Sinusoidal encoding of position {position}, column by column", position=q + 1))
    first_angle = format_number(float(encoding_angles(q + 1, d_model)[q, 0]))
    st.caption(
        _(
            "For example position {position}, d1 (pos = {pos}, 2i = 0): sin({pos} / 10000⁰) = sin({angle}) = {value}.",
            position=q + 1,
            pos=q,
            angle=first_angle,
            value=format_number(float(E_sin[q, 0])),
        )
    )


def weights_with_positions(lab: LabInput, plain: ac.AttentionSteps, placed: ac.AttentionSteps) -> None:
    """The T × T weights of X and of X + E side by side, on one colour scale, each cell clickable."""
    shared = page.weights_domain(plain.weights, placed.weights)
    _grid, panel_px = charts.head_grid(2)
    st.markdown(
        _(
            "**What positions change in the weights.** Each query's weights before and after adding E (the same "
            "seeded W_q, W_k, W_v, no mask); the row of “{query}” is outlined. Click any cell for its softmax.",
            query=lab.query_label,
        )
    )
    st.caption(_("Colours: {legend}, shared by both panels.", legend=charts.weights_legend(shared)))
    panels = (
        (_("X (no positions)"), plain, "positions_weights_plain"),
        (_("X + E (sinusoidal positions)"), placed, "positions_weights_sin"),
    )
    for column, (title, steps, key) in zip(st.columns(2), panels, strict=True):
        with column:
            page.heatmap(
                steps.weights,
                lab.labels,
                lab.labels,
                kind="weights",
                title=title,
                key=key,
                explain=page.weights_of(steps),
                highlight_row=lab.query_label,
                domain=shared,
                compact=True,
                panel_px=panel_px,
            )


def learned_table(lab: LabInput, E_learned: torch.Tensor) -> None:
    """The learned-style position table (a seeded random stand-in), folded away."""
    pos_labels = [f"{i}: {label}" for i, label in enumerate(lab.labels, 1)]
    with st.expander(_("The learned-style position table (seeded random)"), icon=":material/table_rows:"):
        page.matrix(
            E_learned,
            pos_labels,
            dimension_labels(lab.d_model),
            kind="values",
            title=_("Learned-style position table"),
            row_title=_("position"),
            col_title=_("dimension"),
        )


def shuffle_with_positions(
    lab: LabInput,
    params: Params,
    perm: torch.Tensor,
    gap_none: Agreement,
    E_sin: torch.Tensor,
    E_learned: torch.Tensor,
) -> None:
    """The same shuffle with positions added: A(P X + E) differs from P A(X + E), so order now matters."""
    q = lab.query_index
    dims = dimension_labels(lab.d_model)
    shuffled_labels = permute_tokens(list(lab.labels), perm)
    st.markdown(_("**The same shuffle, now with positions added** (the positions stay with the slots, the words move)"))
    kind = inputs.radio(
        _("Positions to add"),
        list(KINDS),
        format_func=lambda option: _(KINDS[option]),
        horizontal=True,
        key="positions_kind",
    )
    E = E_sin if kind == "sinusoidal" else E_learned
    pos_output = attention_output(lab.X, *params, positions=E)  # (T, d_model)
    pos_shuffled = attention_output(permute_rows(lab.X, perm), *params, positions=E)  # (T, d_model)
    side_by_side(
        dims,
        (_("Attention of the shuffled input + E"), "A(P X + E)", pos_shuffled, shuffled_labels),
        (_("The original outputs with E, shuffled"), "P A(X + E)", permute_rows(pos_output, perm), shuffled_labels),
    )
    gaps = {
        N_("no positions"): gap_none,
        N_("sinusoidal positions"): equivariance_agreement(lab.X, perm, *params, positions=E_sin),
        N_("learned positions"): equivariance_agreement(lab.X, perm, *params, positions=E_learned),
    }
    for column, (name, gap) in zip(st.columns(3), gaps.items(), strict=True):
        column.metric(
            _("Largest difference, {name}", name=_(name)), format_number(gap.max_difference), help=verdict_help()
        )
        column.caption(_("different: the word order now matters") if not gap.close else _(gap.verdict))
    if lab.T > 1:
        moved = int(inverse_permutation(perm)[q])
        values = {
            "query": lab.query_label,
            "output": full_vector(pos_output[q]),
            "shuffled": full_vector(pos_shuffled[moved]),
            "position": q + 1,
            "moved": moved + 1,
        }
        st.markdown(
            _(
                "With positions, the query “{query}” gives {output} at position {position} and {shuffled} at "
                "position {moved}: its output now depends on where it stands.",
                **values,
            )
            if moved != q
            else _(
                "With positions, the query “{query}” gives {output} in the original and {shuffled} after the "
                "shuffle. It stays at position {position}, but the other words moved to other positions, so its "
                "output changes anyway.",
                **values,
            )
        )


render(inputs.current())
