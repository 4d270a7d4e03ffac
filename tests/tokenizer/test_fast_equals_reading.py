"""End to end: `Tokenizer.encode` with the speed-ups (fast/) == the reading path (`fast=False`).

Each speed-up is tested equal to its reading form in tests/tokenizer/fast/; here the whole encode
is: (a) on random vocabularies under both merge rules, with every speed path forced on (batched
BPE, long pieces), on random text with CJK, emoji, spaces, digits and special tokens; (b) on the
real vocabularies over a multilingual corpus (more of it with HYPOTHESIS_PROFILE=thorough).
"""
import functools
import gc
from unittest import mock

import pytest
from hypothesis import given, settings, strategies as st

from minillm.tokenizer import Tokenizer
from minillm.tokenizer.fast import bulk, long, pieces
from tests.conftest import SHARED_DATA, shared_file
from tests.tokenizer.helpers import fixture_json, named, smollm2_from_json

SPECIALS = ["<|endoftext|>", "<|im_start|>"]
# CJK, kana, hangul, emoji (above U+FFFF: the `regex` path), a ZWJ sequence, digits, spaces
FRAGMENTS = ["海", "水", "海水", "红光", "的", "。", "か", "한", "👍", "🏽", "👨\u200d👩", "😀",
             "a", "b", "ab", "the", " ", "  ", "\n", "\t", "1", "23", "4567", "'s", "!", "é",
             "ок", *SPECIALS]
MULTILINGUAL = [  # besides the tiktoken parity fixture's texts
    "हिन्दी में एक वाक्य, और अंक ४२।", "ภาษาไทยไม่มีช่องว่างระหว่างคำ",
    "Tiếng Việt có dấu: đường phố",
    "Ἐν ἀρχῇ ἦν ὁ λόγος", "Ünïcödé ﬁ ligatures ＦＵＬＬ ｗｉｄｔｈ １２３", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟙𝟚𝟛 and 🧑🏾‍🚀",
    "東京特許許可局　全角スペース", "x" * 300 + "海" * 200, "1234567890" * 30,
]
PATTERNS = ["gpt2", "cl100k", "o200k", "smollm"]


@st.composite
def vocabularies(draw):
    """A random byte-level vocabulary: the single bytes (a few may be missing: the unknown id
    then stands in), tokens glued from UTF-8 fragments, shuffled ids, a random pattern and
    either merge rule (`pairs`: each token listed at a random split, with a random rank)."""
    pieces_ = draw(st.lists(st.lists(st.sampled_from(FRAGMENTS[:-2]), min_size=1, max_size=3)
                            .map("".join).map(str.encode), max_size=60))
    missing = set(draw(st.lists(st.integers(0, 255), max_size=3)))
    tokens = list(dict.fromkeys([bytes([b]) for b in range(256) if b not in missing]
                                + [p[i:j] for p in pieces_ for i in range(len(p))
                                   for j in (i + 2, len(p)) if j <= len(p)]))
    ids = draw(st.permutations(range(len(tokens))))
    encoder = dict(zip(tokens, ids))
    merges = None
    if draw(st.booleans()):
        ranks = draw(st.permutations(range(len(tokens))))
        merges = {(t[:k], t[k:]): r for t, r in zip(tokens, ranks) if len(t) > 1
                  for k in [1 + r % (len(t) - 1)]}
    specials = {s: len(tokens) + k for k, s in enumerate([*SPECIALS, "<unk>"])}
    return dict(encoder=encoder, merges=merges, pattern=draw(st.sampled_from(PATTERNS)),
                special_tokens=specials, unk_id=specials["<unk>"],
                whole_piece_lookup=draw(st.booleans()))


texts = st.one_of(st.lists(st.sampled_from(FRAGMENTS), max_size=60).map("".join),
                  st.text(max_size=40))


@given(vocabularies(), st.lists(texts, min_size=1, max_size=4), st.booleans())
def test_fast_equals_reading_on_random_vocabularies(vocabulary, batch, every_speed_path):
    fast, reading = Tokenizer(**vocabulary), Tokenizer(**vocabulary, fast=False)
    batch_min, long_piece = (1, 6) if every_speed_path else (pieces.BATCH_MIN, long.LONG)
    with mock.patch.object(pieces, "BATCH_MIN", batch_min), \
            mock.patch.object(bulk, "BATCH_BPE", batch_min), mock.patch.object(long, "LONG", long_piece):
        for text in batch:  # (several texts: the second one meets the caches of the first)
            assert fast.encode(text, allowed_special="all") == \
                reading.encode(text, allowed_special="all")


@functools.lru_cache(maxsize=None)
def corpus() -> str:
    """The committed multilingual strings and slices of every development corpus (English,
    classical and Song-ci Chinese) when present: 2.5 K characters of them in the ci profile,
    5 K in dev, 50 K with HYPOTHESIS_PROFILE=thorough."""
    per_file = 25 * settings.default.max_examples  # characters from each corpus
    slices = []
    for path in sorted((SHARED_DATA / "corpora").glob("*.txt")):
        text = path.read_text(encoding="utf-8")
        for start in (len(text) // 3, 2 * len(text) // 3):  # away from the headers
            slices.append(text[start:start + per_file // 2])
    fixture = fixture_json("tokenizer/tiktoken_parity.json")["texts"]
    return "\n".join([*slices, *MULTILINGUAL, *fixture])


def real_tokenizer(name: str) -> Tokenizer:
    if name == "smollm2":
        return smollm2_from_json()
    if name == "deepseek_v4":
        return deepseek_v4()
    return named(name)


@functools.lru_cache(maxsize=None)
def deepseek_v4() -> Tokenizer:
    return Tokenizer.load(shared_file("tokenizers/deepseek_v4/tokenizer.json"))


@pytest.mark.parametrize("name", ["gpt2", "cl100k", "o200k", "smollm2", "deepseek_v4"])
def test_fast_equals_reading_on_real_vocabularies(name):
    tok, text = real_tokenizer(name), corpus()
    reading = Tokenizer(tok.encoder, tok.merges, tok.pattern, tok.special_tokens,
                        whole_piece_lookup=tok.whole_piece_lookup, normalizer=tok.normalizer,
                        bos_id=tok.bos_id, eos_id=tok.eos_id, unk_id=tok.unk_id, fast=False)
    for line in text.splitlines(keepends=True):
        assert tok.encode_ordinary(line) == reading.encode_ordinary(line), line[:40]
    assert tok.encode_ordinary(text) == reading.encode_ordinary(text)  # one text: batched BPE


@pytest.mark.parametrize("name", ["gpt2", "cl100k", "o200k", "smollm2", "deepseek_v4"])
def test_a_fresh_tokenizer_equals_reading_on_its_first_long_text(name):
    """The first text a tokenizer sees fills its caches in bulk (batched BPE, wide.py): the
    corpus (English, Chinese, many scripts), and a mixed text with multi-byte characters,
    repeated pairs and more than BATCH_BPE new pieces, each the first text of a new tokenizer."""
    tok = real_tokenizer(name)
    words = (" zq" + "".join(chr(97 + i // 26**k % 26) for k in range(3)) for i in range(1100))
    mixed = "".join(f"{w} 海水{i % 7}会 ééé aaaa 👍{'的' * (i % 5)} ок" for i, w in enumerate(words))
    for text in (corpus(), mixed):
        fresh, reading = (Tokenizer(tok.encoder, tok.merges, tok.pattern, tok.special_tokens,
                                    whole_piece_lookup=tok.whole_piece_lookup,
                                    normalizer=tok.normalizer, unk_id=tok.unk_id, fast=fast)
                          for fast in (True, False))
        assert fresh.encode_ordinary(text) == reading.encode_ordinary(text)
        assert fresh.fast_encoder.kept is not None  # (the bulk paths ran)
    assert fresh.fast_encoder.batch


def test_a_long_encode_pauses_the_garbage_collector_and_restores_it(monkeypatch):
    """The collector is off while a text of PAUSE_GC characters or more is split and encoded,
    on again after (also after an error), and stays off when the caller had turned it off."""
    tok = named("gpt2")
    seen = []
    split = tok.fast_encoder.split
    monkeypatch.setattr(tok.fast_encoder, "split", lambda text: seen.append(gc.isenabled()) or split(text))
    text = "To be, or not to be, that is the question. " * (pieces.PAUSE_GC // 40)
    assert len(text) >= pieces.PAUSE_GC and gc.isenabled()
    assert tok.encode_ordinary(text) == reading_ids(tok, text)
    tok.encode_ordinary(text[:100])
    assert seen == [False, True] and gc.isenabled()
    monkeypatch.setattr(tok.fast_encoder, "split", lambda text: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        tok.encode_ordinary(text)
    assert gc.isenabled()
    gc.disable()
    try:
        monkeypatch.setattr(tok.fast_encoder, "split", split)
        assert tok.encode_ordinary(text) == reading_ids(tok, text)
        assert not gc.isenabled()
    finally:
        gc.enable()


def reading_ids(tok: Tokenizer, text: str) -> list[int]:
    return Tokenizer(tok.encoder, tok.merges, tok.pattern, tok.special_tokens,
                     whole_piece_lookup=tok.whole_piece_lookup, fast=False).encode_ordinary(text)
