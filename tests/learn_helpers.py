"""Helpers for the page tests of lessons 10-12 and the museum: the exercises a page shows, answering them,
the path footer and the clickable heatmaps."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from attention_core.exercises import Exercise
from tests.apptest_helpers import charts
from ui import registry
from ui.widgets.exercises import answer_key, place_name


def page_exercises(at: AppTest, path: str) -> dict[str, Exercise]:
    """The exercises the page's last run asked (made from what it showed), by their short id."""
    name = registry.lesson_for(path).name
    return {item.id.rsplit("-", 1)[0]: item for item in at.session_state[f"_exercises:{name}"]}


def answer(at: AppTest, path: str, item: Exercise, value) -> AppTest:
    """Type or pick an answer in the item's form and press Check."""
    key = answer_key(path, item)
    widget = at.radio(key=key) if item.is_choice else at.text_input(key=key)
    widget.set_value(value)
    form = f"exf:{registry.lesson_for(path).name}:{place_name(item)}"
    return next(b for b in at.button if b.proto.form_id == form).click().run()


def right_wrong_malformed(at: AppTest, path: str, item: Exercise) -> None:
    """A malformed answer is explained and not counted, a wrong one gets the hint, a right one the solution."""
    answer(at, path, item, "three")
    assert any("not a number" in w.value for w in at.warning)
    assert not at.exception
    answer(at, path, item, str(float(item.answer) + 1))
    assert any("Not quite" in e.value for e in at.error)
    assert any(item.hint in i.value for i in at.info)
    answer(at, path, item, f"{float(item.answer):.4f}")
    assert any(s.value.startswith("Right") for s in at.success)
    assert any(item.solution in m.value for m in at.markdown)
    assert not at.exception


def has_exercises_and_footer(at: AppTest, *, exercises: bool = True, summary: bool = True) -> None:
    """'Check yourself', 'Try this', 'What you just learned' and previous / next links, as the page should have."""
    headers = [h.value for h in at.subheader]
    assert ("Check yourself" in headers) == exercises
    assert ("What you just learned" in headers) == summary
    assert any(m.value == "**Try this**" for m in at.markdown) == summary
    assert at.get("page_link"), "previous / next links"


def _params(spec) -> list[dict]:
    """Every selection parameter of a (layered) Vega-Lite spec."""
    found = list(spec.get("params", [])) if isinstance(spec, dict) else []
    for layer in spec.get("layer", []) if isinstance(spec, dict) else []:
        found += _params(layer)
    return found


def clickable_keys(at: AppTest) -> list[str]:
    """Keys of the charts that carry the 'cell' selection of drawing.heatmap(..., explain=...)."""
    keys = []
    for chart in charts(at):
        spec = json.loads(chart.proto.spec)
        if any(p.get("name") == "cell" and "select" in p for p in _params(spec)):
            keys.append(chart.proto.id)
    return keys


def record_training_drawings(monkeypatch) -> list[str]:
    """The captions of every 'Attention while training' heatmap drawn from now on (drawing.heatmap wrapped)."""
    from ui import drawing, page

    drawn: list[str] = []
    original = drawing.heatmap

    def recording_heatmap(*args, **kwargs):
        if kwargs.get("title") == "Attention while training":
            drawn.append(kwargs["caption"])
        return original(*args, **kwargs)

    for module in (drawing, page):  # the page API re-exports it; widgets call it in ui.drawing
        monkeypatch.setattr(module, "heatmap", recording_heatmap)
    return drawn
