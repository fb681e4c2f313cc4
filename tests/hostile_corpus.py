"""Hostile inputs a learner (or a URL) can send: the corpus the robustness tests run.

Each entry names what it is; sentences go to the tokenizer and embeddings, seeds to the seed
parser, cells to the edited-matrix validator, URL parameter sets to the whole app.
"""

from __future__ import annotations

SENTENCES: dict[str, str] = {
    "empty": "",
    "spaces only": "     ",
    "tabs and newlines only": "\t\n \r\n",
    "one token": "attention",
    "two tokens": "hello world",
    "33 tokens": " ".join(f"t{i}" for i in range(33)),
    "128 tokens": " ".join(f"w{i}" for i in range(128)),
    "512 tokens": " ".join(f"w{i % 97}" for i in range(512)),
    "1024 tokens (the limit)": " ".join(f"x{i}" for i in range(1024)),
    "1025 tokens (over the limit)": " ".join(f"x{i}" for i in range(1025)),
    "2,000 tokens": " ".join(f"y{i}" for i in range(2000)),
    "10,000-character word": "a" * 10_000,
    "10,000-character word in a sentence": "the " + "b" * 10_000 + " end",
    "emoji": "🙂 attention 🚀 is 🤖 fun",
    "emoji only": "🙂🙂🙂",
    "right-to-left": "الانتباه هو كل ما تحتاجه",
    "mixed direction": "attention الانتباه attention",
    "HTML tags": "<b>bold</b> <i>italic</i>",
    "script tag": "<script>alert('x')</script> hello",
    "image onerror": '<img src=x onerror="alert(1)"> cat',
    "markdown": "**bold** _em_ `code` [link](http://example.com)",
    "LaTeX": "$x^2$ \\frac{a}{b} $$",
    "duplicate tokens": "the the the the the",
    "duplicates that look like labels": "the the (1) the",
    "zero-width space": "a\u200bb c",
    "control characters": "a\x00b c\x07d",
    "numbers as words": "nan inf -inf 1e999 0",
    "python code": "__import__('os').system('ls') eval(1)",
    "very long line of punctuation": "!?.,;:" * 200,
    "unicode combining": "e\u0301 n\u0303 a",
    "markdown image": "![](//203.0.113.9/a.png) cat",
    "markdown link to an image": "[![x](//203.0.113.9/b.png)](//203.0.113.9/c) dog",
    "HTML image": "<img src=//203.0.113.9/d.png> bird",
    "autolink": "<http://203.0.113.9/e> fish",
    "LaTeX command": "$\\href{//203.0.113.9/f}{x}$ \\includegraphics{//203.0.113.9/g.png}",
    "spreadsheet formula": "=cmd|' /C calc'!A0 +1 -1 @sum",
}
# Values that make a browser fetch an outside address if drawn as Markdown or HTML: every one is on 203.0.113.x
# (TEST-NET-3, reserved for documentation), so a request to that host is the failure the browser test looks for.
OUTSIDE_HOST = "203.0.113.9"
FETCHING = ["markdown image", "markdown link to an image", "HTML image", "LaTeX command"]
SENTENCE_LIMIT = 1024  # more tokens than this must be refused with a message

SEEDS: dict[str, str] = {
    "zero": "0",
    "ordinary": "42",
    "negative": "-1",
    "huge": "99999999999999999999999999",
    "just under 2**63": str(2**63 - 1),
    "2**63": str(2**63),
    "text": "abc",
    "decimal": "1.5",
    "exponent": "1e999",
    "empty": "",
    "spaces": "  7  ",
    "thousands separator": "1,000",
}

CELLS: dict[str, object] = {
    "NaN text": "nan",
    "NaN float": float("nan"),
    "inf text": "inf",
    "minus inf": float("-inf"),
    "word": "hello",
    "empty string": "",
    "spaces": "   ",
    "None": None,
    "boolean": True,
    "too large": "1e9",
    "just inside the bound": "9999",
    "negative": "-0.5",
    "scientific": "1e-3",
    "comma decimal": "1,5",
    "HTML": "<b>1</b>",
}

URL_PARAMS: dict[str, dict[str, str]] = {
    "unknown preset": {"example": "no such example"},
    "out-of-range d_model": {
        "example": "Your own sentence",
        "sentence": "a b c",
        "embedding": "Random (seeded)",
        "d_model": "0",
    },
    "d_model 1": {"example": "Your own sentence", "sentence": "a b c", "embedding": "Random (seeded)", "d_model": "1"},
    "huge d_model": {
        "example": "Your own sentence",
        "sentence": "a b c",
        "embedding": "Random (seeded)",
        "d_model": "1000000000",
    },
    "garbage d_model": {
        "example": "Your own sentence",
        "sentence": "a b c",
        "embedding": "Random (seeded)",
        "d_model": "abc",
    },
    "negative seed": {"example": "Your own sentence", "sentence": "a b c", "seed": "-3"},
    "huge seed": {"example": "Your own sentence", "sentence": "a b c", "seed": "1" + "0" * 40},
    "garbage embedding": {"embedding": "<script>"},
    "unknown query": {"query": "nobody"},
    "unknown parameter": {"foo": "bar"},
    "repeated parameter": {"example": ["Your own sentence", "Self Attention is good"]},  # type: ignore[dict-item]
    "empty values": {"example": "", "query": "", "seed": ""},
    "script in sentence": {"example": "Your own sentence", "sentence": "<script>alert(1)</script>"},
    "sentence over the limit": {"example": "Your own sentence", "sentence": " ".join(["w"] * 1500)},
    "image in the seed": {
        "example": "Your own sentence",
        "sentence": "a b c",
        "embedding": "Random (seeded)",
        "seed": "![](//203.0.113.9/h.png)",
    },
    "image in the query": {"example": "Your own sentence", "sentence": "a b c", "query": "![](//203.0.113.9/i.png)"},
    "image in the example": {"example": "![](//203.0.113.9/j.png)"},
    "image in the edits": {
        "example": "Your own sentence",
        "sentence": "a b",
        "embedding": "Edit by hand",
        "edits": "![](//203.0.113.9/k.png)",
    },
}
