"""The progress file (and the value kept in the browser) is checked strictly: a hostile one changes nothing."""

from __future__ import annotations

import json

import pytest

from ui.widgets import progress
from ui.widgets.progress import MAX_BYTES, MAX_ENTRIES, ProgressFileError, parse_file

GOOD = {
    "version": 1,
    "lessons": {
        "softmax": {"weight-1a2b3c4d5e6f": {"tries": 2, "correct": True, "revealed": False}},
        "mistakes": {"wrong-axis": {"tries": 1, "correct": False, "revealed": True}},
    },
    "visited": ["overview", "softmax", "mistakes"],
}


def text(data: object) -> str:
    return json.dumps(data)


def with_entry(**fields) -> dict:
    entry = {"tries": 1, "correct": False, "revealed": False} | fields
    return {"version": 1, "lessons": {"softmax": {"weight-1": entry}}, "visited": []}


def test_a_good_file_parses_to_itself():
    assert parse_file(text(GOOD)) == GOOD
    assert parse_file(text(GOOD).encode()) == GOOD


def test_steps_seen_and_the_path_position_load_with_a_file_without_them_still_loading(monkeypatch):
    """Stepped lessons (issue 24) add "steps" and "path"; a file written before them loads as it did."""
    stepped = GOOD | {"steps": {"softmax": [1, 3, 2]}, "path": 4}
    assert parse_file(text(stepped)) == stepped
    state: dict = {}
    monkeypatch.setattr(progress.st, "session_state", state)
    progress.merge(parse_file(text(stepped)))
    progress.merge(parse_file(text(GOOD)))  # the older file adds nothing and takes nothing away
    assert progress.steps_seen("softmax") == (1, 3, 2) and progress.path_position() == 4
    assert parse_file(progress.payload_text())["steps"] == {"softmax": [1, 3, 2]}


IDEAS = ("scores", "softmax", "context", "scaling", "masking")
CHECKS = {
    "pre": dict.fromkeys(IDEAS, "wrong") | {"scores": "right", "masking": "skipped"},
    "post": dict.fromkeys(IDEAS, "right"),
    "finished": "2026-11-26",
    "reviews": [{"date": "2026-11-27", "ideas": {"scores": True, "context": False, "masking": True}}],
}


def with_checks(**part) -> str:
    return text(GOOD | {"checks": CHECKS | part})


def test_the_checks_around_the_path_load_and_merge_and_a_file_without_them_still_loads(monkeypatch):
    """Issue 36 adds the optional "checks"; a file written before it loads as it did, and merging keeps the most."""
    checked = GOOD | {"checks": CHECKS}
    assert parse_file(text(checked)) == checked
    state: dict = {}
    monkeypatch.setattr(progress.st, "session_state", state)
    progress.merge(parse_file(text(GOOD)))
    assert "checks" not in progress.payload(), "no checks taken: the part is left out"
    later = CHECKS | {
        "finished": "2026-11-28",
        "pre": {},
        "reviews": [{"date": "2026-11-29", "ideas": {"softmax": True}}],
    }
    for data in (checked, GOOD | {"checks": later}, checked):
        progress.merge(parse_file(text(data)))
    merged = parse_file(progress.payload_text())["checks"]
    assert merged["pre"] == CHECKS["pre"] and merged["post"] == CHECKS["post"], "a taken check over none"
    assert merged["finished"] == "2026-11-26", "the earlier finish"
    assert [review["date"] for review in merged["reviews"]] == ["2026-11-27", "2026-11-29"], "each review once"


def test_at_most_the_last_reviews_are_kept_and_they_load_back(monkeypatch):
    import datetime

    state: dict = {}
    monkeypatch.setattr(progress.st, "session_state", state)
    progress.note_finished(datetime.date(2026, 1, 1))
    for n in range(progress.MAX_REVIEWS + 5):
        progress.note_review(datetime.date(2026, 1, 2) + datetime.timedelta(days=n), {"scores": n % 2 == 0})
    reviews = parse_file(progress.payload_text())["checks"]["reviews"]
    assert (
        len(reviews) == progress.MAX_REVIEWS
        and reviews[-1]["date"] == "2026-01-26"
        and reviews[0]["date"] == "2026-01-07"
    )


def deeply_nested() -> str:
    """30,000 levels in under 64 KiB: past the size check, into the parser's recursion limit."""
    return '{"version": 1, "lessons": {"softmax": ' + "[" * 30_000 + "]" * 30_000 + '}, "visited": []}'


HOSTILE = {
    "not JSON": b"this is not json {",
    "not UTF-8": b"\xff\xfe\x00{",
    "an array": text([GOOD]),
    "a string": text("progress"),
    "null": "null",
    "no version": text({k: v for k, v in GOOD.items() if k != "version"}),
    "an extra key": text(GOOD | {"admin": True}),
    "version 2": text(GOOD | {"version": 2}),
    "version true": text(GOOD | {"version": True}),
    "version as text": text(GOOD | {"version": "1"}),
    "lessons a list": text(GOOD | {"lessons": []}),
    "visited a string": text(GOOD | {"visited": "overview"}),
    "an unknown lesson": text(GOOD | {"lessons": {"secrets": {}}}),
    "HTML as a lesson": text(GOOD | {"lessons": {"<img src=x onerror=alert(1)>": {}}}),
    "a path as a lesson": text(GOOD | {"lessons": {"../../etc/passwd": {}}}),
    "an unknown visited lesson": text(GOOD | {"visited": ["<script>alert(1)</script>"]}),
    "a visited number": text(GOOD | {"visited": [3]}),
    "a visited lesson twice": text(GOOD | {"visited": ["softmax", "softmax"]}),
    "HTML as an exercise id": text(
        with_entry() | {"lessons": {"softmax": {"<b>x</b>": with_entry()["lessons"]["softmax"]["weight-1"]}}}
    ),
    "a long exercise id": text(
        {
            "version": 1,
            "lessons": {"softmax": {"w" * 65: {"tries": 1, "correct": False, "revealed": False}}},
            "visited": [],
        }
    ),
    "an empty exercise id": text(
        {"version": 1, "lessons": {"softmax": {"": {"tries": 1, "correct": False, "revealed": False}}}, "visited": []}
    ),
    "tries negative": text(with_entry(tries=-1)),
    "tries huge": text(with_entry(tries=10**30)),
    "tries a float": text(with_entry(tries=1.0)),
    "tries a bool": text(with_entry(tries=True)),
    "tries text": text(with_entry(tries="1")),
    "correct a number": text(with_entry(correct=1)),
    "revealed text": text(with_entry(revealed="yes")),
    "revealed HTML": text(with_entry(revealed="<img src=x>")),
    "an extra field": text(with_entry(choice="<img src=//203.0.113.9/a.png>")),
    "a missing field": text({"version": 1, "lessons": {"softmax": {"w-1": {"tries": 1}}}, "visited": []}),
    "an entry a list": text({"version": 1, "lessons": {"softmax": {"w-1": [1, True, False]}}, "visited": []}),
    "a lesson's exercises a list": text({"version": 1, "lessons": {"softmax": ["w-1"]}, "visited": []}),
    "NaN": text(with_entry(tries=1.5)).replace("1.5", "NaN"),
    "a duplicated key": '{"version": 1, "version": 1, "lessons": {}, "visited": []}',
    "10,000 entries": text(
        {
            "version": 1,
            "lessons": {"softmax": {f"w{i}": {"tries": 1, "correct": False, "revealed": False} for i in range(10_000)}},
            "visited": [],
        }
    ),
    "too many entries in a small file": text(
        {
            "version": 1,
            "lessons": {
                "softmax": {f"{i}": {"tries": 0, "correct": False, "revealed": False} for i in range(MAX_ENTRIES + 1)}
            },
            "visited": [],
        }
    ).replace(" ", ""),
    "steps a list": text(GOOD | {"steps": [1, 2]}),
    "steps of an unknown lesson": text(GOOD | {"steps": {"<b>x</b>": [1]}}),
    "a step zero": text(GOOD | {"steps": {"softmax": [0]}}),
    "a step too far": text(GOOD | {"steps": {"softmax": [progress.MAX_STEP + 1]}}),
    "a step as text": text(GOOD | {"steps": {"softmax": ["2"]}}),
    "a step a bool": text(GOOD | {"steps": {"softmax": [True]}}),
    "a step twice": text(GOOD | {"steps": {"softmax": [2, 2]}}),
    "a path as text": text(GOOD | {"path": "3"}),
    "a negative path": text(GOOD | {"path": -1}),
    "a path too far": text(GOOD | {"path": 10**9}),
    "checks a list": text(GOOD | {"checks": []}),
    "checks without reviews": text(GOOD | {"checks": {k: v for k, v in CHECKS.items() if k != "reviews"}}),
    "checks with an extra key": with_checks(admin=True),
    "a check of an unknown idea": with_checks(pre=CHECKS["pre"] | {"<b>x</b>": "right"}),
    "a check missing an idea": with_checks(post={"scores": "right"}),
    "a check result as a bool": with_checks(post=dict.fromkeys(IDEAS, True)),
    "a check result of HTML": with_checks(post=dict.fromkeys(IDEAS, "<img src=x>")),
    "a check a list": with_checks(pre=["scores"]),
    "a month 13": with_checks(finished="2026-13-40"),
    "a 30 February": with_checks(finished="2026-02-30"),
    "a date as a number": with_checks(finished=20261126),
    "a date with a time": with_checks(finished="2026-11-26T10:00:00"),
    "a date in year 9999": with_checks(finished="9999-12-31"),
    "a date of year 1": with_checks(finished="0001-01-01"),
    "reviews without a finish": with_checks(finished=None),
    "reviews an object": with_checks(reviews={"2026-11-27": {"scores": True}}),
    "too many reviews": with_checks(reviews=[CHECKS["reviews"][0]] * (progress.MAX_REVIEWS + 1)),
    "a review with a bad date": with_checks(reviews=[{"date": "2026-11-31", "ideas": {"scores": True}}]),
    "a review of no idea": with_checks(reviews=[{"date": "2026-11-27", "ideas": {}}]),
    "a review of four ideas": with_checks(reviews=[{"date": "2026-11-27", "ideas": dict.fromkeys(IDEAS[:4], True)}]),
    "a review of an unknown idea": with_checks(reviews=[{"date": "2026-11-27", "ideas": {"secrets": True}}]),
    "a review's answer as text": with_checks(reviews=[{"date": "2026-11-27", "ideas": {"scores": "yes"}}]),
    "a review's answer as 1": with_checks(reviews=[{"date": "2026-11-27", "ideas": {"scores": 1}}]),
    "a review with an extra key": with_checks(reviews=[CHECKS["reviews"][0] | {"score": 3}]),
    "huge": text(GOOD)[:-1] + ', "pad": "' + "x" * MAX_BYTES + '"}',
    "deeply nested": deeply_nested(),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_file_gets_one_clear_reason(name):
    with pytest.raises(ProgressFileError) as problem:
        parse_file(HOSTILE[name])
    reason = str(problem.value)
    assert reason and "\n" not in reason and len(reason) < 120
    assert "<" not in reason and "secrets" not in reason and "passwd" not in reason, "the file is never quoted"


def test_the_deep_file_is_small_enough_to_reach_the_parser():
    assert len(deeply_nested().encode()) <= MAX_BYTES


def test_a_small_file_with_too_many_entries_is_refused_by_count_not_size():
    raw = HOSTILE["too many entries in a small file"]
    assert len(raw.encode()) <= MAX_BYTES
    with pytest.raises(ProgressFileError, match=f"more than {MAX_ENTRIES}"):
        parse_file(raw)


def test_merge_keeps_the_most_and_twice_changes_nothing(monkeypatch):
    state: dict = {}
    monkeypatch.setattr(progress.st, "session_state", state)
    progress.note_try("softmax", "weight-1a2b3c4d5e6f", correct=False)
    for _ in range(2):
        progress.merge(parse_file(text(GOOD)))
    assert state[progress.STATE_KEY]["softmax"]["weight-1a2b3c4d5e6f"] == {
        "tries": 2,
        "correct": True,
        "revealed": False,
    }
    assert state[progress.STATE_KEY]["mistakes"]["wrong-axis"] == {"tries": 1, "correct": False, "revealed": True}
    assert progress.visited() == ("overview", "softmax", "mistakes")
    assert parse_file(progress.payload_text()) == progress.payload(), "what the lab writes loads back"


def test_the_payload_leaves_out_empty_records_and_stays_loadable(monkeypatch):
    state: dict = {}
    monkeypatch.setattr(progress.st, "session_state", state)
    progress.record("softmax", "shown-only")
    for i in range(MAX_ENTRIES + 50):
        progress.note_try("scores", f"weight-{i:012x}", correct=True)
    data = parse_file(progress.payload_text())
    assert "softmax" not in data["lessons"]
    assert (
        len(data["lessons"]["scores"]) == MAX_ENTRIES and f"weight-{MAX_ENTRIES + 49:012x}" in data["lessons"]["scores"]
    )
