"""GPT-2's byte-to-unicode alphabet: how byte-level BPE vocabularies write token bytes as text.

GPT-2's `encoder.json`, Hugging Face's `tokenizer.json` and GGUF's `tokenizer.ggml.tokens` all
write each token's bytes as a printable string: bytes that are printable Latin-1 characters stand
for themselves, the other 68 bytes are shifted to U+0100.. (so a space, 0x20, is written "Ġ" =
U+0120, and a newline "Ċ"). Merges are lines "left right" in rank order (the `pairs` rule of
`bpe.py`). The readers (hf.py, gguf_meta.py) and writers (hf_write.py, io/gguf/vocab.py) share it.

    >>> token_string_to_bytes("Ġworld")
    b' world'
"""
from __future__ import annotations

from .validate import shown


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's table: byte -> printable character. `{0x41: "A", 0x20: "Ġ", 0x0a: "Ċ", ...}`."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    table, shifted = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + shifted)
            shifted += 1
    return table


_UNICODE_TO_BYTE = {ch: b for b, ch in bytes_to_unicode().items()}


def in_alphabet(s: str) -> bool:
    """Whether every character of `s` stands for a byte ("Ġworld": yes; "\u200d": no)."""
    return all(ch in _UNICODE_TO_BYTE for ch in s)


def token_string_to_bytes(s: str) -> bytes:
    """"Ġworld" -> b" world"."""
    try:
        return bytes(_UNICODE_TO_BYTE[ch] for ch in s)
    except KeyError as exc:
        raise ValueError(f"token {s!r} is not in GPT-2's byte-to-unicode alphabet (character "
                         f"{exc.args[0]!r}); is this a byte-level BPE vocabulary?") from None


def parse_merges(lines, token_to_bytes=token_string_to_bytes,
                 keep: str = "first") -> dict[tuple[bytes, bytes], int]:
    """["Ġ t", "h e", ...] (or [["Ġ", "t"], ...]) -> {(b" ", b"t"): 0, (b"h", b"e"): 1, ...}.

    A pair listed twice keeps the rank of its `keep`="first" or "last" listing (`tokenizers`
    keeps the last one: hf.py asks for it)."""
    merges: dict[tuple[bytes, bytes], int] = {}
    for rank, line in enumerate(lines):
        pair = line.split(" ") if isinstance(line, str) else line
        if not isinstance(pair, list) or len(pair) != 2 or not all(isinstance(p, str) and p for p in pair):
            raise ValueError(f"merge {rank} must be 'left right' or [left, right], got {shown(line)}")
        key = (token_to_bytes(pair[0]), token_to_bytes(pair[1]))
        if keep == "last" or key not in merges:
            merges[key] = rank
    return merges


def vocab_from_strings(vocab: dict[str, int], specials: dict[str, int]) -> dict[bytes, int]:
    """{token string: id} -> {token bytes: id}, leaving out the special tokens."""
    by_id = {i: text for text, i in specials.items()}
    encoder: dict[bytes, int] = {}
    for s, i in vocab.items():
        if type(i) is not int or i < 0:
            raise ValueError(f"token {s!r} has id {shown(i)}; ids must be integers >= 0")
        if i not in by_id:
            encoder.setdefault(token_string_to_bytes(s), i)
        elif by_id[i] != s:  # subtle: the ordinary token would silently vanish under the special
            raise ValueError(f"special token {by_id[i]!r} has id {i}, the id of the ordinary "
                             f"token {s!r}")
    return encoder
