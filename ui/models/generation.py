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
from attention_core.i18n import _
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
            _(
                "{reason} This step measures SmolLM2's cache; the toy model's steps above work without it.",
                reason=learner_text(error),
            ),
            icon=":material/cloud_off:",
        )
        return None


def gqa_cache_step() -> SmolCacheMaterial | None:
    """The cache's bytes per token for SmolLM2 (3 key/value heads); returns what it showed, for the step's questions
    (None without the model), which come before full multi-head attention's figure (``gqa_answers``)."""
    st.subheader(_("Grouped-query attention shrinks the cache"))
    model = loaded_model()
    if model is None:
        return None
    size = sl.cache_size(model.config)
    st.markdown(
        _(
            """
Each new token adds its keys and values to the cache, in every layer. SmolLM2's {heads} query heads share
**{kv_heads} key/value heads** (grouped-query attention), so per token the cache grows by
2 (K and V) × {layers} layers × {kv_heads} key/value heads × {d_k} numbers × {number_bytes}
bytes = **{gqa_bytes:,} bytes**.
""",
            heads=size.heads,
            kv_heads=size.kv_heads,
            layers=size.layers,
            d_k=size.d_k,
            number_bytes=size.bytes_per_number,
            gqa_bytes=size.gqa_bytes,
        )
    )
    unit = _("bytes per token")
    st.latex(
        rf"2 \times {size.layers} \times {size.kv_heads} \times {size.d_k} \times {size.bytes_per_number}"
        rf" = {size.gqa_bytes}\ \text{{{unit}}}"
    )
    drawing.frame_table(sl.cache_table(size), hide_index=False)
    return SmolCacheMaterial(model.config, size.bytes_per_number)


def gqa_answers(material: SmolCacheMaterial) -> None:
    """What the step's questions ask, once they are settled: full multi-head attention's cache beside this one,
    and the cache at the lengths the questions ask about."""
    size = sl.cache_size(material.config, material.bytes_per_number)
    st.markdown(
        _(
            "Full multi-head attention, with a key/value head per query head, would store {mha_bytes:,} bytes per "
            "token: {saving} times as much, one key/value head for every {saving} query heads here.",
            mha_bytes=size.mha_bytes,
            saving=format_number(size.saving, 0),
        )
    )
    drawing.frame_table(sl.cache_table(size, CACHE_TOKENS), hide_index=False)


def cache_check_step() -> None:
    """Cached decoding against recomputing the whole sequence at every step, on SmolLM2 and the learner's prompt."""
    st.subheader(_("Cached equals recomputed, on the real model"))
    model = loaded_model()
    if model is None:
        return
    prompt = str(st.session_state.get(smol.KEPT_PROMPT) or sm.PUBLISHED_PROMPT)
    try:
        check = smol.kv_cache_check(prompt, CHECK_STEPS)
    except ValueError as error:
        st.warning(
            _("{reason} Change the prompt in lesson {lesson}.", reason=learner_text(error), lesson=PROMPT_LESSON),
            icon=":material/warning:",
        )
        return
    verdict = sl.cache_agreement(check)
    continued = sm.decode(model, check.ids[-CHECK_STEPS:])
    st.markdown(
        _(
            "The prompt of lesson {lesson}, “{prompt}”, continued greedily by {steps} pieces (“{continued}”) twice: "
            "with the cache (each step runs only the new piece) and by running the whole sequence again at every "
            "step.",
            lesson=PROMPT_LESSON,
            prompt=learner_text(prompt),
            steps=CHECK_STEPS,
            continued=learner_text(continued),
        )
    )
    st.markdown(
        _(
            "Largest difference of a next-piece logit: {logit_difference} on logits up to {logit_scale}: "
            "**{verdict}** ({tolerance}). Largest difference of a cached key: {key_difference}.",
            logit_difference=format_number(check.max_logit_difference),
            logit_scale=format_number(check.logit_scale),
            verdict=_(verdict.verdict),
            tolerance=tolerance_text(verdict.tolerance),
            key_difference=format_number(check.max_key_difference),
        )
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
        made_from=_("SmolLM2's cache sizes above"),
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
    with st.spinner(_("Measuring attention on this machine…")):
        return measured.attention_cost()
