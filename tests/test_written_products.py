"""Every product an exercise of lessons 6-13 writes out ("a × b = c", "a × b × c = d", "a − k × b = c") checks by
hand from its printed operands (issue 36, item 10: lesson 11's RoPE exercise wrote "8 × 0.6978 = 5.5826" where the
printed operands give 5.5824).

The rule (attention_core.numbers): the number after "=" is the result of the operands as written, computed from
their text and rounded half up to the decimals it is printed with (an exact count is written whole). The prompts
and solutions are generated on two inputs per lesson, on the lab's own materials (SmolLM2's where installed), and
each product is recomputed here with ``decimal``, independently of the lab's formatter.
"""

from __future__ import annotations

import random
import re
from decimal import ROUND_HALF_UP, Decimal

import pytest
import torch

import attention_core as ac
from attention_core import smollm2 as sm
from attention_core import smollm2_lesson as sl
from attention_core.exercises import (
    ExerciseInput,
    GenerationMaterial,
    MaskedShown,
    MultiHeadShown,
    PositionsShown,
    SmolCacheMaterial,
    exercises_for,
    generation_exercises,
    masking_exercises,
    multi_head_exercises,
    pipeline_exercises,
    positions_exercises,
)
from attention_core.heads import multi_head_layer, pipeline_block
from attention_core.masks import MaskChoice, masked_attention
from attention_core.positions import add_positions, sinusoidal_encoding
from attention_core.projections import random_projections
from attention_core.smollm2_lesson import SmolMaterial, smollm2_exercises

NUM = r"-?\d{1,3}(?:,\d{3})+(?!\d)|-?\d+(?:\.\d+)?"  # 23,040 or 0.6978 or 8
OPERAND = rf"(?:{NUM})(?![\d²³.,]|e[+-])"  # not 8² nor the start of a longer number
START = r"(?<![\w.,)\]^(×/−+·-])(?<!× )(?<!− )(?<!\+ )(?<!/ )"  # a product that starts the expression
PRODUCT = re.compile(rf"{START}({OPERAND}(?: × {OPERAND})+) = ({NUM})(?![\d²]|[.,]\d)")
TAKE_TURNS = re.compile(rf"({OPERAND}) − ({OPERAND}) × ({OPERAND}) = ({NUM})(?![\d]|[.,]\d)")


def value(text: str) -> Decimal:
    return Decimal(text.replace(",", "").replace("−", "-"))


def as_printed(exact: Decimal, printed: str) -> str:
    """``exact`` written as ``printed`` is: its decimals, half up, thousands grouped as printed."""
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    rounded = exact.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    return f"{rounded:,}" if "," in printed else str(rounded)


def written_products(text: str) -> list[tuple[str, str, str]]:
    """(the line, what the printed operands give at the printed precision, what is printed) for every product."""
    found = []
    for match in PRODUCT.finditer(text):
        operands, printed = match.group(1).split(" × "), match.group(2)
        product = Decimal(1)
        for operand in operands:
            product *= value(operand)
        found.append((match.group(0), as_printed(product, printed), printed))
    for match in TAKE_TURNS.finditer(text):
        start, turns, turn, printed = match.groups()
        found.append((match.group(0), as_printed(value(start) - value(turns) * value(turn), printed), printed))
    return found


def test_the_checker_rejects_the_line_of_the_issue_and_reads_every_form():
    assert written_products("8 × 0.6978 = 5.5826 (unrounded: 5.5826)") == [("8 × 0.6978 = 5.5826", "5.5824", "5.5826")]
    assert written_products("2 × 30 × 3 × 64 × 2 = 23,040 bytes") == [
        ("2 × 30 × 3 × 64 × 2 = 23,040", "23,040", "23,040")
    ]
    assert written_products("5.5824 − 1 × 6.2832 = -0.7008") == [
        ("5.5824 − 1 × 6.2832 = -0.7008", "-0.7008", "-0.7008")
    ]
    assert written_products("4 × 8² = 256; (0.1 × 0.2) + (0.3 × 0.4) = 0.14; 2 × (3 + 4) = 14") == []


def check_every_product(items) -> int:
    """Assert every written product of the items checks by hand; return how many there were."""
    count = 0
    for item in items:
        for text in (item.prompt, item.solution, *item.options):
            for line, expected, printed in written_products(text):
                assert printed == expected, (item.id, line, f"the printed operands give {expected}")
                count += 1
    return count


INPUTS = {
    "journey": (("Your", "journey", "starts", "with", "one", "step"), 3, 2),
    "chef": (("the", "chef", "who", "ran", "the", "kitchen", "tasted", "soup"), 6, 5),
}


def toy_items(tokens: tuple[str, ...], d_model: int, query: int) -> list:
    """The exercises of lessons 6-9 and of lesson 13's toy head on this input (seeded random embeddings)."""
    X = torch.randn(len(tokens), d_model, generator=torch.Generator().manual_seed(len(tokens)))  # (T, d_model)
    labels = tuple(ac.token_labels(tokens))

    def made(lesson: str, generator, material) -> tuple:
        return exercises_for(lesson, generator, ExerciseInput(labels, X, query, material, (lesson,)))

    masked = masked_attention(tokens, X, MaskChoice("causal", 0, 1, True, False), query)
    layer = multi_head_layer(X, 1, 3, width=8)
    block = pipeline_block(X, 1, "causal", 4)
    W = random_projections(d_model, d_model, 2)
    E = sinusoidal_encoding(len(tokens), d_model)
    plain = ac.self_attention(X, W.W_q, W.W_k, W.W_v)
    placed = ac.self_attention(add_positions(X, E), W.W_q, W.W_k, W.W_v)
    heads = random_projections(d_model, 4, 5)
    toy = GenerationMaterial(X, heads.W_q, heads.W_k, heads.W_v, labels, query, query, 2)
    return [
        *made("masking", masking_exercises, MaskedShown(labels, masked.active, masked.steps, "the causal mask", query)),
        *made("multi_head", multi_head_exercises, MultiHeadShown(layer.steps, layer.params.W_o, False)),
        *made("positions", positions_exercises, PositionsShown(plain, placed, E)),
        *made("pipeline", pipeline_exercises, MultiHeadShown(block.steps, block.W_o, True)),
        *made("generation", generation_exercises, toy),
    ]


@pytest.mark.parametrize("name", INPUTS)
def test_every_product_of_lessons_6_to_9_and_13_checks_by_hand(name):
    items = toy_items(*INPUTS[name])
    assert {item.id.split("-")[0] for item in items} >= {"masked", "head", "reversed", "output", "cache"}
    check_every_product(items)


@pytest.fixture(scope="module")
def model() -> sm.SmolModel:
    try:
        return sm.load_model()
    except sm.ModelUnavailable as error:
        pytest.skip(str(error))


@pytest.mark.parametrize(
    ("prompt", "query"), [(sm.PUBLISHED_PROMPT, 8), ("The cat sat on the mat and then it sat on", 10)]
)
def test_every_product_of_the_smollm2_lessons_checks_by_hand(model, prompt, query):
    """Lesson 11 (RoPE's angle: position × θ_2, then whole turns of 2π taken off) and lesson 13's cache sizes."""
    result = sm.forward(model, sm.encode(model, prompt))
    layer, head = 5, 4
    hand = sm.head_by_hand(model, result, layer, head, query)
    material = SmolMaterial(
        labels=tuple(result.pieces),
        next_token=sm.next_token(model, result.logits[-1], 1.0, 10),
        hand=hand,
        model_row=result.attentions[layer, head, query],
        patterns=sm.head_patterns(result),
        repeated=sm.head_patterns(sm.forward(model, sm.repeated_ids(result.ids), logits="none")),
        num_heads=model.config.num_heads,
        num_kv_heads=model.config.num_kv_heads,
        rotation=sl.query_rotation(hand, model.config),
        weights_first=result.attentions[layer, head, 1:, 0],
    )
    given = ExerciseInput(("x",), torch.zeros(1, 1), 0, material, (prompt,))
    items = list(exercises_for("smollm2", smollm2_exercises, given))
    cache = SmolCacheMaterial(model.config, 2)
    for seed in range(6):  # every what-if of the cache question
        items += generation_exercises(ExerciseInput(("x",), torch.zeros(1, 1), 0, cache, ()), random.Random(seed))
    rope = next(item for item in items if item.id.startswith("rope-angle"))
    assert written_products(rope.solution), "the RoPE solution writes its product"
    assert check_every_product(items) >= 2
