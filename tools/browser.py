"""Debian's Chromium driven by Playwright, and a headless Streamlit server to point it at.

Shared by tools/screenshot.py, the browser tests and the benchmarks.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from runtime.preload import OUT_OF_SIGHT  # noqa: E402  (what the lab's warm-up draws out of sight)

CHROMIUM = os.environ.get("ATTENTION_LAB_CHROMIUM", "/usr/bin/chromium")
# Without the networking flags Chromium keeps calling home, which this closed network refuses.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# The status widget shows only after a delay, so the app's own script state says whether the script
# has finished (lesson 10's first run loads the model for seconds with no status widget yet).
RENDERED_JS = """() => document.querySelector("[data-testid='stApp'][data-test-script-state='notRunning']")
    && !document.querySelector("[data-stale='true']")
    && !document.querySelector("[data-testid='stMain'] [data-testid='stSkeleton']")
    && [...document.querySelectorAll("[data-testid='stMain'] :is([data-testid='stDataFrame'], "
        + "[data-testid='stVegaLiteChart'])")]
        .filter((el) => el.offsetParent !== null)
        .every((el) => el.querySelector('canvas, svg'))"""
SETTLE_MS = 300


def wait_for_app(page, timeout: float = 60_000) -> None:
    """Wait until the title is drawn, the script has finished and every visible table and chart is drawn."""
    page.wait_for_selector("[data-testid='stMain'] h1", timeout=timeout)
    page.wait_for_function("() => !document.querySelector('[data-testid=stStatusWidget]')", timeout=timeout)
    page.wait_for_function(RENDERED_JS, timeout=timeout)
    page.wait_for_timeout(SETTLE_MS)


def serve(script: Path, port: int, cwd: Path = ROOT, *, watch: bool = False) -> subprocess.Popen:
    """`streamlit run script` headless on 127.0.0.1:port from the repository root (its .streamlit config).

    Tests and benchmarks turn the file watcher off; ``watch`` keeps the shipped config's watcher, and reruns on save."""
    watcher = ["--server.runOnSave", "true"] if watch else ["--server.fileWatcherType", "none"]
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(script),
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        *watcher,
    ]
    return subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def wait_healthy(process: subprocess.Popen, port: int, timeout: float = 60) -> float:
    """Block until the health endpoint answers; returns the wall time (time.time()) it did."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return time.time()
        except OSError:
            time.sleep(0.02)
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited: {process.stderr.read().decode()[-2000:]}")
    process.kill()
    raise RuntimeError(f"streamlit did not become healthy within {timeout:.0f} s")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_quiet(process: subprocess.Popen, busy_share: float = 0.05, timeout: float = 120) -> float:
    """Block until the server's process uses under busy_share of a core over a second; returns the seconds waited.

    A fresh lab server warms up in a thread after it answers (runtime/warmup.py: imports, heatmap specs, lesson 13's
    cost measurement). A benchmark that measured its reference page meanwhile would share the cores with that
    work and read a slow reference, which flatters every ratio."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        before = cpu_seconds(process.pid)
        time.sleep(1.0)
        if cpu_seconds(process.pid) - before < busy_share:
            break
    return time.monotonic() - start


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


# --- a page observed until it is drawn, and a session's checks (the benchmarks and deploy/many_copies.py) -------


QUIET_MS = 400  # no DOM change for this long after the rerun = finished drawing


TIMEOUT_MS = 60_000


VIEWPORT = {"width": 1400, "height": 2000}


OBSERVER_JS = """
(() => {
  const b = (window.__bench = { t0: null, last: 0, paint: 0, running: false, states: [], touched: new Set(),
    drawnAtRun: [], lastMain: 0 });  // the last drawn frame when each script run began; the main area's last change
  const OUT_OF_SIGHT = "__OUT_OF_SIGHT__";
  // a node that is the warm-up's, or a wrapper whose only child leads to it
  const onlyWarmUp = (node) => node.nodeType === 1
    && (node.matches(OUT_OF_SIGHT) || (node.childElementCount === 1 && onlyWarmUp(node.firstElementChild)));
  const watched = "[data-testid='stVegaLiteChart'], [data-testid='stDataFrame']";
  // One animation frame asked for at a time: its callback runs after every change made before it, so it marks the
  // frame that shows them. (One request per change cost the page tens of ms over a chart's thousands of draws.)
  let framePending = false;
  const painted = () => { framePending = false; b.paint = performance.now(); };
  const changed = (now) => {
    b.last = now;
    if (!framePending) { framePending = true; requestAnimationFrame(painted); }
  };
  new MutationObserver((records) => {
    const now = performance.now();
    let seen = false;
    for (const r of records) {
      if (r.type === 'attributes' && r.attributeName === 'data-test-script-state') {
        const state = r.target.getAttribute('data-test-script-state');
        b.states.push([state, now]);
        if (state === 'running') { b.running = true; b.drawnAtRun.push(Math.max(b.last, b.paint)); }
      }
      const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
      // a canvas's children are fallback content, never drawn (glide's accessibility table lives there)
      const canvas = el && el.closest('canvas');
      if (canvas && !(r.type === 'attributes' && el === canvas)) continue;
      // what the lab's warm-up draws out of sight (runtime.preload.OUT_OF_SIGHT), and its box coming or going; and the
      // <head>, which draws nothing (the styles and scripts it gains come with the elements that use them)
      if (el && (el.closest(OUT_OF_SIGHT) || el.closest('head'))) continue;
      if (r.type === 'childList' && [...r.addedNodes, ...r.removedNodes].every(onlyWarmUp)) continue;
      seen = true;
      if (el && el.closest("[data-testid='stMain']")) b.lastMain = now;
      const box = el && el.closest(watched);
      if (box && b.t0 !== null) b.touched.add(box);
    }
    if (seen) changed(now);
  }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  for (const name of ['fillText', 'fillRect', 'drawImage', 'putImageData', 'clearRect', 'fill', 'stroke']) {
    const draw = CanvasRenderingContext2D.prototype[name];
    CanvasRenderingContext2D.prototype[name] = function (...args) {
      const canvas = this.canvas;
      // a data grid's cells, or a Vega chart drawn on a canvas (Streamlit picks canvas for large charts; the lab
      // asks for it for heatmaps): drawing calls are its changes
      const grid = canvas && canvas.getAttribute && canvas.getAttribute('data-testid') === 'data-grid-canvas';
      if (grid || (canvas && canvas.closest && canvas.closest("[data-testid='stVegaLiteChart']"))) {
        const box = canvas.closest(watched);
        if (box && b.t0 !== null) b.touched.add(box);
        changed(performance.now());
      }
      return draw.apply(this, args);
    };
  }
  const start = () => { if (b.t0 === null) { b.t0 = performance.now(); performance.mark('bench-click'); } };
  window.__benchArm = () => {
    b.t0 = null; b.running = false; b.touched = new Set();
    document.addEventListener('pointerdown', start, { capture: true, once: true });
    document.addEventListener('keydown', start, { capture: true, once: true });
  };
})();
""".replace("__OUT_OF_SIGHT__", OUT_OF_SIGHT)


VISIBLE_JS = (
    "[...document.querySelectorAll(\"[data-testid='stMain'] [data-testid='stVegaLiteChart'], "
    "[data-testid='stMain'] [data-testid='stDataFrame']\")].filter((el) => el.offsetParent !== null)"
)


DONE_JS = f"""(quiet) => {{
  const b = window.__bench;
  const app = document.querySelector("[data-testid='stApp']");
  if (!b || b.t0 === null || !app) return false;
  // nothing drawn since the click yet (the server still computing the new step): not done
  if (b.last <= b.t0) return false;
  if (app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  // stale elements of the last run, the running man, and lazy elements whose JS chunk is still loading
  if (document.querySelector("[data-stale='true'], [data-testid='stStatusWidget'], [data-testid='stSkeleton']"))
    return false;
  if (!({VISIBLE_JS}).every((el) => el.querySelector('canvas, svg'))) return false;
  return performance.now() - b.last >= quiet;
}}"""


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def new_page(browser):
    """A page in a fresh context (its own cookies, so its own Streamlit session), observed."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(TIMEOUT_MS)
    context.add_init_script(OBSERVER_JS)
    return context.new_page()


def start_pick(page, combobox, avoid: str | None = None) -> str:
    """Open a selectbox and click the first option that is not selected, timing from that click; returns it."""
    combobox.click()
    # the list fills in as it opens: wait for an option that is not the selected one, then take the first of them
    # whose text is not ``avoid``
    others = page.locator("[role='option'][aria-selected='false']")
    others.first.wait_for(timeout=TIMEOUT_MS)
    target = others.first
    if avoid is not None:
        target = others.filter(has_not_text=re.compile("^" + re.escape(avoid) + "$")).first
    name = target.inner_text().strip()
    page.evaluate("window.__benchArm()")
    target.click()
    return name


def query_combobox(page):
    return page.locator("[data-testid='stSidebar']").get_by_role("combobox", name="Query token")


def expected_score(tokens: list[str], seed: int, d_model: int, query: int, key: int) -> float:
    """The raw score X[query] . X[key] that attention_core computes for this sentence (the scores page's heatmap)."""
    import attention_core as ac

    X = ac.random_embeddings(tokens, d_model, seed)  # (T, d_model)
    return float(X[query] @ X[key])


OWN_INPUT_PAGES = {"training", "generation"}  # lessons 11-12 have their own inputs, not the sidebar's sentence


def check_session(page, i: int, name: str, tokens: list[str], d_model: int, errors: list[str]) -> None:
    """The session shows its own input, no exception, and on the scores page its own score."""
    main = page.locator("[data-testid='stMain']").inner_text()
    if name not in OWN_INPUT_PAGES and f"{len(tokens)} tokens × d_model {d_model}" not in main:
        errors.append(f"session {i} ({name}): its own input is not on the page")
    if page.locator("[data-testid='stException']").count():
        errors.append(f"session {i} ({name}): exception on the page")
    if name == "scores":
        cell = f"“{tokens[0]}” → “{tokens[1]}”: "  # a heatmap cell reads '“query” → “key”: value'
        label = page.locator(f"[data-testid='stMain'] [aria-label^='{cell}']")
        text = label.first.get_attribute("aria-label") if label.count() else ""
        match = re.match(re.escape(cell) + r"([-−]?[\d.]+)", text)
        shown = float(match.group(1).replace("−", "-")) if match else float("nan")
        want = expected_score(tokens, i, d_model, 0, 1)
        if not abs(shown - want) <= 5e-4 * max(1.0, abs(want)):
            errors.append(f"session {i}: score cell {text!r}, attention_core says {want:.4f}")


def load_average() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())
