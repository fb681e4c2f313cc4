"""drawing.heatmap with explain, in AppTest: a kept cell's arithmetic, every explanation kind, the raster picker."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

import attention_core as ac
from tests.apptest_helpers import assert_clean
from ui.format import format_number


def small() -> None:
    """Four clickable heatmaps of the default input with a causal mask."""
    import attention_core as ac
    from ui import drawing
    from ui.widgets import cell_click, inputs

    lab = inputs.default_input()
    mask = ac.causal_mask(lab.T)
    params = ac.random_projections(lab.d_model, lab.d_model, 0)
    steps = ac.self_attention(lab.X, params.W_q, params.W_k, params.W_v, mask=mask)
    dims = [f"d{i + 1}" for i in range(lab.d_model)]
    drawing.heatmap(
        steps.Q,
        lab.labels,
        dims,
        kind="values",
        key="q",
        explain=cell_click.projection_of(lab.X, params.W_q),
        col_title="entry",
    )
    drawing.heatmap(
        steps.masked_scores,
        lab.labels,
        lab.labels,
        kind="scores",
        key="m",
        explain=cell_click.masked_scores_of(steps, mask),
    )
    drawing.heatmap(steps.weights, lab.labels, lab.labels, key="w", explain=cell_click.weights_of(steps))


def big() -> None:
    """140 tokens: a raster image and row / column pickers instead of clicks."""
    import attention_core as ac
    from ui import drawing
    from ui.widgets import cell_click

    tokens = [f"w{i}" for i in range(140)]
    labels = ac.token_labels(tokens)
    steps = ac.self_attention(ac.random_embeddings(tokens, 4, 0))
    drawing.heatmap(steps.weights, labels, labels, key="big", explain=cell_click.weights_of(steps))


def markdown(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_before_a_click_each_chart_invites_one_and_the_specs_are_selectable():
    at = AppTest.from_function(small, default_timeout=60).run()
    assert_clean(at)
    assert sum("Click any cell" in c.value for c in at.caption) == 3
    assert len(at.get("vega_lite_chart")) == 3


def test_kept_cells_show_their_arithmetic_with_the_cores_numbers():
    at = AppTest.from_function(small, default_timeout=60).run()
    at.session_state["_cell:q"] = ("starts", "d2")
    at.session_state["_cell:m"] = ("journey", "one")  # blocked by the causal mask
    at.session_state["_cell:w"] = ("starts", "journey")
    at.run()
    assert_clean(at)
    X = ac.DEFAULT_PRESET.matrix()
    params = ac.random_projections(3, 3, 0)
    steps = ac.self_attention(X, params.W_q, params.W_k, params.W_v, mask=ac.causal_mask(6))
    text = markdown(at)
    assert f"**{format_number(float(steps.Q[2, 1]))}**" in text
    assert "Causal mask: key 5 comes after query 2" in text
    assert f"**{format_number(float(steps.weights[2, 1]))}**" in text
    at.session_state["_cell:w"] = ("nobody", "journey")  # a cell of an older input: back to the invitation
    at.run()
    assert sum("Click any cell" in c.value for c in at.caption) == 1


def test_a_long_input_uses_pickers_under_a_raster_image():
    at = AppTest.from_function(big, default_timeout=60).run()
    assert_clean(at)
    assert at.get("image") and not at.get("vega_lite_chart")
    at.selectbox(key="big:row").set_value("w5")
    at.selectbox(key="big:col").set_value("w9")
    at.run()
    tokens = [f"w{i}" for i in range(140)]
    weights = ac.self_attention(ac.random_embeddings(tokens, 4, 0)).weights
    assert f"**{format_number(float(weights[5, 9]))}**" in markdown(at)
