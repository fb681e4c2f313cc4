"""Shared fixtures. Browser fixtures live in tests/e2e/conftest.py."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # so tests import attention_core and ui from the checkout

import torch  # noqa: E402

# The suite multiplies tiny tensors: one thread is faster than two fighting over small work,
# and leaves the second core to the Streamlit server and Chromium of the browser tests.
torch.set_num_threads(1)

# .streamlit/config.toml hides every exception's details from browsers (client.showErrorDetails = "none");
# AppTest reads that file too, so here the suite shows them in full: a failing test names the real error.
# tests/test_production_config.py checks the production value on its own.
from streamlit import config as _streamlit_config  # noqa: E402

_streamlit_config.set_option("client.showErrorDetails", "full")

# Every AppTest's first run scans the metadata of every installed package for Streamlit components
# (streamlit.components.v2.manifest_scanner: about 1,000 files read, 0.4 s of CPU) for a list that cannot change
# while the suite runs; the suite opens some 2,000 AppTests. Scanned once per process here, the same answer.
from streamlit.components.v2 import manifest_scanner as _manifest_scanner  # noqa: E402

_scan_component_manifests = functools.cache(_manifest_scanner.scan_component_manifests)
_manifest_scanner.scan_component_manifests = lambda max_workers=None: list(_scan_component_manifests())
