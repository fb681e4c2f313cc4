"""Moving through a stepped lesson (issue 24): Next / Back, the step bar, step= links, the whole-lesson switch,
the steps seen, the lesson's footer on its last step, and the 15-minute path.

Softmax (lesson 2) stands for every stepped lesson here: the navigation is one module (ui/steps.py) that every
lesson calls; tests/pages/test_steps.py opens every step of every lesson.
"""

from __future__ import annotations

import re

import pytest

from tests.apptest_helpers import assert_clean, frames, open_page
from ui import lessons, progress, steps

PAGE = "app_pages/softmax.py"
LESSON = "softmax"
BAR = f"stepbar:{LESSON}"
WORDS_PER_MINUTE = 200
MINUTES_PER_INTERACTION = 0.5  # one action per stop: read a table, pick a query, move a slider
TEXT_KINDS = ("markdown", "caption", "info", "success", "warning", "subheader", "header")


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
    stepped.toggle(key=steps.WHOLE_KEY).set_value(True).run()
    assert_clean(stepped)
    whole = headings(stepped)
    assert len(whole) > 3 * len(one_step), (one_step, whole)
    assert stepped.query_params["view"] == "all" and "step" not in stepped.query_params
    assert not stepped.segmented_control, "no step bar on the whole lesson"
    assert "What you just learned" in whole
    stepped.toggle(key=steps.WHOLE_KEY).set_value(False).run()
    assert step_of(stepped) == 2, "back to the step the learner was on"
    assert "view" not in stepped.query_params


def test_set_it_up_on_the_last_step_opens_the_step_with_its_widget():
    count = len(open_page(PAGE, {"step": "1"}).segmented_control(key=BAR).options)
    at = open_page(PAGE, {"step": str(count)})
    experiment = next(e for e in lessons.BY_NAME[LESSON].try_this if e.step == "Temperature")
    at.button(key=f"try:{LESSON}:{lessons.BY_NAME[LESSON].try_this.index(experiment)}").click().run()
    assert_clean(at)
    names = [label.removeprefix("✓ ").split(". ", 1)[1] for label in at.segmented_control(key=BAR).options]
    assert step_of(at) == names.index("Temperature") + 1
    assert at.query_params["step"] == str(step_of(at))
    assert at.slider(key="softmax_temperature").value == dict(experiment.settings)["softmax_temperature"]


def test_a_view_all_link_opens_the_whole_lesson():
    at = open_page(PAGE, {"view": "all"})
    assert at.toggle(key=steps.WHOLE_KEY).value is True
    assert "What you just learned" in headings(at)


def test_the_footer_and_the_next_lesson_come_on_the_last_step_only():
    count = len(open_page(PAGE, {"step": "1"}).segmented_control(key=BAR).options)
    middle, last = open_page(PAGE, {"step": "2"}), open_page(PAGE, {"step": str(count)})
    assert "What you just learned" not in headings(middle)
    assert "What you just learned" in headings(last)
    assert not [b for b in last.button if b.key == f"stepnext:{LESSON}"]
    _, following = lessons.neighbours(LESSON)
    assert following.path.removeprefix("app_pages/").removesuffix(".py") in [
        link.proto.page for link in last.get("page_link")
    ]


def path_stop(lesson: lessons.Lesson):
    return open_page(lesson.path, {"path": "short"})


def test_the_path_shows_the_essential_step_a_bridge_and_one_next():
    stops = steps.path_lessons()
    at = path_stop(lessons.BY_NAME[LESSON])
    assert_clean(at)
    assert not at.segmented_control, "the path shows one step, without the bar"
    assert "Check yourself" not in headings(at), "the exercises wait in the full lesson"
    position = [lesson.name for lesson in stops].index(LESSON) + 1
    assert any(f"stop {position} of {len(stops)}" in c.value for c in at.caption)
    assert any(lessons.BY_NAME[LESSON].bridge in m.value for m in at.markdown)
    links = at.get("page_link")
    following = stops[position] if position < len(stops) else None
    if following is not None:
        nexts = [link for link in links if link.proto.page == following.name]
        assert len(nexts) == 1 and "path=short" in nexts[0].proto.query_string
    assert at.session_state[progress.PATH_KEY] == position


def test_the_overview_offers_the_path_and_picks_it_up_where_the_learner_left():
    at = open_page("app_pages/overview.py")
    first = steps.path_lessons()[0]
    starts = [link for link in at.get("page_link") if "path=short" in link.proto.query_string]
    assert starts and starts[0].proto.page == first.name and "15-minute path" in starts[0].proto.label
    at.session_state[progress.PATH_KEY] = 2
    at.run()
    resume = next(link for link in at.get("page_link") if "path=short" in link.proto.query_string)
    assert resume.proto.page == steps.path_lessons()[2].name and "stop 3" in resume.proto.label


def words(at) -> int:
    """The words a learner reads on the step: text, headings, table headers and labels (numbers count as words)."""
    count = 0
    for kind in TEXT_KINDS:
        for element in at.get(kind):
            count += len(re.findall(r"\S+", str(element.value)))
    for frame in frames(at) + [t.value for t in at.table]:
        count += len(frame.columns) + len(frame.index) + frame.size
    return count


def test_the_15_minute_path_reads_in_15_minutes():
    """Issue 24: the path's reading time, words / 200 per minute plus one interaction per stop, is at most 15
    minutes on the default example. Every lesson 1-9 is on it, each with its essential step."""
    stops = steps.path_lessons()
    assert [lesson.number for lesson in stops] == list(range(1, 10))
    minutes = 0.0
    for lesson in stops:
        at = path_stop(lesson)
        assert_clean(at)
        minutes += words(at) / WORDS_PER_MINUTE + MINUTES_PER_INTERACTION
    print(f"15-minute path: {minutes:.1f} minutes over {len(stops)} stops")
    assert minutes <= 15, minutes
