"""runtime.memory: the server asks glibc for two malloc arenas before any session's thread allocates, and lets a real
model go once no connected session is on a page that used it; the cost of attention does not import torch._dynamo."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from attention_core import smollm2 as sm
from attention_core import trained_model as tm
from runtime import memory
from tests.apptest_helpers import open_page, sentence_params
from ui.models import smol, trained

ROOT = Path(__file__).resolve().parents[1]

# Eight threads allocate at once; glibc gives each new thread an arena of its own (up to 8 per core) unless
# mallopt(M_ARENA_MAX) says fewer. malloc_info's XML names every arena as a <heap>.
COUNT_ARENAS = """
import ctypes, ctypes.util, sys, tempfile, threading
sys.path.insert(0, {root!r})
if {limit}:
    from runtime import memory
    assert memory.limit_malloc_arenas()
libc = ctypes.CDLL(ctypes.util.find_library("c"))
barrier = threading.Barrier(8)
kept = []
def work():
    barrier.wait()
    kept.append([bytearray(4096) for _ in range(200)])  # above pymalloc's 512 bytes: glibc's malloc
threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
libc.fopen.restype = ctypes.c_void_p
with tempfile.NamedTemporaryFile(suffix=".xml") as out:
    handle = libc.fopen(out.name.encode(), b"w")
    libc.malloc_info(0, ctypes.c_void_p(handle))
    libc.fclose(ctypes.c_void_p(handle))
    print(open(out.name).read().count("<heap nr="))
"""


def arenas(limit: bool) -> int:
    code = COUNT_ARENAS.format(root=str(ROOT), limit=limit)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    return json.loads(result.stdout.strip())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc arenas")
def test_limit_malloc_arenas_keeps_eight_threads_in_two_arenas():
    assert arenas(limit=False) > 2  # glibc's default: a new arena for each new thread
    assert arenas(limit=True) <= 2


def test_the_server_limits_arenas_as_it_starts_before_the_warm_up_imports():
    text = (ROOT / "streamlit_app.py").read_text()
    body = text[text.index("async def warm_imports") :]
    assert body.index("memory.limit_malloc_arenas()") < body.index("warmup.start()")


# --- the real models' lifetime -----------------------------------------------------------------------------------


@pytest.fixture
def registry(monkeypatch):
    """An empty lifetime registry with one model, "m", whose releases are counted."""
    monkeypatch.setattr(memory, "_models", {})
    released = []
    memory.lifetime("m", lambda: released.append("m"))
    return released


def test_a_model_is_let_go_once_no_connected_session_holds_it(registry):
    memory.held("m", session="a", page="lesson 11")
    memory.held("m", session="b", page="lesson 13")
    both = {"a", "b"}.__contains__
    assert memory.release_unheld(both) == []
    memory.leave("a", "lesson 11")  # a rerun on the page it used the model on: still held
    assert memory.release_unheld(both) == []
    memory.leave("a", "lesson 12")  # a went to a page without the model; b still holds it
    assert memory.release_unheld(both) == [] and registry == []
    assert memory.release_unheld({"a"}.__contains__) == ["m"]  # b's browser went away
    assert registry == ["m"] and memory.release_unheld(both) == []  # let go once
    memory.held("m", session="a", page="lesson 13")  # loaded again by the next page that asks
    assert memory._models["m"].loaded and memory._models["m"].releases == 1


def test_without_a_streamlit_runtime_no_model_is_let_go(registry):
    memory.held("m", session="a", page="lesson 11")
    memory.leave("a", "lesson 12")
    assert memory.release_unheld() == [] and registry == []  # AppTest and scripts: every model stays
    assert memory._models["m"].loaded


def test_letting_smollm2_go_drops_the_model_and_its_forwards(monkeypatch):
    loads = []
    monkeypatch.setattr(sm, "load_model", lambda path=None: loads.append(path) or object())
    monkeypatch.setattr(sm, "forward", lambda _model, ids: ("forward of", ids))
    smol.release()  # no model kept from another test
    first = smol.model()
    assert smol.model() is first and len(loads) == 1
    smol.forward_ids((1, 2, 3))
    assert smol.forward_ids.store.items
    smol.release()
    assert not smol.forward_ids.store.items and smol.forward_ids.store.bytes == 0
    assert smol.model() is not first and len(loads) == 2
    smol.release()  # the next test loads the real model


def test_letting_minilm_go_drops_the_model(monkeypatch):
    loads = []
    monkeypatch.setattr(tm, "load_model", lambda folder=None: loads.append(folder) or object())
    trained.release()
    first = trained.model()
    assert trained.model() is first and len(loads) == 1
    trained.release()
    assert trained.model() is not first and len(loads) == 2
    trained.release()


def test_a_session_that_leaves_the_pages_of_a_model_lets_it_go(monkeypatch):
    """Lesson 1's meaning step loads all-MiniLM-L6-v2 for a new sentence; a rerun there keeps it; lesson 4 uses no
    model, so the session's run there lets it go (lab.py's run_finished). Sessions of other tests count as gone."""
    model = memory._models[trained.LIFETIME]
    others = set(model.holders)
    monkeypatch.setattr(memory, "_connected", lambda: lambda session: session not in others)
    at = open_page("app_pages/scores.py", sentence_params("the lifetime of a trained model", seed=37), timeout=300)
    assert not at.exception
    assert model.loaded and len(set(model.holders) - others) == 1
    releases = model.releases
    at.run()
    assert not at.exception and model.loaded and model.releases == releases  # still on lesson 1
    at.switch_page("app_pages/qkv_projections.py").run()
    assert not at.exception
    assert not model.loaded and model.releases == releases + 1 and not set(model.holders) - others


def test_under_apptest_a_page_without_the_model_does_not_let_it_go():
    """AppTest's mock Runtime gives every test's session one id: were it a server's, a test on lesson 4 would let go
    the model that lesson 1's test loaded, and every test on a model's page would load it again (2-4 s each)."""
    model = memory._models[trained.LIFETIME]
    at = open_page("app_pages/scores.py", sentence_params("the model stays between tests", seed=38), timeout=300)
    assert not at.exception and model.loaded
    releases = model.releases
    at.switch_page("app_pages/qkv_projections.py").run()
    assert not at.exception
    assert model.loaded and model.releases == releases


# --- imports the app does not need -----------------------------------------------------------------------------


def test_measuring_the_cost_of_attention_does_not_import_torch_dynamo():
    """Lesson 13's cost of attention counts allocations with a TorchDispatchMode; torch would wrap its dispatch in
    torch._dynamo.disable, whose first call imports torch._dynamo and sympy (68 MB of the server's memory)."""
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "from attention_core import generation as gen\n"
        "seconds, allocated = gen.measure_attention(64, 16)\n"
        "print(allocated > 0, 'torch._dynamo' in sys.modules, 'sympy' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.split() == ["True", "False", "False"]
