"""Exercises generated from what a lesson's page shows: numeric, choice and what-if, with worked solutions.

``base`` holds the question, its grading and tolerance; ``steps``, ``block`` and ``models`` hold the
generators of lessons 1-5, 6-9 and 10-12 with the page state each reads. The lesson registry
(``ui.registry``) names each lesson's generator.
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
    TrainedMaterial,
    TrainingMaterial,
    generation_exercises,
    trained_exercises,
    training_exercises,
)
from attention_core.exercises.smollm2 import SmolCacheMaterial, SmolMaterial, smol_cache_exercises, smollm2_exercises
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
    "SmolMaterial",
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
    "smol_cache_exercises",
    "smollm2_exercises",
    "softmax_exercises",
    "tolerance",
    "trained_exercises",
    "training_exercises",
]
