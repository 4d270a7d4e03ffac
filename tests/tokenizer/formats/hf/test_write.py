"""Saving in Hugging Face's format (formats/hf/write.py) and choosing the format by file name (formats/dispatch.py).

The shipped models' files are checked against `tokenizers` / `transformers` themselves in
tests/test_hf_shipped.py (fixtures); here: the layout, round trips, and what cannot be written.
"""
import json

import pytest

from minillm.tokenizer import Tokenizer
from minillm.tokenizer.formats.byte_alphabet import bytes_to_unicode
from minillm.tokenizer.formats.hf.normalizers import Normalizer
from minillm.tokenizer.formats.minillm_format import FORMAT_NAME
from tests.tokenizer.helpers import named

TEXT = "Hello wörld 12345, it's 海水会吸收较多红光 🙂\r\n\n  Ａ <|end|><|pad|>"


@pytest.fixture(scope="module")
def tok():
    """Several stages, two specials, NFC: what a trained tokenizer can carry."""
    trained = Tokenizer.train("Hello world, hello wörld! 12345 海水 it's " * 20, 320,
                              pattern="smollm", special_tokens=["<|end|>", "<|pad|>"])
    kw = dict(encoder={trained.token_bytes(i): i for i in range(trained.vocab_size)
                       if i not in trained.special_tokens.values()},
              merges=trained.merges, pattern=trained.pattern,
              special_tokens=trained.special_tokens, normalizer=Normalizer("NFC"),
              eos_id=trained.special_tokens["<|end|>"])
    return Tokenizer(**kw)


def test_tokenizer_json_is_hugging_face_s_layout(tmp_path, tok):
    tok.save(tmp_path / "tokenizer.json", model_max_length=128)
    data = json.loads((tmp_path / "tokenizer.json").read_text(encoding="utf-8"))
    alphabet = set(bytes_to_unicode().values())
    model = data["model"]
    assert model["type"] == "BPE" and model["ignore_merges"] is False
    assert all(set(s) <= alphabet for s, i in model["vocab"].items() if i < 300)
    assert model["vocab"]["Ġ"] == 32 and model["vocab"]["<|end|>"] == tok.special_tokens["<|end|>"]
    assert len(model["merges"]) == len(tok.merges) and all(" " in m for m in model["merges"])
    steps = data["pre_tokenizer"]["pretokenizers"]
    assert [s["type"] for s in steps] == ["Split"] * len(tok.pattern) + ["ByteLevel"]
    assert [s["pattern"]["Regex"] for s in steps[:-1]] == list(tok.pattern)
    assert all(s["behavior"] == "Isolated" for s in steps[:-1])
    assert steps[-1]["use_regex"] is False and steps[-1]["add_prefix_space"] is False
    assert data["decoder"]["type"] == "ByteLevel" and data["normalizer"] == {"type": "NFC"}
    assert [(t["content"], t["special"]) for t in data["added_tokens"]] == \
        [("<|end|>", True), ("<|pad|>", True)]
    config = json.loads((tmp_path / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert config == {"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": None,
                      "eos_token": "<|end|>", "unk_token": None,
                      "clean_up_tokenization_spaces": False, "model_max_length": 128}
    assert (tmp_path / "tokenizer.json.vocab").exists()


@pytest.mark.parametrize("name, format", [("tokenizer.json", None), ("x.minillm.json", None),
                                          ("x.json", "hf"), ("tokenizer.json", "minillm")])
def test_save_load_round_trip_in_both_formats(tmp_path, tok, name, format):
    tok.save(tmp_path / name, format=format)
    data = json.loads((tmp_path / name).read_text(encoding="utf-8"))
    expected = format or ("hf" if name == "tokenizer.json" else "minillm")
    assert (data.get("format") == FORMAT_NAME) == (expected == "minillm")
    again = Tokenizer.load(tmp_path / name)
    assert again.encode(TEXT, allowed_special="all") == tok.encode(TEXT, allowed_special="all")
    assert again.pattern == tok.pattern and again.normalizer == Normalizer("NFC")
    assert again.special_tokens == tok.special_tokens
    if expected == "hf":
        assert again.eos_id == tok.eos_id        # from tokenizer_config.json


def test_whole_piece_lookup_is_written_as_ignore_merges(tmp_path):
    """A vocabulary whose merges cannot build a token (tiktoken-style) keeps it as one piece."""
    table = bytes_to_unicode()
    encoder = {bytes([b]): b for b in range(256)}
    encoder.update({b"ab": 256, b"abc": 257})
    tok = Tokenizer(encoder, {(b"a", b"b"): 0}, whole_piece_lookup=True)
    tok.save(tmp_path / "tokenizer.json")
    data = json.loads((tmp_path / "tokenizer.json").read_text(encoding="utf-8"))
    assert data["model"]["ignore_merges"] is True and table[ord("a")] == "a"
    assert Tokenizer.load(tmp_path / "tokenizer.json").encode("abc") == [257]


def test_a_ranks_rule_vocabulary_cannot_be_written_as_hugging_face_s(tmp_path):
    with pytest.raises(ValueError, match="rank rule.*minillm.json"):
        named("gpt2").save(tmp_path / "tokenizer.json")


def test_bad_format_and_options(tmp_path, tok):
    with pytest.raises(ValueError, match="format must be one of"):
        tok.save(tmp_path / "t.json", format="sentencepiece")
    with pytest.raises(TypeError, match="no options"):
        tok.save(tmp_path / "t.minillm.json", model_max_length=5)
    with pytest.raises(ValueError, match="model_max_length"):
        tok.save(tmp_path / "tokenizer.json", model_max_length=0)


def test_old_minillm_files_named_tokenizer_json_still_load(tmp_path, tok):
    """Before Hugging Face's layout, minillm wrote its own format under the name tokenizer.json."""
    tok.save(tmp_path / "tokenizer.json", format="minillm")
    assert json.loads((tmp_path / "tokenizer.json").read_text("utf-8"))["format"] == FORMAT_NAME
    assert Tokenizer.load(tmp_path).encode(TEXT, allowed_special="all") \
        == tok.encode(TEXT, allowed_special="all")
