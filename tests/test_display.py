"""ui/display.py: number formats per column and the cached chart specs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from ui import charts, display


def test_columns_with_tiny_values_switch_to_scientific_notation():
    frame = pd.DataFrame({"plain": [0.5, 0.25], "tiny": [3e-7, 0.5], "zero": [0.0, 1.0]})
    assert display.number_formats(frame) == ["%.4f", "%.3e", "%.4f"]  # an exact 0 is not tiny


def test_heatmap_spec_keeps_data_apart_and_in_sentence_order():
    labels = ("the (1)", "cat", "the (3)")
    values = np.array([[1.0, 0.0, 2e-7], [0.5, 0.25, 0.25], [0.1, 0.2, 0.7]])
    spec, data = display.heatmap_spec.__wrapped__(
        values.tobytes(), values.shape, labels, labels, "weights", "w", "query", "key"
    )
    assert "datasets" not in spec and "data" not in spec  # the data travels as Arrow beside the spec
    assert list(data["row"][:3]) == ["the (1)"] * 3 and list(data["col"][:3]) == list(labels)
    assert list(data["short"][:3]) == ["1.00", "0", "2e-07"]  # exact zero vs tiny value read differently
    x_sorts = [layer["encoding"]["x"]["sort"] for layer in spec["layer"]]
    assert all(sort == list(labels) for sort in x_sorts)
    assert spec["autosize"] == {"type": "pad", "contains": "content"}


def test_chart_spec_builds_any_chart_function_by_name():
    data = pd.DataFrame({"token": ["a", "b"], "value": [0.25, 0.75]})
    spec = display.chart_spec.__wrapped__("bars", (data,), (("order", ("a", "b")), ("x", "token"), ("y", "value")))
    assert spec["mark"]["type"] == "bar" and spec["encoding"]["x"]["sort"] == ["a", "b"]
    records = next(iter(spec["datasets"].values()))
    assert [r["value"] for r in records] == [0.25, 0.75]


def test_raster_pixels_keep_large_matrices_about_a_thousand_pixels_wide():
    assert charts.raster_pixels(1024) == 1 and charts.raster_pixels(200) == 5
    image = charts.raster(torch.eye(300).numpy(), kind="weights")
    assert image.shape == (900, 900, 3) and image.dtype == np.uint8
