"""Byte-level pieces shown readably (issue 39, item 3): no "�" for a piece that holds part of a character."""

from __future__ import annotations

import pytest

from attention_core import byte_pieces as bp

ZHU_YI = "注意".encode()  # e6 b3 a8  e6 84 8f


def test_the_byte_alphabet_is_gpt2s():
    decoder = bp.byte_decoder()
    assert len(decoder) == 256 and sorted(decoder.values()) == list(range(256))
    assert decoder["Ġ"] == 0x20 and decoder["Ċ"] == 0x0A and decoder["a"] == ord("a")
    assert bp.piece_bytes("Ġcat") == b" cat"
    assert bp.piece_bytes("æ³¨") == "注".encode()


def test_a_character_cut_over_three_pieces_reads_with_ellipses():
    pieces = [ZHU_YI[0:2], ZHU_YI[2:4], ZHU_YI[4:6]]
    assert bp.readable_pieces(pieces) == ["注…", "…注意…", "…意"]
    assert bp.cut_characters(pieces)


def test_whole_characters_and_english_read_as_they_are():
    pieces = [b"The", b" cat", "是".encode(), " 注意".encode()]
    assert bp.readable_pieces(pieces) == ["The", " cat", "是", " 注意"]
    assert not bp.cut_characters(pieces)
    assert all("�" not in text for text in bp.readable_pieces(pieces))


def test_a_four_byte_character_and_a_stray_byte():
    smile = "😀".encode()
    assert bp.readable_pieces([b" " + smile[:2], smile[2:]]) == [" 😀…", "…😀"]
    assert bp.readable_pieces([b"a\xff", b"b"]) == ["a<0xFF>", "b"]  # not UTF-8: named, never "�"


@pytest.mark.parametrize("text", ["注意力是什么", "我爱 NLP，好吗？", "café 😀", "the cat"])
def test_every_cut_of_a_text_shows_each_character(text):
    data = text.encode()
    for cut in range(1, len(data)):
        shown = bp.readable_pieces([data[:cut], data[cut:]])
        assert "".join(shown).replace("…", "").replace(" ", "") != ""
        assert all("�" not in piece for piece in shown)
        assert shown[0].rstrip("…") and text.startswith(shown[0].rstrip("…"))


def test_a_piece_alone_that_holds_part_of_a_character_names_its_bytes():
    """A next-token candidate read alone: the start or the end of a character, said so ("…"), never "�"."""
    assert bp.readable_pieces([ZHU_YI[:2]]) == ["<0xE6 0xB3>…"]
    assert bp.readable_pieces([ZHU_YI[4:]]) == ["…<0x84 0x8F>"]
    assert bp.readable_pieces([b" ", ZHU_YI[:1]]) == [" ", "<0xE6>…"]


@pytest.fixture(scope="module")
def smol():
    from attention_core import smollm2 as sm

    return sm.load_model()


def test_smollm2s_pieces_of_a_chinese_prompt_read_without_replacement_characters(smol):
    from attention_core import smollm2 as sm

    prompt = "注意力是什么？"
    ids = sm.encode(smol, prompt)
    plain = [sm.piece_text(smol, i) for i in ids]
    shown = sm.readable_pieces(smol, ids)
    assert any("�" in piece for piece in plain)  # decoded one by one, pieces of a character print as "�"
    assert not any("�" in piece for piece in shown)
    assert "".join(piece.replace("…", "") for piece in shown).startswith("注")
    assert set("注意力是什么？") <= set("".join(shown))
    english = smol.tokenizer.encode(" the cat sat").ids
    assert sm.readable_pieces(smol, english) == tuple(sm.piece_text(smol, i) for i in english)  # unchanged


def test_smollm2s_generated_pieces_read_in_the_context_of_the_prompt(smol):
    from attention_core import smollm2 as sm

    ids = smol.tokenizer.encode("中文：注意力").ids
    tokens = sm.generate(smol, ids, 4)
    assert not any("�" in token.piece for token in tokens)
    whole = sm.readable_pieces(smol, [*ids, *(token.id for token in tokens)])
    assert tuple(token.piece for token in tokens) == whole[len(ids) :]
