"""GGUF's tokenizer metadata (`tokenizer.ggml.*`, read by io/gguf/read.py) -> Tokenizer kwargs.

The tokens are written in GPT-2's byte-to-unicode alphabet (byte_alphabet.py), the merges as
"left right" lines, `token_type` marks the special tokens and `pre` names the pre-tokeniser by
llama.cpp's names (pattern_names.py). Writing them back: io/gguf/vocab.py.
"""
from __future__ import annotations

from minillm.io.gguf.carry import carried

from .byte_alphabet import in_alphabet, parse_merges, vocab_from_strings
from .pattern_names import LLAMA_CPP_IGNORE_MERGES, NAMED_PATTERNS
from .gguf_types import CONTROL, NORMAL, USER_DEFINED, user_defined_tokens
from .validate import check_vocabulary, shown

SPM_MODELS = ("llama", "gemma4")  # SentencePiece-style BPE: spm_meta.py, spm.py
MODEL_NAMES = {"bert": "WordPiece (BERT) is not implemented;",
               "t5": "Unigram (T5 / SentencePiece unigram) is not implemented;",
               "rwkv": "RWKV's trie tokenizer is not implemented;",
               "plamo2": "PLaMo-2's tokenizer is not implemented;"}


def read_gguf_metadata(meta: dict, pattern=None) -> dict:
    """GGUF `tokenizer.ggml.*` metadata -> Tokenizer (or SentencePieceBPE) kwargs, checked
    (validate.py, spm_meta.py); with `gguf_metadata`, the file's other `tokenizer.*` keys kept for
    a GGUF export (io/gguf/carry.py), when `meta` is a file's (io.gguf.read_gguf: a plain dict
    has no types, and nothing is kept from it).

    Control (3) and user-defined (4) tokens are special; their text is stored as is, and the
    user-defined ones are split out of every text, as llama.cpp does (special.py). The
    pre-tokeniser is named by `tokenizer.ggml.pre` (llama.cpp's names and regexes, see
    pattern_names.py; without the key llama.cpp uses "default", and so does this reader).
    `tokenizer.ggml.unknown_token_id` stands for bytes missing from the vocabulary (as Hugging
    Face's unk_token; llama.cpp itself fails on them).
    """
    model = meta.get("tokenizer.ggml.model")
    if model in SPM_MODELS:
        from .spm_meta import read_spm_metadata
        kw = read_spm_metadata(meta, pattern)
    elif model == "gpt2":
        kw = _read_byte_level(meta, pattern)
    else:
        raise ValueError(f'tokenizer.ggml.model is {shown(model)}: {MODEL_NAMES.get(model, "")} '
                         f'minillm reads "gpt2" (byte-level BPE) and "llama" / "gemma4" '
                         f'(SentencePiece-style BPE) vocabularies')
    kept = carried(meta)[1]
    return {**kw, "gguf_metadata": kept} if kept else kw


def _read_byte_level(meta: dict, pattern) -> dict:
    """A "gpt2" vocabulary -> Tokenizer kwargs (read_gguf_metadata's docstring)."""
    tokens, merges = meta.get("tokenizer.ggml.tokens"), meta.get("tokenizer.ggml.merges")
    if not isinstance(tokens, list) or not isinstance(merges, list):
        raise ValueError("GGUF metadata needs tokenizer.ggml.tokens and tokenizer.ggml.merges "
                         "lists")
    types = meta.get("tokenizer.ggml.token_type") or [NORMAL] * len(tokens)
    if not isinstance(types, list):
        raise ValueError(f"GGUF metadata tokenizer.ggml.token_type must be a list of integers, "
                         f"one per token, got {shown(types)} ({type(types).__name__})")
    if len(types) != len(tokens):
        raise ValueError(f"GGUF metadata tokenizer.ggml.token_type has {len(types)} entries for "
                         f"{len(tokens)} tokens: one per token")
    pre = meta.get("tokenizer.ggml.pre", "default")
    if not all(isinstance(t, str) for t in tokens) or not all(isinstance(m, str) for m in merges) \
            or not all(type(t) is int for t in types) or not isinstance(pre, str):
        raise ValueError("GGUF metadata: tokenizer.ggml.tokens and .merges must be lists of "
                         "strings, .token_type a list of integers, .pre a string")
    if pattern is None and pre not in NAMED_PATTERNS:
        raise ValueError(f"unknown pre-tokeniser tokenizer.ggml.pre={pre!r}; pass pattern= "
                         f"(known: {', '.join(sorted(NAMED_PATTERNS))})")
    specials = {t: i for i, (t, ty) in enumerate(zip(tokens, types)) if ty in (CONTROL, USER_DEFINED)}
    # subtle: a token outside GPT-2's byte alphabet (command-r's "\u200d", "™": 1,403 of them) is
    # one llama.cpp never produces (it matches byte-encoded text); kept for decoding only
    unreachable = {i: t.encode("utf-8") for i, t in enumerate(tokens)
                   if t not in specials and not in_alphabet(t)}
    merges = [m for m in merges if in_alphabet(m.replace(" ", ""))]
    vocab = {}
    for i, t in enumerate(tokens):
        if i in unreachable:
            continue
        if vocab.setdefault(t, i) != i and t not in specials:
            raise ValueError(f"GGUF metadata: token {t!r} is listed twice (ids {vocab[t]} and {i})")
    bos, eos = meta.get("tokenizer.ggml.bos_token_id"), meta.get("tokenizer.ggml.eos_token_id")
    kw = dict(encoder=vocab_from_strings(vocab, specials), merges=parse_merges(merges),
              pattern=pattern if pattern is not None else NAMED_PATTERNS[pre],
              special_tokens=specials, whole_piece_lookup=pre in LLAMA_CPP_IGNORE_MERGES,
              bos_id=bos, eos_id=eos, unk_id=meta.get("tokenizer.ggml.unknown_token_id"),
              user_defined=user_defined_tokens(tokens, types))
    check_vocabulary(kw["encoder"], kw["merges"], specials, "GGUF metadata",
                     bos_id=bos, eos_id=eos, unk_id=kw["unk_id"])
    return {**kw, "unreachable_tokens": unreachable} if unreachable else kw
