"""GGUF metadata of a SentencePiece-style BPE vocabulary -> SentencePieceBPE kwargs (spm.py).

    tokenizer.ggml.model       "llama" (merges by score: Llama 2, Mistral, Phi-3, Baichuan, ...)
                               or "gemma4" (merges by rank, listed in tokenizer.ggml.merges)
    tokenizer.ggml.tokens      [V] token texts, "▁" for a space, "<0x0A>" for the byte 0x0A
    tokenizer.ggml.scores      [V] float32: a higher score merges first ("llama")
    tokenizer.ggml.token_type  [V] 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte
    tokenizer.ggml.add_space_prefix   " " before the text (llama.cpp's default: true for "llama")

Token types decide decoding as llama.cpp's token_to_piece does: normal -> "▁" as a space, byte ->
the byte, unknown / control / user-defined -> their text (minillm shows special tokens), unused ->
nothing. Unknown and control tokens are special (encode takes them only when allowed), the
user-defined ones are split out of every text (special.py).
"""
from __future__ import annotations

from .token_types import BYTE, BYTE_TOKEN, CONTROL, NORMAL, UNKNOWN, USER_DEFINED, \
    check_token_types, user_defined_tokens
from ..validate import check_id, shown

DECODES_AS = {NORMAL: "text", UNKNOWN: "special", CONTROL: "special", USER_DEFINED: "special",
              BYTE: "byte"}                     # anything else (unused, undefined): nothing
GEMMA4_SPLIT = r"[^\n]+|[\n]+"                  # llama.cpp's only split for "gemma4"


def read_spm_metadata(meta: dict, pattern=None) -> dict:
    """`tokenizer.ggml.*` of a "llama" or "gemma4" vocabulary -> SentencePieceBPE kwargs."""
    model = meta["tokenizer.ggml.model"]
    if pattern is not None:
        raise ValueError(f"a {model!r} vocabulary has no pre-tokenisation pattern to override")
    tokens = meta.get("tokenizer.ggml.tokens")
    if not isinstance(tokens, list) or not all(isinstance(t, str) and t for t in tokens):
        raise ValueError("GGUF metadata: tokenizer.ggml.tokens must be non-empty strings")
    types = check_token_types(meta.get("tokenizer.ggml.token_type") or [NORMAL] * len(tokens),
                              len(tokens))
    scores = _check_scores(meta.get("tokenizer.ggml.scores"), len(tokens))
    for key in ("bos_token_id", "eos_token_id", "unknown_token_id"):
        check_id(meta.get(f"tokenizer.ggml.{key}"), f"tokenizer.ggml.{key}", "GGUF metadata")
    pieces: dict[str, int] = {}
    for i, t in enumerate(tokens):
        if pieces.setdefault(t, i) != i:
            raise ValueError(f"GGUF metadata: token {t!r} is listed twice (ids {pieces[t]} and {i})")
    # llama.cpp's byte_to_token: the <0xNN> token, else (SPM) the byte itself as a token
    byte_ids = {b: pieces.get(BYTE_TOKEN.format(b), pieces.get(chr(b)) if b < 128 else None)
                for b in range(256)}
    kw = dict(pieces=pieces, byte_ids={b: i for b, i in byte_ids.items() if i is not None},
              kinds={i: DECODES_AS.get(ty, "none") for i, ty in enumerate(types)},
              special_tokens={t: i for i, (t, ty) in enumerate(zip(tokens, types))
                              if ty in (UNKNOWN, CONTROL, USER_DEFINED)},
              user_defined=user_defined_tokens(tokens, types),
              bos_id=meta.get("tokenizer.ggml.bos_token_id"),
              eos_id=meta.get("tokenizer.ggml.eos_token_id"),
              unk_id=meta.get("tokenizer.ggml.unknown_token_id"))
    if model == "llama":
        kw.update(scores=dict(enumerate(scores)) if scores else {},
                  add_space_prefix=meta.get("tokenizer.ggml.add_space_prefix", True))
        return kw
    merges = meta.get("tokenizer.ggml.merges")
    if not isinstance(merges, list) or not all(isinstance(m, str) and " " in m[1:] for m in merges):
        raise ValueError(f"GGUF metadata: a {model!r} vocabulary needs tokenizer.ggml.merges "
                         f"('left right' strings), got {shown(merges)}")
    # subtle: llama.cpp's BPE path adds no prefix, whatever add_space_prefix says
    kw.update(merges=_merge_ranks(merges), add_space_prefix=False, pattern=(GEMMA4_SPLIT,),
              newline_runs_whole=True)
    return kw


def _check_scores(scores, n_tokens: int):
    """``tokenizer.ggml.scores``: absent, or one real number per token (NaN has no order)."""
    if scores is None:
        return None
    if not isinstance(scores, list) or len(scores) != n_tokens:
        raise ValueError(f"GGUF metadata: tokenizer.ggml.scores must be a list of one number per "
                         f"token ({n_tokens:,}), got {shown(scores)}")
    bad = next((s for s in scores if type(s) not in (int, float) or s != s), None)
    if bad is not None:
        raise ValueError(f"GGUF metadata: tokenizer.ggml.scores holds {shown(bad)} "
                         f"({type(bad).__name__}); each score is a number (not NaN)")
    return scores


def _merge_ranks(lines: list[str]) -> dict[tuple[str, str], int]:
    """"a b" lines -> {(a, b): rank}; a pair listed twice keeps its first rank (as llama.cpp's
    `bpe_ranks.emplace`). The split is at the first space after the first character."""
    ranks: dict[tuple[str, str], int] = {}
    for rank, line in enumerate(lines):
        cut = line.index(" ", 1)
        ranks.setdefault((line[:cut], line[cut + 1:]), rank)
    return ranks
