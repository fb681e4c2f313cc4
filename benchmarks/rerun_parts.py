"""Where a page's rerun goes, measured apart: the time inside the progress store's sync and inside the tables.

    .venv/bin/python -m benchmarks.rerun_parts                        # scores, softmax, masking, qkv, scaling
    .venv/bin/python -m benchmarks.rerun_parts --pages scores,masking

Each page's AppTest (scripts compiled once, as a server does) at the default preset and at 128 tokens is rerun
REPEATS times; per rerun, the time spent inside ``browser_store.sync`` and inside ``drawing.show_table`` is
summed, and the medians are printed. "before" converts every table over 64 x 64 cells on every run (the code
after issue 25's five parts), "after" draws it from its Arrow table kept in ``drawing.LARGE_TABLES``. Narrow
sums like these stay readable on a loaded machine, where whole reruns differ by tens of milliseconds between
two runs of the same code (the load average is printed).
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import run as bench  # noqa: E402

REPEATS = 15
PAGES = ["scores", "softmax", "masking", "qkv_projections", "scaling"]


def main() -> None:
    from streamlit.testing.v1 import AppTest

    from runtime import browser_store
    from ui import drawing

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default=",".join(PAGES))
    args = parser.parse_args()
    bench.compile_scripts_once()
    spent: dict[str, float] = collections.defaultdict(float)

    def timed(name: str, function):
        def wrapper(*a, **k):
            start = time.perf_counter()
            try:
                return function(*a, **k)
            finally:
                spent[name] += time.perf_counter() - start

        return wrapper

    browser_store.sync = timed("store", browser_store.sync)
    drawing.show_table = timed("tables", drawing.show_table)
    keep = drawing.LARGE_TABLES.get
    print(f"Load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}\n")
    print("| page, input | rerun, before | tables, before | rerun, after | tables, after | store sync |")
    print("|---|---:|---:|---:|---:|---:|")
    for page in args.pages.split(","):
        for size in ("default preset", "128 tokens"):
            cells = []
            for before in (True, False):
                drawing.LARGE_TABLES.get = (lambda key, make: make()) if before else keep
                at = AppTest.from_file(bench.APP, default_timeout=120)
                at.query_params.update(bench.SIZES[size])
                at.run()
                at.switch_page(f"app_pages/{page}.py").run()
                parts = collections.defaultdict(list)
                for _ in range(REPEATS):
                    spent.clear()
                    start = time.perf_counter()
                    at.run()
                    parts["run"].append(time.perf_counter() - start)
                    parts["tables"].append(spent["tables"])
                    parts["store"].append(spent["store"])
                assert not at.exception, [e.value for e in at.exception]
                cells.append({name: statistics.median(values) * 1000 for name, values in parts.items()})
            old, new = cells
            print(
                f"| {page}, {size} | {old['run']:.1f} ms | {old['tables']:.1f} ms | {new['run']:.1f} ms | "
                f"{new['tables']:.1f} ms | {new['store']:.2f} ms |",
                flush=True,
            )
    drawing.LARGE_TABLES.get = keep
    print(f"\nLoad average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
