"""Three copies of Attention Lab behind Debian's nginx (deploy/nginx.conf), driven by Chromium sessions.

    .venv/bin/python -m deploy.many_copies                  # 3 copies, 30 sessions, one copy killed
    .venv/bin/python -m deploy.many_copies --sessions 6     # the form tests/e2e/test_many_copies.py runs

Starts `streamlit run` on three free 127.0.0.1 ports and nginx with deploy/nginx.conf rendered into a
temp dir (its upstream lines pointed at those ports, listening on a free 127.0.0.1 port, logs in the
temp dir), then opens one Chromium context per learner on the scores page with its own sentence and
seed. Each session must show its own score cell, equal to attention_core's. Each context's first
response names the copy that served it (nginx's X-Upstream header), and its websocket's handshake
(read through the Chrome DevTools Protocol) names the same copy; no request is sent on to another copy
(nginx's access log). Each learner answers the page's first exercise: the sidebar counts it and the browser's
store (runtime/browser_store.py) keeps it. Then one copy is killed: its learners' websockets reconnect through
nginx to another copy, the page is drawn again there, and a query-token pick (the first run of the new
session there) redraws the right number and shows the learner's progress, read back from the browser.
Prints the figures; returns them with the errors found (and, for a failing learner, its route, nginx's log
lines and its console on the connection).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from runtime.browser_store import STORAGE_KEY  # noqa: E402
from tools.browser import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    DONE_JS,
    QUIET_MS,
    check_session,
    free_port,
    load_average,
    new_page,
    query_combobox,
    serve,
    start_pick,
    stop,
    wait_healthy,
)

NGINX_CONF = ROOT / "deploy" / "nginx.conf"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
UPSTREAM_LINE = re.compile(r"^(\s*)server 127\.0\.0\.1:\d+ (.*);$", re.MULTILINE)
TIMEOUT_MS = 120_000
PICK_TIMEOUT_MS = 20_000
ROUTE_PROBES = 300  # cookie-less requests that show how new learners spread (cheap: no browser)


def render_nginx_conf(ports: list[int], listen: int, scratch: Path) -> str:
    """deploy/nginx.conf with its upstream pointed at these ports, listening on 127.0.0.1:listen, logging in scratch."""
    text = NGINX_CONF.read_text()
    shipped = UPSTREAM_LINE.findall(text)
    if not shipped:
        raise ValueError("deploy/nginx.conf has no `server 127.0.0.1:PORT ...;` upstream lines")
    indent, options = shipped[0]
    lines = "\n".join(f"{indent}server 127.0.0.1:{port} {options};" for port in ports)
    text = UPSTREAM_LINE.sub("", text, count=len(shipped) - 1)  # drop all but the last, then replace it
    text = UPSTREAM_LINE.sub(lambda _m: lines, text, count=1)
    if "listen 80;" not in text:
        raise ValueError("deploy/nginx.conf does not `listen 80;`")
    text = text.replace("listen 80;", f"listen 127.0.0.1:{listen};")
    return text.replace("/var/log/nginx/", f"{scratch}/")


def start_nginx(ports: list[int], listen: int, scratch: Path) -> subprocess.Popen:
    conf = scratch / "nginx.conf"
    conf.write_text(render_nginx_conf(ports, listen, scratch))
    globals_ = f"daemon off; pid {scratch}/nginx.pid; error_log {scratch}/error.log;"
    if os.geteuid() == 0:
        globals_ += " user root;"  # the workers read nothing but this temp dir; no other user needed
    command = [NGINX, "-p", str(scratch), "-c", str(conf), "-g", globals_]
    check = subprocess.run([*command, "-t"], capture_output=True, text=True)
    if check.returncode:
        raise RuntimeError(f"nginx -t: {check.stderr}")
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_healthy(process, listen, timeout=20)
    return process


@dataclass
class Session:
    i: int
    tokens: list[str]
    d_model: int
    page: object
    copy: str = ""  # the upstream that served its first page
    websockets: list[tuple[float, str]] = field(default_factory=list)  # (time of the handshake, X-Upstream)
    console: list[str] = field(default_factory=list)  # the page's console lines about its connection
    progress: str = ""  # the sidebar's progress line after this learner answered an exercise

    def route(self) -> str:
        """The route cookie nginx gave this learner's browser (its key in nginx's access log)."""
        return next((c["value"] for c in self.page.context.cookies() if c["name"] == "lab_route"), "")


def sentence(i: int) -> tuple[list[str], int]:
    return [f"c{i}w{j}" for j in range(4 + i % 5)], 2 + i % 6


def open_session(browser, base: str, i: int) -> Session:
    tokens, d_model = sentence(i)
    page = new_page(browser)
    page.set_default_timeout(TIMEOUT_MS)
    session = Session(i, tokens, d_model, page)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")

    def handshake(event: dict) -> None:
        headers = {k.lower(): v for k, v in event["response"]["headers"].items()}
        session.websockets.append((time.monotonic(), headers.get("x-upstream", "")))

    cdp.on("Network.webSocketHandshakeResponseReceived", handshake)
    page.on(
        "console",
        lambda msg: (
            session.console.append(f"{time.monotonic():.1f} {msg.type}: {msg.text[:200]}")
            if re.search(r"websocket|ping|connect", msg.text, re.IGNORECASE)
            else None
        ),
    )
    query = f"example=Your+own+sentence&sentence={'+'.join(tokens)}&embedding=Random+%28seeded%29&seed={i}"
    response = page.goto(f"{base}/scores?{query}&d_model={d_model}&view=all", wait_until="commit", timeout=TIMEOUT_MS)
    session.copy = response.headers.get("x-upstream", "")
    return session


def drawn(session: Session, timeout: float = TIMEOUT_MS) -> None:
    page = session.page
    page.wait_for_selector("[data-testid='stMain'] h1", timeout=timeout)
    page.evaluate("() => { window.__bench.t0 = 0; }")
    page.wait_for_function(DONE_JS, arg=QUIET_MS, timeout=timeout, polling=100)


def check(session: Session, errors: list[str], when: str) -> None:
    found: list[str] = []
    check_session(session.page, session.i, "scores", session.tokens, session.d_model, found)
    errors += [f"{when}: {error}" for error in found]


NONE_YET = "Exercises: none answered yet"
PROGRESS_JS = """() => {
  const lines = [...document.querySelectorAll("[data-testid='stSidebar'] [data-testid='stCaptionContainer']")];
  const line = lines.find((element) => element.innerText.includes("Exercises:"));
  return line ? line.innerText.trim() : "";
}"""


def progress_line(session: Session) -> str:
    """The sidebar's progress line ("Exercises: 0/1 correct"), drawn after the page from the session's book."""
    return session.page.evaluate(PROGRESS_JS)


def start_answer(session: Session) -> None:
    """Answer the page's first exercise (any answer counts as answered): the first radio option, or a number."""
    form = session.page.locator("[data-testid='stMain'] [data-testid='stForm']").first
    options = form.locator("[data-testid='stRadio'] [role='radiogroup'] label")
    if options.count():
        options.first.click()
    else:
        form.locator("input[type='text']").first.fill("0.5")
    form.get_by_role("button", name="Check").click()


def wait_progress(session: Session, expected: str | None, timeout: float = PICK_TIMEOUT_MS) -> str:
    """Wait until the progress line reads ``expected`` (None: anything but "none answered yet"); returns it."""
    deadline = time.monotonic() + timeout / 1000
    line = progress_line(session)
    while (line == NONE_YET or not line or (expected is not None and line != expected)) and time.monotonic() < deadline:
        session.page.wait_for_timeout(200)
        line = progress_line(session)
    return line


def stored_progress(session: Session) -> str:
    """What the learner's browser keeps in localStorage (runtime/browser_store.py): what outlives a copy."""
    return session.page.evaluate(f"() => window.localStorage.getItem({json.dumps(STORAGE_KEY)}) || ''")


def new_routes(base: str, probes: int) -> Counter:
    """How many of `probes` cookie-less requests nginx sends to each copy (each gets a new route cookie)."""
    import urllib.request

    copies: Counter = Counter()
    for _ in range(probes):
        with urllib.request.urlopen(f"{base}/_stcore/health", timeout=10) as response:
            if not any(c.startswith("lab_route=") for c in response.headers.get_all("Set-Cookie") or []):
                raise RuntimeError("nginx did not set a lab_route cookie on a request without one")
            copies[response.headers.get("X-Upstream", "")] += 1
    return copies


def failovers(scratch: Path) -> list[str]:
    """nginx's access-log lines of requests that tried more than one copy (upstream=A, B)."""
    log = scratch / "access.log"
    return [line for line in log.read_text().splitlines() if ", " in line.rsplit("upstream=", 1)[-1]]


def diagnose(group: list[Session], errors: list[str], scratch: Path, killed_at: float) -> list[str]:
    """Each learner named in an error: its route, nginx's log lines for that route, its console on the connection."""
    named = {int(n) for n in re.findall(r"session (\d+)", "\n".join(errors))}
    access = (scratch / "access.log").read_text().splitlines() if (scratch / "access.log").exists() else []
    out: list[str] = []
    for s in group:
        if s.i not in named:
            continue
        route = s.route()
        out.append(f"\nsession {s.i}: route {route}, page from {s.copy}, websockets {s.websockets}")
        out.append(f"  killed at {killed_at:.1f}")
        out += [f"  nginx: {line}" for line in access if route and f"route={route}" in line][-40:]
        out += [f"  console: {line}" for line in s.console[-20:]]
    if named and (scratch / "error.log").exists():
        out += [f"  nginx error.log: {line}" for line in (scratch / "error.log").read_text().splitlines()[-40:]]
    return out


def median_max(seconds: list[float]) -> str:
    return f"{statistics.median(seconds):.1f} s ({max(seconds):.1f} s) |" if seconds else "none |"


def run(sessions: int = 30, copies: int = 3, emit=print) -> tuple[list[str], list[str]]:
    """Figures as markdown table rows, and the errors found (empty when all is well)."""
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    diagnosis: list[str] = []
    lines = [f"| copies behind nginx / concurrent sessions | {copies} / {sessions} |"]
    ports = [free_port() for _ in range(copies)]
    listen = free_port()
    apps = [serve(ROOT / "streamlit_app.py", port) for port in ports]
    with tempfile.TemporaryDirectory(prefix="lab-nginx-") as scratch_dir:
        scratch = Path(scratch_dir)
        nginx = None
        try:
            for app, port in zip(apps, ports, strict=True):
                wait_healthy(app, port)
            nginx = start_nginx(ports, listen, scratch)
            base = f"http://127.0.0.1:{listen}"
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    started = time.monotonic()
                    group = [open_session(browser, base, i) for i in range(sessions)]  # all load at once
                    for s in group:
                        try:
                            drawn(s)
                            check(s, errors, "first page")
                        except Exception as error:
                            errors.append(f"session {s.i} first page: {str(error).splitlines()[0][:160]}")
                    lines.append(
                        f"| all {sessions} first pages drawn and checked | {time.monotonic() - started:.1f} s |"
                    )
                    # each learner answers an exercise: its progress, kept in its browser, must outlive its copy
                    for s in group:
                        try:
                            start_answer(s)
                        except Exception as error:
                            errors.append(f"session {s.i} answering: {str(error).splitlines()[0][:160]}")
                    for s in group:
                        try:
                            s.progress = wait_progress(s, None)
                            if s.progress in ("", NONE_YET) or '"lessons":{"scores"' not in stored_progress(s):
                                errors.append(f"session {s.i}: answered, but progress reads {s.progress!r}")
                        except Exception as error:
                            errors.append(f"session {s.i} after answering: {str(error).splitlines()[0][:160]}")
                    per_copy = Counter(s.copy for s in group)
                    spread = " / ".join(str(per_copy.get(f"127.0.0.1:{p}", 0)) for p in ports)
                    lines.append(f"| sessions per copy (X-Upstream of the first page) | {spread} |")
                    if sessions >= 10 * copies and len(per_copy) < copies:  # a copy left empty: 1 in 60,000 at 30
                        errors.append(f"the sessions did not spread over the {copies} copies: {dict(per_copy)}")
                    probe = new_routes(base, ROUTE_PROBES)
                    shares = " / ".join(f"{100 * probe.get(f'127.0.0.1:{p}', 0) / ROUTE_PROBES:.0f} %" for p in ports)
                    lines.append(f"| {ROUTE_PROBES} new route cookies, share per copy | {shares} |")
                    if min(probe.get(f"127.0.0.1:{p}", 0) for p in ports) < ROUTE_PROBES / copies / 2:
                        errors.append(f"new route cookies do not spread over the copies: {dict(probe)}")
                    for s in group:  # sticky: the websocket goes to the copy that served the page
                        if {u for _, u in s.websockets} != {s.copy}:
                            errors.append(f"session {s.i}: page from {s.copy}, websockets to {s.websockets}")
                    # kill the copy that serves the first session; its learners must come back elsewhere
                    victim = ports.index(int(group[0].copy.rsplit(":", 1)[1]))
                    moved = [s for s in group if s.copy == f"127.0.0.1:{ports[victim]}"]
                    stayed = [s for s in group if s not in moved]
                    retried = failovers(scratch)  # before the kill every request must reach its route's copy
                    lines.append(f"| requests nginx sent on to another copy before the kill | {len(retried)} |")
                    errors += [f"before the kill, nginx moved a request: {line}" for line in retried[:3]]
                    killed_at = time.monotonic()
                    apps[victim].kill()
                    apps[victim].wait()
                    reconnect, handshakes, kept = [], [], []
                    for s in moved:
                        try:
                            deadline = time.monotonic() + TIMEOUT_MS / 1000
                            while not [t for t, _ in s.websockets if t > killed_at] and time.monotonic() < deadline:
                                s.page.wait_for_timeout(50)
                            opened = [(t, u) for t, u in s.websockets if t > killed_at]
                            if not opened:
                                errors.append(f"session {s.i}: no new websocket after its copy was killed")
                                continue
                            if opened[0][1] in ("", s.copy):
                                errors.append(f"session {s.i}: reconnected to {opened[0][1]!r}, not another copy")
                            handshakes.append(opened[0][0] - killed_at)
                            drawn(s)
                            reconnect.append(time.monotonic() - killed_at)
                            check(s, errors, "after the kill")
                        except Exception as error:
                            errors.append(f"session {s.i} after the kill: {str(error).splitlines()[0][:160]}")
                    # every learner, moved or not, picks another query token and sees the right number
                    for s in group:
                        try:
                            s.page.set_default_timeout(PICK_TIMEOUT_MS)  # a page that cannot be clicked fails fast
                            start_pick(s.page, query_combobox(s.page))
                        except Exception as error:
                            errors.append(f"session {s.i} picking: {str(error).splitlines()[0][:160]}")
                    for s in group:
                        try:
                            s.page.wait_for_function(DONE_JS, arg=QUIET_MS, timeout=TIMEOUT_MS, polling=100)
                            check(s, errors, "after a pick")
                            # A reconnected page is not rerun until the learner acts: this pick is the first run
                            # of its new session on another copy, which reads the progress back from the browser.
                            line = wait_progress(s, s.progress)
                            if line != s.progress:
                                errors.append(f"session {s.i}: progress {line!r} after the pick, not {s.progress!r}")
                            elif s in moved:
                                kept.append(s.i)
                        except Exception as error:
                            errors.append(f"session {s.i} after the pick: {str(error).splitlines()[0][:160]}")
                    moved_to = Counter(u for s in moved for t, u in s.websockets if t > killed_at)
                    where = ", ".join(f"{u}: {n}" for u, n in sorted(moved_to.items()))
                    lines += [
                        f"| copy killed | 127.0.0.1:{ports[victim]} ({len(moved)} sessions, {len(stayed)} elsewhere) |",
                        f"| its sessions' websockets moved to | {where} |",
                        "| kill to new websocket handshake, median (max) | " + median_max(handshakes),
                        "| kill to page drawn again, median (max) | " + median_max(reconnect),
                        f"| its learners whose progress was back on their new copy | {len(kept)} of {len(moved)} |",
                    ]
                    if not moved or len(kept) < len(moved):
                        errors.append(f"progress back for {len(kept)} of the killed copy's {len(moved)} learners")
                    diagnosis += diagnose(group, errors, scratch, killed_at)
                    for s in group:
                        s.page.context.close()
                finally:
                    browser.close()
        finally:
            if nginx is not None:
                stop(nginx)
            for app in apps:
                if app.poll() is None:
                    stop(app)
    lines.append(f"| errors (wrong number, no reconnect, ...) | {len(errors)} |")
    lines += [f"| error | {error} |" for error in errors[:10]]
    emit("\n".join(["| figure | measured |", "|---|---:|", *lines, f"\nLoad average: {load_average()}", *diagnosis]))
    return lines, errors


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--copies", type=int, default=3)
    args = parser.parse_args()
    _, found = run(args.sessions, args.copies)
    sys.exit(1 if found else 0)
