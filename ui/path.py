"""A path through the lessons: previous / next links, a 'Try this' box and a three-line summary per lesson.

``LESSON_PATHS`` holds every lesson's experiments and summary in one place, so a page wires its
footer with one call: ``path.lesson_footer(__file__)``. An experiment's button sets widget values
in st.session_state from a callback (before the widgets are drawn), so one click sets it up.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import streamlit as st

from ui import inputs, lessons


@dataclass(frozen=True)
class Experiment:
    """One concrete thing to try: what to do, what to look for, and the widget values that set it up."""

    label: str  # the button text: what to do
    look_for: str  # what to watch once it is set up
    settings: tuple[tuple[str, object], ...] = field(default=())  # (session_state key, value); empty: do it by hand


@dataclass(frozen=True)
class LessonPath:
    """A lesson's 'Try this' experiments and its three-line 'What you just learned'."""

    try_this: tuple[Experiment, ...]
    learned: tuple[str, str, str]


def _preset(key: str) -> tuple[tuple[str, object], ...]:
    return (("example", key),)


LESSON_PATHS: dict[str, LessonPath] = {
    "app_pages/scores.py": LessonPath(
        (
            Experiment(
                "Switch to “Self Attention is good” (one-hot)",
                "One-hot vectors: a word scores 1 with itself and with its repeats, 0 with every other word.",
                _preset("one-hot"),
            ),
            Experiment(
                "Switch to “How self attention works in Transformer” (large scores)",
                "Scores well above 1: watch which word each query likes most.",
                _preset("transformer"),
            ),
            Experiment(
                "Pick another query token in the sidebar", "Its row of scores is its own column too: Ω is symmetric."
            ),
        ),
        (
            "A score is the dot product of a query with a key: multiply entry by entry, add up.",
            "With Q = K = X the score matrix is Ω = X Xᵀ, symmetric.",
            "Positive means the vectors point roughly the same way; the size also grows with their lengths.",
        ),
    ),
    "app_pages/softmax.py": LessonPath(
        (
            Experiment(
                "Temperature 0.1",
                "The largest score takes almost all the weight: softmax becomes nearly argmax.",
                (("softmax_temperature", 0.1),),
            ),
            Experiment(
                "Temperature 5",
                "Every weight moves towards 1/T: a high temperature flattens the row.",
                (("softmax_temperature", 5.0),),
            ),
            Experiment(
                "Switch to “How self attention works in Transformer”",
                "Its scores reach 6: compare dividing by the sum with softmax.",
                _preset("transformer"),
            ),
        ),
        (
            "Softmax: exp of each score divided by the row's sum of exps.",
            "Weights are positive and each row sums to 1; the order of the scores is kept.",
            "Subtracting the row maximum first changes nothing but avoids overflow.",
        ),
    ),
    "app_pages/context_vectors.py": LessonPath(
        (
            Experiment(
                "Switch to “I can't find the light switch”",
                "Similar embeddings give flat weights, so every context vector is close to the average.",
                _preset("light"),
            ),
            Experiment(
                "Switch to “Self Attention is good” (one-hot)",
                "Each context vector is a blend of one-hot rows: its entries are the weights themselves.",
                _preset("one-hot"),
            ),
        ),
        (
            "A context vector is the weighted sum of the value vectors.",
            "The weights of a query's row say how much of each token it mixes in.",
            "context = weights V: one matrix product for every token at once.",
        ),
    ),
    "app_pages/qkv_projections.py": LessonPath(
        (
            Experiment(
                "Another seed for W_q, W_k, W_v",
                "New projections, new scores: the same X, different roles.",
                (("qkv_seed", 7),),
            ),
            Experiment(
                "d_k = 1", "Each query and key is a single number: the scores become products.", (("qkv_d_k", 1),)
            ),
            Experiment(
                "Switch to “Your journey starts with one step”",
                "The tutorial's printed weights, recovered and recomputed.",
                _preset("journey"),
            ),
        ),
        (
            "Q = X W_q, K = X W_k, V = X W_v: three projections of the same input.",
            "Scores compare queries with keys, so they are no longer symmetric.",
            "W_q, W_k, W_v are what training learns: 3 d_model d_k numbers.",
        ),
    ),
    "app_pages/scaling.py": LessonPath(
        (
            Experiment(
                "Switch scaling off",
                "The weights sharpen: with large d_k one key takes everything.",
                (("scaling_scale", False),),
            ),
            Experiment("d_k = 64", "Unscaled scores spread like √64 = 8 times wider.", (("scaling_d_k", 64),)),
        ),
        (
            "A score adds d_k products, so its variance grows like d_k.",
            "Dividing by √d_k brings the spread back to about 1.",
            "Without it softmax saturates: one weight near 1, tiny gradients for the rest.",
        ),
    ),
    "app_pages/masking.py": LessonPath(
        (
            Experiment(
                "Sliding window mask",
                "Each token sees only its w − 1 predecessors.",
                (("masking_type", "sliding window"),),
            ),
            Experiment(
                "Padding mask",
                "Padded keys are hidden from every query: whole columns of zeros.",
                (("masking_type", "padding"),),
            ),
            Experiment(
                "Causal mask", "Row 1 attends only to itself: its single weight is 1.", (("masking_type", "causal"),)
            ),
        ),
        (
            "A mask says which keys each query may see (True = may attend).",
            "Blocked scores become −∞ before softmax, so their weights are exactly 0.",
            "Causal masks hide the future; padding masks hide filler tokens.",
        ),
    ),
    "app_pages/multi_head.py": LessonPath(
        (
            Experiment(
                "Causal mask in every head",
                "Each head keeps its own pattern, all of them lower-triangular.",
                (("multi_head_causal", True),),
            ),
            Experiment("Another weight seed", "New heads look at different things.", (("multi_head_seed", 3),)),
        ),
        (
            "h heads of size d_k = d_model / h run side by side on slices of W_q, W_k, W_v.",
            "Their outputs are concatenated and mixed by W_o.",
            "The parameter count, 4 d_model², does not depend on h.",
        ),
    ),
    "app_pages/positions.py": LessonPath(
        (
            Experiment(
                "Reverse the word order",
                "Without positions the outputs only move rows: nothing else changes.",
                (("positions_order", "reverse"),),
            ),
            Experiment(
                "Learned positions",
                "Adding positions breaks the symmetry: the order now matters.",
                (("positions_kind", "learned (seeded)"),),
            ),
        ),
        (
            "Attention alone is permutation-equivariant: shuffling words shuffles the outputs.",
            "Positional encodings are added to X so the same word differs by position.",
            "Sinusoidal encodings use sin and cos at geometric frequencies.",
        ),
    ),
    "app_pages/pipeline.py": LessonPath(
        (
            Experiment(
                "Causal mask",
                "The pipeline of a decoder: every row of weights ends at the diagonal.",
                (("pipeline_mask", "causal"),),
            ),
            Experiment(
                "Another seed", "Different W_q, W_k, W_v, W_o: still equal to PyTorch's.", (("pipeline_seed", 5),)
            ),
            Experiment(
                "Switch to “How self attention works in Transformer”",
                "The same pipeline on that tutorial's sentence.",
                _preset("transformer"),
            ),
        ),
        (
            "softmax(Q Kᵀ / √d_k + M) V, then W_o: the whole attention layer.",
            "Every step is a small function; together they equal PyTorch's implementation.",
            "The downloads and the code reproduce every number outside the lab.",
        ),
    ),
    "app_pages/trained_model.py": LessonPath(
        (
            Experiment(
                "Layer 1, head 3",
                "Open it: section 3 says on how many rows of your sentence it looks at the previous piece.",
                (("tm_layer", 1), ("tm_head", 3)),
            ),
            Experiment(
                "Layer 2, head 9",
                "Open it: section 3 says on how many rows of your sentence it looks at the next piece.",
                (("tm_layer", 2), ("tm_head", 9)),
            ),
            Experiment(
                "Layer 3, head 1",
                "Open it: section 3 says on how many rows of your sentence it parks its weight on [CLS].",
                (("tm_layer", 3), ("tm_head", 1)),
            ),
        ),
        (
            "A trained head is lessons 1-5 with learned W_q, W_k, W_v and a bias: the lab recomputes it exactly.",
            "Heads specialise: previous / next piece, [CLS] or [SEP] sinks, broad averaging, mixtures.",
            "A weight says where a head reads, not why the model decides: attention is not explanation.",
        ),
    ),
    "app_pages/training.py": LessonPath(
        (
            Experiment(
                "Reverse task, 2 heads",
                "Train it: the right pattern is an anti-diagonal, and one head learns it step by step.",
                (
                    ("training_task", "reverse"),
                    ("training_layers", 1),
                    ("training_heads", 2),
                    ("training_steps", 300),
                    ("training_learning_rate", 0.003),
                ),
            ),
            Experiment(
                "Learning rate 10",
                "Train it: the loss blows up within a few steps and the page says where it diverged.",
                (("training_learning_rate", 10.0),),
            ),
            Experiment(
                "Induction, 2 layers",
                "Train it: one layer alone cannot do it; the first layer learns a helper pattern for the second.",
                (
                    ("training_task", "induction"),
                    ("training_layers", 2),
                    ("training_heads", 2),
                    ("training_steps", 500),
                    ("training_learning_rate", 0.003),
                ),
            ),
        ),
        (
            "W_q, W_k, W_v start random; gradient descent changes them a little at every step.",
            "Untrained attention is near uniform over the keys the causal mask allows.",
            "Training moves the weight onto the key the task needs; a too large learning rate diverges.",
        ),
    ),
    "app_pages/generation.py": LessonPath(
        (
            Experiment(
                "Step 0",
                "The cache holds one K row and one V row: the first token can only attend to itself (weight 1).",
                (("generation_step", 0),),
            ),
            Experiment(
                "Block size 1",
                "Online softmax key by key: every larger score raises m and rescales the running sum.",
                (("generation_block", 1),),
            ),
            Experiment(
                "Switch to “How self attention works in Transformer”",
                "A longer sentence: watch the multiply-adds without the cache grow like T³.",
                _preset("transformer"),
            ),
        ),
        (
            "At each step only the new token's query attends, over the cached K and V of the tokens so far.",
            "The cache gives the same numbers as recomputing with a causal mask, with far fewer multiply-adds.",
            "Online softmax keeps a running max and sum, so a row never has to be held whole.",
        ),
    ),
}


def apply(settings: tuple[tuple[str, object], ...]) -> None:
    """Set the widget values of an experiment (runs as a button callback, before any widget is drawn)."""
    for key, value in settings:
        st.session_state[key] = value
        if key == "example":
            inputs.on_example_change()  # a new example starts at its own embeddings and query


def lesson_footer(path: str, try_this=None, learned: tuple[str, str, str] | None = None) -> None:
    """The end of a lesson: 'Try this' (one click each), 'What you just learned', previous / next links."""
    key = lessons.lesson_for(path).path
    defaults = LESSON_PATHS.get(key)
    experiments = try_this if try_this is not None else (defaults.try_this if defaults else ())
    summary = learned if learned is not None else (defaults.learned if defaults else None)
    if experiments:
        try_this_box(key, experiments)
    if summary:
        st.subheader("What you just learned", anchor="what-you-just-learned")
        st.markdown("\n".join(f"{n}. {line}" for n, line in enumerate(summary, 1)))
    previous_next(key)


def try_this_box(key: str, experiments) -> None:
    """Two or three experiments, each with a button that sets it up (or a note to do it by hand)."""
    with st.container(border=True):
        st.markdown("**Try this**")
        for n, experiment in enumerate(experiments):
            left, right = st.columns([3, 1], vertical_alignment="center")
            left.markdown(f"**{experiment.label}.** {experiment.look_for}")
            if experiment.settings:
                right.button(
                    "Set it up",
                    key=f"try:{key}:{n}",
                    on_click=apply,
                    args=(experiment.settings,),
                    icon=":material/science:",
                )
            else:
                right.caption("Do it in the sidebar.")


def previous_next(key: str) -> None:
    """Links to the previous and the next page of the registry."""
    previous, following = lessons.neighbours(key)
    left, right = st.columns(2)
    if previous is not None:
        left.page_link(previous.path, label=f"Previous: {previous.label}", icon=":material/arrow_back:")
    if following is not None:
        right.page_link(following.path, label=f"Next: {following.label}", icon=":material/arrow_forward:")
