"""The one lesson registry: every page of the lab, in order, with its number, title, icon and summary.

``lab.py`` builds the navigation from it, the overview lists it, each page takes its
``st.title`` from it, the tests read it, and previous/next links follow it. Adding a lesson is one
entry here plus one file in ``app_pages/``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Lesson:
    """One page of the lab."""

    path: str  # the script, relative to the repository root
    number: int | None  # lessons are numbered; the overview and extra pages are not
    title: str  # as in the navigation, without the number
    icon: str  # a :material/...: icon
    summary: str  # one line: what the learner does there
    teaches: str  # one line: the idea they leave with
    section: str  # navigation group
    default: bool = False  # the page the app opens on (only the overview)

    @property
    def name(self) -> str:
        """The page's URL path segment (Streamlit derives it from the file name)."""
        return self.path.removeprefix("app_pages/").removesuffix(".py")

    @property
    def label(self) -> str:
        """'3. Context vectors' for a lesson, 'Overview' for an unnumbered page."""
        return f"{self.number}. {self.title}" if self.number is not None else self.title


START = "Start"
STEPS = "Self-attention, step by step"
BLOCK = "Towards a transformer block"
BEYOND = "Beyond one step"
PRACTICE = "Practice"

LESSONS: tuple[Lesson, ...] = (
    Lesson(
        "app_pages/overview.py",
        None,
        "Overview",
        ":material/home:",
        "What self-attention is, the lessons, how to use the lab, a glossary.",
        "Where each step sits in the pipeline.",
        START,
        default=True,
    ),
    Lesson(
        "app_pages/scores.py",
        1,
        "Attention scores",
        ":material/grid_on:",
        "How similar is each word to the query? Dot products, term by term.",
        "A score is the dot product of a query with a key: Ω = X Xᵀ.",
        STEPS,
    ),
    Lesson(
        "app_pages/softmax.py",
        2,
        "Softmax",
        ":material/functions:",
        "Turning scores into weights that are non-negative and sum to 1, and why dividing by the sum fails.",
        "Softmax along each row turns scores into attention weights.",
        STEPS,
    ),
    Lesson(
        "app_pages/context_vectors.py",
        3,
        "Context vectors",
        ":material/merge:",
        "Each output is a weighted blend of the inputs.",
        "A context vector is the weighted sum of the values.",
        STEPS,
    ),
    Lesson(
        "app_pages/qkv_projections.py",
        4,
        "Queries, keys, values",
        ":material/key:",
        "Trainable matrices W_q, W_k, W_v give each word three roles.",
        "Q = X W_q, K = X W_k, V = X W_v: three projections of the same input.",
        STEPS,
    ),
    Lesson(
        "app_pages/scaling.py",
        5,
        "Scaling by √d_k",
        ":material/straighten:",
        "Why the scores are divided by √d_k before softmax.",
        "Dividing by √d_k stops the scores' spread growing with d_k.",
        STEPS,
    ),
    Lesson(
        "app_pages/masking.py",
        6,
        "Masking",
        ":material/visibility_off:",
        "Hiding the future (causal), padding and far-away tokens.",
        "Blocked scores become −∞, so their weights are exactly 0.",
        BLOCK,
    ),
    Lesson(
        "app_pages/multi_head.py",
        7,
        "Multi-head attention",
        ":material/view_column:",
        "Several small heads side by side, checked against PyTorch.",
        "h heads of size d_model / h, concatenated and mixed by W_o.",
        BLOCK,
    ),
    Lesson(
        "app_pages/positions.py",
        8,
        "Word order and positions",
        ":material/format_list_numbered:",
        "Attention alone does not know word order; positional encodings fix that.",
        "Without positions, attention is permutation-equivariant.",
        BLOCK,
    ),
    Lesson(
        "app_pages/pipeline.py",
        9,
        "The full pipeline",
        ":material/account_tree:",
        "The whole block on one page, with downloads and code to reproduce it.",
        "softmax(Q Kᵀ / √d_k + M) V, end to end, equal to PyTorch's.",
        BLOCK,
    ),
    Lesson(
        "app_pages/trained_model.py",
        10,
        "Inside a trained model",
        ":material/psychology:",
        "Every head of a real trained model (all-MiniLM-L6-v2) on your sentence, recomputed by hand.",
        "Trained heads specialise (previous word, [CLS], [SEP], broad); the same formula computes them all.",
        BEYOND,
    ),
    Lesson(
        "app_pages/training.py",
        11,
        "How attention is learned",
        ":material/model_training:",
        "Train a tiny transformer live on a toy task and watch its attention pattern form.",
        "Gradient descent shapes W_q and W_k until each query finds the key the task needs.",
        BEYOND,
    ),
    Lesson(
        "app_pages/generation.py",
        12,
        "Generation, step by step",
        ":material/keyboard_double_arrow_right:",
        "Token-by-token decoding with a KV cache, the T² cost of attention, and online softmax.",
        "A cache turns each step into one query row; attention still costs T² cells in all.",
        BEYOND,
    ),
    Lesson(
        "app_pages/mistakes.py",
        None,
        "Mistakes museum",
        ":material/bug_report:",
        "Every classic attention bug: spot the wrong line, then see what it does to your numbers.",
        "Each bug leaves a fingerprint in the numbers: rows that do not sum to 1, weights on the future, NaN.",
        PRACTICE,
    ),
)

BY_PATH: dict[str, Lesson] = {lesson.path: lesson for lesson in LESSONS}


def lesson_for(path: str) -> Lesson:
    """The registry entry of a page script (``__file__`` or ``app_pages/x.py``)."""
    key = "app_pages/" + path.replace("\\", "/").rsplit("/", 1)[-1]
    return BY_PATH[key]


def numbered() -> tuple[Lesson, ...]:
    """The lessons proper (every page with a number), in order."""
    return tuple(lesson for lesson in LESSONS if lesson.number is not None)


def sections() -> dict[str, list[Lesson]]:
    """The lessons grouped for the navigation, in registry order."""
    groups: dict[str, list[Lesson]] = {}
    for lesson in LESSONS:
        groups.setdefault(lesson.section, []).append(lesson)
    return groups


def neighbours(path: str) -> tuple[Lesson | None, Lesson | None]:
    """The previous and next page of ``path`` in registry order (None at either end)."""
    index = LESSONS.index(lesson_for(path))
    previous = LESSONS[index - 1] if index > 0 else None
    following = LESSONS[index + 1] if index + 1 < len(LESSONS) else None
    return previous, following
