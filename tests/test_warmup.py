"""The server-start warm-up: streamlit_app.py is an st.App that serves lab.py and imports its modules early."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

from streamlit.web.server.app_discovery import discover_asgi_app

from runtime import warmup

ROOT = Path(__file__).resolve().parents[1]


def run_python(code: str) -> str:
    """Run code in a fresh interpreter at the repository root (nothing imported yet); its stdout."""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def top_level_imports(path: Path) -> set[str]:
    """Modules a script imports at its top level (``from ui import a, b`` gives ui.a and ui.b)."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            # ``from ui import a`` imports the module ui.a; ``from ui.format import f`` imports ui.format
            names |= {_module_of(node.module, alias.name) for alias in node.names}
    return names


def _module_of(module: str, name: str) -> str:
    """``module.name`` when that is a module, else ``module`` (the name is a function or a constant in it)."""
    return f"{module}.{name}" if importlib.util.find_spec(module) and _is_module(f"{module}.{name}") else module


def _is_module(dotted: str) -> bool:
    try:
        return importlib.util.find_spec(dotted) is not None
    except ModuleNotFoundError:
        return False


def test_streamlit_run_finds_the_app_in_streamlit_app_py():
    found = discover_asgi_app(ROOT / "streamlit_app.py")
    assert found.is_asgi_app and found.import_string == "streamlit_app:app"


def test_the_app_serves_lab_py_and_warms_up_as_the_server_starts():
    out = run_python(
        "import asyncio, sys\n"
        "import streamlit_app\n"
        "from runtime import warmup\n"
        "assert 'torch' not in sys.modules\n"
        "async def serve_briefly():\n"
        "    async with streamlit_app.warm_imports(streamlit_app.app):\n"
        "        pass\n"
        "asyncio.run(serve_briefly())\n"
        "print(warmup.wait(), all(name in sys.modules for name in warmup.MODULES),"
        " sys.modules['torch'].get_num_threads(), streamlit_app.app.script_path)"
    )
    waited, imported, threads, script = out.split(" ", 3)
    assert (waited, imported) == ("True", "True")
    assert threads == "1", "the warm-up times attention (ui.models.measured) on one torch thread, as the app runs"
    assert Path(script).name == "lab.py"


def test_the_warm_up_imports_everything_lab_py_imports_before_the_first_run():
    heavy = {name for name in top_level_imports(ROOT / "lab.py") if name not in {"streamlit", "runtime.warmup"}}
    assert heavy <= set(warmup.MODULES)


def test_without_a_server_start_the_script_does_not_wait():
    assert run_python("from runtime import warmup; print(warmup.wait())") == "False"


def test_a_failing_import_does_not_hang_the_script():
    out = run_python(
        "from runtime import warmup\nwarmup.MODULES = ('ui.no_such_module',)\nwarmup.start()\nprint(warmup.wait())"
    )
    assert out == "True"


def test_the_server_start_builds_the_heatmaps_the_lessons_ask_for_first():
    """After the warm-up, a short sentence's and a 32-token sentence's heatmaps of every kind build nothing."""
    out = run_python(
        "from runtime import warmup\nfrom ui import drawing as _drawing\n"
        "warmup.warm_charts()\n"
        "made = _drawing.HEATMAP_TEMPLATES.made\n"
        "for n in (2, 6, 16, 32, 40):\n"
        "    labels = tuple(f't{i}' for i in range(n))\n"
        "    for kind in ('weights', 'scores', 'values', 'mask'):\n"
        "        for clickable in (False, True):\n"
        "            style = _drawing.HeatmapStyle(kind, 'Any title', 'q', 'k', 'any', selectable=clickable)\n"
        "            _drawing.heatmap_spec(labels, labels, style)\n"
        "print(made > 0, _drawing.HEATMAP_TEMPLATES.made - made)"
    )
    assert out == "True 0"


def test_the_chart_warm_up_waits_for_the_first_page_and_a_stopping_server_skips_it():
    """The first page's script run has the interpreter to itself; the heatmaps are built after it."""
    out = run_python(
        "import time\n"
        "from runtime import warmup\nfrom ui import drawing as _drawing\n"
        "warmup.start()\n"
        "warmup.wait()\n"
        "time.sleep(1.0)\n"
        "before = _drawing.HEATMAP_TEMPLATES.made\n"
        "warmup.first_run_finished()\n"
        "warmup._thread.join(120)\n"
        "from ui.models import measured\n"
        "print(before, _drawing.HEATMAP_TEMPLATES.made > 0, measured.attention_cost_ready())"
    )
    assert out == "0 True True"
    stopped = run_python(
        "import time\n"
        "from runtime import warmup\nfrom ui import drawing as _drawing\n"
        "warmup.start()\n"
        "warmup.wait()\n"
        "start = time.monotonic()\n"
        "warmup.stop()\n"
        "warmup._thread.join(120)\n"
        "print(time.monotonic() - start < 5, _drawing.HEATMAP_TEMPLATES.made)"
    )
    assert stopped == "True 0"


def test_lab_py_tells_the_warm_up_its_first_page_is_drawn():
    from streamlit.testing.v1 import AppTest

    warmup._first_run_done.clear()
    at = AppTest.from_file(str(ROOT / "lab.py"), default_timeout=60)
    at.run()
    assert not at.exception
    assert warmup._first_run_done.is_set()
