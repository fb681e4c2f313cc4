"""Mistakes museum: every classic attention bug, its wrong and right code, and what it does to your numbers."""

import streamlit as st

import attention_core as ac
from attention_core import mistakes
from attention_core.tables import to_frame
from ui import display, inputs, museum, path, progress
from ui.inputs import LabInput


def render(lab: LabInput) -> None:
    display.lesson_title(__file__)
    intro(lab)
    wrong_axis_picture(lab)
    for number, item in enumerate(museum.EXHIBITS, 1):
        museum.exhibit(item, lab, number)
    your_score()
    display.show_code(*museum.MISTAKE_FUNCTIONS)
    path.lesson_footer(__file__)  # its spot-the-bug forms are its exercises: only the previous / next links


def intro(lab: LabInput) -> None:
    st.markdown(
        "Each exhibit is a real bug from tutorials and everyday code. Read the code, **spot the wrong line**, "
        "then compare what the bug and the fix give on your own input, side by side."
    )
    display.lesson_caption(lab.description)


def wrong_axis_picture(lab: LabInput) -> None:
    """The first exhibit as two heatmaps: softmax down the columns next to softmax along the rows."""
    wrong, right = mistakes.softmax_wrong_axis(ac.attention_scores(lab.X, lab.X))
    left, right_column = st.columns(2)
    with left:
        display.heatmap(
            wrong,
            lab.labels,
            lab.labels,
            kind="weights",
            title="softmax(dim=0): columns sum to 1",
            highlight_row=lab.query_label,
        )
    with right_column:
        display.heatmap(
            right,
            lab.labels,
            lab.labels,
            kind="weights",
            title="softmax(dim=-1): rows sum to 1",
            highlight_row=lab.query_label,
        )
    display.download_csv(
        to_frame(wrong, lab.labels, lab.labels),
        "wrong_axis_weights.csv",
        label="Download the wrong-axis weights as CSV",
    )


def your_score() -> None:
    answered, correct = progress.counts(museum.PAGE)
    st.caption(f"Bugs spotted in this session: {correct} of {answered} answered.")


render(inputs.current())
