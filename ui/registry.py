"""The one lesson registry, keyed by lesson name: every page of the lab, in order, with what it needs.

Each entry names its page (``app_pages/<name>.py``), its number, title, icon and summary, its
"Try this" experiments and three-line "What you just learned", and its exercise generator, named
from the module that defines it (a new lesson's beside its core function: ``exercises=topic.topic_exercises``; no
re-export module to edit). ``lab.py`` builds the navigation from it, the overview lists it, each page takes its
title, footer and exercises from it, and the tests read it. Adding a lesson is one entry here, its page, its core
function with its exercise generator, and its test (CONTRIBUTING.md, "Add a lesson").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePath

from attention_core import smollm2_lesson
from attention_core.exercises import block, models, steps, story
from attention_core.exercises.base import Generator
from attention_core.i18n import N_, _


@dataclass(frozen=True)
class Experiment:
    """One concrete thing to try: what to do, what to look for, and the widget values that set it up."""

    label: str  # the button text: what to do
    look_for: str  # what to watch once it is set up
    settings: tuple[tuple[str, object], ...] = field(default=())  # (session_state key, value); empty: do it by hand
    step: str = ""  # the name of the lesson's step that holds those widgets: its button opens that step


@dataclass(frozen=True)
class Lesson:
    """One page of the lab."""

    name: str  # the page is app_pages/<name>.py, served at /<name>
    number: int | None  # lessons are numbered; the overview and extra pages are not
    title: str  # as in the navigation, without the number
    icon: str  # a :material/...: icon
    summary: str  # one line: what the learner does there
    teaches: str  # one line: the idea they leave with
    section: str  # navigation group
    default: bool = False  # the page the app opens on (only the overview)
    try_this: tuple[Experiment, ...] = ()  # two or three experiments, each set up by one click
    learned: tuple[str, ...] = ()  # "What you just learned": three lines
    exercises: Generator | None = None  # "Check yourself": made from what the page shows

    @property
    def path(self) -> str:
        """The page script, relative to the repository root (st.Page and st.page_link take it)."""
        return f"app_pages/{self.name}.py"

    @property
    def label(self) -> str:
        """'3. Context vectors' for a lesson, 'Overview' for an unnumbered page, in the learner's language."""
        if self.number is None:
            return _(self.title)
        return _("{number}. {title}", number=self.number, title=_(self.title))


def _preset(key: str) -> tuple[tuple[str, object], ...]:
    return (("example", key),)


START = N_("Start")
STEPS = N_("Self-attention, step by step")
BLOCK = N_("Towards a transformer block")
BEYOND = N_("Beyond one step")
PRACTICE = N_("Practice")

LESSONS: tuple[Lesson, ...] = (
    Lesson(
        name="overview",
        number=None,
        title=N_("Overview"),
        icon=":material/home:",
        summary=N_("What self-attention is, the lessons, how to use the lab, a glossary."),
        teaches=N_("Where each step sits in the pipeline."),
        section=START,
        default=True,
    ),
    Lesson(
        name="path",
        number=None,
        title=N_("The 15-minute path"),
        icon=":material/route:",
        summary=N_("One worked example from Q, K, V to a trained model's next token, a question at every stop."),
        teaches=N_("softmax(Q Kᵀ / √d_k) V, one step at a time, on one set of numbers."),
        section=START,
        learned=(
            N_("Q, K and V are the same X through three learned matrices; scores are q · k, divided by √d_k."),
            N_("Softmax turns each row into weights that sum to 1; a mask blocks keys; the output blends the values."),
            N_("Heads run side by side and W_o mixes them; trained models do exactly this, with learned weights."),
        ),
        exercises=story.story_questions,
    ),
    Lesson(
        name="scores",
        number=1,
        title=N_("Attention scores"),
        icon=":material/grid_on:",
        summary=N_("How similar is each word to the query? Dot products, term by term."),
        teaches=N_("A score is the dot product of a query with a key: Ω = X Xᵀ."),
        section=STEPS,
        try_this=(
            Experiment(
                N_("Switch to “Self Attention is good” (one-hot)"),
                N_("One-hot vectors: a word scores 1 with itself and with its repeats, 0 with every other word."),
                _preset("one-hot"),
            ),
            Experiment(
                N_("Switch to “How self attention works in Transformer” (large scores)"),
                N_("Scores well above 1: watch which word each query likes most."),
                _preset("transformer"),
            ),
            Experiment(
                N_("Pick another query token in the sidebar"),
                N_("Its row of scores is its own column too: Ω is symmetric."),
            ),
        ),
        learned=(
            N_("A score is the dot product of a query with a key: multiply entry by entry, add up."),
            N_("With Q = K = X the score matrix is Ω = X Xᵀ, symmetric."),
            N_("Positive means the vectors point roughly the same way; the size also grows with their lengths."),
        ),
        exercises=steps.scores_exercises,
    ),
    Lesson(
        name="softmax",
        number=2,
        title=N_("Softmax"),
        icon=":material/functions:",
        summary=N_(
            "Turning scores into weights that are non-negative and sum to 1, and why dividing by the sum fails."
        ),
        teaches=N_("Softmax along each row turns scores into attention weights."),
        section=STEPS,
        try_this=(
            Experiment(
                N_("Temperature 0.1"),
                N_("The largest score takes almost all the weight: softmax becomes nearly argmax."),
                (("softmax_temperature", 0.1),),
                step="Temperature",
            ),
            Experiment(
                N_("Temperature 5"),
                N_("Every weight moves towards 1/T: a high temperature flattens the row."),
                (("softmax_temperature", 5.0),),
                step="Temperature",
            ),
            Experiment(
                N_("Switch to “How self attention works in Transformer”"),
                N_("Its scores reach 6: compare dividing by the sum with softmax."),
                _preset("transformer"),
            ),
        ),
        learned=(
            N_("Softmax: exp of each score divided by the row's sum of exps."),
            N_("Weights are positive and each row sums to 1; the order of the scores is kept."),
            N_("Subtracting the row maximum first changes nothing but avoids overflow."),
        ),
        exercises=steps.softmax_exercises,
    ),
    Lesson(
        name="context_vectors",
        number=3,
        title=N_("Context vectors"),
        icon=":material/merge:",
        summary=N_("Each output is a weighted blend of the inputs."),
        teaches=N_("A context vector is the weighted sum of the values."),
        section=STEPS,
        try_this=(
            Experiment(
                N_("Switch to “I can't find the light switch”"),
                N_("Similar embeddings give flat weights, so every context vector is close to the average."),
                _preset("light"),
            ),
            Experiment(
                N_("Switch to “Self Attention is good” (one-hot)"),
                N_("Each context vector is a blend of one-hot rows: its entries are the weights themselves."),
                _preset("one-hot"),
            ),
        ),
        learned=(
            N_("A context vector is the weighted sum of the value vectors."),
            N_("The weights of a query's row say how much of each token it mixes in."),
            N_("context = weights V: one matrix product for every token at once."),
        ),
        exercises=steps.context_exercises,
    ),
    Lesson(
        name="qkv_projections",
        number=4,
        title=N_("Queries, keys, values"),
        icon=":material/key:",
        summary=N_("Trainable matrices W_q, W_k, W_v give each word three roles."),
        teaches=N_("Q = X W_q, K = X W_k, V = X W_v: three projections of the same input."),
        section=STEPS,
        try_this=(
            Experiment(
                N_("Another seed for W_q, W_k, W_v"),
                N_("New projections, new scores: the same X, different roles."),
                (("qkv_seed", 7),),
                step="W_q, W_k, W_v",
            ),
            Experiment(
                N_("d_k = 1"),
                N_("Each query and key is a single number: the scores become products."),
                (("qkv_d_k", 1),),
                step="W_q, W_k, W_v",
            ),
            Experiment(
                N_("Switch to “Your journey starts with one step”"),
                N_("The tutorial's printed weights, recovered and recomputed."),
                _preset("journey"),
            ),
        ),
        learned=(
            N_("Q = X W_q, K = X W_k, V = X W_v: three projections of the same input."),
            N_("Scores compare queries with keys, so they are no longer symmetric."),
            N_("W_q, W_k, W_v are what training learns: 3 d_model d_k numbers."),
        ),
        exercises=steps.qkv_exercises,
    ),
    Lesson(
        name="scaling",
        number=5,
        title=N_("Scaling by √d_k"),
        icon=":material/straighten:",
        summary=N_("Why the scores are divided by √d_k before softmax."),
        teaches=N_("Dividing by √d_k stops the scores' spread growing with d_k."),
        section=STEPS,
        try_this=(
            Experiment(
                N_("Switch scaling off"),
                N_("The weights sharpen: with large d_k one key takes everything."),
                (("scaling_scale", False),),
                step="Your input",
            ),
            Experiment(
                N_("d_k = 64"),
                N_("Unscaled scores spread like √64 = 8 times wider."),
                (("scaling_d_k", 64),),
                step="Your input",
            ),
        ),
        learned=(
            N_("A score adds d_k products, so its variance grows like d_k."),
            N_("Dividing by √d_k brings the spread back to about 1."),
            N_("Without it softmax saturates: one weight near 1, tiny gradients for the rest."),
        ),
        exercises=steps.scaling_exercises,
    ),
    Lesson(
        name="masking",
        number=6,
        title=N_("Masking"),
        icon=":material/visibility_off:",
        summary=N_("Hiding the future (causal), padding and far-away tokens."),
        teaches=N_("Blocked scores become −∞, so their weights are exactly 0."),
        section=BLOCK,
        try_this=(
            Experiment(
                N_("Sliding window mask"),
                N_("Each token sees only its w − 1 predecessors."),
                (("masking_type", "sliding window"),),
                step="Choose a mask",
            ),
            Experiment(
                N_("Padding mask"),
                N_("Padded keys are hidden from every query: whole columns of zeros."),
                (("masking_type", "padding"),),
                step="Choose a mask",
            ),
            Experiment(
                N_("Causal mask"),
                N_("Row 1 attends only to itself: its single weight is 1."),
                (("masking_type", "causal"),),
                step="Choose a mask",
            ),
        ),
        learned=(
            N_("A mask says which keys each query may see (True = may attend)."),
            N_("Blocked scores become −∞ before softmax, so their weights are exactly 0."),
            N_("Causal masks hide the future; padding masks hide filler tokens."),
        ),
        exercises=block.masking_exercises,
    ),
    Lesson(
        name="multi_head",
        number=7,
        title=N_("Multi-head attention"),
        icon=":material/view_column:",
        summary=N_("Several small heads side by side, checked against PyTorch."),
        teaches=N_("h heads of size d_model / h, concatenated and mixed by W_o."),
        section=BLOCK,
        try_this=(
            Experiment(
                N_("Causal mask in every head"),
                N_("Each head keeps its own pattern, all of them lower-triangular."),
                (("multi_head_causal", True),),
            ),
            Experiment(N_("Another weight seed"), N_("New heads look at different things."), (("multi_head_seed", 3),)),
        ),
        learned=(
            N_("h heads of size d_k = d_model / h run side by side on slices of W_q, W_k, W_v."),
            N_("Their outputs are concatenated and mixed by W_o."),
            N_("The parameter count, 4 d_model², does not depend on h."),
        ),
        exercises=block.multi_head_exercises,
    ),
    Lesson(
        name="positions",
        number=8,
        title=N_("Word order and positions"),
        icon=":material/format_list_numbered:",
        summary=N_("Attention alone does not know word order; positional encodings fix that."),
        teaches=N_("Without positions, attention is permutation-equivariant."),
        section=BLOCK,
        try_this=(
            Experiment(
                N_("Reverse the word order"),
                N_("Without positions the outputs only move rows: nothing else changes."),
                (("positions_order", "reverse"),),
            ),
            Experiment(
                N_("Learned positions"),
                N_("Adding positions breaks the symmetry: the order now matters."),
                (("positions_kind", "learned (seeded)"),),
            ),
        ),
        learned=(
            N_("Attention alone is permutation-equivariant: shuffling words shuffles the outputs."),
            N_("Positional encodings are added to X so the same word differs by position."),
            N_("Sinusoidal encodings use sin and cos at geometric frequencies."),
        ),
        exercises=block.positions_exercises,
    ),
    Lesson(
        name="pipeline",
        number=9,
        title=N_("The full pipeline"),
        icon=":material/account_tree:",
        summary=N_("The whole block on one page, with downloads and code to reproduce it."),
        teaches=N_("softmax(Q Kᵀ / √d_k + M) V, end to end, equal to PyTorch's."),
        section=BLOCK,
        try_this=(
            Experiment(
                N_("Causal mask"),
                N_("The pipeline of a decoder: every row of weights ends at the diagonal."),
                (("pipeline_mask", "causal"),),
            ),
            Experiment(
                N_("Another seed"),
                N_("Different W_q, W_k, W_v, W_o: still equal to PyTorch's."),
                (("pipeline_seed", 5),),
            ),
            Experiment(
                N_("Switch to “How self attention works in Transformer”"),
                N_("The same pipeline on that tutorial's sentence."),
                _preset("transformer"),
            ),
        ),
        learned=(
            N_("softmax(Q Kᵀ / √d_k + M) V, then W_o: the whole attention layer."),
            N_("Every step is a small function; together they equal PyTorch's implementation."),
            N_("The downloads and the code reproduce every number outside the lab."),
        ),
        exercises=block.pipeline_exercises,
    ),
    Lesson(
        name="trained_model",
        number=10,
        title=N_("Inside a trained model"),
        icon=":material/psychology:",
        summary=N_("Every head of a real trained model (all-MiniLM-L6-v2) on your sentence, recomputed by hand."),
        teaches=N_(
            "Trained heads specialise (previous word, [CLS], [SEP], broad); the same formula computes them all."
        ),
        section=BEYOND,
        try_this=(
            Experiment(
                N_("Layer 1, head 3"),
                N_("Open it: its step says on how many rows of your sentence it looks at the previous piece."),
                (("tm_layer", 1), ("tm_head", 3)),
                step="All 72 heads",
            ),
            Experiment(
                N_("Layer 2, head 9"),
                N_("Open it: its step says on how many rows of your sentence it looks at the next piece."),
                (("tm_layer", 2), ("tm_head", 9)),
                step="All 72 heads",
            ),
            Experiment(
                N_("Layer 3, head 1"),
                N_("Open it: its step says on how many rows of your sentence it parks its weight on [CLS]."),
                (("tm_layer", 3), ("tm_head", 1)),
                step="All 72 heads",
            ),
        ),
        learned=(
            N_("A trained head is lessons 1-5 with learned W_q, W_k, W_v and a bias: the lab recomputes it exactly."),
            N_("Heads specialise: previous / next piece, [CLS] or [SEP] sinks, broad averaging, mixtures."),
            N_("A weight says where a head reads, not why the model decides: attention is not explanation."),
        ),
        exercises=models.trained_exercises,
    ),
    Lesson(
        name="smollm2",
        number=11,
        title=N_("Inside a GPT-style model"),
        icon=":material/smart_toy:",
        summary=N_("SmolLM2-135M on your prompt: the next token, all 270 heads, one head by hand with RoPE and GQA."),
        teaches=N_(
            "A modern causal model is lessons 1-7 plus RoPE and shared key/value heads; its heads sink, copy "
            "the previous token, or continue a repeated pattern."
        ),
        section=BEYOND,
        try_this=(
            Experiment(
                N_("Temperature 0.3"),
                N_("Step “Next token”: the most likely piece takes almost all the probability."),
                (("smol_temperature", 0.3),),
            ),
            Experiment(
                N_("Layer 1, head 1"),
                N_("Step “Pick a head”: then open “One head by hand” and check the verdicts."),
                (("smol_layer", 1), ("smol_head", 1)),
            ),
            Experiment(
                N_("A repeated prompt"),
                N_("Step “Patterns”: the induction column names the heads that continue a pattern."),
                (("smol_prompt", "one two three four five one two three four five"),),
            ),
        ),
        learned=(
            N_("A GPT-style head is causal attention with RoPE-turned q and k; the lab recomputes it exactly."),
            N_("Grouped-query attention shares each key/value head among three query heads: a third of the cache."),
            N_("Heads show measurable habits on your text: sinks, previous token, induction on repeats."),
        ),
        exercises=smollm2_lesson.smollm2_exercises,
    ),
    Lesson(
        name="training",
        number=12,
        title=N_("How attention is learned"),
        icon=":material/model_training:",
        summary=N_("Train a tiny transformer live on a toy task and watch its attention pattern form."),
        teaches=N_("Gradient descent shapes W_q and W_k until each query finds the key the task needs."),
        section=BEYOND,
        try_this=(
            Experiment(
                N_("Reverse task, 2 heads"),
                N_("Train it: the right pattern is an anti-diagonal, and one head learns it step by step."),
                (
                    ("training_task", "reverse"),
                    ("training_layers", 1),
                    ("training_heads", 2),
                    ("training_steps", 300),
                    ("training_learning_rate", 0.003),
                ),
            ),
            Experiment(
                N_("Learning rate 10"),
                N_("Train it: the loss blows up within a few steps and the page says where it diverged."),
                (("training_learning_rate", 10.0),),
            ),
            Experiment(
                N_("Induction, 2 layers"),
                N_("Train it: one layer alone cannot do it; the first layer learns a helper pattern for the second."),
                (
                    ("training_task", "induction"),
                    ("training_layers", 2),
                    ("training_heads", 2),
                    ("training_steps", 500),
                    ("training_learning_rate", 0.003),
                ),
            ),
        ),
        learned=(
            N_("W_q, W_k, W_v start random; gradient descent changes them a little at every step."),
            N_("Untrained attention is near uniform over the keys the causal mask allows."),
            N_("Training moves the weight onto the key the task needs; a too large learning rate diverges."),
        ),
        exercises=models.training_exercises,
    ),
    Lesson(
        name="generation",
        number=13,
        title=N_("Generation, step by step"),
        icon=":material/keyboard_double_arrow_right:",
        summary=N_("Token-by-token decoding with a KV cache, the T² cost of attention, and online softmax."),
        teaches=N_("A cache turns each step into one query row; attention still costs T² cells in all."),
        section=BEYOND,
        try_this=(
            Experiment(
                N_("Step 1"),
                N_("The cache holds one K row and one V row: the first token can only attend to itself (weight 1)."),
                (("generation_step", 1),),
                step="The KV cache",
            ),
            Experiment(
                N_("Block size 1"),
                N_("Online softmax key by key: every larger score raises m and rescales the running sum."),
                (("generation_block", 1),),
                step="Online softmax",
            ),
            Experiment(
                N_("Switch to “How self attention works in Transformer”"),
                N_("A longer sentence: watch the multiply-adds without the cache grow like T³."),
                _preset("transformer"),
            ),
        ),
        learned=(
            N_("At each step only the new token's query attends, over the cached K and V of the tokens so far."),
            N_("The cache gives the same numbers as recomputing with a causal mask, with far fewer multiply-adds."),
            N_("Online softmax keeps a running max and sum, so a row never has to be held whole."),
        ),
        exercises=models.generation_exercises,
    ),
    Lesson(
        name="mistakes",
        number=None,
        title=N_("Mistakes museum"),
        icon=":material/bug_report:",
        summary=N_("Every classic attention bug: spot the wrong line, then see what it does to your numbers."),
        teaches=N_(
            "Each bug leaves a fingerprint in the numbers: rows that do not sum to 1, weights on the future, NaN."
        ),
        section=PRACTICE,
    ),
)

BY_NAME: dict[str, Lesson] = {lesson.name: lesson for lesson in LESSONS}


def lesson_for(page: str) -> Lesson:
    """The registry entry of a page: its name, its script path or its ``__file__`` (the one place that reads them)."""
    return BY_NAME[PurePath(page.replace("\\", "/")).stem]


def numbered() -> tuple[Lesson, ...]:
    """The lessons proper (every page with a number), in order."""
    return tuple(lesson for lesson in LESSONS if lesson.number is not None)


def sections() -> dict[str, list[Lesson]]:
    """The lessons grouped for the navigation, in registry order."""
    groups: dict[str, list[Lesson]] = {}
    for lesson in LESSONS:
        groups.setdefault(lesson.section, []).append(lesson)
    return groups


def neighbours(page: str) -> tuple[Lesson | None, Lesson | None]:
    """The previous and next page of ``page`` in registry order (None at either end)."""
    index = LESSONS.index(lesson_for(page))
    previous = LESSONS[index - 1] if index > 0 else None
    following = LESSONS[index + 1] if index + 1 < len(LESSONS) else None
    return previous, following
