"""A vocabulary that cannot be honoured is refused with a ValueError naming the problem: one
regression test per finding (silent wrong tokenisation, unbounded files, tracebacks)."""
import base64
import gzip
import json

import pytest

from minillm.tokenizer import Tokenizer
from minillm.tokenizer.formats.byte_alphabet import bytes_to_unicode
from minillm.tokenizer.formats.gguf.meta import read_gguf_metadata

TABLE = bytes_to_unicode()


def tiktoken_file(tmp_path, lines, name="gpt2-test.tiktoken"):
    path = tmp_path / name
    path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in lines))
    return path


def byte_lines():
    return [(bytes([b]), b) for b in range(256)]


def hf_data(**changes):
    vocab = {TABLE[b]: b for b in range(256)}
    vocab["ab"] = 256
    data = {"model": {"type": "BPE", "vocab": vocab, "merges": ["a b"]},
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False},
            "decoder": {"type": "ByteLevel"},
            "added_tokens": [{"id": 257, "content": "<s>", "special": True}]}
    for key, value in changes.items():
        target, _, field = key.partition("__")
        if field:
            data[target][field] = value
        else:
            data[target] = value
    return data


def load_hf(tmp_path, data, match):
    (tmp_path / "tokenizer.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match=match):
        Tokenizer.load(tmp_path / "tokenizer.json")


def test_duplicate_tiktoken_ranks_are_refused(tmp_path):
    path = tiktoken_file(tmp_path, byte_lines() + [(b"th", 256), (b"the", 256)])
    with pytest.raises(ValueError, match="id 256 is given to two tokens"):
        Tokenizer.load(path)


def test_duplicate_tiktoken_tokens_are_refused(tmp_path):
    path = tiktoken_file(tmp_path, byte_lines() + [(b"a", 300)])
    with pytest.raises(ValueError, match="listed twice"):
        Tokenizer.load(path)


def test_tiktoken_special_on_an_ordinary_rank_is_refused(tmp_path):
    path = tiktoken_file(tmp_path, byte_lines() + [(b"x" * 3, 50256)])
    with pytest.raises(ValueError, match="the id of the ordinary token"):
        Tokenizer.load(path)


def test_encoder_json_two_strings_on_one_id_are_refused(tmp_path):
    encoder = {TABLE[b]: b for b in range(256)}
    encoder["ab"] = 97
    (tmp_path / "encoder.json").write_text(json.dumps(encoder))
    (tmp_path / "vocab.bpe").write_text("#version: 0.2\n")
    with pytest.raises(ValueError, match="id 97 is given to two tokens"):
        Tokenizer.load(tmp_path)


def test_json_repeated_key_is_refused(tmp_path):
    (tmp_path / "tokenizer.json").write_text('{"model": {"type": "BPE", "type": "BPE"}}')
    with pytest.raises(ValueError, match="repeats the key"):
        Tokenizer.load(tmp_path / "tokenizer.json")


def test_special_token_sharing_an_ordinary_id_is_refused(tmp_path):
    load_hf(tmp_path, hf_data(added_tokens=[{"id": 97, "content": "<s>", "special": True}]),
            "the id of the ordinary token")


def test_merge_whose_result_is_not_a_token_is_refused(tmp_path):
    load_hf(tmp_path, hf_data(model__merges=["a b", "b c"]), "merge 1 .*'bc' is not a token")


@pytest.mark.parametrize("change, feature", [
    ({"model__dropout": 0.1}, "dropout"), ({"model__fuse_unk": True}, "fuse_unk"),
    ({"decoder": {"type": "WordPiece"}}, "decoder 'WordPiece'"),
    ({"added_tokens": [{"id": 257, "content": "<s>", "lstrip": True}]}, "lstrip"),
    ({"added_tokens": [{"id": 257, "content": "<s>", "rstrip": True}]}, "rstrip"),
    ({"added_tokens": [{"id": 257, "content": "<s>", "single_word": True}]}, "single_word"),
    ({"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "\\w+"}, "behavior": "Isolated"}},
     "no ByteLevel step"),
])
def test_unimplemented_tokenizer_json_features_are_refused(tmp_path, change, feature):
    load_hf(tmp_path, hf_data(**change), feature)


@pytest.mark.parametrize("bad", ["10", 10.7, True, [1], None])
def test_wrong_json_type_for_an_id_is_refused(tmp_path, bad):
    data = hf_data()
    data["model"]["vocab"]["ab"] = bad
    load_hf(tmp_path, data, "ids must be integers")


@pytest.mark.parametrize("bad", ["10", 10.7, True])
def test_wrong_json_type_for_an_added_token_id_is_refused(tmp_path, bad):
    load_hf(tmp_path, hf_data(added_tokens=[{"id": bad, "content": "<s>"}]), "integer")


def test_catastrophic_regex_in_tokenizer_json_is_refused(tmp_path):
    pre = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "(a|aa)+$"}, "behavior": "Isolated"},
        {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False}]}
    load_hf(tmp_path, hf_data(pre_tokenizer=pre), "catastrophic backtracking")


@pytest.mark.parametrize("pattern", [{"Regex": 1}, {"Regex": "a", "String": "a"}, ["a"], None])
@pytest.mark.parametrize("where", ["Split", "Replace normalizer's"])
def test_a_pattern_object_of_the_wrong_shape_is_refused(tmp_path, pattern, where):
    if where == "Split":
        data = hf_data(pre_tokenizer={"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": pattern, "behavior": "Isolated"},
            {"type": "ByteLevel", "add_prefix_space": False}]})
    else:
        data = hf_data(normalizer={"type": "Replace", "pattern": pattern, "content": "x"})
    load_hf(tmp_path, data, f"a {where} pattern must be {{\"Regex\": str}} or {{\"String\": str}}")


def test_deeply_nested_json_is_a_clear_error(tmp_path):
    (tmp_path / "tokenizer.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match="tokenizer.json"):
        Tokenizer.load(tmp_path / "tokenizer.json")


def test_gzip_bomb_tiktoken_is_refused_with_the_limit(tmp_path):
    path = tmp_path / "gpt2-bomb.tiktoken.gz"
    with gzip.open(path, "wb") as f:
        chunk = b"\n" * (1 << 20)
        for _ in range(65):
            f.write(chunk)
    assert path.stat().st_size < 1_000_000
    with pytest.raises(ValueError, match="67,108,864 bytes"):
        Tokenizer.load(path)


def test_gguf_metadata_duplicate_token_is_refused():
    tokens = [TABLE[b] for b in range(256)] + ["a"]
    meta = {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.tokens": tokens,
            "tokenizer.ggml.merges": [], "tokenizer.ggml.pre": "gpt2"}
    with pytest.raises(ValueError, match="listed twice"):
        read_gguf_metadata(meta)


def test_gguf_metadata_string_eos_id_is_refused():
    meta = {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.tokens": [TABLE[b] for b in range(256)],
            "tokenizer.ggml.merges": [], "tokenizer.ggml.pre": "gpt2",
            "tokenizer.ggml.eos_token_id": "10"}
    with pytest.raises(ValueError, match="eos_id must be an integer"):
        read_gguf_metadata(meta)


def test_minillm_format_wrong_types_are_refused(tmp_path):
    tok = Tokenizer.train("hello world " * 20, 260)
    tok.save(tmp_path / "t.json")
    data = json.loads((tmp_path / "t.json").read_text())
    for field, bad in (("whole_piece_lookup", "yes"), ("eos_id", 1.5), ("tokens", {"a": 1})):
        (tmp_path / "bad.json").write_text(json.dumps({**data, field: bad}))
        with pytest.raises(ValueError):
            Tokenizer.load(tmp_path / "bad.json")


def test_real_vocabularies_pass_validation():
    for name in ("gpt2", "cl100k", "o200k"):
        assert Tokenizer.load(name).vocab_size > 50_000


@pytest.mark.parametrize("fast", [True, False])
def test_a_file_regex_that_backtracks_on_the_text_is_stopped_with_a_clear_error(monkeypatch, fast):
    """Regression: a pattern from a file (`(a|aa)+$`-like) that slips past the load-time probes
    backtracked without limit on the text it was given; now splitting runs under the encode
    call's time budget (budget.py), on the reading path and on fast/'s split alike."""
    from minillm.tokenizer import budget
    monkeypatch.setattr(budget, "time_limit", lambda text: 0.2)
    tok = Tokenizer({bytes([b]): b for b in range(256)}, None, pattern=r"(?:x|xx)+$", fast=fast)
    assert tok.encode("xxxz") == list(b"xxxz")
    with pytest.raises(ValueError, match=r"ran past this encode call's time limit \(0.2 s for "
                                         r"35 characters\)"):
        tok.encode("x" * 34 + "z")


def test_named_patterns_run_without_a_time_limit():
    """The named patterns (tiktoken's, llama.cpp's) are known to be linear: no timeout overhead."""
    assert not Tokenizer.load("gpt2").pre_tokenizer.timed
    assert not Tokenizer.train("ab 12 ab", 257, pattern="smollm").pre_tokenizer.timed  # llama.cpp's
    assert Tokenizer({bytes([b]): b for b in range(256)}, None, pattern=r"\w+").pre_tokenizer.timed


def test_the_time_limit_keeps_a_tenfold_margin_on_a_legitimate_10_mb_text():
    """Regression: the limit was 1 s + 1 µs a character, and DeepSeek-V4's tokenizer.json regex
    (not a named pattern, so timed) spent 11 s of its 11 s budget on "a b\\n" x 2.5 M (10 MB, a
    shared machine): a ValueError on ordinary text. The budget now keeps a ten-fold margin over
    the slowest real pattern measured (0.83 µs a character)."""
    from minillm.tokenizer import checks
    n = 10_000_000
    assert checks.time_limit("a b\n" * (n // 4)) >= 10 * 0.83e-6 * n


def test_a_normalizer_or_post_processor_must_be_callable():
    """tokenizer.json's steps come as objects the readers build (formats/hf/normalizers.py,
    post_processors.py); a bare spec is refused, not silently ignored."""
    vocab = {bytes([b]): b for b in range(256)}
    with pytest.raises(TypeError, match="callable or None"):
        Tokenizer(vocab, None, normalizer="NFC")
    with pytest.raises(TypeError, match="callable or None"):
        Tokenizer(vocab, None, post_processor={"type": "ByteLevel"})


def test_a_plain_function_normalizer_runs_but_cannot_be_saved(tmp_path):
    tok = Tokenizer({bytes([b]): b for b in range(256)}, {}, normalizer=str.lower,
                    post_processor=lambda ids: [*ids, 0])
    assert tok.encode("AB") == [97, 98] and tok.encode("AB", add_special_tokens=True) == [97, 98, 0]
    with pytest.raises(ValueError, match="cannot be written"):
        tok.save(tmp_path / "t.minillm.json")
