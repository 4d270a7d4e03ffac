"""A SentencePiece-style tokenizer tells how each id decodes (``kinds``: "text", "byte", "special"
or "none"), read-only: the GGUF writer (io/gguf/vocab.py) reads it to name llama.cpp's token types."""
import pytest

from minillm.tokenizer.spm import SentencePieceBPE


def tiny():
    pieces = {"<unk>": 0, "<s>": 1, "<0x0A>": 2, "▁a": 3, "b": 4, "▁": 5, "a": 6}
    kinds = {0: "special", 1: "special", 2: "byte", 3: "text", 4: "text", 5: "text", 6: "text"}
    return SentencePieceBPE(pieces, scores={3: 1.0}, byte_ids={10: 2}, kinds=kinds,
                            special_tokens={"<unk>": 0, "<s>": 1}, unk_id=0, bos_id=1)


def test_kinds_say_how_each_id_decodes():
    tok = tiny()
    assert dict(tok.kinds) == {0: "special", 1: "special", 2: "byte", 3: "text", 4: "text",
                               5: "text", 6: "text"}
    assert tok.decode([3, 4, 2]) == "ab\n"          # text, text, and a byte token


def test_kinds_cannot_be_changed_through_the_accessor():
    tok = tiny()
    with pytest.raises(TypeError):
        tok.kinds[3] = "byte"
    with pytest.raises(AttributeError):
        tok.kinds = {}
    assert tok.kinds[3] == "text"
