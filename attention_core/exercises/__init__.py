"""Exercises generated from what a lesson's page shows: numeric, choice and what-if, with worked solutions.

``base`` holds the question, its grading and tolerance; ``steps``, ``block``, ``models`` and ``story`` hold the
generators of lessons 1-5, 6-9, 10 and 12-13 and the path, with the page state each reads. A newer lesson's
generator sits beside its core function instead (the SmolLM2 lesson's in ``attention_core.smollm2_lesson``) and is
not re-exported here: the lesson registry (``ui.registry``) names each generator from its module. A generator module
imports ``base``, never this package's other modules (whose import runs this one).
"""

from attention_core.exercises.base import (
    KINDS,
    MAX_ANSWER,
    Check,
    Exercise,
    ExerciseInput,
    Generator,
    check_answer,
    exercises_for,
    input_seed,
    material_fingerprint,
    parse_number,
    tolerance,
)
from attention_core.exercises.block import (
    MaskedShown,
    MultiHeadShown,
    PositionsShown,
    masking_exercises,
    multi_head_exercises,
    pipeline_exercises,
    positions_exercises,
)
from attention_core.exercises.models import (
    GenerationMaterial,
    SmolCacheMaterial,
    TrainedMaterial,
    TrainingMaterial,
    generation_exercises,
    trained_exercises,
    training_exercises,
)
from attention_core.exercises.steps import (
    ProjectedShown,
    context_exercises,
    projected_shown,
    qkv_exercises,
    scaling_exercises,
    scores_exercises,
    softmax_exercises,
)

__all__ = [
    "KINDS",
    "MAX_ANSWER",
    "Check",
    "Exercise",
    "ExerciseInput",
    "GenerationMaterial",
    "Generator",
    "MaskedShown",
    "MultiHeadShown",
    "PositionsShown",
    "ProjectedShown",
    "SmolCacheMaterial",
    "TrainedMaterial",
    "TrainingMaterial",
    "check_answer",
    "context_exercises",
    "exercises_for",
    "generation_exercises",
    "input_seed",
    "masking_exercises",
    "material_fingerprint",
    "multi_head_exercises",
    "parse_number",
    "pipeline_exercises",
    "positions_exercises",
    "projected_shown",
    "qkv_exercises",
    "scaling_exercises",
    "scores_exercises",
    "softmax_exercises",
    "tolerance",
    "trained_exercises",
    "training_exercises",
]
