"""Exercise progress: answered and correct per lesson, and the lessons visited, kept in the learner's own browser.

The book lives in st.session_state while the session runs; ``runtime.browser_store`` copies it to the browser's
localStorage and back, so it survives a reload, a new tab and a return visit in the same browser. There are no
accounts and nothing is stored on the server. The same payload downloads as a small JSON file and loads in
another browser, after ``parse_file`` has checked it strictly (anything that comes back from a browser or a file
is untrusted).

The optional part "checks" holds the checks around the 15-minute path (``ui.widgets.learning_checks``)::

    {"pre": {idea: "right" | "wrong" | "skipped"}, "post": {…}, "finished": "YYYY-MM-DD" | null,
     "reviews": [{"date": "YYYY-MM-DD", "ideas": {idea: true | false}}, …]}

"pre" and "post" are empty until that check is answered or skipped, then name all five ideas; "finished" is the
day the path (or its check after) was finished; "reviews" keeps the last MAX_REVIEWS reviews, oldest first. It is
left out of the payload while empty, so a payload written before it and one without it read the same.
"""

from __future__ import annotations

import datetime
import json
import re

import pandas as pd
import streamlit as st

from attention_core import i18n
from attention_core.i18n import _
from attention_core.learning_checks import IDEAS, RESULTS, REVIEW_SIZE
from ui import registry

STATE_KEY = "_exercise_progress"  # {lesson name: {exercise id: {"tries": int, "correct": bool, "revealed": bool}}}
VISITED_KEY = "_lessons_visited"  # [lesson name], in the order first visited
STEPS_KEY = "_steps_seen"  # {lesson name: [step number, counted from 1]}
PATH_KEY = "_path_position"  # the furthest stop reached on the 15-minute path (0: not started)
CHECKS_KEY = "_learning_checks"  # the "checks" part: see the module's docstring
STORED_LANGUAGE_KEY = "_stored_language"  # the language a stored book or a loaded file names, not yet adopted
LOADED_KEY = "_progress_file_message"  # (kind, text) of the last "Load my progress"
UPLOAD_KEY = "progress_file"

VERSION = 1
MAX_BYTES = 64 * 1024  # a file or a stored value larger than this is refused unread
MAX_ENTRIES = 600  # exercises over every lesson (a full book is about 40 KB of JSON)
MAX_TRIES = 10_000
MAX_STEP = 40  # no lesson has more steps; a stored step number beyond it is refused
EXERCISE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # "weight-1a2b3c4d5e6f", "wrong-axis"
REQUIRED_PARTS = {"version", "lessons", "visited"}
OPTIONAL_PARTS = {"steps", "path", "checks", "language"}  # added later ("checks" with issue 36, "language" with 39):
# a file without them loads
LANGUAGE = re.compile(r"[a-z]{2,3}(_[A-Z]{2})?")  # a catalog's code: "zh", "pt_BR"
ENTRY_FIELDS = {"tries": int, "correct": bool, "revealed": bool}
FILE_NAME = "attention-lab-progress.json"
CHECK_PARTS = {"pre", "post", "finished", "reviews"}
MAX_REVIEWS = 20  # the reviews kept, the latest ones
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
YEARS = (2020, 2200)  # a stored date outside these years is refused (and a date near 9999 would overflow a gap)


class ProgressFileError(ValueError):
    """A progress file (or stored value) that is not one this lab wrote: the message says why, in one sentence."""


def _book() -> dict[str, dict[str, dict]]:
    return st.session_state.setdefault(STATE_KEY, {})


def _visited() -> list[str]:
    return st.session_state.setdefault(VISITED_KEY, [])


def record(lesson: str, exercise_id: str) -> dict:
    """The record of one exercise (created empty on first use): tries, correct, revealed."""
    return _book().setdefault(lesson, {}).setdefault(exercise_id, {"tries": 0, "correct": False, "revealed": False})


def note_try(lesson: str, exercise_id: str, correct: bool) -> dict:
    """Count one checked answer; a right answer stays right."""
    entry = record(lesson, exercise_id)
    entry["tries"] += 1
    entry["correct"] = entry["correct"] or correct
    return entry


def note_revealed(lesson: str, exercise_id: str) -> None:
    """The learner asked for the solution."""
    record(lesson, exercise_id)["revealed"] = True


def note_visit(lesson: str) -> None:
    """The learner opened this lesson (kept, as the answers are, in the browser)."""
    visited = _visited()
    if lesson in registry.BY_NAME and lesson not in visited:
        visited.append(lesson)


def note_step(lesson: str, number: int) -> None:
    """The learner saw step ``number`` (from 1) of a lesson."""
    seen = st.session_state.setdefault(STEPS_KEY, {}).setdefault(lesson, [])
    if lesson in registry.BY_NAME and 1 <= number <= MAX_STEP and number not in seen:
        seen.append(number)


def steps_seen(lesson: str) -> tuple[int, ...]:
    """The steps of a lesson seen so far, in the order first seen."""
    return tuple(st.session_state.get(STEPS_KEY, {}).get(lesson, ()))


def note_path(position: int) -> None:
    """The learner reached stop ``position`` (from 1) of the 15-minute path; the furthest one is kept."""
    st.session_state[PATH_KEY] = max(int(st.session_state.get(PATH_KEY, 0)), position)


def path_position() -> int:
    """The furthest stop reached on the 15-minute path (0: not started)."""
    return int(st.session_state.get(PATH_KEY, 0))


def checks() -> dict:
    """This session's record of the checks around the path (created empty on first use): see the docstring."""
    return st.session_state.setdefault(CHECKS_KEY, empty_checks())


def empty_checks() -> dict:
    return {"pre": {}, "post": {}, "finished": None, "reviews": []}


def note_check(which: str, results: dict[str, str]) -> None:
    """The check before ("pre") or after ("post") the path was answered or skipped: the first result stays."""
    if which not in ("pre", "post") or set(results) != set(IDEAS) or not set(results.values()) <= set(RESULTS):
        raise ValueError(f"not a result of the {which} check: {results!r}")
    if not checks()[which]:
        checks()[which] = {idea: results[idea] for idea in IDEAS}


def note_finished(day: datetime.date) -> None:
    """The learner finished the path (or its check after) on ``day``: the first day stays."""
    if checks()["finished"] is None:
        checks()["finished"] = day.isoformat()


def note_review(day: datetime.date, ideas: dict[str, bool]) -> None:
    """One review answered on ``day``: right or not per idea (the latest MAX_REVIEWS are kept)."""
    if not ideas or len(ideas) > REVIEW_SIZE or not set(ideas) <= set(IDEAS):
        raise ValueError(f"not a review's ideas: {sorted(ideas)!r}")
    reviews = checks()["reviews"]
    reviews.append({"date": day.isoformat(), "ideas": {idea: bool(ideas[idea]) for idea in IDEAS if idea in ideas}})
    del reviews[:-MAX_REVIEWS]


def visited() -> tuple[str, ...]:
    """The lessons opened so far, in the order first visited."""
    return tuple(_visited())


def counts(lesson: str) -> tuple[int, int]:
    """(answered, correct) exercises of one lesson in this session."""
    entries = _book().get(lesson, {}).values()
    answered = sum(1 for entry in entries if entry["tries"] > 0 or entry["revealed"])
    return answered, sum(1 for entry in entries if entry["correct"])


def totals() -> tuple[int, int]:
    """(answered, correct) over every lesson."""
    pairs = [counts(path) for path in _book()]
    return sum(a for a, _c in pairs), sum(c for _a, c in pairs)


def progress_marker() -> str:
    """Compact text for the sidebar: 'Exercises: 7/12 correct' (or an invitation when none answered)."""
    answered, correct = totals()
    if not answered:
        return _("Exercises: none answered yet")
    return _("Exercises: {correct}/{answered} correct", correct=correct, answered=answered)


def progress_frame() -> pd.DataFrame:
    """One row per page with exercises: the steps seen, answered and correct (kept in this browser); its headers
    and the lessons' names in the learner's language."""
    columns = {"lesson": _("lesson"), "steps seen": _("steps seen"), "answered": _("answered"), "correct": _("correct")}
    rows = []
    for lesson in registry.LESSONS:
        answered, correct = counts(lesson.name)
        if lesson.number is not None or answered:
            seen = len(steps_seen(lesson.name))
            values = {"lesson": _(lesson.label), "steps seen": seen, "answered": answered, "correct": correct}
            rows.append({columns[name]: value for name, value in values.items()})
    return pd.DataFrame(rows).set_index(columns["lesson"])


# --- the payload kept in the browser and in a downloaded file ---------------------------------------------------


def payload() -> dict:
    """What the browser keeps: the answered exercises (empty records left out) and the lessons visited.

    At most MAX_ENTRIES exercises, the latest ones, so what the lab writes always loads back."""
    entries = [
        (lesson, exercise_id, dict(entry))
        for lesson, book in _book().items()
        for exercise_id, entry in book.items()
        if entry["tries"] or entry["correct"] or entry["revealed"]
    ][-MAX_ENTRIES:]
    kept: dict[str, dict[str, dict]] = {}
    for lesson, exercise_id, entry in entries:
        kept.setdefault(lesson, {})[exercise_id] = {field: entry[field] for field in ENTRY_FIELDS}
    steps = {lesson: list(seen) for lesson, seen in st.session_state.get(STEPS_KEY, {}).items() if seen}
    data = {"version": VERSION, "lessons": kept, "visited": list(_visited()), "steps": steps, "path": path_position()}
    if i18n.current() != i18n.SOURCE_LANGUAGE:  # left out in English: the payload reads as it did before languages
        data["language"] = i18n.current()
    record = st.session_state.get(CHECKS_KEY, empty_checks())
    if record != empty_checks():  # left out while empty: the payload reads as it did before the checks
        data["checks"] = json.loads(json.dumps(record))  # a copy: later notes do not change this payload
    return data


def payload_text() -> str:
    """The payload as compact JSON (the stored value and the downloaded file)."""
    return json.dumps(payload(), separators=(",", ":"), sort_keys=True)


def _no_constants(name: str) -> None:
    raise ProgressFileError(_("it holds a number JSON does not allow (NaN or Infinity)"))


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    if len({key for key, _value in pairs}) != len(pairs):
        raise ProgressFileError(_("a key appears twice"))
    return dict(pairs)


def parse_file(raw: bytes | str) -> dict:
    """The payload in ``raw`` after strict checks, or ProgressFileError with the reason (the file is not quoted)."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8", errors="replace")
    if len(raw) > MAX_BYTES:
        raise ProgressFileError(_("it is larger than {size} KiB", size=MAX_BYTES // 1024))
    try:
        text = raw.decode("utf-8")
        data = json.loads(text, parse_constant=_no_constants, object_pairs_hook=_no_duplicates)
    except ProgressFileError:
        raise
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ProgressFileError(_("it is not JSON")) from None
    if not isinstance(data, dict) or not REQUIRED_PARTS <= set(data) <= {*REQUIRED_PARTS, *OPTIONAL_PARTS}:
        raise ProgressFileError(
            _('it is not an object of "version", "lessons", "visited" (and "steps", "path", "checks", "language")')
        )
    if type(data["version"]) is not int or data["version"] != VERSION:
        raise ProgressFileError(_("its version is not {version}", version=VERSION))
    book, visited_list = data["lessons"], data["visited"]
    if not isinstance(book, dict) or not isinstance(visited_list, list):
        raise ProgressFileError(_('"lessons" is not an object or "visited" is not a list'))
    if any(not isinstance(name, str) or name not in registry.BY_NAME for name in [*book, *visited_list]):
        raise ProgressFileError(_("it names a lesson this lab does not have"))
    if len(set(visited_list)) != len(visited_list):
        raise ProgressFileError(_("a visited lesson appears twice"))
    if sum(len(entries) if isinstance(entries, dict) else 0 for entries in book.values()) > MAX_ENTRIES:
        raise ProgressFileError(_("it holds more than {count} exercises", count=MAX_ENTRIES))
    for entries in book.values():
        if not isinstance(entries, dict):
            raise ProgressFileError(_("a lesson's exercises are not an object"))
        for exercise_id, entry in entries.items():
            if not EXERCISE_ID.fullmatch(exercise_id):
                raise ProgressFileError(_("an exercise id is not a short name of letters, digits, '-', '_' or '.'"))
            if not isinstance(entry, dict) or set(entry) != set(ENTRY_FIELDS):
                raise ProgressFileError(_('an exercise is not an object of "tries", "correct" and "revealed"'))
            if any(type(entry[field]) is not kind for field, kind in ENTRY_FIELDS.items()):
                raise ProgressFileError(_('"tries" is not a whole number or "correct"/"revealed" is not true/false'))
            if not 0 <= entry["tries"] <= MAX_TRIES:
                raise ProgressFileError(_('"tries" is not between 0 and {most}', most=MAX_TRIES))
    check_steps(data.get("steps", {}), data.get("path", 0))
    if "language" in data and not (isinstance(data["language"], str) and LANGUAGE.fullmatch(data["language"])):
        raise ProgressFileError(_('"language" is not a language code such as "zh"'))
    if "checks" in data:
        check_checks(data["checks"])
    return data


def check_steps(steps: object, position: object) -> None:
    """The steps seen per lesson and the path position of a payload, or ProgressFileError."""
    if not isinstance(steps, dict) or any(not isinstance(name, str) or name not in registry.BY_NAME for name in steps):
        raise ProgressFileError(_('"steps" is not an object of this lab\'s lessons'))
    for seen in steps.values():
        if not isinstance(seen, list) or any(type(n) is not int or not 1 <= n <= MAX_STEP for n in seen):
            raise ProgressFileError(
                _("a lesson's steps are not a list of whole numbers from 1 to {most}", most=MAX_STEP)
            )
        if len(set(seen)) != len(seen):
            raise ProgressFileError(_("a step appears twice"))
    if type(position) is not int or not 0 <= position <= MAX_STEP:
        raise ProgressFileError(_('"path" is not a whole number from 0 to {most}', most=MAX_STEP))


def check_date(text: object) -> datetime.date:
    """A stored day written YYYY-MM-DD, or ProgressFileError."""
    if not isinstance(text, str) or not DATE.fullmatch(text):
        raise ProgressFileError(_("a date is not written YYYY-MM-DD"))
    try:
        day = datetime.date.fromisoformat(text)
    except ValueError:
        raise ProgressFileError(_("a date is not a day of the calendar")) from None
    if not YEARS[0] <= day.year < YEARS[1]:
        raise ProgressFileError(
            _("a date is not between the years {first} and {last}", first=YEARS[0], last=YEARS[1] - 1)
        )
    return day


def check_checks(part: object) -> None:
    """The "checks" part of a payload (see the module's docstring), or ProgressFileError."""
    if not isinstance(part, dict) or set(part) != CHECK_PARTS:
        raise ProgressFileError(_('"checks" is not an object of "pre", "post", "finished" and "reviews"'))
    for which in ("pre", "post"):
        results = part[which]
        if not isinstance(results, dict) or (results and set(results) != set(IDEAS)):
            raise ProgressFileError(_('"{which}" does not name the five ideas of the checks (or none)', which=which))
        if any(not isinstance(result, str) or result not in RESULTS for result in results.values()):
            raise ProgressFileError(_('a check\'s result is not "right", "wrong" or "skipped"'))
    if part["finished"] is not None:
        check_date(part["finished"])
    reviews = part["reviews"]
    if not isinstance(reviews, list) or len(reviews) > MAX_REVIEWS:
        raise ProgressFileError(_('"reviews" is not a list of at most {most} reviews', most=MAX_REVIEWS))
    if reviews and part["finished"] is None:
        raise ProgressFileError(_("it holds reviews but no day the path was finished"))
    for entry in reviews:
        if not isinstance(entry, dict) or set(entry) != {"date", "ideas"}:
            raise ProgressFileError(_('a review is not an object of "date" and "ideas"'))
        check_date(entry["date"])
        ideas = entry["ideas"]
        if not isinstance(ideas, dict) or not 1 <= len(ideas) <= REVIEW_SIZE or not set(ideas) <= set(IDEAS):
            raise ProgressFileError(_("a review does not name 1 to {most} ideas of the checks", most=REVIEW_SIZE))
        if any(type(right) is not bool for right in ideas.values()):
            raise ProgressFileError(_("a review's answer is not true or false"))


def answered_first(results: dict[str, str]) -> tuple:
    """The order in which two results of one check are kept on merging: taken over not taken, more answered, then
    the text (the same choice in every tab, whichever merges first)."""
    answered = sum(1 for result in results.values() if result != "skipped")
    return bool(results), answered, json.dumps(results, sort_keys=True)


def merge_checks(part: dict) -> None:
    """Add a checked "checks" part: a taken check over an untaken one, the earlier finish, every review once."""
    record = checks()
    for which in ("pre", "post"):
        record[which] = dict(max(record[which], part[which], key=answered_first))
    days = [day for day in (record["finished"], part["finished"]) if day is not None]
    record["finished"] = min(days) if days else None
    reviews = {json.dumps(entry, sort_keys=True): entry for entry in [*record["reviews"], *part["reviews"]]}
    ordered = sorted(reviews.items(), key=lambda item: (item[1]["date"], item[0]))
    record["reviews"] = [json.loads(text) for text, _entry in ordered][-MAX_REVIEWS:]


def merge(data: dict) -> None:
    """Add a checked payload to this session's book: the larger count of tries, right once right, revealed once
    revealed (merging twice changes nothing)."""
    for lesson, entries in data["lessons"].items():
        for exercise_id, stored in entries.items():
            entry = record(lesson, exercise_id)
            entry["tries"] = max(entry["tries"], stored["tries"])
            entry["correct"] = entry["correct"] or stored["correct"]
            entry["revealed"] = entry["revealed"] or stored["revealed"]
    for lesson in data["visited"]:
        note_visit(lesson)
    for lesson, seen in data.get("steps", {}).items():
        for number in seen:
            note_step(lesson, number)
    note_path(data.get("path", 0))
    if "checks" in data:
        merge_checks(data["checks"])
    if "language" in data:  # ui.widgets.language adopts it, unless the link named one
        st.session_state[STORED_LANGUAGE_KEY] = data["language"]


def reset() -> None:
    """Forget every answer and visit (exercise answers and revealed solutions included); the browser store then
    writes the empty book, which removes it from the browser too."""
    st.session_state.pop(STATE_KEY, None)
    st.session_state.pop(VISITED_KEY, None)
    st.session_state.pop(STEPS_KEY, None)
    st.session_state.pop(PATH_KEY, None)
    st.session_state.pop(CHECKS_KEY, None)
    st.session_state.pop(LOADED_KEY, None)
    for key in [key for key in st.session_state if str(key).startswith(("ex:", "exf:", "exv:", "exq:", "lc:"))]:
        del st.session_state[key]


def load_uploaded() -> None:
    """The file uploader's callback: check the file and merge it, or say why not and change nothing."""
    uploaded = st.session_state.get(UPLOAD_KEY)
    if uploaded is None:
        return
    try:
        if uploaded.size > MAX_BYTES:
            raise ProgressFileError(_("it is larger than {size} KiB", size=MAX_BYTES // 1024))
        data = parse_file(uploaded.getvalue())
    except ProgressFileError as problem:
        text = _("This is not a progress file of this lab: {problem}. Nothing changed.", problem=problem)
        st.session_state[LOADED_KEY] = ("error", text)
        return
    merge(data)
    answered = sum(len(entries) for entries in data["lessons"].values())
    text = _(
        "Progress loaded: {answered} exercises, {visited} lessons visited.",
        answered=answered,
        visited=len(data["visited"]),
    )
    st.session_state[LOADED_KEY] = ("success", text)


def progress_table() -> None:
    """The overview's table of answered / correct per lesson, with forget, download and load."""
    st.dataframe(progress_frame(), width="content", height="content")  # every lesson, no inner scrolling
    st.caption(
        _(
            "Your progress is kept in this browser only (its local storage): there are no accounts and nothing "
            "is stored on the server."
        )
    )
    row = st.container(horizontal=True)
    row.button(_("Forget my progress"), on_click=reset, icon=":material/restart_alt:", key="reset_progress")
    row.download_button(
        _("Download my progress"),
        data=payload_text(),
        file_name=FILE_NAME,
        mime="application/json",
        icon=":material/download:",
        key="download_progress",
        on_click="ignore",
    )
    st.file_uploader(
        _("Load my progress (a file saved with Download my progress, in any browser)"),
        type=["json"],
        key=UPLOAD_KEY,
        on_change=load_uploaded,
    )
    message = st.session_state.get(LOADED_KEY)
    if message is not None:
        kind, text = message
        (st.error if kind == "error" else st.success)(text)
