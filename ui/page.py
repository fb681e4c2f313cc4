"""The page API: everything a lesson page draws with, in one module.

A page imports attention_core, streamlit, this module, and if it needs them ui.charts (the Altair builders),
ui.widgets.inputs (the sidebar's LabInput) and one lesson widget or model handle (ui.widgets.*, ui.models.*)::

    from ui import page
    from ui.page import exercises_section, lesson_steps

    def render(lab: LabInput) -> None:
        page.lesson_title(__file__)
        lesson_steps(__file__, {"The idea": lambda: idea(lab), "The weights": lambda: weights_step(lab, result)})

What is here: the lesson's title, its steps and footer (defined here, below), and re-exported from the modules
that hold them: the drawing functions (ui.drawing: ``table``, ``frame_table``, ``heatmap``, ``matrix``, ``chart``,
``line_view``, ``show_code``, ``download_csv``, ``slot``, the tutorial notes), the exercises (ui.widgets.exercises),
the cell-explain builders (ui.widgets.cell_click), the number formatters (ui.format), the lesson registry's
entries (ui.registry), a step control's value kept across steps (ui.widgets.kept) and the steps seen
(ui.widgets.progress).

A lesson as a short sequence of steps, one idea each, one on screen at a time. A page hands its steps to
``lesson_steps`` in order, each a function that draws it::

    lesson_steps(__file__, {
        "Worked example": lambda: worked_example(lab, result),
        "Divide by the sum?": lambda: pitfall_divide_by_sum(lab, result),
    })

What the learner gets:
- a step bar under the title (the steps by name; the ones already seen are ticked), and Back / Next at the
  bottom; the last step ends with the lesson's footer (Try this, What you just learned, the next lesson);
- the step in the URL as ``step=N`` (counted from 1), so a link opens that step; a step that does not exist
  gets a one-line message and step 1 (or the step the learner was on);
- a switch "Whole lesson on one page" (``view=all`` in the URL) that draws every step in order, as the lesson
  was before it had steps, for those who want to scroll, search or print;
The steps seen are kept with the learner's progress (``ui.widgets.progress``), in the browser. The 15-minute path is
a page of its own (``app_pages/path.py``), drawn in steps the same way. An experiment's "Set it up" button sets
widget values from a callback (``ui.widgets.inputs.apply``), so one click sets it up.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.runtime.scriptrunner import get_script_run_ctx

from attention_core.i18n import _
from ui import registry
from ui.drawing import (  # noqa: F401  (re-exported: the page API)
    TUTORIALS,
    chart,
    download_csv,
    frame_table,
    heatmap,
    lesson_caption,
    line_view,
    matrix,
    printed_beside_ours,
    printed_text,
    show_code,
    slot,
    table,
    tutorial_name,
    tutorial_note,
    weights_domain,
)
from ui.format import (  # noqa: F401  (re-exported: the page API)
    MAX_TERMS,
    exp_text,
    format_number,
    latex_int,
    learner_text,
    numbers_text,
    plural,
    products_sum_text,
    quotient_text,
    sum_text,
    texts,
    vector_text,
    weighted_vectors_text,
    written_sum,
)
from ui.registry import BY_NAME, PRACTICE, Lesson, lesson_for, numbered, sections  # noqa: F401  (re-exported)
from ui.widgets import exercises, inputs, progress
from ui.widgets.cell_click import (  # noqa: F401  (re-exported: the cell-explain builders)
    context_of,
    masked_scores_of,
    output_options,
    projection_of,
    scores_of,
    weights_of,
)
from ui.widgets.exercises import exercises_section  # noqa: F401  (re-exported)
from ui.widgets.progress import progress_table, steps_seen  # noqa: F401  (re-exported)

STEP_PARAM = "step"  # ?step=N, counted from 1
VIEW_PARAM = "view"  # ?view=all: the whole lesson on one page
WHOLE = "all"
WHOLE_KEY = "whole_lesson"  # the switch's widget key (one switch, the same on every lesson)
WHOLE_STATE = "_whole_lesson"  # the learner's choice, kept while pages without the switch run
MOVED = "_step_moved"  # a count of the learner's step changes: each brings the new step's top into view
# Next sits at the bottom of a step; the next step would open scrolled down as far. This tiny component (inline,
# no iframe: components v2) scrolls the main area back to the top when the count of step changes grows. It is drawn
# on every run at the end of the sidebar, so it never appears or vanishes between the main area's elements: an
# element that comes and goes moves every element after it, and Streamlit then draws them all anew.
TOP_JS = """
export default function (component) {
  const moved = component.data && component.data.moved;
  if (!moved || moved === window.__attentionLabStepMoved) return;
  window.__attentionLabStepMoved = moved;
  const main = document.querySelector("[data-testid='stMain']");
  if (main) main.scrollTo({ top: 0 });
  window.scrollTo(0, 0);
}
"""
_to_top = st.components.v2.component("attention_lab_step_top", js=TOP_JS, css=":host { display: none; }")


def _remembered(lesson: str) -> str:
    return f"_step:{lesson}"


def _bar_key(lesson: str) -> str:
    return f"stepbar:{lesson}"


# --- where the learner is ------------------------------------------------------------------------------------


def parse_step(raw: str | None, count: int) -> tuple[int | None, str]:
    """(step, problem) from the URL's ``step=`` text: the step (1..count) or None with a one-line reason."""
    if raw is None or raw == "":
        return None, ""
    text = raw.strip()
    if not (text.isascii() and text.isdigit()):
        return None, _(
            "“step={raw}” is not a step number: a whole number from 1 to {count}.",
            raw=learner_text(raw[:20]),
            count=count,
        )
    number = int(text)
    if not 1 <= number <= count:
        return None, _(
            "This lesson has {count} steps, so step={number} is not one of them.", count=count, number=number
        )
    return number, ""


def current_step(lesson: str, names: tuple[str, ...]) -> int:
    """The step to draw: the one a 'Set it up' button just asked for, else the URL's if it is valid, else the one
    this session was on in this lesson, else 1.

    The script writes the URL only to correct a bad step= (a link just opened, so its page is the URL's); a step
    change writes it from its callback. A run that follows a click in the navigation must not write the URL:
    the browser would pair the new parameters with the page it is leaving."""
    count = len(names)
    asked = st.session_state.pop(inputs.open_step_key(lesson), "")
    if asked and asked not in names:  # the registry names a step in English; a page may name its steps translated
        asked = _(asked)
    if asked in names:  # a callback of this page asked for it: the URL is this page's, so it may be written
        number = names.index(asked) + 1
        move_to(lesson, number)
        return number
    raw = st.query_params.get(STEP_PARAM)
    number, problem = parse_step(raw, count)
    if problem:
        st.info(_("{problem} Showing the step you were on.", problem=problem), icon=":material/link_off:")
    if number is None:
        number = min(int(st.session_state.get(_remembered(lesson), 1)), count)
        if raw is not None:
            st.query_params[STEP_PARAM] = str(number)
    st.session_state[_remembered(lesson)] = number
    return number


def go_to(lesson: str, number: int) -> None:
    """Make ``number`` the lesson's current step, in the session and in the URL (a callback: the page stays)."""
    st.session_state[_remembered(lesson)] = number
    st.query_params[STEP_PARAM] = str(number)


def move_to(lesson: str, number: int) -> None:
    """The learner's Next, Back or pick on the step bar (a callback): go there and show the step from its top."""
    go_to(lesson, number)
    st.session_state[MOVED] = st.session_state.get(MOVED, 0) + 1


def scroll_to_top() -> None:
    """After a step change, bring the new step's top into view. Drawn on every run, in the sidebar: its script
    scrolls only when the count of step changes has grown since it last scrolled."""
    with st.sidebar:
        _to_top(key="step_top", data={"moved": st.session_state.get(MOVED, 0)}, height=0)


def whole_lesson() -> bool:
    """Whether the learner asked for the whole lesson on one page: the URL's view=all, else the session's choice."""
    if st.query_params.get(VIEW_PARAM) == WHOLE:
        st.session_state[WHOLE_STATE] = True
    return bool(st.session_state.get(WHOLE_STATE, False))


def _on_whole_switch() -> None:
    st.session_state[WHOLE_STATE] = bool(st.session_state[WHOLE_KEY])
    if st.session_state[WHOLE_STATE]:
        st.query_params[VIEW_PARAM] = WHOLE
        st.query_params.pop(STEP_PARAM, None)
    else:
        st.query_params.pop(VIEW_PARAM, None)


# --- drawing ---------------------------------------------------------------------------------------------------


def step_label(number: int, name: str, seen: bool) -> str:
    """'✓ 2. Divide by the sum?' for a step already seen, '2. Divide by the sum?' otherwise."""
    return f"{'✓ ' if seen else ''}{number}. {_(name)}"


def _on_bar(lesson: str) -> None:
    picked = st.session_state.get(_bar_key(lesson))
    if picked is not None:
        move_to(lesson, int(picked))


def bar_title(number: int, names: tuple[str, ...]) -> str:
    """The step bar's label, the step's title: 'Step 3 of 12: Divide by the sum?'."""
    return _("Step {number} of {count}: {name}", number=number, count=len(names), name=_(names[number - 1]))


def step_bar(lesson: str, names: tuple[str, ...], current: int) -> None:
    """The lesson's steps by name, the current one selected, those seen ticked; picking one opens it.

    Its label is the step's title ('Step 3 of 12: …'): a screen reader's name for the bar, and on a phone a line
    above it, where the bar is one row that scrolls sideways (ui.drawing.PAGE_CSS; on a wider screen the label is
    hidden, as the bar shows every step's name in a few rows)."""
    seen = set(progress.steps_seen(lesson))
    st.session_state[_bar_key(lesson)] = current  # the bar follows the URL and the buttons
    st.segmented_control(
        bar_title(current, names),  # the key is the bar's identity: a new label keeps the widget
        options=list(range(1, len(names) + 1)),
        format_func=lambda n: step_label(n, names[n - 1], n in seen and n != current),
        key=_bar_key(lesson),
        required=True,
        on_change=_on_bar,
        args=(lesson,),
        width="stretch",
        wrap=True,
    )


def whole_switch() -> bool:
    """The 'Whole lesson on one page' switch; returns whether it is on."""
    on = whole_lesson()
    st.session_state[WHOLE_KEY] = on
    st.toggle(
        _("Whole lesson on one page"),
        key=WHOLE_KEY,
        on_change=_on_whole_switch,
        help=_("Every step of this lesson in order on one long page, to scroll, search or print."),
    )
    return on


def step_buttons(lesson: registry.Lesson, names: tuple[str, ...], current: int) -> None:
    """Back and Next under the step; the last step leads on with the lesson's footer instead of Next."""
    left, right = st.columns(2)
    if current > 1:
        left.button(
            _("Back: {name}", name=_(names[current - 2])),
            key=f"stepback:{lesson.name}",
            on_click=move_to,
            args=(lesson.name, current - 1),
            icon=":material/arrow_back:",
        )
    if current < len(names):
        right.button(
            _("Next: {name}", name=_(names[current])),
            key=f"stepnext:{lesson.name}",
            on_click=move_to,
            args=(lesson.name, current + 1),
            icon=":material/arrow_forward:",
            type="primary",
        )


# The container under the page's title that the step bar and the whole-lesson switch are drawn in, per session (the
# page's title reserves it, lesson_title; its lesson_steps call takes it): the step's title comes before
# the page's own controls, which every step of the lesson uses.
_NAVIGATION: dict[str, DeltaGenerator] = {}


def _session() -> str:
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx else ""


def reserve_navigation() -> None:
    """Keep the place under the page's title for the step navigation (lesson_title calls this)."""
    _NAVIGATION[_session()] = st.container()


def navigation() -> DeltaGenerator:
    """The place reserved under the title, or here when the page reserved none."""
    return _NAVIGATION.pop(_session(), None) or st.container()


def lesson_steps(page: str, steps: dict[str, Callable[[], None]]) -> None:
    """Draw the lesson ``page`` (its ``__file__``) as steps: one step, or all of them."""
    lesson = registry.lesson_for(page)
    exercises.start_run(lesson.name)  # the steps drawn below record what they ask afresh
    names = tuple(steps)
    scroll_to_top()  # in every view, so that the sidebar keeps its shape
    with navigation():  # under the title: the step's title and the bar, then the whole-lesson switch
        bar = st.container()
        whole = whole_switch()
    if whole:
        for draw in steps.values():
            draw()
        lesson_footer(page)
        return
    current = current_step(lesson.name, names)
    with bar:
        step_bar(lesson.name, names, current)
    steps[names[current - 1]]()
    progress.note_step(lesson.name, current)
    step_buttons(lesson, names, current)
    if current == len(names):
        lesson_footer(page)


def lesson_title(path: str) -> registry.Lesson:
    """The page's st.title from the lesson registry (pass ``__file__``); returns the registry entry."""
    lesson = registry.lesson_for(path)
    st.title(_(lesson.label))
    reserve_navigation()  # a stepped lesson's step bar, right under the title, before the page's controls
    return lesson


# --- the lesson's footer ---------------------------------------------------------------------------------------


def lesson_footer(page: str, try_this: tuple[registry.Experiment, ...] | None = None) -> None:
    """The end of a lesson: 'Try this' (one click each; a page may pass experiments measured on its input),
    'What you just learned', previous / next links, all from the lesson registry."""
    lesson = registry.lesson_for(page)
    experiments = lesson.try_this if try_this is None else try_this
    if experiments:
        try_this_box(lesson.name, experiments)
    if lesson.learned:
        st.subheader(_("What you just learned"), anchor="what-you-just-learned")
        st.markdown("\n".join(f"{n}. {line}" for n, line in enumerate(map(_, lesson.learned), 1)))
    previous_next(lesson.name)


def try_this_box(key: str, experiments: tuple[registry.Experiment, ...]) -> None:
    """Two or three experiments, each with a button that sets it up (or a note to do it by hand)."""
    with st.container(border=True):
        st.markdown(_("**Try this**"))
        for n, experiment in enumerate(experiments):
            left, right = st.columns([3, 1], vertical_alignment="center")
            left.markdown(_("**{label}.** {look_for}", label=_(experiment.label), look_for=_(experiment.look_for)))
            if experiment.settings:
                right.button(
                    _("Set it up"),
                    key=f"try:{key}:{n}",
                    on_click=inputs.apply,
                    args=(experiment.settings, key, experiment.step),
                    icon=":material/science:",
                )
            else:
                right.caption(_("Do it in the sidebar."))


def previous_next(key: str) -> None:
    """Links to the previous and the next page of the registry."""
    previous, following = registry.neighbours(key)
    left, right = st.columns(2)
    if previous is not None:
        left.page_link(
            previous.path, label=_("Previous: {label}", label=_(previous.label)), icon=":material/arrow_back:"
        )
    if following is not None:
        right.page_link(
            following.path, label=_("Next: {label}", label=_(following.label)), icon=":material/arrow_forward:"
        )
