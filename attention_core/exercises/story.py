"""The 15-minute path's questions: one per stop, asked before the stop shows its result (predict, then reveal).

Each stop passes what it shows as the material: the toy stops the ``Story`` (with ``ExerciseInput.material_key``
naming the stop), the real-model stops a ``TrainedStop`` or a ``NextStop``. A question reads only the operands its
stop shows before the answer (``uses``); what answers it (``reveals``, or a numeric answer itself) is drawn after.
"""

from __future__ import annotations

import math
import random

import torch

from attention_core.exercises.base import (
    SHOWN_HALF_UNIT,
    Exercise,
    ExerciseInput,
    asked,
    dot_slack,
    fmt,
    other_key,
    pick_options,
    products_text,
    quote,
    shown_numbers,
    shown_options,
    softmax_slack,
    tolerance,
)
from attention_core.i18n import N_, _
from attention_core.numbers import quotient_text, sum_text
from attention_core.story import D_K, NextStop, Story, TrainedStop, top_word_piece

ORDER_OPTIONS = (  # English values (graded); shown through _()
    N_("Exactly the same numbers, only in another row"),
    N_("Slightly different numbers"),
    N_("Completely different numbers"),
)


def story_questions(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    """The question of the stop named by ``material_key[0]`` (the toy stops), or of a real-model stop."""
    m = inp.material
    if isinstance(m, TrainedStop):
        return [trained_question(m, rng)]
    if isinstance(m, NextStop):
        return [next_token_question(m)]
    if not isinstance(m, Story):
        return []
    L = inp.labels
    return [make(m, L, rng) for make in TOY_QUESTIONS]


def dot_question(place: str, what: str, hint: str, a: torch.Tensor, b: torch.Tensor, value: float) -> Exercise:
    """A number the learner works out as a · b from two rows of numbers on the stop (its operands)."""
    within = tolerance(dot_slack(a, b))
    return Exercise(
        id=place,
        kind="numeric",
        prompt=asked(what, within),
        answer=value,
        hint=hint,
        solution=f"{products_text(a.tolist(), b.tolist(), value)}.",
        tolerance=within,
        uses=shown_numbers(a, b),
    )


def q_entry(s: Story, L, rng: random.Random) -> Exercise:
    """Stop 2: one entry of the query's q, from its row of X and a column of W_q."""
    i, d = s.query, rng.randrange(D_K)
    return dot_question(
        "q-entry",
        _(
            "entry q{d} of the query of {query}: the row {query} of X times column {d} of W_q.",
            d=d + 1,
            query=quote(L[i]),
        ),
        _("Multiply the two lists of numbers entry by entry and add the products."),
        s.X[i],  # (d_model,)
        s.weights_.W_q[:, d],  # (d_model,)
        float(s.Q[i, d]),
    )


def score(s: Story, L, rng: random.Random) -> Exercise:
    """Stop 3: one score q · k from the query's q and a key's k (two products)."""
    i = s.query
    j = other_key(rng, s.T, i)
    value = float(s.scores[i, j])
    within = tolerance(dot_slack(s.Q[i], s.K[j]))
    return Exercise(
        id="score",
        kind="numeric",
        prompt=asked(
            _("the score of the query {query} with the key {key}: q · k.", query=quote(L[i]), key=quote(L[j])), within
        ),
        answer=value,
        hint=_(
            "q is the row {query} of Q, k the row {key} of K: multiply entry by entry, add.",
            query=quote(L[i]),
            key=quote(L[j]),
        ),
        solution=f"{products_text(s.Q[i].tolist(), s.K[j].tolist(), value)}.",
        tolerance=within,
        uses=shown_numbers(s.Q[i], s.K[j]),
        reveals=shown_numbers(s.scores[i, j]),
    )


def scaled(s: Story, L, rng: random.Random) -> Exercise:
    """Stop 4: one score divided by √d_k."""
    i = s.query
    j = other_key(rng, s.T, i)
    value = float(s.scaled[i, j])
    within = tolerance(SHOWN_HALF_UNIT / math.sqrt(D_K))
    return Exercise(
        id="scaled",
        kind="numeric",
        prompt=asked(
            _(
                "Divide the score of {query} with {key} by √d_k = √{d_k}: what does softmax receive?",
                query=quote(L[i]),
                key=quote(L[j]),
                d_k=D_K,
            ),
            within,
        ),
        answer=value,
        hint=f"√{D_K} ≈ {fmt(math.sqrt(D_K))}.",
        solution=f"{quotient_text(float(s.scores[i, j]), f'√{D_K}', value, bold=False)}.",
        tolerance=within,
        uses=shown_numbers(s.scores[i, j]),
    )


def weight(s: Story, L, rng: random.Random) -> Exercise:
    """Stop 5: one softmax weight from the row's exponentials."""
    i = s.query
    j = rng.randrange(s.T)
    value = float(s.attn[i, j])
    total = float(s.exps.sum())
    within = tolerance(softmax_slack(value) + s.T * SHOWN_HALF_UNIT * value / max(total, 1e-12))
    return Exercise(
        id="weight",
        kind="numeric",
        prompt=asked(
            _(
                "Softmax divides each exponential by their sum. What weight does the query {query} give the key {key}?",
                query=quote(L[i]),
                key=quote(L[j]),
            ),
            within,
        ),
        answer=value,
        hint=_("Add the row's exponentials, then divide the one of {key} by that sum.", key=quote(L[j])),
        solution=_(
            "Sum: {total}; {weight}.",
            total=sum_text(s.exps.tolist(), total, bold=False),
            weight=quotient_text(float(s.exps[j]), fmt(total), value, bold=False),
        ),
        tolerance=within,
        uses=shown_numbers(s.exps),
        reveals=shown_numbers(s.attn[i, j]),
    )


def masked_weight(s: Story, L, rng: random.Random) -> Exercise:
    """Stop 6: a weight under the causal mask, from the unmasked row: the visible weights, renormalized."""
    i = s.mask_query
    j = rng.randrange(i + 1)
    row = s.attn[i]  # (T,)
    visible = row[: i + 1]
    value = float(s.masked_attn[i, j])
    within = tolerance((i + 2) * SHOWN_HALF_UNIT * max(value, 1.0) / max(float(visible.sum()), 1e-12))
    return Exercise(
        id="masked-weight",
        kind="numeric",
        prompt=asked(
            _(
                "With the causal mask, {query} may look only at itself and the tokens before it. Its blocked weights "
                "are gone and the rest are shared out again so they sum to 1. What weight does {key} get now?",
                query=quote(L[i]),
                key=quote(L[j]),
            ),
            within,
        ),
        answer=value,
        hint=_(
            "Add the weights of the tokens it may still see, then divide the weight of {key} by that sum.",
            key=quote(L[j]),
        ),
        solution=_(
            "Visible weights: {total}; {weight}.",
            total=sum_text(visible.tolist(), float(visible.sum()), bold=False),
            weight=quotient_text(float(row[j]), fmt(float(visible.sum())), value, bold=False),
        ),
        tolerance=within,
        uses=shown_numbers(visible),
        reveals=shown_numbers(s.masked_attn[i, j]),
    )


def context_entry(s: Story, L, rng: random.Random) -> Exercise:
    """Stop 7: one entry of the query's context vector: the weights times a column of V."""
    i, d = s.query, rng.randrange(D_K)
    return dot_question(
        "context",
        _(
            "entry {d} of the context vector of {query}: each token's weight times entry {d} of its value vector, "
            "added up.",
            d=d + 1,
            query=quote(L[i]),
        ),
        _("Pair the weights of the row {query} with column v{d} of V, token by token.", query=quote(L[i]), d=d + 1),
        s.attn[i],  # (T,)
        s.V[:, d],  # (T,)
        float(s.context[i, d]),
    )


def output_entry(s: Story, L, rng: random.Random) -> Exercise:
    """Stop 8: one entry of the block's output: the concatenated heads times a column of W_o."""
    i, d = s.query, rng.randrange(s.d_model)
    return dot_question(
        "output",
        _(
            "entry d{d} of the output of {query}: its concatenated row [head 1 | head 2] times column d{d} of W_o.",
            d=d + 1,
            query=quote(L[i]),
        ),
        _("{count} products: the concatenated row entry by entry with the column of W_o.", count=s.concat.shape[1]),
        s.concat[i],  # (h d_k,)
        s.weights_.W_o[:, d],  # (h d_k,)
        float(s.output[i, d]),
    )


def reordered(s: Story, L, rng: random.Random) -> Exercise:
    """Stop 9: what reversing the sentence does to a token's output (a choice)."""
    i = s.query
    return Exercise(
        id="order",
        kind="choice",
        prompt=_(
            "The same block runs on the sentence in reverse order. What happens to the output of {query}?",
            query=quote(L[i]),
        ),
        answer=ORDER_OPTIONS[0],
        hint=_("Every score compares two vectors; nothing in Q Kᵀ, softmax or the weighted sum reads a position."),
        solution=_(
            "Attention mixes a set of vectors: reorder them and each output moves with its token, unchanged. The "
            "block cannot tell “dog bites man” from “man bites dog” unless positions are added to X."
        ),
        options=ORDER_OPTIONS,
        option_labels=shown_options(ORDER_OPTIONS),
        reveals=shown_numbers(s.reordered_output),
    )


def one_line_count(s: Story, L, rng: random.Random) -> Exercise:
    """Stop 10: how many numbers softmax(Q Kᵀ / √d_k) V returns for this sentence."""
    count = s.T * D_K
    return Exercise(
        id="one-line",
        kind="numeric",
        prompt=_(
            "softmax(Q Kᵀ / √d_k) V for the {T} tokens of this sentence: how many numbers does it return (head 1, "
            "d_k = {d_k})?",
            T=s.T,
            d_k=D_K,
        ),
        answer=float(count),
        hint=_("softmax(Q Kᵀ / √d_k) is T × T; times V (T × d_k) gives T rows of d_k numbers."),
        solution=_(
            "(T × T) @ (T × d_k) = {T} × {d_k} = {count} numbers: one context vector per token.",
            T=s.T,
            d_k=D_K,
            count=count,
        ),
        tolerance=0.0,
        reveals=shown_numbers(s.one_line),
    )


TOY_QUESTIONS = (q_entry, score, scaled, weight, masked_weight, context_entry, output_entry, reordered, one_line_count)
TOY_PLACES = tuple(
    name for name in ("q-entry", "score", "scaled", "weight", "masked-weight", "context", "output", "order", "one-line")
)


def trained_question(m: TrainedStop, rng: random.Random) -> Exercise:
    """The trained-model stop: predict which word piece the chosen head makes the query look at most."""
    top = top_word_piece(m.row, m.query)
    candidates = [j for j in range(1, len(m.pieces) - 1) if j != m.query] or [m.query]
    labels = [f"{m.pieces[j]} (piece {j + 1})" for j in range(len(m.pieces))]  # the values (graded, hashed)
    shown = {label: _("{piece} (piece {n})", piece=m.pieces[j], n=j + 1) for j, label in enumerate(labels)}
    options = pick_options([labels[j] for j in candidates], candidates.index(top) if top in candidates else 0, rng)
    return Exercise(
        id="trained",
        kind="choice",
        prompt=_(
            "Predict: in layer {layer}, head {head}, which piece does {query} give the most weight, apart from "
            "itself, [CLS] and [SEP]?",
            layer=m.layer + 1,
            head=m.head + 1,
            query=quote(m.pieces[m.query]),
        ),
        answer=labels[top],
        hint=_(
            "A trained head often links words that belong together: a word and its neighbour, or a verb and its object."
        ),
        solution=_(
            "{piece} gets {weight} of the weight of {query}.",
            piece=quote(m.pieces[top]),
            weight=fmt(float(m.row[top])),
            query=quote(m.pieces[m.query]),
        ),
        options=options,
        option_labels=tuple(shown[option] for option in options),
        reveals=shown_numbers(m.row),
    )


def piece_label(piece: str) -> str:
    """A vocabulary piece in quotes, with its leading space kept and a newline or tab written visibly."""
    return quote(piece.replace("\n", "\\n").replace("\t", "\\t"))


def next_token_question(m: NextStop) -> Exercise:
    """The GPT-style stop: predict which token SmolLM2 ranks first."""
    options = tuple(sorted(piece_label(piece) for piece in m.pieces))
    return Exercise(
        id="next-token",
        kind="choice",
        prompt=_(
            "Predict: which of these does SmolLM2 rank first as the next token after {prompt}?",
            prompt=quote(m.prompt),
        ),
        answer=piece_label(m.pieces[0]),
        hint=_("The model reads the last position's context vector, after 30 layers of attention."),
        solution=_(
            "{piece}, with probability {probability}.",
            piece=piece_label(m.pieces[0]),
            probability=fmt(m.probabilities[0]),
        ),
        options=options,
        reveals=shown_numbers(m.probabilities),
    )
