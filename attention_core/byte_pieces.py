"""Byte-level pieces shown readably (issue 39): SmolLM2's tokenizer (GPT-2's byte-level BPE) cuts text into pieces
of UTF-8 bytes, and a Chinese character takes 3 bytes, so one character is often split over two or three pieces.
Decoded one by one, such a piece prints as "�". Here each piece is shown with the characters its bytes belong to,
and an ellipsis where a character goes on in the next piece or began in the previous one:

    注意 = bytes e6 b3 a8 e6 84 8f, cut as [e6 b3] [a8 e6] [84 8f]  ->  "注…", "…注意…", "…意"

An English piece is never cut inside a character, so it reads as before (" cat").
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

ELLIPSIS = "…"


@functools.cache
def byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet, reversed: the printable character that stands for each byte -> the byte."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    codes = list(printable)
    shift = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            codes.append(256 + shift)
            shift += 1
    return {chr(code): byte for byte, code in zip(printable, codes, strict=True)}


def piece_bytes(token: str) -> bytes:
    """A vocabulary entry ("Ġcat", "æ³") as the bytes it stands for (b" cat", b"\\xe6\\xb3")."""
    decoder = byte_decoder()
    return bytes(decoder[character] for character in token)


def utf8_length(lead: int) -> int:
    """How many bytes a UTF-8 character starting with byte ``lead`` takes (0 for a byte that cannot start one)."""
    if lead < 0x80:
        return 1
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 0


def continuation(byte: int) -> bool:
    """Whether ``byte`` continues a UTF-8 character (10xxxxxx)."""
    return 0x80 <= byte <= 0xBF


def bytes_text(data: bytes) -> str:
    """Bytes that are not a whole character, named: "<0xE6 0xB3>"."""
    return "<" + " ".join(f"0x{byte:02X}" for byte in data) + ">"


@dataclass(frozen=True)
class Character:
    """A character of the bytes (``kind`` "whole"), or bytes that make none: the first bytes of one the data cuts
    off ("head"), the last bytes of one that began before the data ("tail"), a byte that is not UTF-8 ("stray")."""

    start: int
    end: int
    text: str
    kind: str


def characters(data: bytes) -> list[Character]:
    """The characters of ``data`` in order, with their byte spans."""
    found = []
    start = 0
    while start < len(data):
        lead = data[start]
        if continuation(lead):
            end = start + 1
            while end < len(data) and continuation(data[end]) and end - start < 3:
                end += 1
            found.append(Character(start, end, bytes_text(data[start:end]), "tail" if start == 0 else "stray"))
        elif utf8_length(lead) == 0:
            end = start + 1
            found.append(Character(start, end, bytes_text(data[start:end]), "stray"))
        else:
            end = min(start + utf8_length(lead), len(data))
            try:
                found.append(Character(start, end, data[start:end].decode("utf-8"), "whole"))
            except UnicodeDecodeError:
                head = end == len(data) and all(continuation(byte) for byte in data[start + 1 : end])
                end = end if head else start + 1
                found.append(Character(start, end, bytes_text(data[start:end]), "head" if head else "stray"))
        start = end
    return found


def readable_pieces(pieces: Sequence[bytes]) -> list[str]:
    """Each piece as text: the characters its bytes belong to, with "…" where a character goes on past its edge
    (bytes that make no whole character in all the pieces are named: "<0xE6 0xB3>…")."""
    bounds = []
    start = 0
    for piece in pieces:
        bounds.append((start, start + len(piece)))
        start += len(piece)
    spans = characters(b"".join(pieces))
    shown = []
    for low, high in bounds:
        touched = [span for span in spans if span.start < high and span.end > low]
        text = "".join(span.text for span in touched)
        if touched and (touched[0].start < low or touched[0].kind == "tail"):
            text = ELLIPSIS + text
        if touched and (touched[-1].end > high or touched[-1].kind == "head"):
            text = text + ELLIPSIS
        shown.append(text)
    return shown


def cut_characters(pieces: Sequence[bytes]) -> bool:
    """Whether any character is split between two pieces (a page then says how to read "…")."""
    edges = set()
    position = 0
    for piece in pieces[:-1]:
        position += len(piece)
        edges.add(position)
    return any(span.start < edge < span.end for span in characters(b"".join(pieces)) for edge in edges)
