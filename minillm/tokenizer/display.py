r"""Showing tokens to a person: text where the bytes are valid UTF-8, `<e8 93>` where they are not.

    render_token(b" world")             -> ' world'
    render_token(b"\xe8\x93")           -> '<e8 93>'   (the first two bytes of 蓝, e8 93 9d)
    render_token(b"\n")                 -> '\n'        (control characters escaped, visibly)
    render_token("\u200d".encode())     -> '\u200d'    (so are invisible ones, such as ZWJ)

and one merge of a BPE trace (bpe.merge_reference(trace=...)) as `<e6> + <b5> -> <e6 b5> ...`
(show_merge).
"""
from __future__ import annotations

import unicodedata

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_INVISIBLE = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}  # control, format (ZWJ), unassigned, ...


def _visible(ch: str) -> str:
    if unicodedata.category(ch) in _INVISIBLE:
        return f"\\x{ord(ch):02x}" if ord(ch) < 256 else f"\\u{ord(ch):04x}"
    return ch


def render_token(token: bytes) -> str:
    """Bytes of one token -> a readable, single-line string."""
    out, pending = [], b""
    i = 0
    while i < len(token):
        for size in (1, 2, 3, 4):  # the shortest valid UTF-8 character starting here
            try:
                ch = token[i:i + size].decode("utf-8")
            except UnicodeDecodeError:
                continue
            break
        else:
            pending += token[i:i + 1]
            i += 1
            continue
        if pending:
            out.append("<" + pending.hex(" ") + ">")
            pending = b""
        out.append(_ESCAPES.get(ch, _visible(ch)))
        i += len(ch.encode("utf-8"))
    if pending:
        out.append("<" + pending.hex(" ") + ">")
    return "".join(out)


def show_merge(step) -> str:
    """One merge of a BPE trace (a bpe.MergeStep), shown with render_token; GPT-2's first merge
    of 海 (e6 b5 b7): `<e6> + <b5> -> <e6 b5> (rank 38184): <e6 b5> | <b7>`."""
    a, b = step.pair
    return (f"{render_token(a)} + {render_token(b)} -> {render_token(a + b)} "
            f"(rank {step.rank}): {' | '.join(map(render_token, step.parts))}")
