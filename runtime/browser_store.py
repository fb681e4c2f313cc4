"""The learner's progress in their own browser: a tiny Streamlit component that reads and writes localStorage.

Why a components-v2 component written here, and not a package such as ``streamlit-local-storage``:
- Streamlit 1.67 ships ``st.components.v2.component``: a component is a few lines of inline JavaScript,
  mounted in the app's own page (no iframe, no build step, no npm, no ``node_modules``), so the lab adds no
  dependency to pin, hash and audit (issue 25 part 5 pins the whole tree).
- The packages we looked at wrap components v1: each instance is an iframe, they need a key per stored item and
  several reruns to read, and their release pace lags Streamlit's.
- What the lab needs is tiny: read one value once per session, write it when it changes.

The flow, one instance per run in the sidebar, mounted after the page ran (so it writes this run's answers):
1. A session's first run sends ``{"read": 1}``: the script reads localStorage and sets the state ``stored`` to
   the text it found (or ""), which reruns the app. The callback checks that text with ``progress.parse_file``
   (a browser's storage is untrusted) and merges it into the session's book before the page draws.
2. When another tab of the same browser writes, the ``storage`` event sends that value the same way, and it is
   merged too (merging is monotone and writes happen only on change, so two open tabs settle on the union).
3. From then on, a run sends ``{"write": text}`` only when the book's payload changed since the last write
   (an empty book removes the value, so "Forget my progress" forgets in the browser too); other runs send
   nothing.
Nothing is stored on the server beyond the session's own state.
"""

from __future__ import annotations

import json

import streamlit as st

from ui.widgets import progress

STORAGE_KEY = "attention-lab-progress"  # the localStorage key in the learner's browser
COMPONENT_KEY = "progress_store"
LOADED = "_progress_store_loaded"  # this session has read the browser's value (or found none)
WRITTEN = "_progress_store_written"  # the payload text last written to the browser

JS = """
export default function (component) {
  const { data, setStateValue } = component;
  if (!data) return;
  const KEY = __KEY__;
  let stored = "";
  try {
    if (typeof data.write === "string") {
      if (data.write === "") window.localStorage.removeItem(KEY);
      else window.localStorage.setItem(KEY, data.write);
    }
    if (data.read) stored = window.localStorage.getItem(KEY) || "";
  } catch (error) {
    stored = "";  // storage blocked (a private window's policy): the session starts empty
  }
  if (data.read) setStateValue("stored", stored);
  // Another tab of this browser wrote its book: merge it here too (merging is monotone, so the tabs settle).
  const onStorage = (event) => {
    if (event.key === KEY && event.storageArea === window.localStorage) setStateValue("stored", event.newValue || "");
  };
  window.addEventListener("storage", onStorage);
  return () => window.removeEventListener("storage", onStorage);
}
""".replace("__KEY__", json.dumps(STORAGE_KEY))

CSS = ":host { display: none; }"  # the component draws nothing

_mount = st.components.v2.component("attention_lab_progress_store", js=JS, css=CSS)


def receive(text: object) -> None:
    """The value the browser had (a string, "" when none): checked, merged into the book, then marked written. Its
    language is taken on the session's first read only: another tab's later write does not switch this tab."""
    first = not st.session_state.get(LOADED)
    st.session_state[LOADED] = True
    if not isinstance(text, str) or not text:
        return
    try:
        data = progress.parse_file(text)
    except progress.ProgressFileError:
        return  # a damaged or foreign value: start from this session's book, which the next write replaces it with
    progress.merge(data)
    if not first:
        st.session_state.pop(progress.STORED_LANGUAGE_KEY, None)


def _on_stored() -> None:
    """The browser sent its value: on the session's first run, or when another tab wrote its book."""
    receive((st.session_state.get(COMPONENT_KEY) or {}).get("stored"))


def message() -> dict | None:
    """What this run sends to the browser: a read on the session's first run, the payload when it changed."""
    if not st.session_state.get(LOADED):
        return {"read": 1}
    text = progress.payload_text()
    if text == st.session_state.get(WRITTEN):
        return None
    st.session_state[WRITTEN] = text
    parts = ("lessons", "visited", "steps", "path", "checks", "language")
    empty = not any(progress.payload().get(part) for part in parts)
    return {"write": "" if empty else text}


def sync() -> None:
    """Mount the store in the sidebar (once per run, after the page): read on the first run, write on change."""
    with st.sidebar:
        _mount(key=COMPONENT_KEY, data=message(), on_stored_change=_on_stored, height=0)
