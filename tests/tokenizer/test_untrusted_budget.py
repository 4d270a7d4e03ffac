"""A tokenizer.json's regexes and normalisers are untrusted: a Replace regex is probed at load as
a Split regex is; every file regex of one encode call shares one time budget (budget.py), not a
budget per piece; a normaliser never grows the text past its bound (hf_normalize.most_chars)."""
import pytest

from minillm.tokenizer import Tokenizer, budget
from minillm.tokenizer.formats.hf.read import read_hf_json
from minillm.tokenizer.formats.hf.normalizers import CAP, GROWTH, SLACK, most_chars, normalize
from tests.tokenizer.formats.hf.test_tokenizer_json import patched

BYTES = {bytes([b]): b for b in range(256)}


def replace(pattern, content):
    return {"type": "Replace", "pattern": pattern, "content": content}


def test_a_backtracking_replace_regex_is_refused_at_load():
    with pytest.raises(ValueError, match=r"a Replace normalizer: pattern .* takes over 0.25 s on "
                                         r"40 × 'a' \(catastrophic backtracking\)"):
        read_hf_json(patched({"normalizer": replace({"Regex": "(a|aa)+$"}, "b")}))


@pytest.mark.parametrize("fast", [True, False])
def test_a_replace_regex_that_slips_past_the_probes_runs_under_the_time_budget(monkeypatch, fast):
    """☃ is not among the probes' characters (letters and digits of the pattern, PROBE_CHARS)."""
    monkeypatch.setattr(budget, "time_limit", lambda text: 0.2)
    norm = replace({"Regex": "(?:\\x{2603}|\\x{2603}\\x{2603})+$"}, "s")
    tok = Tokenizer(**{**read_hf_json(patched({"normalizer": norm})), "fast": fast})
    assert tok.decode(tok.encode("☃☃")) == "s"
    with pytest.raises(ValueError, match="the Replace normalizer's regex .* ran past this encode "
                                         "call's time limit"):
        tok.encode("☃" * 34 + "z")


@pytest.mark.parametrize("fast", [True, False])
def test_the_split_time_limit_is_one_budget_for_the_whole_encode_call(monkeypatch, fast):
    """Each piece of 20 x's takes ~0.03 s, well within a budget of 0.3 s; 100 pieces take ~3 s,
    which a budget per piece allowed and one budget per call does not."""
    monkeypatch.setattr(budget, "time_limit", lambda text: 0.3)
    tok = Tokenizer(BYTES, None, pattern=(r"[^ ]+| ", r"(?:x|xx)+y|."), fast=fast)
    assert tok.encode("x" * 20 + " ") == [ord("x")] * 20 + [ord(" ")]
    with pytest.raises(ValueError, match=r"ran past this encode call's time limit \(0.3 s for "
                                         r"2,100 characters\)"):
        tok.encode(("x" * 20 + " ") * 100)


def test_the_budget_of_an_encode_call_is_shared_by_its_pieces():
    with budget.encode_budget("abc"):
        first = budget.current_budget("a")
        assert budget.current_budget("a much longer piece") is first and first.chars == 3
    assert budget.current_budget("a").chars == 1                 # (outside a call: its own)


@pytest.mark.parametrize("norm, text, grows_to", [
    ({"type": "Sequence", "normalizers": [replace({"String": "a"}, "aa")] * 30}, "aaaa", "338+"),
    (replace({"Regex": ""}, "x" * (1 << 20)), "b" * 4000, "1,048,576+"),
    ({"type": "Prepend", "prepend": "▁" * (30 << 20)}, "hi", "31,457,282+")])
def test_a_normaliser_that_grows_the_text_past_its_bound_is_refused_by_name(norm, text, grows_to):
    kind = norm["normalizers"][0]["type"] if norm["type"] == "Sequence" else norm["type"]
    with pytest.raises(ValueError, match=f"the tokenizer's {kind} .* normalizer would turn "
                                         f"{len(text):,} characters into {grows_to}"):
        normalize(text, norm)


def test_real_normalisers_stay_within_the_bound():
    """NFKD's largest expansion (U+FDFA, 18 characters), a Prepend of "▁" on one character."""
    assert len(normalize("\ufdfa" * 1000, "NFKD")) == 18_000 <= most_chars(1000)
    assert normalize("a", {"type": "Prepend", "prepend": "▁"}) == "▁a"
    assert most_chars(10) == GROWTH * 10 + SLACK and most_chars(CAP) == CAP


def test_a_special_token_longer_than_its_limit_is_refused_by_its_length():
    """Regression: a 10 MB added token took 30 s and 2.4 GB on the first encode."""
    from minillm.tokenizer.checks import MAX_SPECIAL_CHARS
    long = "x" * (MAX_SPECIAL_CHARS + 1)
    with pytest.raises(ValueError, match=r"is 4,097 characters; a special or added token is "
                                         r"limited to 4,096"):
        Tokenizer(BYTES, None, special_tokens={long: 256})
    assert Tokenizer(BYTES, None, special_tokens={long[1:]: 256}).encode(
        long[1:], allowed_special="all") == [256]
