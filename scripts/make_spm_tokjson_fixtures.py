"""Reference fixtures for tokenizer.json's SentencePiece-style BPE (BPE with byte_fallback).

    PYTHONPATH=$PWD .venv-dev/bin/python scripts/make_spm_tokjson_fixtures.py

(the development venv of scripts/README.md, with `tokenizers` 0.23.3; never imported by minillm or
the tests.) There is no Llama 2 / TinyLlama / Mistral tokenizer.json on disk, so this script builds
one in their layout: merges learned by `tokenizers`' BpeTrainer on a small multilingual text
(English, French, German, Chinese, code with indentation), then arranged as Llama 2's files are:

    ids 0, 1, 2        <unk>, <s>, </s>   (added tokens, special)
    ids 3 .. 258       <0x00> .. <0xFF>   (byte fallback: every byte has its token)
    ids 259 ..         the learned pieces ("▁the", "▁▁", "中"), merges in the learned order
    normalizer         Sequence [Prepend("▁"), Replace(" " -> "▁")]   (Llama 2, TinyLlama)
    decoder            Sequence [Replace("▁" -> " "), ByteFallback, Fuse, Strip(" ", 1, 0)]
    post_processor     TemplateProcessing "<s> $A"

Characters left out of the alphabet (most of the Han, the emoji, rare accents) reach the byte
fallback. Writes tests/fixtures/tokenizer_json/spm_base.json (the file) and spm_reference.json:

  honoured  per case (a patch of the base: top-level keys replaced, "model" keys merged in):
            `tokenizers`' ids of every text, with and without add_special_tokens, and the decode
            of the plain ids (skip_special_tokens=False)
  decode    id lists that are not the encoding of a text (byte runs that are not UTF-8, a
            leading byte space, specials first) and `tokenizers`' decode of each, per decoder
  refused   per case: a patch and the words minillm's ValueError must contain, and what
            `tokenizers` gives on the refused file (what minillm would have got wrong)
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import tokenizers

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.tokenizer.hf_spm_cases import patched  # noqa: E402  (the tests apply the same)

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "tests" / "fixtures" / "tokenizer_json"
SPECIALS = ["<unk>", "<s>", "</s>"]
CORPUS = """\
The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs away.
Hello world! Hello there, how are you today? I am fine, thank you very much.
Le renard brun saute par-dessus le chien paresseux. Ça va très bien, merci.
Der schnelle braune Fuchs springt über den faulen Hund. Schöne Grüße aus München.
def main():
    for i in range(10):
        print(i, "hello")
    return None
海水会吸收较多红光，蓝光更容易被散射回来，所以大海常呈蓝色。
大海是蓝色的。海水很深。我们喜欢大海。
"""
TEXTS = [
    "Hello world", " Hello world", "Hello  world", "   leading spaces", "trailing spaces   ",
    "The quick brown fox jumps over the lazy dog.", "naïve café, schöne Grüße, ça va",
    "大海是蓝色的，海水很深。", "新しい日本語のテキスト", "한국어 텍스트", "emoji 🦙🚀 and 👩‍👩‍👧 family",
    "def f(x):\n    return x  # two  spaces\n\n\tTab", "▁already▁escaped ▁", "",  " ", "  ",
    "\n", "<s>Hello</s> there", "a <s> b  </s>  c", "<unk>x", "Zürich 1234567890 ½ ﬁ",
    "mixed 中文 and English 和 日本語", "\u00a0non-breaking\u3000ideographic space", "Zürich",
]
BASE_NORMALIZER = {"type": "Sequence", "normalizers": [
    {"type": "Prepend", "prepend": "▁"},
    {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}
STRIP_DECODER = {"type": "Sequence", "decoders": [
    {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"},
    {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
NO_STRIP_DECODER = {"type": "Sequence", "decoders": STRIP_DECODER["decoders"][:3]}


def metaspace(scheme, split):
    return {"pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": scheme,
                              "split": split}, "normalizer": None}


HONOURED = {
    "Llama 2 / TinyLlama: Prepend + Replace normalizer, Strip decoder": {},
    "Llama 2 without the prefix: Replace normalizer only, no Strip": {
        "normalizer": {"type": "Sequence", "normalizers": BASE_NORMALIZER["normalizers"][1:]},
        "decoder": NO_STRIP_DECODER},
    "fuse_unk false": {"model": {"fuse_unk": False}},
    "no post-processor": {"post_processor": None},
    **{f"Metaspace prepend_scheme={scheme} split={split}": metaspace(scheme, split)
       for scheme in ("first", "always") for split in (False, True)},
    **{f"Metaspace prepend_scheme=never split={split}": {**metaspace("never", split),
                                                         "decoder": NO_STRIP_DECODER}
       for split in (False, True)},
    "Metaspace split=true after the Prepend normalizer": {**metaspace("first", True),
                                                          "normalizer": BASE_NORMALIZER},
    "Metaspace after the Replace normalizer": {**metaspace("first", False), "normalizer": {
        "type": "Replace", "pattern": {"String": " "}, "content": "▁"}},
    "Mistral: Metaspace first, added tokens normalized": {
        **metaspace("first", False), "added_tokens": "normalized"},
    "a merge listed twice (the last rank counts)": {"model": {"merges": "duplicate"}},
    "user-defined added token (special=false)": {"added_tokens": "user"},
}
REFUSED = {
    "byte_fallback with a missing byte token": ({"model": {"vocab": "drop <0x80>"}}, "<0x80>"),
    "ignore_merges": ({"model": {"ignore_merges": True, "vocab": "add ▁Zürich"}},
                      "ignore_merges"),
    "continuing_subword_prefix": ({"model": {"continuing_subword_prefix": "##"}},
                                  "continuing_subword_prefix"),
    "Metaspace with another replacement": ({"pre_tokenizer": {
        "type": "Metaspace", "replacement": "_", "prepend_scheme": "always", "split": False},
        "normalizer": None}, "replacement"),
    "Metaspace after a Lowercase normalizer": ({**metaspace("first", False), "normalizer": {
        "type": "Lowercase"}}, "normalizer"),
    "no Metaspace and no Replace normalizer": ({"normalizer": None}, "spaces"),
    "the Metaspace decoder": ({"decoder": {"type": "Metaspace", "replacement": "▁",
                                           "prepend_scheme": "always", "split": True}}, "decoder"),
    "no decoder": ({"decoder": None}, "decoder"),
    "Strip of two spaces": ({"decoder": {"type": "Sequence", "decoders": [
        *NO_STRIP_DECODER["decoders"], {"type": "Strip", "content": " ", "start": 2, "stop": 0}]}},
        "Strip"),
    "normalized added tokens with the Prepend normalizer": ({"added_tokens": "normalized"},
                                                            "normalized=true"),
    "a ByteLevel pre-tokenizer": ({"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
                                                     "trim_offsets": True, "use_regex": True}},
                                  "pre_tokenizer"),
}

ABORTS = {"continuing_subword_prefix"}   # tokenizers 0.23.3 panics while reporting its error


def learn_merges(lines: list[str], n_merges: int, min_count: int) -> list[tuple[str, str]]:
    """Plain BPE over the words of the lines ("▁" + word, as SentencePiece sees them): the most
    frequent adjacent pair merges next, ties to the smallest pair (deterministic, unlike a
    trainer's hash map). Characters seen fewer than `min_count` times are left out of the
    alphabet: they never merge (the byte fallback takes them)."""
    words = [list(w) for line in lines for w in re.findall("▁[^▁]*|[^▁]+", "▁" + line.replace(" ", "▁"))]
    counts: dict[str, int] = {}
    for w in words:
        for c in w:
            counts[c] = counts.get(c, 0) + 1
    known = {c for c, n in counts.items() if n >= min_count}
    merges = []
    for _ in range(n_merges):
        pairs: dict[tuple[str, str], int] = {}
        for w in words:
            for a, b in zip(w, w[1:]):
                if a in known and b in known:
                    pairs[(a, b)] = pairs.get((a, b), 0) + 1
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        known.add(best[0] + best[1])
        merges.append(best)
        for w in words:
            i = 0
            while i < len(w) - 1:
                if (w[i], w[i + 1]) == best:
                    w[i:i + 2] = [best[0] + best[1]]
                i += 1
    alphabet = sorted(c for c, n in counts.items() if n >= min_count)
    return alphabet, merges


def train_base() -> dict:
    alphabet, learned = learn_merges(CORPUS.splitlines(), n_merges=320, min_count=2)
    vocab = {s: i for i, s in enumerate(SPECIALS)}
    vocab.update({f"<0x{b:02X}>": 3 + b for b in range(256)})
    merges = [list(m) for m in learned]
    for piece in alphabet + [a + b for a, b in learned]:
        vocab.setdefault(piece, len(vocab))
    for a, b in (("▁", "▁"), ("▁▁", "▁▁"), ("▁▁▁▁", "▁▁▁▁")):   # indentation runs, as Llama 2 has
        if a + b not in vocab:
            vocab[a + b] = len(vocab)
            merges.append([a, b])
    added = [{"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i, s in enumerate(SPECIALS)]
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": BASE_NORMALIZER, "pre_tokenizer": None,
        "post_processor": {"type": "TemplateProcessing", "single": [
            {"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "<s>", "type_id": 1}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
        "decoder": STRIP_DECODER,
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>",
                  "continuing_subword_prefix": None, "end_of_word_suffix": None, "fuse_unk": True,
                  "byte_fallback": True, "ignore_merges": False, "vocab": vocab, "merges": merges}}


def reference(data: dict) -> dict:
    tok = tokenizers.Tokenizer.from_str(json.dumps(data))
    plain = [tok.encode(t, add_special_tokens=False).ids for t in TEXTS]
    return {"ids": plain,
            "ids_with_specials": [tok.encode(t).ids for t in TEXTS],
            "decoded": [tok.decode(ids, skip_special_tokens=False) for ids in plain]}


def decode_cases(base: dict) -> dict:
    """Id lists no text encodes to, and `tokenizers`' decode of each (with and without Strip)."""
    v = base["model"]["vocab"]
    b = {n: v[f"<0x{n:02X}>"] for n in range(256)}
    lists = [[b[0xE4], b[0xB8]], [b[0xE4], b[0xB8], b[0xAD], b[0xFF]], [b[0x20], v["▁the"]],
             [v["▁the"], b[0xC3], v["▁the"], b[0xA9]], [1, v["▁the"], 2], [b[0xF0], b[0x9F]],
             [v["▁"], v["▁"]], [b[0x41], b[0xE4], b[0xB8], b[0xAD], b[0x42]], []]
    out = {"ids": lists}
    for name, decoder in (("strip", STRIP_DECODER), ("no strip", NO_STRIP_DECODER)):
        tok = tokenizers.Tokenizer.from_str(json.dumps({**base, "decoder": decoder}))
        out[name] = [tok.decode(ids, skip_special_tokens=False) for ids in lists]
    return out


def main() -> None:
    base = train_base()
    honoured = [{"name": name, "patch": patch, **reference(patched(base, patch))}
                for name, patch in HONOURED.items()]
    refused = []
    for name, (patch, words) in REFUSED.items():
        if name in ABORTS:
            got = "not run: tokenizers aborts the process on this file (a panic in pyo3)"
        else:
            got = reference(patched(base, patch))
        refused.append({"name": name, "patch": patch, "message": words, "tokenizers_gives": got})
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "spm_base.json").write_text(json.dumps(base, ensure_ascii=False, indent=1) + "\n",
                                       encoding="utf-8")
    (OUT / "spm_reference.json").write_text(json.dumps({
        "tokenizers": tokenizers.__version__, "base": "tests/fixtures/tokenizer_json/spm_base.json",
        "texts": TEXTS, "honoured": honoured, "decode": decode_cases(base), "refused": refused},
        ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"tokenizers {tokenizers.__version__}: vocabulary of {len(base['model']['vocab'])} "
          f"tokens, {len(base['model']['merges'])} merges; {len(honoured)} honoured and "
          f"{len(refused)} refused cases x {len(TEXTS)} texts -> {OUT.relative_to(REPO)}")


if __name__ == "__main__":
    sys.exit(main())
