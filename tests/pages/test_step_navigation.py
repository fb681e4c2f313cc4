"""Moving through a stepped lesson (issue 24): Next / Back, the step bar, step= links, the whole-lesson switch,
the steps seen and the lesson's footer on its last step (the 15-minute path: tests/pages/test_path_page.py).

Softmax (lesson 2) stands for every stepped lesson here: the navigation is one module (ui/page.py) that every
lesson calls; tests/pages/test_steps.py opens every step of every lesson.
"""

from __future__ import annotations

import pytest

from tests.apptest_helpers import assert_clean, open_page
from ui import page, registry
from ui.widgets import progress

PAGE = "app_pages/softmax.py"
LESSON = "softmax"
BAR = f"stepbar:{LESSON}"


def step_of(at) -> int:
    return at.segmented_control(key=BAR).value


def headings(at) -> list[str]:
    return [h.value for h in at.subheader]


def test_next_and_back_move_one_step_and_keep_the_url():
    at = open_page(PAGE, {"step": "1"})
    assert step_of(at) == 1 and not [b for b in at.button if b.key == f"stepback:{LESSON}"], "no Back on step 1"
    at.button(key=f"stepnext:{LESSON}").click().run()
    assert step_of(at) == 2 and at.query_params["step"] == "2"
    at.button(key=f"stepnext:{LESSON}").click().run()
    assert step_of(at) == 3
    at.button(key=f"stepback:{LESSON}").click().run()
    assert_clean(at)
    assert step_of(at) == 2 and at.query_params["step"] == "2"


def test_the_step_bar_opens_a_step_and_ticks_the_ones_seen():
    at = open_page(PAGE, {"step": "1"})
    at.segmented_control(key=BAR).set_value(5).run()
    assert step_of(at) == 5 and at.query_params["step"] == "5"
    assert "Temperature" in " ".join(headings(at))
    labels = at.segmented_control(key=BAR).options
    assert labels[0].startswith("✓ 1."), "step 1 was seen"
    assert not labels[4].startswith("✓"), "the current step is selected, not ticked"
    assert not labels[2].startswith("✓"), "step 3 was not seen"
    assert at.session_state[progress.STEPS_KEY][LESSON] == [1, 5]


@pytest.mark.parametrize(
    ("raw", "reason"),
    [("abc", "is not a step number"), ("0", "is not one of them"), ("99", "is not one of them"), ("²", "not a step")],
)
def test_a_step_that_does_not_exist_gets_one_sentence_and_a_real_step(raw, reason):
    at = open_page(PAGE, {"step": raw})
    assert_clean(at)
    assert any(reason in info.value for info in at.info), [info.value for info in at.info]
    assert step_of(at) == 1 and at.query_params["step"] == "1"


def test_the_whole_lesson_switch_draws_every_step_and_back():
    stepped = open_page(PAGE, {"step": "2"})
    one_step = headings(stepped)
    stepped.toggle(key=page.WHOLE_KEY).set_value(True).run()
    assert_clean(stepped)
    whole = headings(stepped)
    assert len(whole) > 3 * len(one_step), (one_step, whole)
    assert stepped.query_params["view"] == "all" and "step" not in stepped.query_params
    assert not stepped.segmented_control, "no step bar on the whole lesson"
    assert "What you just learned" in whole
    stepped.toggle(key=page.WHOLE_KEY).set_value(False).run()
    assert step_of(stepped) == 2, "back to the step the learner was on"
    assert "view" not in stepped.query_params


def test_set_it_up_on_the_last_step_opens_the_step_with_its_widget():
    count = len(open_page(PAGE, {"step": "1"}).segmented_control(key=BAR).options)
    at = open_page(PAGE, {"step": str(count)})
    experiment = next(e for e in registry.BY_NAME[LESSON].try_this if e.step == "Temperature")
    at.button(key=f"try:{LESSON}:{registry.BY_NAME[LESSON].try_this.index(experiment)}").click().run()
    assert_clean(at)
    names = [label.removeprefix("✓ ").split(". ", 1)[1] for label in at.segmented_control(key=BAR).options]
    assert step_of(at) == names.index("Temperature") + 1
    assert at.query_params["step"] == str(step_of(at))
    assert at.slider(key="softmax_temperature").value == dict(experiment.settings)["softmax_temperature"]


def test_a_view_all_link_opens_the_whole_lesson():
    at = open_page(PAGE, {"view": "all"})
    assert at.toggle(key=page.WHOLE_KEY).value is True
    assert "What you just learned" in headings(at)


def test_the_footer_and_the_next_lesson_come_on_the_last_step_only():
    count = len(open_page(PAGE, {"step": "1"}).segmented_control(key=BAR).options)
    middle, last = open_page(PAGE, {"step": "2"}), open_page(PAGE, {"step": str(count)})
    assert "What you just learned" not in headings(middle)
    assert "What you just learned" in headings(last)
    assert not [b for b in last.button if b.key == f"stepnext:{LESSON}"]
    _, following = registry.neighbours(LESSON)
    assert following.path.removeprefix("app_pages/").removesuffix(".py") in [
        link.proto.page for link in last.get("page_link")
    ]
