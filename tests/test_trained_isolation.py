"""transformers is never imported by the app (it is the tests' reference only); safetensors and tokenizers, which
load lesson 10's model, are paid for only by the trained-model feature."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CORE_PROBE = """
import json, sys
import attention_core
from attention_core import trained_model, bert  # the loader imports safetensors and tokenizers lazily
import ui.models.trained, ui.widgets.inputs
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("transformers", "tokenizers", "safetensors"))))
"""

PAGES_PROBE = """
import json, sys
from streamlit.testing.v1 import AppTest
from ui.registry import LESSONS
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


TRAINED_PROBE = """
import json, sys
from tests.apptest_helpers import open_page, sentence_params
from tests.pages.answered import show_every_answer  # a step shows its numbers once its questions are answered
from attention_core.presets import JOURNEY
runs = [
    show_every_answer(open_page("app_pages/trained_model.py", {"example": JOURNEY.name}, timeout=300),
                      lambda at: at.run()),  # lesson 10, every step, every question answered
    *(open_page(page, sentence_params("the cat ate fish", embedding="trained"), timeout=300)  # meaning steps
      for page in ("app_pages/scores.py", "app_pages/softmax.py", "app_pages/context_vectors.py")),
]
problems = [e.value for at in runs for e in [*at.exception, *at.error]]
print(json.dumps({
    "problems": problems,
    "metrics": [m.value for m in runs[0].metric],
    "agrees": [s.value for s in runs[0].success if "independent code" in s.value],
    "loaded": sorted({m.split(".")[0] for m in sys.modules} & {"transformers", "tokenizers", "safetensors"}),
}))
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


def test_lesson_10_and_the_meaning_steps_run_without_importing_transformers():
    """The model loads (its libraries are imported, lesson 10's head gaps and independent verdict are drawn) and
    transformers is not imported: it once was (and with it sympy, scipy, torch._dynamo: +145 MB per server)."""
    report = _probe(TRAINED_PROBE)
    assert report["problems"] == []
    assert len(report["metrics"]) == 2 and all(float(value) < 1e-5 for value in report["metrics"])  # weights, context
    assert len(report["agrees"]) == 1  # "By hand and the lab's forward match the independent code in all 72 heads."
    assert report["loaded"] == ["safetensors", "tokenizers"]
