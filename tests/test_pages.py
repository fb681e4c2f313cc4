"""Every page runs with every preset and with a typed sentence, and shows tables and charts (AppTest)."""

from __future__ import annotations

import jsonschema
import pytest
from streamlit.testing.v1.element_tree import Block

from attention_core.presets import PRESETS
from tests.apptest_helpers import (
    PAGES,
    assert_clean,
    chart_specs,
    charts,
    frames,
    open_page,
    sentence_params,
    vega_lite_errors,
)
from tests.pages.answered import answered  # noqa: F401 (a fixture)
from ui import registry

LESSON_PAGES = [page for page in PAGES if not page.endswith("overview.py")]
INPUTS = {preset.key: {"example": preset.name} for preset in PRESETS} | {
    "typed": sentence_params("the cat sat on the mat and the dog sat too", seed=11, d_model=6, query="dog"),
}


@pytest.mark.usefixtures("answered")
@pytest.mark.parametrize("page", LESSON_PAGES)
@pytest.mark.parametrize("name", list(INPUTS))
def test_page_runs_and_shows_numbers(page, name):
    """Every page, as the learner sees it once its questions are answered (a step asks before it shows, issue 36)."""
    at = open_page(page, INPUTS[name])
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    assert at.title and at.title[0].value, "every page has a title"
    assert charts(at) or at.get("imgs"), "every lesson page draws at least one chart"
    for spec in chart_specs(at):  # the server builds specs without validating them (ui/drawing.py): here they are
        assert not vega_lite_errors(spec)  # the server builds them with validate=False
        assert not sort_arrays(spec), "an order is a scale domain (charts.in_order), not a per-datum sort"
    assert frames(at), "every lesson page shows at least one table"
    assert at.get("download_button"), "every lesson page offers its main matrix as CSV"
    assert at.expander, "every lesson page has a 'show the code' expander"


def test_the_schema_check_refuses_what_altair_refuses():
    """vega_lite_errors (a validator built once) finds the errors Altair's Root.validate raises on."""
    from altair.vegalite.v6.schema.core import Root

    good = {"data": {"values": [{"a": 1}]}, "mark": "rect", "encoding": {"x": {"field": "a", "type": "ordinal"}}}
    assert vega_lite_errors(good) == []
    Root.validate(good)
    wrong_type = {"encoding": {"x": {"field": "a", "type": "ordnial"}}}
    for bad in ({"mark": {"type": "nonsense"}}, wrong_type, {"width": "wide"}):
        assert vega_lite_errors(good | bad), bad
        with pytest.raises(jsonschema.ValidationError):
            Root.validate(good | bad)


def sort_arrays(node) -> list:
    """Every ``sort`` given as a list of values anywhere in a spec."""
    if isinstance(node, dict):
        found = [node["sort"]] if isinstance(node.get("sort"), list) else []
        return found + [item for value in node.values() for item in sort_arrays(value)]
    if isinstance(node, list):
        return [item for value in node for item in sort_arrays(value)]
    return []


def test_overview_lists_every_lesson():
    at = open_page("app_pages/overview.py")
    assert_clean(at)
    links = [link.proto.page for link in at.get("page_link")]
    # the two ways in (the 15-minute path, and the full course from its first lesson), then every lesson and practice
    assert links[:2] == ["path", registry.numbered()[0].name]
    listed = sorted(page.removeprefix("app_pages/").removesuffix(".py") for page in LESSON_PAGES)
    assert sorted(links[2:]) == [name for name in listed if name != "path"]


def test_overview_defines_the_symbols_before_using_them_and_marks_calculus_optional():
    """Issue 9: the glossary defines T, d_model, d_k, d_v, h; d_k is defined before the diagram uses it."""
    at = open_page("app_pages/overview.py")
    assert_clean(at)
    symbols = at.caption[0].value
    for letter in ("T", "d_model", "d_k", "d_v", "h"):
        assert f"**{letter}**:" in symbols
        assert any(m.value.startswith(f"**{letter}** — ") for m in at.markdown)
    text = " ".join(m.value for m in at.markdown)
    assert "No calculus" not in text and "lesson 5" in text and "**optional**" in text
    assert "non-negative" in text and "positive, and" not in text


def layout(node, path: tuple = ()) -> dict[tuple, str]:
    """The type of every element and block of the page by its place (the delta path Streamlit keys it by)."""
    places = {}
    for index, child in getattr(node, "children", {}).items():
        places[(*path, index)] = ("block " if isinstance(child, Block) else "") + str(getattr(child, "type", ""))
        if isinstance(child, Block):
            places |= layout(child, (*path, index))
    return places


def assert_nothing_moved(before: dict[tuple, str], after: dict[tuple, str], what: str) -> None:
    moved = {
        place: (before[place], after[place]) for place in before.keys() & after.keys() if before[place] != after[place]
    }
    assert not moved, f"another element at the same place after {what}"
    assert before.keys() - after.keys() <= slot_contents(before), "only a block's contents come and go"
    assert after.keys() - before.keys() <= slot_contents(after), "only a block's contents come and go"


@pytest.mark.parametrize("page", LESSON_PAGES)
@pytest.mark.parametrize("name", ["transformer", "typed"])
def test_another_query_moves_no_element_and_changes_no_charts_spec(page, name):
    """A new query token, and back, leaves every element where it was: an element that appears for one query
    only (a tutorial's printed row) sits in a slot of its own. Otherwise every element after it changes place,
    and the browser replaces all of them (charts and tables drawn anew) instead of updating them.

    It only changes the numbers in the charts, never a spec (titles, names, layers): the browser then swaps data
    into the drawn charts instead of drawing them anew."""
    at = open_page(page, INPUTS[name])
    before, specs = layout(at.main), [chart.proto.spec for chart in charts(at)]
    box = at.sidebar.selectbox(key="query")
    first = box.value
    for query in (next(option for option in box.options if option != first), first):
        at.sidebar.selectbox(key="query").set_value(query).run()
        assert_clean(at)
        assert_nothing_moved(before, layout(at.main), f"picking “{query}”")
        assert [chart.proto.spec for chart in charts(at)] == specs, f"picking “{query}” changed a chart's spec"


def slot_contents(places: dict[tuple, str]) -> set[tuple]:
    """The places inside a block: what an element shown for some queries only may occupy."""
    return {place for place in places if len(place) > 1 and places.get(place[:-1], "").startswith("block")}


PAGE_CONTROLS = [
    ("app_pages/softmax.py", "slider", "Temperature t", 2.0),
    ("app_pages/qkv_projections.py", "slider", "d_k (size of each query", 3),
    ("app_pages/scaling.py", "slider", "d_k (size of queries", 64),
    ("app_pages/masking.py", "toggle", "Apply the mask", False),
    ("app_pages/multi_head.py", "number_input", "Number of heads h", 1),
    ("app_pages/multi_head.py", "number_input", "Number of heads h", 4),
    ("app_pages/generation.py", "slider", "Step t", 1),
    ("app_pages/trained_model.py", "radio", "Step", "Q"),
]


@pytest.mark.usefixtures("answered")  # some controls sit in what a step shows once its questions are answered
@pytest.mark.parametrize(("page", "kind", "label", "value"), PAGE_CONTROLS, ids=lambda v: str(v)[:24])
def test_a_page_control_moves_no_element(page, kind, label, value):
    """The same for the controls that change a whole page: a warning that shows only with the mask off, or one
    head's section more or less, comes and goes inside its own block."""
    at = open_page(page)
    before = layout(at.main)
    widget = next(w for w in at.get(kind) if w.label.startswith(label))
    assert widget.value != value
    widget.set_value(value).run()
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    assert_nothing_moved(before, layout(at.main), f"setting {label} to {value}")


def test_overview_states_the_counting_convention_once():
    """Issue 22 part 3: one counting convention (from 1; code from 0), said once on the overview."""
    at = open_page("app_pages/overview.py")
    assert_clean(at)
    said = [m.value for m in at.markdown if "count" in m.value.lower() and "from 1" in m.value]
    assert len(said) == 1 and "from 0" in said[0] and "d1" in said[0]


def test_overview_names_the_tutorials_and_does_not_deny_training():
    """Issue 22 part 7: one line per tutorial, named by its example (no file numbers); the training lesson trains."""
    at = open_page("app_pages/overview.py")
    assert_clean(at)
    text = " ".join(m.value for m in at.markdown)
    for name in ("Your journey starts with one step", "I can't find the light switch", "Self Attention is good"):
        assert f"- **“{name}”**:" in text
    assert "no\ntraining" not in text and "no training" not in text
    assert f"lesson {registry.BY_NAME['training'].number}, which trains" in " ".join(text.split())
