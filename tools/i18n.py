"""The lab's gettext catalogs, with Babel: extract the strings, update each language's catalog, compile them.

    python -m tools.i18n extract     # locale/messages.pot: every _() and N_() string of the app's code
    python -m tools.i18n update      # each locale/<language>/LC_MESSAGES/messages.po gains the new strings
    python -m tools.i18n compile     # each messages.po -> messages.mo, the file the app reads
    python -m tools.i18n all         # the three, in that order
    python -m tools.i18n init fr     # a new language: locale/fr/LC_MESSAGES/messages.po from the template
    python -m tools.i18n missing zh  # the strings zh has not translated yet (fuzzy ones count as missing)

A translator edits messages.po (any gettext editor works: Poedit, Lokalize, a text editor), then runs ``compile``.
Needs Babel (requirements-dev.txt); the app itself reads the .mo with the standard library.
"""

from __future__ import annotations

import argparse
import contextlib
import io
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

from attention_core.i18n import DOMAIN, LOCALE_DIR, SOURCE_LANGUAGE

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = LOCALE_DIR / f"{DOMAIN}.pot"
# What a learner reads comes from these; tests, benchmarks and tools speak to developers, in English.
METHOD_MAP = [
    ("lab.py", "python"),
    ("attention_core/**.py", "python"),
    ("app_pages/**.py", "python"),
    ("ui/**.py", "python"),
    ("runtime/**.py", "python"),
]
KEYWORDS = {"_": None, "N_": None}
COMMENT_TAGS = ("TRANSLATORS:",)


def extracted() -> Catalog:
    """Every string the code marks, with where it is used and its translator comments."""
    template = Catalog(project="Attention Lab", copyright_holder="the Attention Lab contributors", fuzzy=False)
    # Babel warns of every f-string inside a _() call, the values passed to placeholders (count=f"{n:,}") included;
    # an f-string as the message itself is what matters, and tests/test_i18n.py finds that one.
    with contextlib.redirect_stderr(io.StringIO()):
        found = list(
            extract_from_dir(
                ROOT, method_map=METHOD_MAP, keywords=KEYWORDS, comment_tags=COMMENT_TAGS, strip_comment_tags=True
            )
        )
    for filename, lineno, message, comments, context in found:
        template.add(message, locations=[(filename, lineno)], auto_comments=comments, context=context)
    return template


def po_path(language: str) -> Path:
    return LOCALE_DIR / language / "LC_MESSAGES" / f"{DOMAIN}.po"


def read(language: str) -> Catalog:
    with po_path(language).open("rb") as file:
        return read_po(file, locale=language, domain=DOMAIN)


def write(catalog: Catalog, path: Path, *, mo: bool = False) -> None:
    """Write a catalog (.po text, or compiled .mo), replacing the file at once (never half written)."""
    buffer = io.BytesIO()
    if mo:
        write_mo(buffer, catalog, use_fuzzy=False)
    else:
        write_po(buffer, catalog, width=116, sort_output=False, include_previous=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_suffix(path.suffix + ".tmp")
    scratch.write_bytes(buffer.getvalue())
    scratch.replace(path)


def translated_languages() -> list[str]:
    return sorted(path.parent.parent.name for path in LOCALE_DIR.glob(f"*/LC_MESSAGES/{DOMAIN}.po"))


def extract() -> Catalog:
    template = extracted()
    write(template, TEMPLATE)
    print(f"{TEMPLATE.relative_to(ROOT)}: {len(template)} strings")
    return template


def update(template: Catalog | None = None) -> None:
    template = template or extracted()
    for language in translated_languages():
        catalog = read(language)
        catalog.update(template, update_header_comment=False)
        catalog.obsolete.clear()  # a string gone from the code leaves its catalogs (git keeps the history)
        write(catalog, po_path(language))
        print(f"{po_path(language).relative_to(ROOT)}: {len(missing(catalog))} of {len(catalog)} untranslated")


def compile_all() -> None:
    for language in translated_languages():
        write(read(language), po_path(language).with_suffix(".mo"), mo=True)
        print(f"{po_path(language).with_suffix('.mo').relative_to(ROOT)} compiled")


def init(language: str) -> None:
    if language == SOURCE_LANGUAGE or po_path(language).exists():
        raise SystemExit(f"{language}: already there")
    catalog = Catalog(
        locale=language,
        domain=DOMAIN,
        project="Attention Lab",
        copyright_holder="the Attention Lab contributors",
        fuzzy=False,
    )
    catalog.update(extracted())
    write(catalog, po_path(language))
    print(f"{po_path(language).relative_to(ROOT)}: {len(catalog)} strings to translate")


def missing(catalog: Catalog) -> list[str]:
    """The catalog's strings with no translation yet (a fuzzy one is a guess, not compiled: missing too)."""
    return [message.id for message in catalog if message.id and (not message.string or message.fuzzy)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tools.i18n", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["extract", "update", "compile", "all", "init", "missing"])
    parser.add_argument("language", nargs="?")
    args = parser.parse_args(argv)
    if args.command == "extract":
        extract()
    elif args.command == "update":
        update()
    elif args.command == "compile":
        compile_all()
    elif args.command == "all":
        update(extract())
        compile_all()
    elif args.command == "init":
        init(args.language)
    elif args.command == "missing":
        for message in missing(read(args.language)):
            print(repr(message))


if __name__ == "__main__":
    main()
