"""tokenizer.json settings: each honoured (ids equal to `tokenizers`') or refused by name.

Fixtures: tests/fixtures/tokenizer_json/reference.json, made by scripts/make_tokjson_fixtures.py
from `tokenizers` 0.23.3 on edited copies of weights/shakespeare/tokenizer.json (what is honoured
and refused: minillm/tokenizer/formats/hf/features.py).
"""
import copy
import json
import re
from pathlib import Path

import pytest
import regex

from minillm.tokenizer import Tokenizer
from minillm.tokenizer.formats.hf.read import read_hf_json
from minillm.tokenizer.formats.hf.onig import to_python
from minillm.tokenizer.patterns import split_isolated
from tests.conftest import shared_file

REPO = Path(__file__).resolve().parents[4]
REF = json.loads((REPO / "tests/fixtures/tokenizer_json/reference.json").read_text("utf-8"))
BASE = json.loads((REPO / REF["base"]).read_text("utf-8")) | {"added_tokens": REF["added_tokens"]}
# the Oniguruma constructs minillm refuses rather than translates (formats/hf/onig.py)
REFUSED_REGEXES = {r"\b", r"\y", r"[[:digit:]]+", r"[a-z&&[^b]]+", r"[\H]", r"[\w]+",
                   r"\p{Word}+", r"\Qa\E"}


def patched(patch: dict) -> dict:
    """The fixture's base with a case's patch (scripts/make_tokjson_fixtures.py: `patched`)."""
    data, patch = copy.deepcopy(BASE), dict(patch)
    data["model"]["merges"] = (patch.pop("prepend_merges", []) + data["model"]["merges"]
                               + patch.pop("append_merges", []))
    return data | patch


@pytest.mark.parametrize("case", REF["honoured"], ids=[c["name"] for c in REF["honoured"]])
@pytest.mark.parametrize("fast", [True, False])
def test_honoured_settings_give_the_ids_of_tokenizers(case, fast):
    tok = Tokenizer(**read_hf_json(patched(case["patch"])), fast=fast)
    for text, ids, with_specials in zip(REF["texts"], case["ids"], case["ids_with_specials"]):
        assert tok.encode(text, allowed_special="all") == ids, text
        assert tok.encode(text, allowed_special="all", add_special_tokens=True) == with_specials


@pytest.mark.parametrize("case", REF["refused"], ids=[c["name"] for c in REF["refused"]])
def test_refused_settings_raise_a_message_naming_them(case):
    with pytest.raises(ValueError, match=re.escape(case["message"])):
        read_hf_json(patched(case["patch"]))


def test_refused_settings_would_have_changed_the_ids():
    """Each refusal prevents a real difference: `tokenizers`' ids (with add_special_tokens, or
    its error) differ from what the file gives without the refused setting."""
    plain = [Tokenizer(**read_hf_json(BASE)).encode(t, allowed_special="all", add_special_tokens=True)
             for t in REF["texts"]]
    for case in REF["refused"]:
        assert case["tokenizers_gives"] != plain, case["name"]


@pytest.mark.parametrize("case", REF["regex"], ids=[c["regex"] for c in REF["regex"]])
def test_oniguruma_regexes_split_as_tokenizers_or_are_refused(case):
    if case["regex"] in REFUSED_REGEXES:
        with pytest.raises(ValueError, match="Oniguruma"):
            to_python(case["regex"])
        return
    rx = regex.compile(to_python(case["regex"]))
    assert [split_isolated(rx, probe) for probe in REF["probes"]] == case["pieces"]


def test_h_is_a_hex_digit_as_in_oniguruma():
    assert to_python(r"\h+") == "[0-9a-fA-F]+"
    assert split_isolated(regex.compile(to_python(r"\h+")), "0x1F zz") == ["0", "x", "1F", " zz"]


def test_add_special_tokens_defaults_to_false_and_is_a_no_op_without_a_post_processor():
    tok = Tokenizer(**read_hf_json(patched(REF["honoured"][0]["patch"])))
    assert tok.encode("hi") == tok.encode("hi", add_special_tokens=False)
    assert tok.encode("hi", add_special_tokens=True) == [2048, *tok.encode("hi")]
    plain = Tokenizer(**read_hf_json(BASE))
    assert plain.encode("hi", add_special_tokens=True) == plain.encode("hi")


def test_a_saved_tokenizer_keeps_its_normalizer_and_post_processor(tmp_path):
    case = next(c for c in REF["honoured"] if c["name"] == "post Sequence[ByteLevel, Template]")
    patch = case["patch"] | {"normalizer": {"type": "Lowercase"}}
    tok = Tokenizer(**read_hf_json(patched(patch)))
    for name in ("tokenizer.json", "tok.minillm.json"):
        tok.save(tmp_path / name)
        again = Tokenizer.load(tmp_path / name)
        assert (again.normalizer, again.post_processor) == (tok.normalizer, tok.post_processor)
        assert again.encode("Hi You", add_special_tokens=True) == \
            tok.encode("Hi You", add_special_tokens=True)


# Unicode versions: `regex` (2026.11.19) has Unicode 18.0's tables, `tokenizers`' Oniguruma 16.0's.
# Code points assigned in 17.0 or 18.0 are letters or symbols to minillm and unassigned (Cn) to
# `tokenizers`: a KNOWN difference (formats/hf/features.py, "Unicode versions"), asserted so that a
# change on either side is noticed.
NEWER = {"U+208F": r"\p{L}", "U+209D": r"\p{L}", "U+209F": r"\p{L}", "U+20C1": r"\p{S}",
         "U+20C2": r"\p{S}", "U+20C3": r"\p{S}"}


REGEX_READ = (2026, 11, 19)   # the `regex` release NEWER's classes were read from


def regex_assigns(text: str) -> bool | None:
    """Whether this `regex`'s tables assign the NEWER code points in ``text``: True (all), False
    (none: an older `regex`, which setup.cfg allows), None (some)."""
    known = {not regex.fullmatch(r"\p{Cn}", c) for c in text if f"U+{ord(c):04X}" in NEWER}
    return None if len(known) != 1 else known.pop()


def test_code_points_newer_than_unicode_16_are_unassigned_to_tokenizers_and_assigned_to_regex():
    """From the `regex` release the classes were read from on, exactly NEWER's classes; an older
    `regex` may not have 17.0's or 18.0's tables yet: its class is NEWER's or still Cn."""
    views = REF["unicode"]["views"]
    current = tuple(int(part) for part in regex.__version__.split(".")[:3])
    for name, cls in NEWER.items():
        assert views[name] == [r"\p{Cn}"], name
        char = chr(int(name[2:], 16))
        assert regex.fullmatch(cls, char) or (current < REGEX_READ and regex_assigns(char) is False), name
    for name in ("U+1E030 (15.0)", "U+2EBF0 (15.1)", "U+1C89 (16.0)"):  # older: the same
        assert views[name] == [r"\p{L}"] and regex.fullmatch(r"\p{L}", chr(int(name[2:7].strip(" ("), 16)))


def test_texts_with_code_points_newer_than_unicode_16_tokenize_differently_known_difference():
    """On GPT-2's pattern a newer letter (U+208F) glues to the letters before it; to `tokenizers`
    it starts a run of punctuation ("₏'")."""
    shipped = Tokenizer.load(REPO / "weights" / "shakespeare" / "tokenizer.json")
    text, ids = REF["unicode"]["texts"][0], REF["unicode"]["shakespeare"][0]
    assert shipped.decode(ids) == text
    if regex_assigns(text) is False:     # an older `regex`: unassigned to both, so the same ids
        assert shipped.encode(text) == ids
    else:
        assert shipped.pre_tokenizer.split(text)[:2] == ["the\u208f", "'s"]
        assert shipped.encode(text) != ids


def test_deepseek_v4_tokenizes_newer_code_points_differently_known_difference():
    tok = Tokenizer.load(shared_file("tokenizers/deepseek_v4/tokenizer.json"))
    for text, ids in zip(REF["unicode"]["texts"], REF["unicode"]["deepseek_v4"]):
        assert regex_assigns(text) is not None, text    # all or none: the texts are chosen so
        different = regex_assigns(text)                 # False: an older `regex`, the same ids
        assert (tok.encode(text) != ids) == different, text
        assert tok.decode(ids) == text
