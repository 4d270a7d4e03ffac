"""tokenizer.json's SentencePiece-style BPE (byte_fallback; Llama 2 / TinyLlama / Mistral layouts):
ids and decoding equal to `tokenizers`', every variant honoured or refused by name.

Fixtures: tests/fixtures/tokenizer_json/spm_base.json (a small vocabulary in Llama 2's layout) and
spm_reference.json, made by scripts/make_spm_tokjson_fixtures.py with `tokenizers` 0.23.3.
"""
import json
import re
from pathlib import Path

import pytest

from minillm.tokenizer import Tokenizer, load_tokenizer
from minillm.tokenizer.files import build as build_tokenizer
from minillm.tokenizer.formats.hf.read import read_hf_json
from minillm.tokenizer.spm import SentencePieceBPE
from tests.tokenizer.hf_spm_cases import patched

REPO = Path(__file__).resolve().parents[4]
FIXTURES = REPO / "tests/fixtures/tokenizer_json"
REF = json.loads((FIXTURES / "spm_reference.json").read_text("utf-8"))
BASE = json.loads((FIXTURES / "spm_base.json").read_text("utf-8"))
CONFIG = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}


def build(patch: dict, fast: bool = True) -> SentencePieceBPE:
    """As load_tokenizer builds it (files.build: `pieces` in the kwargs -> SentencePieceBPE)."""
    return build_tokenizer(SentencePieceBPE, read_hf_json(patched(BASE, patch), CONFIG), fast=fast)


@pytest.mark.parametrize("case", REF["honoured"], ids=[c["name"] for c in REF["honoured"]])
@pytest.mark.parametrize("fast", [True, False])
def test_honoured_variants_give_the_ids_and_text_of_tokenizers(case, fast):
    tok = build(case["patch"], fast)
    assert isinstance(tok, SentencePieceBPE)
    for text, ids, with_specials, decoded in zip(REF["texts"], case["ids"],
                                                  case["ids_with_specials"], case["decoded"]):
        assert tok.encode(text, allowed_special="all") == ids, text
        assert tok.encode(text, allowed_special="all", add_special_tokens=True) == with_specials
        assert tok.decode(ids) == decoded, text


@pytest.mark.parametrize("decoder", ["strip", "no strip"])
def test_decode_of_any_ids_is_that_of_tokenizers(decoder):
    """Byte runs that are not UTF-8 (one U+FFFD per byte), a leading byte space, specials."""
    patch = {} if decoder == "strip" else REF["honoured"][1]["patch"]
    tok = build(patch)
    for ids, text in zip(REF["decode"]["ids"], REF["decode"][decoder]):
        assert tok.decode(ids) == text, ids


def test_prepend_first_and_always_differ_only_after_a_special_token():
    first, always = (REF["honoured"][i] for i in (4, 6))
    assert "first split=False" in first["name"] and "always split=False" in always["name"]
    differ = [t for t, a, b in zip(REF["texts"], first["ids"], always["ids"]) if a != b]
    assert differ and all(re.search("<s>|</s>|<unk>", t) for t in differ)


@pytest.mark.parametrize("case", REF["refused"], ids=[c["name"] for c in REF["refused"]])
def test_refused_variants_raise_a_message_naming_them(case):
    with pytest.raises(ValueError, match=re.escape(case["message"])):
        read_hf_json(patched(BASE, case["patch"]), CONFIG)


def test_refused_variants_would_have_changed_the_ids():
    """Each refusal prevents a difference: `tokenizers`' ids or decoded texts on the refused file
    (or its abort) are not what the base file gives."""
    base = build({})
    ids = [base.encode(t, allowed_special="all") for t in REF["texts"]]
    plain = {"ids": ids, "decoded": [base.decode(i) for i in ids],
             "ids_with_specials": [[1, *i] for i in ids]}
    for case in REF["refused"]:
        assert case["tokenizers_gives"] != plain, case["name"]


def test_a_folder_with_tokenizer_json_loads_as_sentencepiece(tmp_path):
    (tmp_path / "tokenizer.json").write_text(json.dumps(BASE), encoding="utf-8")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(CONFIG), encoding="utf-8")
    tok = load_tokenizer(tmp_path)
    assert isinstance(tok, SentencePieceBPE)
    assert SentencePieceBPE.load(tmp_path).encode("Hello") == tok.encode("Hello")
    with pytest.raises(ValueError, match=re.escape("use minillm.load_tokenizer(path)")):
        Tokenizer.load(tmp_path)              # the class is the file's to choose
    assert (tok.bos_id, tok.eos_id, tok.unk_id) == (1, 2, 0)
    case = REF["honoured"][0]
    assert [tok.encode(t, allowed_special="all") for t in REF["texts"]] == case["ids"]


def test_encode_bytes_of_valid_utf8_equals_encode_ordinary_with_prepend_first():
    tok = build(REF["honoured"][4]["patch"])
    for text in REF["texts"]:
        assert tok.encode_bytes(text.encode()) == tok.encode_ordinary(text), text


def test_saving_is_refused_rather_than_changing_ids(tmp_path):
    with pytest.raises(ValueError, match="SentencePiece"):
        build({}).save(tmp_path / "tokenizer.json")


def test_merges_written_as_strings_rank_as_the_pairs_do():
    """Older files list merges as "a b" strings (the fixture's base has [a, b] pairs)."""
    as_strings = {"model": {"merges": [" ".join(m) for m in BASE["model"]["merges"]]}}
    tok, case = build(as_strings), REF["honoured"][0]
    assert [tok.encode(t, allowed_special="all") for t in REF["texts"]] == case["ids"]


def test_prepend_first_refuses_a_disallowed_special_token_at_its_own_position():
    tok = build(REF["honoured"][4]["patch"])
    with pytest.raises(ValueError, match="at character 2"):
        tok.encode("hi<s>")


@pytest.mark.parametrize("edit, message", [
    ("two tokens on one id", "id 301 is given to two tokens, 'he' and '▁t'"),
    ("a special on an ordinary id", "special token '<zz>' has id 301, the id of the ordinary token"),
])
def test_a_broken_byte_fallback_vocabulary_is_refused_not_loaded(tmp_path, edit, message):
    """Two tokens on one id loaded silently ("hello world" came back as " tllo world"): the
    SentencePiece-style reader never ran check_vocabulary."""
    data = json.loads(json.dumps(BASE))
    assert (data["model"]["vocab"]["he"], data["model"]["vocab"]["▁t"]) == (300, 301)
    if edit == "two tokens on one id":
        data["model"]["vocab"]["he"] = 301
    else:
        data["added_tokens"].append({"id": 301, "content": "<zz>", "special": True})
    (tmp_path / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(message)):
        load_tokenizer(tmp_path / "tokenizer.json")
