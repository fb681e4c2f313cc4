"""ui/models/measured.py: the cost of attention is measured once per process, however many callers ask at once."""

from __future__ import annotations

import threading

import pandas as pd

from ui.models import measured


def test_the_cost_is_measured_once_and_callers_get_their_own_copy(monkeypatch):
    calls = []

    def slow_cost() -> pd.DataFrame:
        calls.append(1)
        threading.Event().wait(0.2)  # long enough for the other callers to arrive while it measures
        return pd.DataFrame({"T": [16, 32], "ms": [0.1, 0.4]})

    monkeypatch.setattr(measured, "_cost", None)
    monkeypatch.setattr(measured.gen, "cost_frame", slow_cost)
    frames = []
    threads = [threading.Thread(target=lambda: frames.append(measured.attention_cost())) for _ in range(4)]
    assert not measured.attention_cost_ready()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == [1] and measured.attention_cost_ready()
    frames[0].loc[0, "ms"] = 99.0  # a page editing its copy changes no other page's
    assert measured.attention_cost()["ms"].tolist() == [0.1, 0.4]
