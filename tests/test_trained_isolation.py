"""transformers is paid for only by the trained-model feature: the core and the other pages never import it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CORE_PROBE = """
import json, sys
import attention_core
from attention_core import trained_model  # the loader module itself imports transformers lazily
import ui.trained, ui.inputs
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("transformers", "tokenizers", "safetensors"))))
"""

PAGES_PROBE = """
import json, sys
from streamlit.testing.v1 import AppTest
from ui.lessons import LESSONS
visited = []
for lesson in LESSONS:
    if lesson.path == "app_pages/trained_model.py":
        continue
    at = AppTest.from_file("lab.py", default_timeout=120)
    if lesson.number is not None:
        at.switch_page(lesson.path)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    visited.append(lesson.path)
print(json.dumps({"visited": visited, "loaded": sorted(m for m in sys.modules if m.split(".")[0] == "transformers")}))
"""


def _probe(code: str):
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_importing_the_core_and_the_loader_does_not_import_transformers():
    assert _probe(CORE_PROBE) == []


def test_attention_core_init_does_not_import_the_trained_model_module():
    assert "trained_model" not in (ROOT / "attention_core" / "__init__.py").read_text()


def test_every_other_page_runs_without_loading_transformers():
    report = _probe(PAGES_PROBE)
    assert len(report["visited"]) >= 10
    assert report["loaded"] == []
