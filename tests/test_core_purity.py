"""attention_core stays pure: importing it (and every submodule) never loads streamlit or altair."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import attention_core

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import importlib, json, pkgutil, sys
import attention_core
names = ["attention_core"] + [
    "attention_core." + m.name for m in pkgutil.iter_modules(attention_core.__path__)
]
for name in names:
    importlib.import_module(name)
print(json.dumps({
    "imported": names,
    "loaded": sorted(m for m in sys.modules if m.split(".")[0] in ("streamlit", "altair")),
    "torch": "torch" in sys.modules,
}))
"""


def test_importing_attention_core_loads_neither_streamlit_nor_altair():
    result = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    expected = {f"attention_core.{m.name}" for m in pkgutil.iter_modules(attention_core.__path__)}
    assert expected <= set(report["imported"]) and len(expected) >= 10  # every submodule was imported
    assert report["torch"]  # the probe really ran the core
    assert report["loaded"] == []
