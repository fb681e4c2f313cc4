"""The generation lesson's models: the head trained in the training lesson (``current_run``), the cost of
attention measured on this server (``measured_cost``), and its steps on SmolLM2: grouped-query attention and the
KV cache.

``gqa_cache_step()`` (bytes per token of this model's cache beside full multi-head attention) and
``cache_check_step()`` (cached decoding equals recomputing, on the real model) are step functions the
generation page adds to its steps: ``gqa_questions_step()`` the first with its questions, then the second (the
stepped view); ``real_model_step()`` draws both with the questions they raise (the whole lesson). Both explain
themselves when the model package is absent (and then nothing is asked).
"""

from __future__ import annotations

import dataclasses

import pandas as pd
import streamlit as st

from attention_core import smollm2 as sm
from attention_core import smollm2_lesson as sl
from attention_core.exercises.models import CACHE_TOKENS, SmolCacheMaterial
from attention_core.reference import tolerance_text
from ui import drawing, registry
from ui.format import format_number, learner_text
from ui.models import measured, smol
from ui.models.training_runs import current_run  # noqa: F401  (the generation page's one model handle)
from ui.widgets.exercises import exercises_section

PROMPT_LESSON = registry.BY_NAME["smollm2"].number  # the lesson whose prompt this step continues

CHECK_STEPS = 4
PLACES = ("gqa-tokens", "gqa-group", "gqa-what-if")  # the questions of this step (attention_core.exercises.models)


def loaded_model() -> sm.SmolModel | None:
    """The model, or None after saying why it cannot be used here."""
    try:
        return smol.model()
    except sm.ModelUnavailable as error:
        st.info(
            f"{learner_text(error)} This step measures SmolLM2's cache; the toy model's steps above work without it.",
            icon=":material/cloud_off:",
        )
        return None


def gqa_cache_step() -> SmolCacheMaterial | None:
    """The cache's bytes per token for SmolLM2 (3 key/value heads); returns what it showed, for the step's questions
    (None without the model), which come before full multi-head attention's figure (``gqa_answers``)."""
    st.subheader("Grouped-query attention shrinks the cache")
    model = loaded_model()
    if model is None:
        return None
    size = sl.cache_size(model.config)
    st.markdown(
        f"""
Each new token adds its keys and values to the cache, in every layer. SmolLM2's {size.heads} query heads share
**{size.kv_heads} key/value heads** (grouped-query attention), so per token the cache grows by
2 (K and V) × {size.layers} layers × {size.kv_heads} key/value heads × {size.d_k} numbers × {size.bytes_per_number}
bytes = **{size.gqa_bytes:,} bytes**.
"""
    )
    st.latex(
        rf"2 \times {size.layers} \times {size.kv_heads} \times {size.d_k} \times {size.bytes_per_number}"
        rf" = {size.gqa_bytes}\ \text{{bytes per token}}"
    )
    drawing.frame_table(sl.cache_table(size), hide_index=False)
    return SmolCacheMaterial(model.config, size.bytes_per_number)


def gqa_answers(material: SmolCacheMaterial) -> None:
    """What the step's questions ask, once they are settled: full multi-head attention's cache beside this one,
    and the cache at the lengths the questions ask about."""
    size = sl.cache_size(material.config, material.bytes_per_number)
    st.markdown(
        f"Full multi-head attention, with a key/value head per query head, would store {size.mha_bytes:,} bytes per "
        f"token: {format_number(size.saving, 0)} times as much, one key/value head for every "
        f"{format_number(size.saving, 0)} query heads here."
    )
    drawing.frame_table(sl.cache_table(size, CACHE_TOKENS), hide_index=False)


def cache_check_step() -> None:
    """Cached decoding against recomputing the whole sequence at every step, on SmolLM2 and the learner's prompt."""
    st.subheader("Cached equals recomputed, on the real model")
    model = loaded_model()
    if model is None:
        return
    prompt = str(st.session_state.get(smol.KEPT_PROMPT) or sm.PUBLISHED_PROMPT)
    try:
        check = smol.kv_cache_check(prompt, CHECK_STEPS)
    except ValueError as error:
        st.warning(f"{learner_text(error)} Change the prompt in lesson {PROMPT_LESSON}.", icon=":material/warning:")
        return
    verdict = sl.cache_agreement(check)
    continued = sm.decode(model, check.ids[-CHECK_STEPS:])
    st.markdown(
        f"The prompt of lesson {PROMPT_LESSON}, “{learner_text(prompt)}”, continued greedily by {CHECK_STEPS} pieces "
        f"(“{learner_text(continued)}”) twice: with the cache (each step runs only the new piece) and by running "
        "the whole sequence again at every step."
    )
    st.markdown(
        f"Largest difference of a next-piece logit: {format_number(check.max_logit_difference)} on logits up to "
        f"{format_number(check.logit_scale)}: **{verdict.verdict}** ({tolerance_text(verdict.tolerance)}). "
        f"Largest difference of a cached key: {format_number(check.max_key_difference)}."
    )


def cache_questions(page: str, lab, material: SmolCacheMaterial | None) -> None:
    """The step's questions (the generation lesson's, on ``page``), made from the cache sizes it showed, then (once
    they are settled) what answers them."""
    if material is None:  # no model, no numbers: nothing to ask
        return
    settled = exercises_section(
        page,
        lab,
        material=material,
        material_key=("smollm2", *dataclasses.astuple(material)),
        made_from="SmolLM2's cache sizes above",
        places=PLACES,
    )
    if settled:
        gqa_answers(material)


def gqa_questions_step(page: str, lab) -> None:
    """The first of the above with its questions (the stepped view; the check is a step of its own)."""
    cache_questions(page, lab, gqa_cache_step())


def real_model_step(page: str, lab) -> None:
    """Both of the above as one step: "GQA and the KV cache" on SmolLM2 with its questions (the lesson ``page``'s,
    on the page's input ``lab``), then the check."""
    cache_questions(page, lab, gqa_cache_step())
    cache_check_step()


def measured_cost() -> pd.DataFrame:
    """The cost table, measured once per server (usually as it starts: ui.models.measured)."""
    if measured.attention_cost_ready():
        return measured.attention_cost()
    with st.spinner("Measuring attention on this machine…"):
        return measured.attention_cost()
