"""The browser's first chart, form and code block, made ready while the learner reads the first step.

Streamlit's page loads the code of an element kind only when a page first shows one: the first step with a
heatmap fetches and runs Vega-Lite and Vega (about 1 MB), the first "Show the code" a syntax highlighter that
registers every language it knows, and V8 compiles their functions on that first use. The Next click onto the
first step with a chart or with code took two to five times as long as onto the steps after it
(docs/benchmarks.md, "Warming the browser").

``mount()`` puts a tiny components-v2 component (inline JavaScript in the app's own page, no iframe) in the
sidebar on the run after the browser's first answer (it sends the learner's stored progress, runtime.browser_store, at
once). It waits until the first page is still (its main area unchanged for QUIET_MS, no script running), then in the
browser's idle time imports those element kinds' modules, one per idle moment, from the same URLs Streamlit's bundle
loads them from (so the browser keeps one copy and Streamlit finds them ready), and draws a small lab heatmap, a bar
chart and a line chart off screen with the Vega-Embed call Streamlit makes, so the first real chart finds its code
compiled. Then it removes them and says it is ready. ``window.__attentionLabPreload`` says how far it got (a browser
test reads it, so a Streamlit upgrade that renames the modules fails a test instead of quietly losing the warm-up).

Ready reruns only the sidebar fragment that holds the component, and it draws ``element_kinds()``: one element of
each kind the lessons show (a table, a heatmap, a form, a download button, tabs, sliders, page links...), inside a
container the page's style hides. React and the browser then run each kind's code once while the learner reads the
first step, not at the Next click onto the first step that shows it, which took much longer than the same change once
warm (docs/benchmarks.md). The runs after it leave them out.
"""

from __future__ import annotations

import json
from pathlib import Path

import streamlit as st

from runtime import browser_store
from runtime.cache import process_cache
from ui import registry

# The lazy modules of the element kinds the lessons draw, in the order a learner meets them: charts (and the
# loader that imports Vega-Embed and Vega's expression interpreter), the exercise forms and download buttons,
# the step controls, code, then the rarer kinds. Each name is the start of a file in Streamlit's static/js.
MODULES = (
    "ArrowVegaLiteChart",
    "loadVegaEmbed",
    "embed",
    "vega-interpreter",
    "TextInput",
    "DownloadButton",
    "PageLink",
    "Slider",
    "NumberInput",
    "Radio",
    "Checkbox",
    "Metric",
    "StreamlitSyntaxHighlighter",
    "Table",
    "DataFrame",
    "GraphVizChart",
    "Spinner",
)
VEGA_LOADER = "loadVegaEmbed"  # its one export loads Vega-Embed and the expression interpreter, as Streamlit does
DONE_KEY = "_browser_preloaded"  # this session's browser warm-up is done
COMPONENT_KEY = "browser_preload"
KINDS_KEY = "lab_warm_kinds"  # the hidden container of element_kinds (the page's style hides .st-key-<key>)
# What the warm-up draws out of sight, in the page: the off-screen box of the warm charts and the hidden element
# kinds. A benchmark does not count changes inside them as the page's drawing (benchmarks/browser.py).
OUT_OF_SIGHT = f"[data-lab-warm-up], .st-key-{KINDS_KEY}"
QUIET_MS = 400  # the warm-up starts once the main area has not changed for this long and no script runs (the
# benchmarks' rule for a drawn page, tools/browser.QUIET_MS)
WAIT_MS = 15_000  # or after this long in any case

JS = """
export default function (component) {
  const { data, setStateValue } = component;
  if (!data || window.__attentionLabPreload) return;  // once per page load, whatever reruns follow
  window.__attentionLabPreload = "started";
  // Streamlit's bundle, index.<hash>.js: its lazy modules sit beside it, under the app's base path
  const bundle = [...document.querySelectorAll("script[type='module'][src]")]
    .find((script) => /\\/static\\/js\\/index\\.[^/]+\\.js$/.test(script.src));
  if (!bundle) { window.__attentionLabPreload = "no bundle"; return; }
  const url = (file) => new URL(file, bundle.src).href;
  const idle = () => new Promise((resolve) =>
    window.requestIdleCallback ? window.requestIdleCallback(resolve, { timeout: 2000 }) : setTimeout(resolve, 200));
  const warmVega = async () => {
    const loader = await import(url(data.vega_loader));
    const load = Object.values(loader).find((value) => typeof value === "function");
    const { embed, expressionInterpreter } = await load();
    const box = document.createElement("div");
    box.setAttribute("aria-hidden", "true");
    box.setAttribute("data-lab-warm-up", "");  // out of sight: benchmarks do not count its drawing as the page's
    box.style.cssText = "position: absolute; left: -10000px; top: 0; width: 400px; visibility: hidden;";
    document.body.appendChild(box);
    try {
      const options = { ast: true, expr: expressionInterpreter, actions: false, renderer: "svg",
        tooltip: { disableDefaultStyle: true }, defaultStyle: false };
      for (const spec of data.specs) {
        await idle();
        const result = await embed(box, spec, options);
        await result.view.runAsync();
        result.finalize();
      }
    } finally {
      box.remove();
    }
  };
  // The page the learner waits for is drawn first: its main area unchanged for QUIET ms and no script running
  // (at most WAIT ms), so the warm-up never takes the browser's main thread from it.
  const quiet = () => new Promise((resolve) => {
    const main = document.querySelector("[data-testid='stMain']") || document.body;
    let timer = 0;
    const gaveUp = setTimeout(() => finish(), data.wait_ms);
    const finish = () => { observer.disconnect(); clearTimeout(timer); clearTimeout(gaveUp); resolve(); };
    const check = () => {
      if (document.querySelector("[data-testid='stStatusWidget']")) timer = setTimeout(check, data.quiet_ms);
      else finish();
    };
    const observer = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(check, data.quiet_ms); });
    observer.observe(main, { childList: true, subtree: true, attributes: true, characterData: true });
    timer = setTimeout(check, data.quiet_ms);
  });
  (async () => {
    try {
      await quiet();
      for (const [index, file] of data.modules.entries()) {
        await idle();
        await import(url(file));
        if (index === data.vega_after) { await idle(); await warmVega(); }
      }
      window.__attentionLabPreload = "done";
    } catch (error) {
      window.__attentionLabPreload = `failed: ${error}`;
    }
    setStateValue("ready", true);  // the server's fragment now draws the element kinds (mount)
  })();
}
"""

_component = st.components.v2.component("attention_lab_preload", js=JS, css=":host { display: none; }")


def static_js_folder() -> Path:
    """Where Streamlit keeps its frontend's JavaScript modules."""
    return Path(st.__file__).parent / "static" / "static" / "js"


@process_cache(1)
def module_files() -> tuple[str, ...]:
    """The file of each of MODULES in this Streamlit's frontend ('embed.CX5AQgxi.js'), in MODULES' order; a name
    with no file (another Streamlit version) is left out."""
    files = {path.name for path in static_js_folder().glob("*.js")}
    found = []
    for name in MODULES:
        matches = sorted(file for file in files if file.startswith(f"{name}.") and file.count(".") == 2)
        if matches:
            found.append(matches[0])
    return tuple(found)


@process_cache(1)
def warm_specs() -> tuple[dict, ...]:
    """What the browser draws off screen, with the data inline: a lab heatmap (3 tokens, weights, clickable cells,
    the query's row outlined) as the spec the lessons send, then a bar chart and a line chart from ui.charts, so
    drawing them compiles the layers, scales, axes and expressions the real charts run."""
    import pandas as pd
    import torch

    from attention_core.tables import long_frame
    from ui import charts, drawing

    labels = ("a", "b", "c")
    weights = torch.softmax(torch.arange(9, dtype=torch.float64).reshape(3, 3) / 4, dim=-1)  # (3, 3)
    style = drawing.HeatmapStyle("weights", "Warm-up", colour_title=charts.colour_title("weights"), selectable=True)
    cells = charts.heatmap_cells(long_frame(weights, labels, labels), labels, labels)
    datasets = {charts.CELLS_DATA: cells.to_dict("records"), charts.OUTLINE_DATA: [{"row": "b"}]}
    heatmap = {**drawing.heatmap_spec(labels, labels, style), "datasets": datasets}
    row = pd.DataFrame({"token": list(labels), "weight": weights[1].tolist()})
    bars = charts.bars(row, x="token", y="weight", order=labels, title="Warm-up")
    series = pd.DataFrame({"step": [1, 2, 3, 1, 2, 3], "value": [1.0, 4, 9, 1, 2, 3], "way": ["a"] * 3 + ["b"] * 3})
    lines = charts.lines(series, x="step", y="value", color="way", title="Warm-up", log_y=True)
    others = [chart.to_dict(validate=False) for chart in (bars, lines)]
    return tuple(json.loads(json.dumps(spec)) for spec in (heatmap, *others))


def payload(with_specs: bool = True) -> dict:
    """What the component is given: the modules' files, which one is the Vega loader, and the specs to draw
    (none without with_specs)."""
    files = module_files()
    loader = next((file for file in files if file.startswith(f"{VEGA_LOADER}.")), None)
    vega_after = max((i for i, file in enumerate(files) if file.split(".")[0] in MODULES[:4]), default=-1)
    return {"modules": list(files), "vega_loader": loader, "vega_after": vega_after if loader else -1,
            "specs": list(warm_specs()) if with_specs else [], "quiet_ms": QUIET_MS, "wait_ms": WAIT_MS}  # fmt: skip


def mount(specs_ready: bool = True) -> None:
    """After the browser first answered (its stored progress, runtime.browser_store), once per session: the component
    that warms the browser (drawn in the sidebar, zero height), then the hidden element kinds.

    Not on the session's first run, and nothing while the first page draws: the warm-up's imports, charts and element
    kinds would take the browser's main thread from the page the learner waits for (with the element kinds drawn on
    the browser's first answer, the first page read 1.5-2.5 s later, docs/benchmarks.md). The component waits until
    the main area is still, imports the modules in idle time, then says it is ready: that reruns only this fragment,
    which draws the element kinds, so the rest of the page does not run again. While the server's warm-up has still
    to build the specs (the server's first page: ``specs_ready`` False, lab.py asks runtime.warmup), the browser only
    loads the modules: building the specs here would lengthen that run."""
    if not browser_answered() or st.session_state.get(DONE_KEY):
        return
    with st.sidebar:
        warm_up_fragment(specs_ready)


def warm_up(specs_ready: bool) -> None:
    """The component, and once it said it is ready the element kinds (this session's warm-up is then done: the next
    full run leaves both out). Run as a fragment (warm_up_fragment)."""
    _component(key=COMPONENT_KEY, data=payload(with_specs=specs_ready), height=0, on_ready_change=_ready)
    if (st.session_state.get(COMPONENT_KEY) or {}).get("ready"):
        st.session_state[DONE_KEY] = True
        element_kinds(link=registry.LESSONS[0].path)


def _ready() -> None:
    """The component's state changed: the fragment's rerun reads it."""


warm_up_fragment = st.fragment(warm_up)


def browser_answered() -> bool:
    """Whether this session's browser has sent its stored progress: a browser draws the session, and the page's
    style (drawn on the run before) is in place to hide the element kinds. A script test (AppTest) never answers."""
    return bool(st.session_state.get(browser_store.LOADED))


def element_kinds(link) -> None:
    """One element of each kind the lessons draw, hidden (the page's style), at the end of the sidebar.

    The labels start with "Warm-up" so that no test or learner finds them in place of the lesson's own; nothing
    here is focusable or read out (display: none). ``link`` is a page of the navigation (a path or st.Page) for its
    page link."""
    import torch

    from ui import drawing

    with st.container(key=KINDS_KEY):  # in the sidebar (mount's fragment)
        st.subheader("Warm-up")
        st.markdown("Warm-up **text** with `code`, [a link](#warm-up) and $x^2$.")
        st.caption("Warm-up caption")
        st.latex(r"\omega_{ij} = x_i \cdot x_j")
        st.info("Warm-up", icon=":material/info:")
        st.warning("Warm-up", icon=":material/warning:")
        st.success("Warm-up", icon=":material/check_circle:")
        st.error("Warm-up", icon=":material/error:")
        left, middle, right = st.columns(3)
        left.metric("Warm-up metric", "1.0")
        middle.button("Warm-up back", key="warm_up_back", icon=":material/arrow_back:")
        right.button("Warm-up next", key="warm_up_next", type="primary", icon=":material/arrow_forward:")
        with st.expander("Warm-up code"):
            st.code("def scores(X):\n    return X @ X.T", language="python")
        first, second = st.tabs(["Warm-up tab", "Warm-up other tab"])
        first.markdown("Warm-up")
        second.markdown("Warm-up")
        with st.form("warm_up_form"):
            st.text_input("Warm-up answer", key="warm_up_answer", placeholder="a number")
            st.form_submit_button("Warm-up check", icon=":material/check_circle:")
        st.download_button("Warm-up download", data="a,b\n1,2", file_name="warm-up.csv", key="warm_up_download")
        st.radio("Warm-up radio", ["a", "b"], key="warm_up_radio", horizontal=True)
        st.slider("Warm-up slider", 0.1, 2.0, 1.0, key="warm_up_slider")
        st.select_slider("Warm-up select slider", [1, 2, 3], key="warm_up_select_slider")
        st.number_input("Warm-up number", 1, 4, 2, key="warm_up_number")
        st.toggle("Warm-up toggle", key="warm_up_toggle")
        st.selectbox("Warm-up selectbox", ["a", "b"], key="warm_up_selectbox")
        st.page_link(link, label="Warm-up link", icon=":material/school:")
        weights = torch.softmax(torch.arange(9, dtype=torch.float64).reshape(3, 3) / 4, dim=-1)  # (3, 3)
        drawing.table(weights, ["a", "b", "c"], ["a", "b", "c"], alt_text="Warm-up table")
        drawing.heatmap(weights, ["a", "b", "c"], ["a", "b", "c"], title="Warm-up heatmap", highlight_row="b")
