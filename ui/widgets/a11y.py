"""What the lab adds in the browser for keyboards, screen readers and phones, where Streamlit's elements take no
attributes.

One tiny inline component (components v2, no iframe), drawn once per run in the sidebar (its element hidden), keeps
three things right as the page changes:

- a formula, chart, table or code block wider (or a table taller) than its box scrolls (ui.drawing.PAGE_CSS; a
  "Show the code" line longer than the column): while it does, it is focusable (tabindex 0), so a keyboard can
  scroll it (axe's scrollable-region-focusable); a box that fits is no tab stop;
- the page's language (``<html lang>``) is the learner's ("zh-Hans" in Chinese), for a screen reader's voice;
- on a phone the step bar (ui.page) is one row that scrolls sideways (PAGE_CSS): the step picked is scrolled into
  the middle of it whenever another step is picked (and only then, so the learner's own scrolling stays).

Streamlit's markdown, charts and containers take no tabindex, hence the script: it marks what is drawn and drawn anew
(a mutation observer, batched once per frame, and once more after 600 ms) and what a resize or a web font makes
scroll. (The heatmaps' cell arithmetic is a
live region by ui.widgets.keyboard_grid's script, which also draws the keyboard's grid of the cells.)
"""

from __future__ import annotations

import streamlit as st

from attention_core import i18n

KEY = "lab_a11y"  # the component's key: ui.drawing.PAGE_CSS hides its element (.st-key-lab_a11y)

A11Y_JS = """
const SCROLLERS = "[data-testid='stMain'] :is(.katex-display, [data-testid='stVegaLiteChart'], .lab-table, " +
  "[data-testid='stCode'] pre)";
const BARS = "[data-testid='stMain'] [class*='st-key-stepbar-'] [role='radiogroup']";

function focusable(box) {
  const tall = box.classList.contains("lab-table") && box.scrollHeight > box.clientHeight + 1;
  const scrolls = tall || box.scrollWidth > box.clientWidth + 1;
  if (scrolls && !box.hasAttribute("tabindex")) box.setAttribute("tabindex", "0");
  else if (!scrolls && box.getAttribute("tabindex") === "0") box.removeAttribute("tabindex");
}

function picked_in_view(bar) {
  const picked = bar.querySelector("[aria-checked='true']");
  const shown = picked && `${[...bar.children].indexOf(picked)}:${bar.clientWidth}`;
  if (!picked || bar.scrollWidth <= bar.clientWidth + 1 || bar.dataset.labShown === shown) return;
  bar.dataset.labShown = shown;
  const [outer, inner] = [bar.getBoundingClientRect(), picked.getBoundingClientRect()];
  bar.scrollLeft += inner.left - outer.left - (outer.width - inner.width) / 2;
}

export default function (component) {
  const lang = component && component.data && component.data.lang;
  if (lang && document.documentElement.lang !== lang) document.documentElement.lang = lang;  // a screen reader's voice
  if (window.__attentionLabA11y) return;  // one observer per page, whichever run mounted it first
  let queued = false;
  const mark = () => {
    queued = false;
    document.querySelectorAll(SCROLLERS).forEach(focusable);
    document.querySelectorAll(BARS).forEach(picked_in_view);
  };
  const queue = () => {
    if (!queued) {
      queued = true;
      requestAnimationFrame(mark);
    }
  };
  const settled = () => setTimeout(queue, 600);  // and once more when late layout (a chart, a font) has settled
  window.__attentionLabA11y = new MutationObserver(() => {
    queue();
    settled();
  });
  window.__attentionLabA11y.observe(document.body, { childList: true, subtree: true });
  window.addEventListener("resize", queue);
  document.fonts.addEventListener("loadingdone", queue);  // a web font changes every text's width
  queue();
}
"""

_marker = st.components.v2.component("attention_lab_a11y", js=A11Y_JS, css=":host { display: none; }")


def mount() -> None:
    """The script above, in the sidebar (its element hidden by the page's style); once per run, at the same place. It
    also sets the page's language (``<html lang>``) to the learner's, so a screen reader reads Chinese as Chinese."""
    with st.sidebar:
        _marker(key=KEY, data={"lang": i18n.html_language(i18n.current())}, height=0)
