"""Reference fixtures for the tokenizer.json settings minillm honours or refuses (minillm/tokenizer/formats/hf/features.py).

    PYTHONPATH=$PWD .venv-dev/bin/python scripts/make_tokjson_fixtures.py

(the development venv of scripts/README.md, with `tokenizers`; never imported by minillm or the
tests.) Writes tests/fixtures/tokenizer_json/reference.json:

  base      weights/shakespeare/tokenizer.json with ADDED tokens (<s>, </s>, <pad>, café)
  honoured  per case: a patch of the base (top-level keys replaced; "append_merges" /
            "prepend_merges" edit the merge list) and `tokenizers`' ids of every text, with and
            without add_special_tokens
  refused   per case: a patch and the words minillm's ValueError must contain; the ids
            `tokenizers` gives are stored too (what minillm would have got wrong)
  regex     per Oniguruma regex: `tokenizers`' Split (Isolated) pieces of each probe text
  unicode   per code point: `tokenizers`' view (which of \\p{L} \\p{N} \\p{S} \\p{Cn} match),
            and the ids of the unassigned-code-point texts from the shipped and DeepSeek-V4 files
"""
from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import tokenizers
from tokenizers import Regex, pre_tokenizers

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "tests" / "fixtures" / "tokenizer_json" / "reference.json"
DEEPSEEK = Path("/work/shared/data/tokenizers/deepseek_v4/tokenizer.json")
ADDED = [("<s>", 2048), ("</s>", 2049), ("<pad>", 2050), ("café", 2051)]  # not vocab strings
TEXTS = ["ROMEO: But soft! what light", "<s>Hello</s> there", "a <s> b  </s>  c", "  café cafe\u0301 CAFÉ  ",
         "ΟΔΟΣ ΣΑΣ İstanbul ﬁ ½ ²", "x = 0x1F3a;\tdeadBEEF\n\nend\n", "", "e\u0301<s>\u0338 é"]
PROBES = ["ab 12 fx\u00a0\u0660\u0661\t\r\nZé_\u2028Kk", "ab\ncd\n", "a\r\n\r\nb  \n ",
          "½ ² Ⅻ ª \u0345 \u203f \u200c · _", "\u001b\u263a x"]
REGEXES = [r"\h+", r"\H+", r"[\h]+", r"[^\h ]+", r"\w+", r"\W+", r"[\w]+", r"\x{263a}",
           r"[\x{263a}a]", r"\e", r"\N", r"\Z", r"^.", r"b$", r"\s+$", r"(?m).", r"(?m:.)\n",
           r"[]a]+", r"\R", r"\d+", r"\s+", r"\p{L}+", r"[^\s\p{L}\p{N}]+",
           r"\b", r"\y", r"[[:digit:]]+", r"[a-z&&[^b]]+", r"[\H]", r"\p{Word}+", r"\Qa\E"]
UNICODE = {"U+208F": 0x208F, "U+209D": 0x209D, "U+209F": 0x209F, "U+20C1": 0x20C1,
           "U+20C2": 0x20C2, "U+20C3": 0x20C3, "U+1E030 (15.0)": 0x1E030,
           "U+2EBF0 (15.1)": 0x2EBF0, "U+1C89 (16.0)": 0x1C89}
UNASSIGNED_TEXTS = ["the\u208f's \u209d\u209f's", "price 5\u20c2 or \u20c3 9"]


def template(single, special):
    return {"type": "TemplateProcessing", "single": single,
            "pair": single + [{"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {s: {"id": s, "ids": [i], "tokens": [s]} for s, i in special}}


SEQ_A = {"Sequence": {"id": "A", "type_id": 0}}
BOS = {"SpecialToken": {"id": "<s>", "type_id": 0}}
EOS = {"SpecialToken": {"id": "</s>", "type_id": 0}}
BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
              "use_regex": False}
GPT2_SPLIT = {"type": "Split", "behavior": "Isolated", "invert": False, "pattern": {"Regex": (
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s")}}


def split(rx):
    return {"type": "Split", "pattern": {"Regex": rx}, "behavior": "Isolated", "invert": False}


def seq_pre(*steps):
    return {"pre_tokenizer": {"type": "Sequence", "pretokenizers": list(steps)}}


HONOURED = {
    "post TemplateProcessing <s> $A": {"post_processor": template([BOS, SEQ_A], [("<s>", 2048)])},
    "post TemplateProcessing <s> $A </s>": {"post_processor": template(
        [BOS, SEQ_A, EOS], [("<s>", 2048), ("</s>", 2049)])},
    "post RobertaProcessing": {"post_processor": {
        "type": "RobertaProcessing", "sep": ["</s>", 2049], "cls": ["<s>", 2048],
        "trim_offsets": True, "add_prefix_space": False}},
    "post BertProcessing": {"post_processor": {
        "type": "BertProcessing", "sep": ["</s>", 2049], "cls": ["<s>", 2048]}},
    "post ByteLevel": {"post_processor": {"type": "ByteLevel", "add_prefix_space": True,
                                          "trim_offsets": False, "use_regex": True}},
    "post Sequence[ByteLevel, Template]": {"post_processor": {"type": "Sequence", "processors": [
        {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        template([BOS, SEQ_A], [("<s>", 2048)])]}},
    **{f"normalizer {f}": {"normalizer": {"type": f}} for f in ("NFC", "NFD", "NFKC", "NFKD")},
    "normalizer Lowercase": {"normalizer": {"type": "Lowercase"}},
    "normalizer Strip": {"normalizer": {"type": "Strip", "strip_left": True, "strip_right": True}},
    "normalizer Strip right": {"normalizer": {"type": "Strip", "strip_left": False,
                                              "strip_right": True}},
    "normalizer Replace String": {"normalizer": {"type": "Replace", "pattern": {"String": " "},
                                                 "content": "_"}},
    "normalizer Replace Regex \\h": {"normalizer": {"type": "Replace", "pattern": {
        "Regex": r"\h+"}, "content": "#"}},
    "normalizer Prepend": {"normalizer": {"type": "Prepend", "prepend": "▁"}},
    "normalizer Sequence": {"normalizer": {"type": "Sequence", "normalizers": [
        {"type": "NFKC"}, {"type": "Strip", "strip_left": True, "strip_right": True},
        {"type": "Lowercase"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
        {"type": "Prepend", "prepend": "▁"}]}},
    "added token normalized=true without a normalizer": {"added_tokens": [
        {"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": True, "special": True} for s, i in ADDED]},
    "merge listed twice, the copy last": {"append_merges": ["Ġt h", "r e"]},
    "merge listed twice, the copy first": {"prepend_merges": ["Ġt h", "r e"]},
    "pre-tokenizer Digits, Split, ByteLevel in order": seq_pre(
        {"type": "Digits", "individual_digits": True}, GPT2_SPLIT, BYTE_LEVEL),
    "pre-tokenizer Split \\h then ByteLevel(use_regex)": seq_pre(
        split(r"\h+"), {**BYTE_LEVEL, "use_regex": True}),
}
REFUSED = {
    "truncation": ({"truncation": {"direction": "Right", "max_length": 4, "strategy":
                                   "LongestFirst", "stride": 0}}, "truncation is set"),
    "padding": ({"padding": {"strategy": "BatchLongest", "direction": "Right", "pad_to_multiple_of":
                             8, "pad_id": 2050, "pad_type_id": 0, "pad_token": "<pad>"}},
                "padding is set"),
    "added token normalized=true with NFC": ({"normalizer": {"type": "NFC"}, "added_tokens": [
        {"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": True, "special": True} for s, i in ADDED]}, "normalized=true"),
    **{f"added token {flag}": ({"added_tokens": [
        {"id": 2048, "content": "<s>", "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True, flag: True}]}, f"{flag}=true")
       for flag in ("lstrip", "rstrip", "single_word")},
    "pre-tokenizer ByteLevel before Split": (seq_pre(
        BYTE_LEVEL, split(r"\S+")), "comes after ByteLevel"),
    "normalizer BertNormalizer": ({"normalizer": {
        "type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
        "strip_accents": None, "lowercase": True}}, "BertNormalizer"),
    "post TemplateProcessing $B in single": ({"post_processor": template(
        [SEQ_A, {"Sequence": {"id": "B", "type_id": 1}}], [])}, "names sequence 'B'"),
    "Split regex \\b": (seq_pre(split(r"\b\w+"), BYTE_LEVEL), "\\b"),
}


def base() -> dict:
    data = json.loads((REPO / "weights" / "shakespeare" / "tokenizer.json").read_text("utf-8"))
    data["added_tokens"] = [{"id": i, "content": s, "single_word": False, "lstrip": False,
                             "rstrip": False, "normalized": False, "special": True}
                            for s, i in ADDED]
    return data


def patched(data: dict, patch: dict) -> dict:
    """The base with a patch applied (tests/tokenizer/formats/hf/test_tokenizer_json.py does the same)."""
    data = copy.deepcopy(data)
    patch = dict(patch)
    data["model"]["merges"] = (patch.pop("prepend_merges", []) + data["model"]["merges"]
                               + patch.pop("append_merges", []))
    data.update(patch)
    return data


def ids(data: dict, special: bool) -> list[list[int]]:
    tok = tokenizers.Tokenizer.from_str(json.dumps(data))
    return [tok.encode(t, add_special_tokens=special).ids for t in TEXTS]


def tokenizers_gives(data: dict) -> list | str:
    """What `tokenizers` does with a refused file: its ids with add_special_tokens, or its error
    (a single template naming $B makes it panic)."""
    try:
        return ids(data, True)
    except BaseException as exc:                  # pyo3's PanicException is a BaseException
        return f"{type(exc).__name__}: {exc}"


def main() -> None:
    b = base()
    honoured = [{"name": name, "patch": patch, "ids": ids(patched(b, patch), False),
                 "ids_with_specials": ids(patched(b, patch), True)}
                for name, patch in HONOURED.items()]
    refused = [{"name": name, "patch": patch, "message": words,
                "tokenizers_gives": tokenizers_gives(patched(b, patch))}
               for name, (patch, words) in REFUSED.items()]
    regexes = []
    for rx in REGEXES:
        try:
            pre = pre_tokenizers.Split(Regex(rx), "isolated")
            pieces = [[p for p, _ in pre.pre_tokenize_str(t)] for t in PROBES]
        except Exception as exc:              # Oniguruma refuses it: recorded, not compared
            pieces = str(exc)
        regexes.append({"regex": rx, "pieces": pieces})
    views = {name: [cls for cls in (r"\p{L}", r"\p{N}", r"\p{S}", r"\p{Cn}", r"\s")
                    if not pre_tokenizers.Split(Regex(cls), "removed").pre_tokenize_str(chr(cp))]
             for name, cp in UNICODE.items()}       # the classes that match the code point
    shipped = tokenizers.Tokenizer.from_file(str(REPO / "weights" / "shakespeare" / "tokenizer.json"))
    unicode = {"views": views, "texts": UNASSIGNED_TEXTS,
               "shakespeare": [shipped.encode(t).ids for t in UNASSIGNED_TEXTS]}
    if DEEPSEEK.exists():
        deepseek = tokenizers.Tokenizer.from_file(str(DEEPSEEK))
        unicode["deepseek_v4"] = [deepseek.encode(t, add_special_tokens=False).ids
                                  for t in UNASSIGNED_TEXTS]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({
        "tokenizers": tokenizers.__version__, "base": "weights/shakespeare/tokenizer.json",
        "added_tokens": b["added_tokens"], "texts": TEXTS, "honoured": honoured,
        "refused": refused, "probes": PROBES, "regex": regexes, "unicode": unicode},
        ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"tokenizers {tokenizers.__version__}: {len(honoured)} honoured and {len(refused)} "
          f"refused cases x {len(TEXTS)} texts, {len(regexes)} regexes x {len(PROBES)} probes, "
          f"{len(views)} code points -> {OUT.relative_to(REPO)}")
    print("tokenizers' view of code points:", json.dumps(views, ensure_ascii=False))


if __name__ == "__main__":
    sys.exit(main())
