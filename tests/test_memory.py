"""ui.memory: the server asks glibc for two malloc arenas before any session's thread allocates; the cost of
attention does not import torch._dynamo."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Eight threads allocate at once; glibc gives each new thread an arena of its own (up to 8 per core) unless
# mallopt(M_ARENA_MAX) says fewer. malloc_info's XML names every arena as a <heap>.
COUNT_ARENAS = """
import ctypes, ctypes.util, sys, tempfile, threading
sys.path.insert(0, {root!r})
if {limit}:
    from ui import memory
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
