"""minillm's own tokenizer format: JSON meant to be read (`*.minillm.json`).

A header (the pattern stages, the normalizer, the post-processor, the merge rule, whole-piece
lookup, the special tokens, BOS / EOS, the user-defined ones among the specials if any), then one
token per line (its bytes as text; bytes that are not UTF-8 appear
as \\udcXX escapes, a special token's slot is null) and one merge per line (`[left id, right id]`,
in rank order; none under the `ranks` rule)::

    {
     "format": "minillm-bpe",
     "version": 1,
     "pattern": [...],
     ...
     "tokens": [
      "!",
      ...
     ],
     "merges": [
      [220, 83],
      ...
     ]
    }

`formats.read` / `formats.write` choose it by content and by file name.
"""
from __future__ import annotations

import json
from pathlib import Path

from minillm.io.atomic import atomic_write_text

from .hf.normalizers import normalizer
from .hf.post_processors import post_processor
from .validate import shown, written_spec

FORMAT_NAME = "minillm-bpe"


def _token_json(b: bytes | None) -> str:
    """b" world" -> '" world"'; bytes that are not UTF-8 -> "\\udcXX" escapes (surrogateescape)."""
    if b is None:
        return "null"
    text = json.dumps(b.decode("utf-8", errors="surrogateescape"), ensure_ascii=False)
    return text.encode("utf-8", errors="backslashreplace").decode("utf-8")


def write_minillm(tok, path: Path) -> None:
    """minillm's format: a header, then one token and one merge per line."""
    header = {"format": FORMAT_NAME, "version": 1, "pattern": list(tok.pattern),
              "normalizer": written_spec(tok.normalizer, "normalizer"),
              "post_processor": written_spec(tok.post_processor, "post_processor"),
              "merge_rule": "ranks" if tok.merges is None else "pairs",
              "whole_piece_lookup": tok.whole_piece_lookup,
              "special_tokens": tok.special_tokens, "bos_id": tok.bos_id, "eos_id": tok.eos_id}
    if tok.user_defined:       # (special tokens split out of every text: special.py)
        header["user_defined"] = sorted(tok.user_defined)
    lines = [json.dumps(header, ensure_ascii=False, indent=1)[:-2] + ",", ' "tokens": [']
    specials = set(tok.special_tokens.values())
    table = [None if i in specials else tok.id_to_bytes[i] for i in range(tok.vocab_size)]
    lines += [f"  {_token_json(b)}," for b in table]
    lines[-1] = lines[-1].rstrip(",")
    lines.append(" ],")
    lines.append(' "merges": [')
    if tok.merges is not None:
        ids = tok.encoder
        ordered = sorted(tok.merges.items(), key=lambda kv: kv[1])
        lines += [f"  [{ids[a]}, {ids[b]}]," for (a, b), _ in ordered]
        lines[-1] = lines[-1].rstrip(",") if ordered else lines[-1]
    lines.append(" ]\n}\n")
    atomic_write_text(path, "\n".join(lines))


def read_minillm(data: dict) -> dict:
    if data.get("version") != 1:
        raise ValueError(f"minillm tokenizer format version {data.get('version')!r}; expected 1")
    for key, kind in (("tokens", list), ("pattern", (list, str)), ("special_tokens", dict),
                      ("whole_piece_lookup", bool)):
        if not isinstance(data.get(key), kind):
            raise ValueError(f"minillm tokenizer file: {key!r} must be a JSON "
                             f"{getattr(kind, '__name__', 'list or string')}, got {data.get(key)!r:.60}")
    try:
        table = [None if t is None else t.encode("utf-8", errors="surrogateescape")
                 for t in data["tokens"]]
        encoder: dict[bytes, int] = {}
        for i, b in enumerate(table):
            if b is not None and encoder.setdefault(b, i) != i:
                raise ValueError(f"token {b!r} is listed twice (ids {encoder[b]} and {i})")
        merges = None
        if data["merge_rule"] == "pairs":
            merges = {}
            for rank, pair in enumerate(data["merges"]):
                if not (isinstance(pair, list) and len(pair) == 2):
                    raise ValueError(f"merge {rank} is {shown(pair)}: expected [left id, right id]")
                a, b = pair
                if not all(type(i) is int and 0 <= i < len(table) and table[i] is not None
                           for i in (a, b)):  # subtle: table[-1] would silently be the last token
                    raise ValueError(f"merge {rank} is [{shown(a)}, {shown(b)}]: both must be ids of "
                                     f"ordinary tokens in [0, {len(table)})")
                merges.setdefault((table[a], table[b]), rank)
        elif data["merge_rule"] != "ranks":
            raise ValueError(f"merge_rule must be 'pairs' or 'ranks', got {data['merge_rule']!r}")
        pattern = data["pattern"]
        return dict(encoder=encoder, merges=merges,
                    pattern=(pattern,) if isinstance(pattern, str) else tuple(pattern),
                    special_tokens=data["special_tokens"],
                    normalizer=normalizer(data.get("normalizer")),   # (hf/: what is honoured)
                    post_processor=post_processor(data.get("post_processor")),
                    whole_piece_lookup=data["whole_piece_lookup"],
                    bos_id=data.get("bos_id"), eos_id=data.get("eos_id"),
                    user_defined=data.get("user_defined", []))
    except (KeyError, TypeError, IndexError, AttributeError) as exc:
        raise ValueError(f"malformed minillm tokenizer file: {type(exc).__name__} {exc}") from None
