"""tokenizer.json post-processors: the tokens `tokenizers` adds around the ids of one text.

They run only when asked for: `tok.encode(text, add_special_tokens=True)` (minillm's default is
False: `encode` gives the text's own ids, as tiktoken does; `tokenizers` and transformers
default to True). The ones honoured, for a single text:

    TemplateProcessing   its `single` template: `[{"SpecialToken": {"id": "<s>"}},
                         {"Sequence": {"id": "A"}}]` -> [1] + ids (the ids of "<s>" come from
                         its `special_tokens` table, one or several)
    RobertaProcessing    [cls] + ids + [sep]  (`"cls": ["<s>", 0], "sep": ["</s>", 2]`)
    BertProcessing       [cls] + ids + [sep]  (`"cls": ["[CLS]", 101], ...`)
    ByteLevel            no ids change (it only trims offsets)
    Sequence             the processors in order

    >>> apply({"type": "RobertaProcessing", "cls": ["<s>", 0], "sep": ["</s>", 2]}, [10, 11])
    [0, 10, 11, 2]

A `pair` template is never used: minillm encodes one text at a time. A single template that
names the second sequence ($B) is refused, and so is any other processor.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..validate import is_id, json_kind, shown

KINDS = ("TemplateProcessing", "RobertaProcessing", "BertProcessing", "ByteLevel", "Sequence")


@dataclass
class PostProcessor:
    """A post-processor as the Tokenizer runs it, `post_processor(ids) -> ids` (with
    `encode(..., add_special_tokens=True)`): `spec`, the checked tokenizer.json object, is what it
    computes (`apply`) and what the writers write back."""
    spec: dict

    def __call__(self, ids: list[int]) -> list[int]:
        return apply(self.spec, ids)


def post_processor(spec) -> PostProcessor | None:
    """A file's post_processor (a tokenizer.json object or None) -> the Tokenizer's, checked."""
    check_post_processor(spec)
    return None if spec is None else PostProcessor(spec)


def check_post_processor(post, depth: int = 0) -> None:
    """A ValueError unless `post` is None or a post-processor honoured here, well formed."""
    if post is None:
        return
    kind = json_kind(post, "post_processor", KINDS, depth, "processors")
    if kind == "Sequence":
        for p in post["processors"]:
            check_post_processor(p, depth + 1)
    elif kind in ("RobertaProcessing", "BertProcessing"):
        for key in ("cls", "sep"):
            pair = post.get(key)
            if not (isinstance(pair, list) and len(pair) == 2 and is_id(pair[1])):
                raise ValueError(f"tokenizer.json: {kind}.{key} must be [token, id], got "
                                 f"{shown(pair)}")
    elif kind == "TemplateProcessing":
        _template_ids(post, [])


def _template_ids(post: dict, ids: list[int]) -> list[int]:
    """TemplateProcessing's `single` template with the text's `ids` in place of $A."""
    out: list[int] = []
    table = post.get("special_tokens") or {}
    single = post.get("single")
    if not isinstance(single, list) or not isinstance(table, dict):
        raise ValueError(f"tokenizer.json: TemplateProcessing needs a single template list and a "
                         f"special_tokens object, got {shown(single)}")
    for piece in single:
        if isinstance(piece, dict) and isinstance(piece.get("Sequence"), dict):
            if piece["Sequence"].get("id") != "A":
                raise ValueError(f"tokenizer.json: the single template names sequence "
                                 f"{shown(piece['Sequence'].get('id'))}; minillm encodes one "
                                 f"text (sequence A) at a time")
            out.extend(ids)
            continue
        name = piece.get("SpecialToken", {}).get("id") if isinstance(piece, dict) else None
        entry = table.get(name) if isinstance(name, str) else None
        if not (isinstance(entry, dict) and isinstance(entry.get("ids"), list)
                and all(is_id(i) for i in entry["ids"])):
            raise ValueError(f"tokenizer.json: template piece {shown(piece)} is not a Sequence "
                             f"or a SpecialToken listed (with its ids) in special_tokens")
        out.extend(entry["ids"])
    return out


def apply(post, ids: list[int]) -> list[int]:
    """The ids of one text with the post-processor's tokens added (None: unchanged)."""
    if post is None:
        return ids
    kind = post["type"]
    if kind == "Sequence":
        for p in post["processors"]:
            ids = apply(p, ids)
        return ids
    if kind in ("RobertaProcessing", "BertProcessing"):
        return [post["cls"][1], *ids, post["sep"][1]]
    if kind == "TemplateProcessing":
        return _template_ids(post, ids)
    return ids                                                # ByteLevel: offsets only
