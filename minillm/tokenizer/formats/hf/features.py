"""The tokenizer.json settings that change ids, each honoured or refused by name (never ignored).

Honoured (compared with `tokenizers` on stored fixtures, tests/tokenizer/formats/hf/test_tokenizer_json.py):
normalisers (normalizers.py), post-processors (post_processors.py, with `add_special_tokens=True`),
Oniguruma regexes (onig.py), pre-tokeniser steps in their order while ByteLevel is the last one
to split, a merge listed twice (the LAST listing's rank, as `tokenizers` keeps). A BPE model with
byte_fallback is SentencePiece-style (Llama 2, TinyLlama, Mistral): its normalisers, Metaspace
pre-tokeniser (prepend_scheme first / always / never, split), decoder and fuse_unk are honoured
or refused in spm.py (tests/tokenizer/formats/hf/test_spm.py).

Refused here, before anything is built:

    truncation / padding   non-null: `tokenizers` would cut or pad every encoding; minillm
                           returns the text's ids (cut or pad them yourself)
    Split/Digits after ByteLevel   that step would split the byte-level alphabet ("Ġ" for a
                           space, two characters for "é"), not the text
    added token lstrip / rstrip / single_word   (whitespace around it absorbed, whole words only)
    added token normalized=true with a normalizer   `tokenizers` looks for it in the normalised
                           text; minillm looks for added tokens in the text as given

Unicode versions (a known difference, not refused): `regex` 2026.11.19 has Unicode 18.0's tables
(its README), the Oniguruma inside `tokenizers` 0.23.3 Unicode 16.0's (U+1C89, new in 16.0, is a
letter to it; U+20C1, new in 17.0, is unassigned). A code point assigned in 17.0 or 18.0 - U+208F,
U+209D..U+209F (letters, Lm), U+20C1..U+20C3 (currency signs, Sc) - is therefore a letter or a
symbol to minillm and unassigned (Cn) to `tokenizers`, so regexes over \\p{L}, \\p{S}, \\p{P}, ...
can split around it differently: GPT-2's pattern keeps "the" + U+208F together, `tokenizers` starts
a punctuation run U+208F + "'s". The ids then differ on the shipped Shakespeare file and on
DeepSeek-V4's. Translating every property to Unicode 16.0 would need `regex` to intersect
classes with an Age property; the difference is tested instead
(tests/tokenizer/formats/hf/test_tokenizer_json.py), so a change of either library is noticed.
NFC/NFKC use Python's `unicodedata` (14.0 on Python 3.11).

    >>> check_honoured({"truncation": {"max_length": 8}})
    Traceback (most recent call last):
    ValueError: tokenizer.json: truncation is set ...
"""
from __future__ import annotations

from .normalizers import simplest
from .post_processors import check_post_processor
from ..validate import shown


def check_honoured(data: dict):
    """A ValueError for the first setting of `data` (a tokenizer.json object) that minillm would
    otherwise not honour (see the module docstring); else the normaliser as a Tokenizer keeps it
    (normalizers.simplest, which checks it)."""
    for key in ("truncation", "padding"):
        if data.get(key) is not None:
            raise ValueError(f"tokenizer.json: {key} is set ({shown(data[key])}): `tokenizers` "
                             f"would {'cut' if key == 'truncation' else 'pad'} every encoding, and "
                             f"minillm does not; set it to null (minillm returns the text's ids)")
    check_post_processor(data.get("post_processor"))
    _check_byte_level_last(data.get("pre_tokenizer"))
    normalizer = simplest(data.get("normalizer"))
    for t in data.get("added_tokens", []):
        for flag in ("lstrip", "rstrip", "single_word"):
            if t.get(flag):
                raise ValueError(f"tokenizer.json: added token {shown(t.get('content'))} has "
                                 f"{flag}=true, which minillm does not implement (supported: "
                                 f"lstrip, rstrip and single_word false)")
        if t.get("normalized") and normalizer is not None:
            raise ValueError(f"tokenizer.json: added token {shown(t.get('content'))} has "
                             f"normalized=true and the file has a normalizer "
                             f"({shown(normalizer)}): `tokenizers` finds it in the normalised "
                             f"text, minillm in the text as given (supported: normalized=false, "
                             f"or no normalizer)")
    return normalizer


def pre_tokenizer_steps(pre, depth: int = 0) -> list[dict]:
    """A pre_tokenizer tree -> its steps in the order they run (Sequences flattened): every node
    an object, nested at most 8 deep, a Sequence's steps a list; else a ValueError.

    >>> pre_tokenizer_steps({"type": "Sequence", "pretokenizers": [{"type": "Digits"},
    ...     {"type": "Sequence", "pretokenizers": [{"type": "ByteLevel"}]}]})
    [{'type': 'Digits'}, {'type': 'ByteLevel'}]
    """
    if not isinstance(pre, dict) or depth > 8:
        raise ValueError(f"tokenizer.json: a pre_tokenizer must be an object (nested at most 8 "
                         f"deep), got {shown(pre)}")
    if pre.get("type") != "Sequence":
        return [pre]
    if not isinstance(pre.get("pretokenizers"), list):
        raise ValueError("tokenizer.json: a Sequence pre_tokenizer needs a pretokenizers list")
    return [s for p in pre["pretokenizers"] for s in pre_tokenizer_steps(p, depth + 1)]


def _check_byte_level_last(pre) -> None:
    steps = [s.get("type") for s in pre_tokenizer_steps(pre)] if pre is not None else []
    if "ByteLevel" in steps:
        after = [s for s in steps[steps.index("ByteLevel") + 1:] if s != "ByteLevel"]
        if after:
            raise ValueError(f"tokenizer.json: pre_tokenizer step {shown(after[0])} comes after "
                             f"ByteLevel, so `tokenizers` runs it on the byte-level alphabet "
                             f"(\"Ġ\" for a space), not on the text; minillm splits text only "
                             f"(supported: ByteLevel as the last step; pre-tokenizer steps "
                             f"{', '.join(steps)})")
