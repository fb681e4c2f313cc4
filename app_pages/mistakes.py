"""Mistakes museum: every classic attention bug, its wrong and right code, and what it does to your numbers."""

import streamlit as st

import attention_core as ac
from attention_core.i18n import _
from attention_core.tables import dimension_labels, to_frame
from ui import page
from ui.page import lesson_steps
from ui.widgets import inputs, museum
from ui.widgets.inputs import LabInput


def render(lab: LabInput) -> None:
    """The museum's outline: how it works, one exhibit per step (named by number only: a name would give the bug
    away), then the scorecard. Its spot-the-bug forms are its exercises: the footer has only the previous / next
    links."""
    page.lesson_title(__file__)
    exhibits = {
        _("Exhibit {number}", number=number): (lambda item=item, number=number: museum.exhibit(item, lab, number))
        for number, item in enumerate(museum.EXHIBITS, 1)
    }
    lesson_steps(__file__, {_("How it works"): lambda: intro(lab), **exhibits, _("Scorecard"): scorecard})


def scorecard() -> None:
    """The bugs spotted, missed and still open, and the lab's own functions to compare with."""
    st.markdown(museum.scorecard())
    page.show_code(ac.attention_scores, ac.softmax, title=_("The lab's own scores and softmax, to compare with"))


def intro(lab: LabInput) -> None:
    st.markdown(
        _(
            "Each exhibit is a real bug from tutorials and everyday code. Read the code and what it gives on your "
            "own input, **spot the wrong line**, then see the bug's name, the fix, the right numbers and why. "
            "Your first answer counts."
        )
    )
    page.lesson_caption(lab.description)
    page.download_csv(
        to_frame(lab.X, lab.labels, dimension_labels(lab.d_model)),
        "museum_input.csv",
        label=_("Download the input X as CSV"),
    )


render(inputs.current())
