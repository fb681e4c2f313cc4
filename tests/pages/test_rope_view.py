"""The positions lesson's RoPE step (ui.widgets.rope_view.rope_step), drawn alone on a toy input: the angles, the turned
rows, the scores without and with RoPE, and the relative-position verdict."""

from __future__ import annotations

import torch
from streamlit.testing.v1 import AppTest

from tests.apptest_helpers import assert_clean, frames


def draw(X_values, labels):
    from types import SimpleNamespace

    import torch

    from ui.widgets.rope_view import rope_step

    X = torch.tensor(X_values)
    rope_step(SimpleNamespace(X=X, labels=tuple(labels), d_model=X.shape[1], query_index=0))


def run(X: torch.Tensor, labels: tuple[str, ...]) -> AppTest:
    return AppTest.from_function(draw, args=(X.tolist(), labels), default_timeout=60).run()


def test_the_rope_step_shows_angles_turned_rows_and_the_relative_verdict():
    X = torch.tensor([[1.0, 0.0, 0.5, 0.2], [0.0, 1.0, 0.1, 0.3], [1.0, 0.0, 0.5, 0.2]])  # a repeated word
    at = run(X, ("dog", "bites", "dog (2)"))
    assert_clean(at)
    tables = [*frames(at), *(t.value for t in at.table)]
    angles = next(t for t in tables if list(t.columns) == ["pair 1", "pair 2"])
    assert angles.loc["bites", "pair 1"] == 1.0 and abs(angles.loc["dog (2)", "pair 2"] - 0.02) < 1e-6  # m θ_i
    assert len(at.get("vega_lite_chart")) == 2
    assert any("equal up to float32 rounding" in m.value for m in at.markdown)


def test_an_odd_d_model_keeps_its_last_dimension_and_says_so():
    at = run(torch.eye(3), ("a", "b", "c"))
    assert_clean(at)
    assert any("is odd" in c.value for c in at.caption)
