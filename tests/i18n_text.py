"""What a page says in words, as AppTest sees it, and the English prose left in a translated page (issue 39).

Used by tests/test_i18n.py, and by a translator from the command line:

    .venv/bin/python -m tests.i18n_text scores           # every step of lesson 1 in zh: the English sentences left
    .venv/bin/python -m tests.i18n_text overview path    # several pages (registry names)

English prose is a run of three or more English words outside what stays as it is: code, formulas ($…$), quoted
tokens (“…”), the input's own tokens, model and library names, URLs. It is a check for what was missed, not a
translation's judge: a word such as "softmax" or "d_k" alone is not prose.
"""

from __future__ import annotations

import contextlib
import html
import json
import re
import sys

import pyarrow as pa
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Block

# Names and notations that stay in English in every language (issue 39: formulas, code, numbers and model names).
KEPT = (
    "all-MiniLM-L6-v2", "SmolLM2-135M-Instruct", "SmolLM2", "MiniLM", "PyTorch", "Hugging Face",
    "Transformer Explainer", "BertViz", "GPT-2", "GPT", "BERT", "LLaMA", "Llama", "Vaswani et al.",
    "Attention Is All You Need", "softmax", "RoPE", "GQA", "KV", "GGUF", "Q4_K", "Q6_K", "Q8_0", "safetensors",
    "Streamlit", "CSV", "JSON", "nn.MultiheadAttention", "scaled_dot_product_attention", "torch", "argmax", "logits",
    "logit", "d_model", "d_k", "d_v", "Adam", "SGD", "True", "False",
)  # fmt: skip
HIDDEN = [
    re.compile(r"<(style|script)\b.*?</\1>", re.S | re.I),  # CSS and scripts: never read
    re.compile(r"/\*.*?\*/", re.S),  # CSS comments outside a style tag (st.html's)
    re.compile(r"```.*?```", re.S),  # code blocks
    re.compile(r"`[^`]*`"),  # inline code
    re.compile(r"\$\$.*?\$\$", re.S),  # display formulas
    re.compile(r"\$[^$]*\$"),  # inline formulas
    re.compile(r"“[^”]*”"),  # quoted tokens and names
    re.compile(r"\"[^\"]*\""),
    re.compile(r"https?://\S+"),
    re.compile(r":material/[a-z_]+:"),
    re.compile(r"&[a-z]+;|&#\d+;"),
]
# Three English words in a row (of two letters or more: a toy vocabulary's "b l a" is data, not prose).
PROSE = re.compile(r"[A-Za-z][A-Za-z'’-]+(?:[ ,;:]+[A-Za-z][A-Za-z'’-]+){2,}")
TAG = re.compile(r"<[^>]+>")
TEXT_FIELDS = ("body", "label", "help", "placeholder", "caption", "title", "text")


def leaves(node) -> list:
    if isinstance(node, AppTest):
        node = node._tree
    if isinstance(node, Block):
        found = [node] if getattr(node, "proto", None) is not None else []
        return found + [leaf for child in node.children.values() for leaf in leaves(child)]
    return [node]


def _proto_texts(proto) -> list[str]:
    texts = []
    for field in TEXT_FIELDS:
        try:
            value = getattr(proto, field)
        except AttributeError:
            continue
        if isinstance(value, str) and value:
            texts.append(value)
    for field in ("options", "display_options"):
        with contextlib.suppress(AttributeError, TypeError):
            texts += [str(option) for option in getattr(proto, field)]
    return texts


def _spec_texts(spec: object) -> list[str]:
    """A Vega-Lite spec's titles, descriptions and axis/legend text (not its data)."""
    found: list[str] = []
    if isinstance(spec, dict):
        for key, value in spec.items():
            if key in ("title", "description", "text") and isinstance(value, str):
                found.append(value)
            elif key in ("title", "text") and isinstance(value, list):
                found += [str(item) for item in value]
            elif key not in ("data", "datasets", "values"):
                found += _spec_texts(value)
    elif isinstance(spec, list):
        for item in spec:
            found += _spec_texts(item)
    return found


def element_texts(element) -> list[str]:
    """The words one element shows: its text, labels, help, options, and a chart's titles; a table's headers."""
    proto = getattr(element, "proto", None)
    texts = _proto_texts(proto) if proto is not None else []
    kind = getattr(element, "type", None)
    if kind == "vega_lite_chart":
        texts += _spec_texts(json.loads(proto.spec))
        for dataset in proto.datasets:
            table = pa.ipc.open_stream(dataset.data.data).read_all().to_pandas()
            for column in table.columns:
                texts += [value for value in table[column].tolist() if isinstance(value, str) and " " in value]
    if kind in ("dataframe", "table", "arrow_data_frame"):
        with contextlib.suppress(Exception):  # a table AppTest cannot read has no words to check
            texts += [str(column) for column in element.value.columns]
    return texts


def page_texts(at: AppTest) -> list[str]:
    """Every text the page and its sidebar show."""
    return [text for leaf in leaves(at) for text in element_texts(leaf)]


def english_prose(text: str, tokens: tuple[str, ...] = ()) -> list[str]:
    """The runs of English words in ``text`` once what stays English is taken out. HTML (a table) is read cell by
    cell: the tokens in a row of cells are data, not a sentence."""
    for pattern in HIDDEN:
        text = pattern.sub(" ", text)
    if TAG.search(text):
        return [run for part in TAG.split(text) for run in english_prose(part, tokens)]
    text = html.unescape(text)
    for name in sorted([*KEPT, *tokens], key=len, reverse=True):
        if name:
            text = re.sub(rf"(?<![A-Za-z]){re.escape(name)}(?![A-Za-z])", " ", text)
    return [match.group(0) for match in PROSE.finditer(text)]


def english_left(at: AppTest) -> list[str]:
    """The English prose a page still shows (the input's sentence and the examples' sentences allowed: they are the
    input, as the numbers are)."""
    from attention_core.presets import PRESETS_BY_KEY
    from attention_core.trained_model import PUBLISHED_SENTENCES

    state = at.session_state
    lab = state["_lab_input"] if "_lab_input" in state else None  # noqa: SIM401 (AppTest state has no get)
    published = (*PUBLISHED_SENTENCES, *(sentence.rstrip(".!?") for sentence in PUBLISHED_SENTENCES))
    examples = (*(preset.name for preset in PRESETS_BY_KEY.values()), *published)  # an English model's input
    tokens = examples + ((" ".join(lab.tokens),) if lab else ())
    found: list[str] = []
    for text in page_texts(at):
        found += english_prose(text, tokens)
    return sorted(set(found))


def main(names: list[str]) -> None:
    from tests.apptest_helpers import open_page
    from ui import registry

    for name in names:
        lesson = registry.BY_NAME[name]
        at = open_page(
            lesson.path, {"lang": "zh", "view": "all"} if lesson.path != "app_pages/overview.py" else {"lang": "zh"}
        )
        if at.exception:
            print(f"{name}: EXCEPTION", [error.value for error in at.exception])
            continue
        left = english_left(at)
        print(f"{name}: {len(left)} English runs")
        for run in left:
            print("   ", run)


if __name__ == "__main__":
    main(sys.argv[1:])
