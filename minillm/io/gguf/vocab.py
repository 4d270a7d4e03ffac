"""A Tokenizer as GGUF ``tokenizer.ggml.*`` metadata, the way llama.cpp's converter writes it.

    tokenizer.ggml.model       "gpt2"                  byte-level BPE
    tokenizer.ggml.pre         "gpt-2", "smollm", …    names the pre-tokeniser's split regexes
    tokenizer.ggml.tokens      [V] strings             each token's bytes in GPT-2's byte-to-unicode
                                                       alphabet (" world" -> "Ġworld"); specials as is
    tokenizer.ggml.token_type  [V] int32               1 normal, 3 control (specials), 4 user-defined,
                                                       5 unused (padding)
    tokenizer.ggml.merges      strings "a b"           in rank order, same alphabet (a tiktoken
                                                       vocabulary: derived from its ranks,
                                                       tokenizer/formats/rank_merges.py)
    tokenizer.ggml.bos_token_id / eos_token_id         when the tokenizer names them

llama.cpp does not read the regex from the file: it keeps a table from ``tokenizer.ggml.pre``
names to regexes (``llama-vocab.cpp``). A tokenizer whose pattern has no name there cannot be
exported faithfully, so it is refused — writing ``"default"`` would make llama.cpp split text
differently and produce other ids without any error.

subtle: llama.cpp applies the merges to a pre-token for most names, but for ``llama-bpe`` it first
looks the whole pre-token up (``ignore_merges``, minillm's ``whole_piece_lookup``): the name must
match that switch too.
"""
from __future__ import annotations

from minillm.io.gguf.write import ARRAY, BOOL, FLOAT32, INT32, STRING, UINT32
from minillm.tokenizer.formats.byte_alphabet import bytes_to_unicode
from minillm.tokenizer.formats.pattern_names import GPT2_PATTERN, LLAMA_CPP_IGNORE_MERGES, LLAMA_CPP_PRE
from minillm.tokenizer.formats.rank_merges import with_derived_merges
from minillm.tokenizer.spm import SentencePieceBPE
from minillm.tokenizer.formats.gguf.token_types import BYTE, CONTROL, NORMAL, UNKNOWN, UNUSED, USER_DEFINED

# (pre-tokeniser stages, whole_piece_lookup) -> llama.cpp's `tokenizer.ggml.pre` name. Every
# llama.cpp name maps its own stages (a GGUF read by minillm goes back out under its name); GPT-2's
# pattern as tiktoken spells it (minillm's trainer's default) is llama.cpp's "gpt-2", and digits
# alone then GPT-2 is "smollm". Anything else (e.g. cl100k's `(?i:'s)`, which llama.cpp spells
# `'[sS]` and which differs on a few characters) is refused rather than exported approximately.
PRE_NAMES: dict[tuple[tuple[str, ...], bool], str] = {}
for _name, _stages in LLAMA_CPP_PRE.items():
    PRE_NAMES.setdefault((tuple(_stages), _name in LLAMA_CPP_IGNORE_MERGES), _name)
PRE_NAMES[((GPT2_PATTERN,), False)] = "gpt-2"
PRE_NAMES[((r"\p{N}", GPT2_PATTERN), False)] = "smollm"
PRE_NAMES[(LLAMA_CPP_PRE["smollm"], False)] = "smollm"   # same stages as starcoder's: SmolLM2 keeps its name


def pre_tokenizer_name(tok) -> str:
    """The ``tokenizer.ggml.pre`` name for this tokenizer's pattern, or a ValueError saying why not."""
    name = PRE_NAMES.get((tuple(tok.pattern), bool(tok.whole_piece_lookup)))
    if name is None or tok.normalizer:
        known = "GPT-2's (as 'gpt-2'), digits alone then GPT-2's (as 'smollm'), or the stages " \
                "of a llama.cpp name (tokenizer.patterns.LLAMA_CPP_PRE)"
        why = f"normalizer {tok.normalizer!r}" if tok.normalizer else f"pattern {list(tok.pattern)}"
        raise ValueError(f"llama.cpp has no pre-tokenizer name for this tokenizer's {why}: "
                         f"exporting it would give other token ids. Exportable patterns: {known}")
    return name


def tokenizer_metadata(tok, vocab_size: int, bos_id: int | None = None,
                       eos_id: int | None = None) -> dict:
    """{key: (GGUF type, value)} for ``tok``, padded to the model's ``vocab_size`` rows.
    ``bos_id`` / ``eos_id`` (the model config's) are used where the tokenizer names none."""
    if tok.vocab_size > vocab_size:
        raise ValueError(f"the tokenizer has {tok.vocab_size} ids, the model only {vocab_size} rows")
    if isinstance(tok, SentencePieceBPE):
        return _spm_metadata(tok, vocab_size, bos_id, eos_id)
    if tok.merges is None:                            # tiktoken ranks: GGUF stores merges
        tok = with_derived_merges(tok)
    b2u = bytes_to_unicode()
    specials = {i: s for s, i in tok.special_tokens.items()}
    tokens, types = [], []
    for i in range(vocab_size):
        raw = _token_bytes_or_none(tok, i)
        if i in specials:
            kind = USER_DEFINED if specials[i] in tok.user_defined else CONTROL
            token = specials[i]
        elif raw is None:                             # a hole, or a row past the tokenizer's ids
            token, kind = f"[PAD{i}]", UNUSED
        else:
            token, kind = "".join(b2u[b] for b in raw), NORMAL
        tokens.append(token)
        types.append(kind)
    merges = ["".join(b2u[b] for b in a) + " " + "".join(b2u[b] for b in b_)
              for (a, b_), _ in sorted(tok.merges.items(), key=lambda kv: kv[1])]
    meta = {"tokenizer.ggml.model": (STRING, "gpt2"),
            "tokenizer.ggml.pre": (STRING, pre_tokenizer_name(tok)),
            "tokenizer.ggml.tokens": (ARRAY, (STRING, tokens)),
            "tokenizer.ggml.token_type": (ARRAY, (INT32, types)),
            "tokenizer.ggml.merges": (ARRAY, (STRING, merges)),
            "tokenizer.ggml.add_bos_token": (BOOL, False)}
    # subtle: llama.cpp takes id 11 as BOS/EOS of a "gpt2" vocabulary that names none.
    return {**meta, **_special_ids(tok, bos_id, eos_id)}


def _special_ids(tok, bos_id: int | None, eos_id: int | None) -> dict:
    """The BOS, EOS and unknown ids: the tokenizer's own, else the model config's (none for
    unknown), each written only when there is one."""
    meta = {}
    for name, fallback in (("bos", bos_id), ("eos", eos_id), ("unknown", None)):
        own = getattr(tok, f"{name[:3]}_id")                     # bos_id, eos_id, unk_id
        value = own if own is not None else fallback
        if value is not None:
            meta[f"tokenizer.ggml.{name}_token_id"] = (UINT32, value)
    return meta


def _token_bytes_or_none(tok, i: int) -> bytes | None:
    try:
        return tok.token_bytes(i)
    except ValueError:                                # an id that names no token
        return None


def _spm_metadata(tok, vocab_size: int, bos_id: int | None, eos_id: int | None) -> dict:
    """``tokenizer_metadata`` of a SentencePiece-style vocabulary ranked by scores (read from a
    "llama" GGUF: Llama 2, Mistral, Phi-3; ``vocab_size`` already checked to hold it) as
    llama.cpp's converter writes it: tokenizer.ggml.model "llama", the tokens' text ("▁" for a
    space, "<0x0A>" for a byte), their scores, their types (1 normal, 2 unknown, 3 control,
    4 user-defined, 5 unused, 6 byte) and add_space_prefix. A vocabulary ranked by a
    merge list (a tokenizer.json's, GGUF "gemma4") is refused: llama.cpp's "llama" vocabulary
    merges by token score, and no scores reproduce every merge order."""
    if tok.merges is not None or tok.prepend_scheme is not None or tok._split is not None:
        raise ValueError("cannot export this SentencePiece-style vocabulary to GGUF yet: it is "
                         "ranked by a merge list (a tokenizer.json's BPE with byte_fallback, or "
                         "GGUF 'gemma4') or splits its text, and llama.cpp's 'llama' vocabulary "
                         "merges by token scores, which cannot reproduce every merge order")
    text = {i: t.decode("utf-8", errors="surrogateescape") for t, i in tok._pieces.items()}
    tokens = [text.get(i, f"[PAD{i}]") for i in range(vocab_size)]   # [PADi]: no token, unused
    types = [_spm_type(tok, i, text.get(i)) for i in range(vocab_size)]
    scores = [float(tok.scores.get(i, 0.0)) for i in range(vocab_size)]
    meta = {"tokenizer.ggml.model": (STRING, "llama"),
            "tokenizer.ggml.tokens": (ARRAY, (STRING, tokens)),
            "tokenizer.ggml.scores": (ARRAY, (FLOAT32, scores)),
            "tokenizer.ggml.token_type": (ARRAY, (INT32, types)),
            "tokenizer.ggml.add_space_prefix": (BOOL, bool(tok.add_space_prefix))}
    return {**meta, **_special_ids(tok, bos_id, eos_id)}


def _spm_type(tok, i: int, text: str | None) -> int:
    """llama.cpp's token type of id `i` (tokenizer/formats/gguf/spm.py's table, read backwards)."""
    kind = tok.kinds.get(i, "none") if text is not None else "none"
    if kind == "special":
        return USER_DEFINED if text in tok.user_defined else UNKNOWN if i == tok.unk_id else CONTROL
    return {"text": NORMAL, "byte": BYTE}.get(kind, UNUSED)
