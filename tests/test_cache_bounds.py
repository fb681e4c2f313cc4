"""Memory stays bounded: the process-wide stores keep at most their byte budget, however many distinct long
sentences the learners send, and a long sentence's large tables are drawn, not kept to replay; a kept result holds
its own numbers, not the storage of a model's weights it was sliced from."""

from __future__ import annotations

import dataclasses
import functools
import random

import torch

from attention_core.tables import token_labels
from runtime.cache import ProcessCache, approx_bytes
from ui import charts, drawing

LONG_SENTENCE_TOKENS = 200  # a 1,000-character sentence is about 200 words


def long_labels(rng: random.Random) -> tuple[str, ...]:
    """The labels of a distinct sentence of about 1,000 characters."""
    return tuple(token_labels([f"w{rng.randrange(10**6)}" for _ in range(LONG_SENTENCE_TOKENS)]))


def test_kept_stays_within_its_byte_budget():
    kept = ProcessCache(100, max_bytes=10_000)
    for i in range(50):
        kept.get(i, lambda: b"x" * 3_000)
        assert kept.bytes <= 10_000 and sum(map(approx_bytes, kept.items.values())) == kept.bytes
    assert len(kept.items) == 3  # 3 items of about 3 KB fit in 10 KB
    assert 49 in kept.items and 0 not in kept.items  # the newest stay


def test_an_item_larger_than_the_budget_is_returned_but_not_kept():
    kept = ProcessCache(10, max_bytes=1_000)
    assert kept.get("big", lambda: "y" * 5_000) == "y" * 5_000
    assert "big" not in kept.items and kept.bytes == 0


def test_heatmap_data_never_exceeds_its_budget_after_many_long_sentences():
    rng = random.Random(0)
    store = drawing.heatmap_data.store
    for _ in range(40):
        labels = long_labels(rng)
        matrix = torch.rand(len(labels), len(labels), dtype=torch.float64).numpy()
        drawing.heatmap_data(matrix.tobytes(), matrix.shape, labels, labels, "weights", (0.0, 1.0), False, 230)
        assert store.bytes <= store.max_bytes
    assert store.bytes > store.max_bytes // 2, "the store is used, up to its budget"


def test_heatmap_specs_never_exceed_their_budget_after_many_long_sentences():
    rng = random.Random(1)
    style = drawing.HeatmapStyle(kind="weights", title="Weights")
    for _ in range(30):
        labels = long_labels(rng)
        drawing.heatmap_spec(labels, labels, style)
        for store in (drawing.heatmap_spec.store, drawing.HEATMAP_TEMPLATES):
            assert store.bytes <= store.max_bytes


def test_a_long_sentence_table_is_a_data_grid_not_html():
    side = 1 + int(drawing.MAX_HTML_CELLS**0.5)
    assert not drawing.html_sized(torch.zeros(side, side))
    assert drawing.html_sized(torch.zeros(charts.MAX_CHART_TOKENS // 2, 4))


LARGE_TABLE_PAGE = """
import torch
from ui import drawing

side = 70  # beyond MAX_HTML_CELLS (64 x 64)
values = torch.arange(side * side, dtype=torch.float64).reshape(side, side) / 7
labels = [f"t{i}" for i in range(side)]
drawing.table(values, labels, labels, alt_text="a large table")
"""


def test_a_large_table_is_converted_once_and_drawn_from_its_kept_arrow_table():
    """A table too large to replay is not converted again on a rerun (it is drawn from LARGE_TABLES), and what is
    drawn is the same table: its numbers, row labels and column labels."""
    from streamlit.testing.v1 import AppTest

    store = drawing.LARGE_TABLES
    at = AppTest.from_string(LARGE_TABLE_PAGE, default_timeout=60).run()
    assert not at.exception
    made = store.made
    at.run()
    assert not at.exception and store.made == made, "the rerun converted the table again"
    frame = at.dataframe[0].value
    side = 70
    expected = (torch.arange(side * side, dtype=torch.float64).reshape(side, side) / 7).tolist()
    assert list(frame.index) == [f"t{i}" for i in range(side)] and list(frame.columns) == list(frame.index)
    assert frame.to_numpy().tolist() == expected


def test_large_tables_of_many_long_sentences_stay_within_their_byte_budget():
    rng = random.Random(2)
    store = drawing.LARGE_TABLES
    for _ in range(60):
        labels = long_labels(rng)
        matrix = torch.rand(len(labels), len(labels), dtype=torch.float64)
        key = drawing.table_key(matrix, labels, labels, None)
        store.get(key, functools.partial(drawing.large_table, matrix, labels, labels))
        assert store.bytes <= store.max_bytes
    assert store.bytes > store.max_bytes // 2, "the store is used, up to its budget"


def test_a_kept_head_holds_its_own_slices_not_its_layers_weights():
    """st.cache_data pickles a tensor's whole storage: a head's (384, 64) slice of a (384, 384) weight kept the whole
    weight (1.7 MB a head instead of 0.15 MB). The kept slices have the same numbers and strides as the model's."""
    from attention_core import trained_model as tm
    from ui.models import trained

    params, _ = trained.head_steps("the river bank was flooded", 3, 4)
    sliced = tm.head_params(trained.model().model, 3, 4)
    for field in dataclasses.fields(sliced):
        kept, expected = getattr(params, field.name), getattr(sliced, field.name)
        assert torch.equal(kept, expected) and kept.stride() == expected.stride(), field.name
        assert kept.untyped_storage().nbytes() == kept.numel() * kept.element_size(), field.name
