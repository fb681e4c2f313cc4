"""Mistakes museum: every classic attention bug, its wrong and right code, and what it does to your numbers."""

import streamlit as st

import attention_core as ac
from attention_core.tables import dimension_labels, to_frame
from ui import display, inputs, museum, path
from ui.inputs import LabInput


def render(lab: LabInput) -> None:
    display.lesson_title(__file__)
    intro(lab)
    for number, item in enumerate(museum.EXHIBITS, 1):
        museum.exhibit(item, lab, number)
    st.markdown(museum.scorecard())
    display.show_code(ac.attention_scores, ac.softmax, title="The lab's own scores and softmax, to compare with")
    path.lesson_footer(__file__)  # its spot-the-bug forms are its exercises: only the previous / next links


def intro(lab: LabInput) -> None:
    st.markdown(
        "Each exhibit is a real bug from tutorials and everyday code. Read the code and what it gives on your "
        "own input, **spot the wrong line**, then see the bug's name, the fix, the right numbers and why. "
        "Your first answer counts."
    )
    display.lesson_caption(lab.description)
    display.download_csv(
        to_frame(lab.X, lab.labels, dimension_labels(lab.d_model)),
        "museum_input.csv",
        label="Download the input X as CSV",
    )


render(inputs.current())
