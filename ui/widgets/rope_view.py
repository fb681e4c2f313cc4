"""The positions lesson's RoPE step on the toy input: ``rope_step(lab)``, beside the sinusoidal and learned
encodings (the lesson's page adds it to its steps)."""

from __future__ import annotations

import streamlit as st

from attention_core.i18n import N_, _
from attention_core.rope_lesson import SHIFT, paired_size, toy_rope
from attention_core.tables import dimension_labels
from ui import drawing
from ui.format import format_number

# attention_core's words shown here, translated where they are shown (the core keeps them in English)
VERDICTS = (
    N_("exactly equal"),
    N_("equal up to float32 rounding"),
    N_("equal up to float64 rounding"),
    N_("different"),
)


def tolerance_words(tolerance: float) -> str:
    """attention_core.reference.tolerance_text in the learner's language."""
    return _(
        "|ours − reference| ≤ {tolerance} × the largest |reference| in every cell", tolerance=format(tolerance, "g")
    )


def rope_step(lab) -> None:
    """RoPE: turn q and k by the position instead of adding a vector; scores then depend on m - n only."""
    st.subheader(_("RoPE: position as a rotation"))
    st.markdown(
        _(
            """
Modern models (Llama, and SmolLM2 in the lesson after the trained encoder) add nothing to X. **Rotary position
embedding** turns q and k instead: the dimensions go in pairs (i, i + d/2), and pair i of the token at
position m is turned by the angle m·θ_i with θ_i = 10000^(−2i/d). A turn keeps each vector's length; two
tokens' vectors meet at an angle that now also depends on **how far apart** they are. Here q = k = X, as in
lesson 1, so the scores are RoPE(X) RoPE(X)ᵀ.
"""
        )
    )
    st.latex(
        r"\begin{pmatrix}x'_i\\ x'_{i+d/2}\end{pmatrix} = \begin{pmatrix}\cos m\theta_i & -\sin m\theta_i\\ "
        r"\sin m\theta_i & \cos m\theta_i\end{pmatrix}\begin{pmatrix}x_i\\ x_{i+d/2}\end{pmatrix}"
    )
    if paired_size(lab.d_model) == 0:
        st.info(_("With d_model = 1 there is no pair to turn: RoPE changes nothing."), icon=":material/info:")
        return
    rope = toy_rope(lab.X)
    if lab.d_model % 2:
        st.caption(
            _(
                "d_model = {d_model} is odd: the last dimension has no partner and is not turned.",
                d_model=lab.d_model,
            )
        )
    pairs = [_("pair {n}", n=i + 1) for i in range(rope.angles.shape[1])]
    st.markdown(_("**The angle m·θ_i (radians) each token's pair i is turned by** (the first token, m = 0, stays):"))
    drawing.table(rope.angles, lab.labels, pairs, alt_text=_("RoPE angles m·θ_i in radians"))
    st.markdown(_("**RoPE(X)**: every row of X turned by its angles; each pair keeps its length."))
    drawing.table(rope.rotated, lab.labels, dimension_labels(lab.d_model), alt_text=_("RoPE(X): the turned rows"))
    drawing.heatmap(rope.plain_scores, lab.labels, lab.labels, kind="scores", title=_("Scores X Xᵀ (no positions)"))
    drawing.heatmap(rope.rope_scores, lab.labels, lab.labels, kind="scores", title=_("Scores RoPE(X) RoPE(X)ᵀ"))
    st.markdown(
        _(
            "The diagonal does not move (a vector turned by the same angle as itself), but a repeated word now "
            "scores differently with each copy, by distance. **Relative, not absolute:** every position moved by "
            "{shift}: largest change of a score {difference}: **{verdict}** ({tolerance}).",
            shift=SHIFT,
            difference=format_number(rope.shift.max_difference),
            verdict=_(rope.shift.verdict),
            tolerance=tolerance_words(rope.shift.tolerance),
        )
    )
