"""A heatmap's cells by keyboard: a focusable grid beside the chart that opens the cell a mouse click opens.

The Altair heatmap takes no focus, so ``cell_click.explained_cell`` mounts this grid beside each clickable
heatmap: a components-v2 component (inline JavaScript and CSS in the app's own page, no iframe;
``keyboard_grid.js`` and ``keyboard_grid.css`` next to this file) drawing an ARIA grid with one Tab stop
(roving tabindex). The arrow keys, Home / End and Page Up / Down move; Enter or Space sends the cell's
(row, col) indices, and ``on_open`` (cell_click keeps the cell, as a click does) runs before the rerun draws,
so the arithmetic below is the cell's. Each cell's accessible name is "query “cat”, key “sat”: 0.4100".

What a learner sees: nothing more until the grid has focus (it is visually hidden, its element takes no room);
then a focus ring on the chart's own cell and a chip naming it and its value. Where the ring cannot be placed (a
chart of over 2,000 cells, which Streamlit draws on a canvas), the grid itself shows while it has focus, a window
of at most 12 x 12 values around the active cell. The script also makes the arithmetic container a polite live
region (role=status), so a screen reader reads the arithmetic when it opens, by keyboard or by mouse, and clears
the chart's outline of a clicked cell once the keyboard has opened another.

What it costs a rerun: one element per clickable heatmap, whose data (labels and ``format_number`` texts) is built
once per matrix and kept; the browser redraws the grid only when they change.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import streamlit as st
import torch

from attention_core.i18n import _
from attention_core.numbers import format_number  # the one number formatter (ui.format re-exports it)
from runtime.cache import MB, process_cache


def lean(source: str, comment: str) -> str:
    """A script or style sheet without its comments and indentation: Streamlit sends a component's code with every
    element it draws, so a quarter fewer bytes per heatmap to hash and send on each rerun. ``comment``:
    "//" (whole-line comments; the script writes none after code) or "/*" (the style sheet's blocks)."""
    if comment == "/*":
        source = re.sub(r"/\*.*?\*/", "", source, flags=re.DOTALL)
    lines = (line.strip() for line in source.splitlines())
    return "\n".join(line for line in lines if line and not line.startswith(comment))


HERE = Path(__file__).resolve().parent
JS = lean((HERE / "keyboard_grid.js").read_text(encoding="utf-8"), "//")
CSS = lean((HERE / "keyboard_grid.css").read_text(encoding="utf-8"), "/*")
OPEN = "open"  # the trigger Enter sends: [row index, col index]

HTML = '<div class="alab-cells"></div>'  # the script fills it in
_mount = st.components.v2.component("attention_lab_cell_grid", html=HTML, js=JS, css=CSS, isolate_styles=False)


def grid_key(key: str) -> str:
    """The component's key beside the heatmap ``key`` (its element carries the class st-key-<this>)."""
    return f"{key}_keys"


def cell_texts(values: torch.Tensor, kind: str, mask_words: tuple[str, str] = ("may attend", "blocked")) -> list[str]:
    """Every cell's text, row by row, as the heatmap's tooltip writes it (a mask: may attend / blocked, in the words
    ``mask_words`` gives: the learner's language)."""
    flat = values.detach().to(torch.float64).reshape(-1).tolist()  # (rows * cols,)
    if kind == "mask":
        allowed, blocked = mask_words
        return [allowed if v > 0 else blocked for v in flat]
    return [format_number(v) for v in flat]


def grid_texts() -> tuple[tuple[str, str], ...]:
    """What the script writes, in the learner's language: templates whose {names} it fills in (a label, a count),
    the mask's two words, and the title of a heatmap without one. Passed to the cached ``grid_data`` as an argument,
    so each language's grid is kept apart."""
    return (
        ("title", _("The heatmap")),
        ("help", _("{title}, cell by cell: arrow keys move, Enter shows the cell's arithmetic below.")),
        ("window", _("{rows} × {cols} cells, a window shown.")),
        ("table", _("{title}: {rows} × {cols} cells")),
        ("cell", _("{row_title} “{row}”, {col_title} “{col}”")),
        ("cellValue", _("{row_title} “{row}”, {col_title} “{col}”: {value}")),
        ("opened", _("{cell} · its arithmetic is below")),
        ("enter", _("{cell} · Enter: its arithmetic")),
        ("mayAttend", _("may attend")),
        ("blocked", _("blocked")),
    )


SEPARATOR = "|"  # between the cells' texts: no number and no mask word holds one


@process_cache(64, 16 * MB)
def grid_data(
    values: bytes,
    shape: tuple[int, int],
    kind: str,
    rows: tuple[str, ...],
    cols: tuple[str, ...],
    titles: tuple[str, str, str],
    texts: tuple[tuple[str, str], ...] = (),
) -> dict:
    """What the grid draws (kept per matrix, labels and titles; never changed): titles, labels, every cell's text
    row by row in one string (a 128-token matrix sends its 16,384 texts as one JSON string, which Streamlit encodes
    and hashes at about a third of the cost of a list of them), and an id that changes with any of them."""
    matrix = torch.from_numpy(np.frombuffer(values, dtype=np.float64).reshape(shape).copy())  # (rows, cols)
    title, row_title, col_title = titles
    words = dict(texts)
    mask_words = (words.get("mayAttend", "may attend"), words.get("blocked", "blocked"))
    grid = {
        "title": title or words.get("title", "The heatmap"),
        "rowTitle": row_title,
        "colTitle": col_title,
        "rows": list(rows),
        "cols": list(cols),
        "values": SEPARATOR.join(cell_texts(matrix, kind, mask_words)),
        "texts": words,
    }
    digest = hashlib.blake2b(json.dumps(grid, sort_keys=True).encode("utf-8"), digest_size=8).hexdigest()
    return {"id": digest, **grid}


def opened_cell(value: object, n_rows: int, n_cols: int) -> tuple[int, int] | None:
    """The (row, col) indices the browser sent, or None for anything but two indices inside the matrix."""
    if not isinstance(value, list | tuple) or len(value) != 2:
        return None
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in value):
        return None
    row, col = value
    return (row, col) if 0 <= row < n_rows and 0 <= col < n_cols else None


def _on_open(key: str, n_rows: int, n_cols: int, on_open: Callable[[int, int], None]) -> None:
    """Enter on a cell (a callback, before the rerun draws): hand its checked indices to ``on_open``."""
    cell = opened_cell((st.session_state.get(grid_key(key)) or {}).get(OPEN), n_rows, n_cols)
    if cell is not None:
        on_open(*cell)


def cell_grid(
    key: str,
    values: torch.Tensor,
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    kind: str,
    titles: tuple[str, str, str],
    opened: tuple[int, int] | None,
    live: str,
    stale: bool,
    on_open: Callable[[int, int], None],
) -> None:
    """Mount the keyboard grid of the heatmap ``key`` (``values`` (rows, cols), ``titles`` = title, row title,
    col title); ``opened`` is the cell whose arithmetic is shown, ``live`` the key of the container that shows it,
    ``stale`` whether the chart still outlines a clicked cell other than ``opened`` (the script clears it)."""
    matrix = values.detach().to(torch.float64).numpy()  # (rows, cols)
    grid = grid_data(matrix.tobytes(), matrix.shape, kind, tuple(rows), tuple(cols), titles, grid_texts())
    callback = functools.partial(_on_open, key, len(rows), len(cols), on_open)
    data = {"grid": grid, "opened": list(opened) if opened else None, "live": live, "chart": key, "stale": stale}
    _mount(key=grid_key(key), data=data, on_open_change=callback)


def live_region(key: str, live: str) -> None:
    """No grid (a raster image, whose pickers choose the cell): only make the container ``live`` a live region."""
    _mount(key=grid_key(key), data={"grid": None, "opened": None, "live": live})
