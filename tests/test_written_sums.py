"""Every sum, product sum, quotient and e^(a − b) a page writes out checks by hand, from its printed operands.

The rule (attention_core.numbers): the number right after "=" is the result of the operands as written,
computed exactly from their text and rounded half up to 4 decimals; the exact value may follow as
"(unrounded: x)" where it differs, and cut terms are summarised as "… (N more terms, together x)".
This test parses the text of every page (markdown, captions, LaTeX, callouts) and of the clicked cells
on three inputs, recomputes each written-out piece of arithmetic with ``decimal`` from its printed
operands, independently of the formatter, and checks the printed result by that rule.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from decimal import ROUND_HALF_UP, Decimal, localcontext

import pytest
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

from tests.apptest_helpers import PAGES, assert_clean, open_page, sentence_params
from tests.pages.cell_click_helpers import _has_cell_param
from ui.charts import CELLS_DATA
from ui.widgets import cell_click

NUM = r"-?(?:\d+\.\d+(?:e[+-]\d+)?|\d+)"
ROOT = r"√\d+"
UNROUNDED = rf"(?: \(unrounded: ({NUM})\))?"
START = r"(?<![\w.)\]^(×/−-])(?<!× )"  # a number that starts the expression (not inside another one)
PRODUCT = rf"\(({NUM}) × ({NUM})\)"
CUT = r"… \((\d+) more(?: terms?)?(?:, together ({}))?\)"
VECTOR = rf"\[{NUM}(?:, {NUM})*(?:, …)?\]"
VECTOR_TERM = rf"{NUM} × {VECTOR}"

PRODUCTS_SUM = re.compile(
    rf"(?<![\w)])({PRODUCT}(?: \+ {PRODUCT})*)(?: \+ {CUT.format(NUM)})? = ({NUM}){UNROUNDED}",
)
PLAIN_SUM = re.compile(rf"{START}({NUM}(?: [+−] {NUM})+)(?: \+ {CUT.format(NUM)})? = ({NUM}){UNROUNDED}")
QUOTIENT = re.compile(rf"{START}({NUM}) / ({NUM}|{ROOT}) = ({NUM}){UNROUNDED}")
EXPONENTIAL = re.compile(rf"e\^\(({NUM}) − ({NUM})\) = ({NUM}){UNROUNDED}")
VECTOR_SUM = re.compile(
    rf"{START}({VECTOR_TERM}(?: \+ {VECTOR_TERM})*)(?: \+ {CUT.format(VECTOR)})? = ({VECTOR})"
    rf"(?: \(unrounded: ({VECTOR})\))?"
)
UNSUMMARISED_CUT = re.compile(r"\+ …(?! \(\d+ more terms?, together )")


def exact(text: str) -> Decimal:
    text = text.strip()
    return Decimal(text[1:]).sqrt() if text.startswith("√") else Decimal(text)


def vector(text: str) -> list[Decimal]:
    return [Decimal(v) for v in re.findall(NUM, text)]


def agrees(printed: str, computed: Decimal) -> bool:
    """The printed result is the computed one by the rule: half up to 4 decimals, or 5 significant digits."""
    if "e" in printed:  # scientific: 4 decimals of the mantissa
        unit = Decimal(10) ** (int(printed.split("e")[1]) - 4)
        return abs(Decimal(printed) - computed) <= unit / 2
    if "." not in printed:  # '0' or a whole number: exact
        return Decimal(printed) == computed
    return Decimal(printed) == computed.quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP)


def check(kind: str, expression: str, printed: str, computed: Decimal, unrounded: str | None) -> list[str]:
    """The faults of one written-out piece of arithmetic ([] when it checks)."""
    faults = []
    if not agrees(printed, computed):
        faults.append(f"{kind}: {expression!r} prints {printed}, its operands give {computed:.6f}")
    if unrounded is not None and unrounded == printed:
        faults.append(f"{kind}: {expression!r} repeats {printed} as its unrounded value")
    if re.search(r"(?<![\d.])-?0\.0000(?!\d)", expression):
        faults.append(f"{kind}: {expression!r} writes a number as 0.0000")
    return faults


def written_arithmetic(text: str) -> tuple[Counter, list[str]]:
    """How many of each kind of arithmetic ``text`` writes out, and the faults among them."""
    found: Counter = Counter()
    faults: list[str] = []
    text = text.replace("**", "").replace("\\", "")
    with localcontext() as context:
        context.prec = 60
        for match in PRODUCTS_SUM.finditer(text):
            products = re.findall(PRODUCT, match.group(1))
            total = sum((exact(a) * exact(b) for a, b in products), Decimal(0))
            more, together, printed, unrounded = match.group(6, 7, 8, 9)
            if more and not together:
                faults.append(f"products: {match.group(0)!r} cuts {more} terms without their sum")
            total += exact(together) if together else 0
            found["products"] += 1
            faults += check("products", match.group(0), printed, total, unrounded)
        for match in PLAIN_SUM.finditer(text):
            terms = re.findall(rf"(^|[+−]) ?({NUM})", match.group(1))
            total = sum((-exact(v) if sign == "−" else exact(v) for sign, v in terms), Decimal(0))
            more, together, printed, unrounded = match.group(2, 3, 4, 5)
            if more and not together:
                faults.append(f"sum: {match.group(0)!r} cuts {more} terms without their sum")
            total += exact(together) if together else 0
            found["sum"] += 1
            faults += check("sum", match.group(0), printed, total, unrounded)
        for match in QUOTIENT.finditer(text):
            a, b, printed, unrounded = match.groups()
            if exact(b) == 0:
                continue
            found["quotient"] += 1
            faults += check("quotient", match.group(0), printed, exact(a) / exact(b), unrounded)
        for match in EXPONENTIAL.finditer(text):
            s, m, printed, unrounded = match.groups()
            found["exp"] += 1
            faults += check("exp", match.group(0), printed, (exact(s) - exact(m)).exp(), unrounded)
        for match in VECTOR_SUM.finditer(text):
            terms = re.findall(rf"({NUM}) × ({VECTOR})", match.group(1))
            more, together, printed, unrounded = match.group(2, 3, 4, 5)
            if more and not together:
                faults.append(f"vector sum: {match.group(0)!r} cuts {more} terms without their sum")
            entries = len(vector(printed))
            totals = [
                sum((exact(w) * vector(v)[e] for w, v in terms), Decimal(0)) + (vector(together)[e] if together else 0)
                for e in range(entries)
            ]
            found["vector sum"] += 1
            for e, (shown, total) in enumerate(zip(re.findall(NUM, printed), totals, strict=True)):
                if not agrees(shown, total):
                    faults.append(f"vector sum: {match.group(0)!r} entry {e} prints {shown}, operands give {total}")
            if unrounded == printed:
                faults.append(f"vector sum: {match.group(0)!r} repeats its result as unrounded")
    for match in UNSUMMARISED_CUT.finditer(text):
        faults.append(
            f"a cut sum without the sum of its cut terms: …{text[max(0, match.start() - 60) : match.end()]!r}"
        )
    return found, faults


# --- the formatter's own output, and the parser on known text -------------------------------------


def test_the_parser_finds_and_checks_each_kind():
    text = (
        "q · k = (0.1288 × 1.4575) + (0.5000 × 0.1000) = **0.2377** and 0.8880 / 4.4016 = 0.2017, "
        "0.1000 + 0.2000 − 0.0500 = 0.2500, e^(0.1000 − 0.5000) = 0.6703, "
        "c = 0.5000 × [1.0000, 2.0000] + 0.5000 × [3.0000, 4.0000] = **[2.0000, 3.0000]**"
    )
    found, faults = written_arithmetic(text)
    assert found == Counter(products=1, quotient=1, sum=1, exp=1, **{"vector sum": 1}), found
    assert faults == []


@pytest.mark.parametrize(
    "text",
    [
        "(0.1288 × 1.4575) + (0.5000 × 0.1000) = **0.2378**",
        "0.8880 / 4.4016 = 0.2018",
        "0.3532 / 3.4815 = 0.1014",  # the clicked cell of the issue: 0.10145… gives 0.1015
        "0.1000 + 0.2000 = 0.3001",
        "e^(0.1000 − 0.5000) = 0.6704",
        "0.5000 × [1.0000, 2.0000] + 0.5000 × [3.0000, 4.0000] = [2.0000, 3.0001]",
        "(0.1000 × 1.0000) + … (4 more) = 0.5000",
        "0.5000 × [1.0000] + … = [0.5000]",
        "0.1000 / 3.0000 = 0.0333 (unrounded: 0.0333)",
    ],
)
def test_the_parser_rejects_a_sum_that_does_not_check(text):
    found, faults = written_arithmetic(text)
    assert faults, (text, found)


# --- every page, three inputs, and its clicked cells ----------------------------------------------

INPUTS = {
    "light preset": {"example": "I can't find the light switch"},
    "journey preset": {"example": "Your journey starts with one step"},
    "typed, random": sentence_params(
        "the old lighthouse keeper counted every ship that passed the rocks before dawn", d_model=10, seed=3
    ),
}
# At least this many pieces of written arithmetic on each input (on the page, in its clicked cells), so a
# parser that finds nothing fails; pages not listed write none out.
AT_LEAST = {
    "app_pages/scores.py": (1, 1),
    "app_pages/softmax.py": (5, 6),
    "app_pages/context_vectors.py": (1, 4),
    "app_pages/qkv_projections.py": (2, 9),
    "app_pages/scaling.py": (7, 5),
    "app_pages/masking.py": (1, 7),
    "app_pages/multi_head.py": (1, 7),
    "app_pages/positions.py": (0, 6),
    "app_pages/pipeline.py": (1, 1),
    "app_pages/generation.py": (0, 8),
    "app_pages/trained_model.py": (0, 6),
    "app_pages/training.py": (0, 3),
}


def page_texts(at) -> list[str]:
    kinds = ("markdown", "caption", "latex", "info", "warning", "success", "error")
    return [str(element.value) for kind in kinds for element in at.get(kind)]


def click_every_heatmap(at) -> int:
    """Keep one cell (last row, first column) of every clickable heatmap, then rerun; returns how many."""
    clicked = 0
    for chart in at.get("vega_lite_chart"):
        spec = json.loads(chart.proto.spec)
        if not _has_cell_param(spec) or chart.proto.id.count("-") < 2:
            continue
        cells = next(
            convert_arrow_bytes_to_pandas_df(d.data.data) for d in chart.proto.datasets if d.name == CELLS_DATA
        )
        key = chart.proto.id.split("-", 2)[2]
        at.session_state[cell_click.state_key(key)] = (str(cells["row"].iloc[-1]), str(cells["col"].iloc[0]))
        clicked += 1
    if clicked:
        at.run()
    return clicked


def show_every_answer(at):
    """The page once its questions are settled: a step writes the sums that answer them after them (issue 36, item 8).
    Every "Show me the answer" is clicked, again while a step asks a next round."""
    for _ in range(4):
        buttons = [button for button in at.button if str(button.key or "").startswith("exs:")]
        if not buttons:
            break
        for button in buttons:
            button.click()
        at = at.run()
    return at


def count_and_check(texts: list[str]) -> tuple[Counter, list[str]]:
    found, faults = Counter(), []
    for text in texts:
        counts, errors = written_arithmetic(text)
        found += counts
        faults += errors
    return found, faults


@pytest.mark.parametrize("name", list(INPUTS))
@pytest.mark.parametrize("page", PAGES)
def test_every_written_sum_on_the_page_checks_by_hand(page, name):
    at = show_every_answer(open_page(page, INPUTS[name]))
    assert_clean(at)
    before = page_texts(at)
    found, faults = count_and_check(before)
    in_cells = Counter()
    if click_every_heatmap(at):
        assert_clean(at)
        in_cells, cell_faults = count_and_check([text for text in page_texts(at) if text not in before])
        faults += cell_faults
    assert not faults, "\n".join(faults)
    on_page, clicked = AT_LEAST.get(page, (0, 0))
    assert sum(found.values()) >= on_page, found
    assert sum(in_cells.values()) >= clicked, in_cells
