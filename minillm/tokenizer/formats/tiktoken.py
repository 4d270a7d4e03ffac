"""tiktoken's rank files (`*.tiktoken`, optionally `.gz`): one line per token,
`base64(token bytes) rank`; the rank is the id (the `ranks` rule of bpe.py). The file has no
pattern and no special tokens: both come from the file name (gpt2/r50k, cl100k, o200k) or
`pattern=`.

    "IQ== 0"  ->  the token b"!" has id 0
"""
from __future__ import annotations

import base64
import binascii
from pathlib import Path

TIKTOKEN_SPECIALS = {
    "gpt2": {"<|endoftext|>": 50256},
    "cl100k": {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
               "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276},
    "o200k": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
}



def _tiktoken_family(path: Path) -> str | None:
    name = path.name.lower()
    families = (("cl100k", ("cl100k",)), ("o200k", ("o200k",)), ("gpt2", ("gpt2", "r50k")))
    for family, keys in families:
        if any(k in name for k in keys):
            return family
    return None


def read_tiktoken(path: Path, text: str, pattern=None) -> dict:
    """`text`, the `base64 rank` lines of the file at `path` -> kwargs (ranks rule; tiktoken
    looks a whole piece up first)."""
    encoder: dict[bytes, int] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line:
            continue
        fields = line.split()
        try:
            if len(fields) != 2 or not (fields[1].isascii() and fields[1].isdigit()):
                raise ValueError
            token, rank = base64.b64decode(fields[0], validate=True), int(fields[1])
        except (ValueError, IndexError, binascii.Error):
            raise ValueError(f"{path}:{n}: expected 'base64-token rank', "
                             f"got {line[:60]!r}") from None
        if token in encoder:
            raise ValueError(f"{path}:{n}: token {token!r} is listed twice (ranks "
                             f"{encoder[token]} and {rank})")
        encoder[token] = rank
    family = _tiktoken_family(path)
    if pattern is None and family is None:
        raise ValueError(f"cannot tell the split pattern of {path.name}: pass pattern= "
                         f"(a name such as 'gpt2', 'cl100k', 'o200k', or a regex)")
    return dict(encoder=encoder, merges=None, pattern=pattern or family,
                special_tokens=TIKTOKEN_SPECIALS.get(family, {}), whole_piece_lookup=True,
                eos_id=TIKTOKEN_SPECIALS.get(family, {}).get("<|endoftext|>"))
