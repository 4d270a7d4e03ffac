"""tokenizer.json pre-tokenisers -> the regex stages of a patterns.PreTokenizer.

    ByteLevel (use_regex)      GPT-2's pattern (without use_regex: no stage; the whole text is
                               one piece when nothing else splits it: WHOLE_TEXT)
    Split (Isolated)           its regex (Oniguruma's dialect, translated: onig.py) or its string
    Digits                     \\p{N} one by one (individual_digits) or \\p{N}+
    Sequence                   the steps in order (features.pre_tokenizer_steps flattens it)

Anything else (Metaspace outside SentencePiece-style files: spm.py, Whitespace, Punctuation, ...)
is refused by name.
"""
from __future__ import annotations

import regex

from ...patterns import GPT2_PATTERN
from ..pattern_names import KNOWN_STAGES
from ..validate import shown
from .onig import to_python

WHOLE_TEXT = r"(?s:.+)"  # the stage that keeps the whole text as one piece


def step_stages(pre: dict) -> list[str]:
    """One pre_tokenizer step (not a Sequence: features.pre_tokenizer_steps) -> regex stages."""
    kind = pre.get("type")
    if kind == "ByteLevel":
        if pre.get("add_prefix_space"):
            raise ValueError("ByteLevel with add_prefix_space=true is not supported")
        return [GPT2_PATTERN] if pre.get("use_regex", True) else []
    if kind == "Split":
        pattern, behavior = pre.get("pattern", {}), pre.get("behavior")
        if behavior != "Isolated" or pre.get("invert"):
            raise ValueError(f"Split pre-tokeniser with behavior={shown(behavior)}, invert="
                             f"{shown(pre.get('invert'))}: only Isolated without invert is supported")
        if "Regex" in pattern:  # Oniguruma's dialect -> `regex`'s (the named stages: as they are)
            rx = pattern["Regex"]
            return [rx if rx in KNOWN_STAGES else to_python(rx)]
        return [regex.escape(pattern["String"])]
    if kind == "Digits":
        return [r"\p{N}" if pre.get("individual_digits") else r"\p{N}+"]
    raise ValueError(f"pre-tokeniser {shown(kind)} is not supported (supported: Sequence, ByteLevel, "
                     f"Split, Digits)")
