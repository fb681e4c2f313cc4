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
    """How many bytes a UTF-8 character starting with byte ``lead`` takes (1 for a byte that cannot start one)."""
    if lead >= 0xF0:
        return 4
    if lead >= 0xE0:
        return 3
    if lead >= 0xC0:
        return 2
    return 1


def characters(data: bytes) -> list[tuple[int, int, str]]:
    """The characters of ``data`` with their byte spans: (start, end, text). A byte that is not part of a valid
    character is its own entry, written as "<0xNN>"."""
    found = []
    start = 0
    while start < len(data):
        end = min(start + utf8_length(data[start]), len(data))
        try:
            text = data[start:end].decode("utf-8")
        except UnicodeDecodeError:
            end = start + 1
            text = f"<0x{data[start]:02X}>"
        found.append((start, end, text))
        start = end
    return found


def readable_pieces(pieces: Sequence[bytes]) -> list[str]:
    """Each piece as text: the characters its bytes belong to, with "…" where a character is cut at its edge."""
    bounds = []
    start = 0
    for piece in pieces:
        bounds.append((start, start + len(piece)))
        start += len(piece)
    spans = characters(b"".join(pieces))
    shown = []
    for low, high in bounds:
        touched = [(start, end, text) for start, end, text in spans if start < high and end > low]
        text = "".join(text for _start, _end, text in touched)
        if touched and touched[0][0] < low:
            text = ELLIPSIS + text
        if touched and touched[-1][1] > high:
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
    return any(start < edge < end for start, end, _text in characters(b"".join(pieces)) for edge in edges)
