"""Loading and saving formats, and clear errors for bad input."""
import gzip
import json

import pytest

from minillm.tokenizer import Tokenizer
from minillm.tokenizer.formats.byte_alphabet import bytes_to_unicode
from minillm.tokenizer.formats.gguf.meta import read_gguf_metadata
from tests.conftest import FIXTURES
from tests.tokenizer.helpers import named, smollm2_gguf_metadata


def test_bytes_to_unicode_is_gpt2s_table():
    table = bytes_to_unicode()
    assert len(set(table.values())) == 256
    assert table[ord("A")] == "A" and table[0x20] == "Ġ" and table[0x0A] == "Ċ"


def test_tiktoken_file_plain_and_gz_and_pattern_inference(tmp_path):
    raw = gzip.decompress((FIXTURES.parent.parent / "weights/gpt2/gpt2.tiktoken.gz").read_bytes())
    (tmp_path / "my_gpt2.tiktoken").write_bytes(raw)
    assert Tokenizer.load(tmp_path / "my_gpt2.tiktoken").encode("Hello world") == [15496, 995]
    (tmp_path / "vocab.tiktoken").write_bytes(raw)
    with pytest.raises(ValueError, match="pattern="):
        Tokenizer.load(tmp_path / "vocab.tiktoken")
    assert Tokenizer.load(tmp_path / "vocab.tiktoken", pattern="gpt2").encode("Hello world") \
        == [15496, 995]


@pytest.mark.parametrize("line", ["not-base64!! 3", "QQ==", "QQ== x", "QQ== -1"])
def test_malformed_tiktoken_file(tmp_path, line):
    path = tmp_path / "gpt2.tiktoken"
    path.write_text(line + "\n")
    with pytest.raises(ValueError, match="gpt2.tiktoken:1"):
        Tokenizer.load(path)


def test_save_load_round_trip_of_a_real_vocabulary(tmp_path):
    tok = named("gpt2")
    tok.save(tmp_path / "gpt2.json")
    again = Tokenizer.load(tmp_path / "gpt2.json")
    text = "Hello world! 海水会吸收较多红光 <|endoftext|>"
    assert again.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")
    assert again.vocab_size == tok.vocab_size and again.eos_id == 50256
    dump = (tmp_path / "gpt2.json.vocab").read_text(encoding="utf-8").splitlines()
    assert dump[995] == "995\t world"


@pytest.mark.parametrize("content", ["[1, 2]", '{"format": "minillm-bpe", "version": 2}',
                                     '{"format": "minillm-bpe", "version": 1}', "{}", "not json",
                                     '{"model": {"type": "Unigram"}}', '{"model": {"type": "BPE"}}',
                                     '{"model": {"type": "BPE", "vocab": {}}, "added_tokens": [1]}'])
def test_malformed_json_files(tmp_path, content):
    path = tmp_path / "tokenizer.json"
    path.write_text(content)
    with pytest.raises(ValueError):
        Tokenizer.load(path)


def test_missing_file_and_unknown_name():
    with pytest.raises(FileNotFoundError, match="named tokenizers"):
        Tokenizer.load("gpt5")


def test_gguf_metadata_errors():
    meta = dict(smollm2_gguf_metadata())
    with pytest.raises(ValueError, match="WordPiece"):
        read_gguf_metadata({**meta, "tokenizer.ggml.model": "bert"})
    with pytest.raises(ValueError, match="minillm reads \"gpt2\""):
        read_gguf_metadata({**meta, "tokenizer.ggml.model": "no-such-model"})
    with pytest.raises(ValueError, match="pre-tokeniser"):
        read_gguf_metadata({**meta, "tokenizer.ggml.pre": "no-such-pre"})
    with pytest.raises(ValueError, match="token_type has 1 entries for"):
        read_gguf_metadata({**meta, "tokenizer.ggml.token_type": [1]})


def test_hf_json_pre_tokenizers(tmp_path):
    """A tiny synthetic tokenizer.json with Digits + ByteLevel and an NFC normalizer."""
    table = bytes_to_unicode()
    vocab = {table[b]: b for b in range(256)}
    vocab["ab"] = 256
    data = {"model": {"type": "BPE", "vocab": vocab, "merges": [["a", "b"]]},
            "normalizer": {"type": "NFC"},
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                {"type": "Digits", "individual_digits": True},
                {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True}]},
            "added_tokens": [{"id": 257, "content": "<s>", "special": True}]}
    (tmp_path / "tokenizer.json").write_text(json.dumps(data))
    tok = Tokenizer.load(tmp_path)
    assert tok.encode("ab12") == [256, ord("1"), ord("2")]
    assert tok.encode("e\u0301") == list("\u00e9".encode())  # NFC composes e + acute
    assert tok.encode("<s>ab", allowed_special="all") == [257, 256]
    data["pre_tokenizer"] = {"type": "Whitespace"}
    (tmp_path / "tokenizer.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match="Whitespace"):
        Tokenizer.load(tmp_path)


def test_bad_encode_and_decode_input():
    tok = named("gpt2")
    with pytest.raises(TypeError, match="str"):
        tok.encode(b"bytes")
    with pytest.raises(TypeError, match="str"):
        tok.encode_ordinary(None)
    with pytest.raises(TypeError):
        tok.encode_batch("one string")
    for bad in ([50257], [-1], [1.5], [None]):
        with pytest.raises(ValueError, match="cannot decode"):
            tok.decode(bad)
    with pytest.raises(ValueError):
        tok.token_bytes(10**9)


@pytest.mark.parametrize("ignore_merges", [False, True])
def test_hf_ignore_merges_looks_whole_pre_tokens_up(tmp_path, ignore_merges):
    """Llama-3's tokenizer.json sets ignore_merges: a pre-token that is a token is that token,
    even when the merges would not build it (here "abc" exists but no merge makes it)."""
    table = bytes_to_unicode()
    vocab = {table[b]: b for b in range(256)}
    vocab.update({"ab": 256, "abc": 257})
    data = {"model": {"type": "BPE", "vocab": vocab, "merges": ["a b"],
                      "ignore_merges": ignore_merges},
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True}}
    (tmp_path / "tokenizer.json").write_text(json.dumps(data))
    expected = [257] if ignore_merges else [256, ord("c")]
    assert Tokenizer.load(tmp_path / "tokenizer.json").encode("abc") == expected


def test_corrupt_gzip_is_a_clear_error(tmp_path):
    path = tmp_path / "cl100k_base.tiktoken.gz"
    path.write_bytes(b"not gzip at all")
    with pytest.raises(ValueError, match="gzip"):
        Tokenizer.load(path)
