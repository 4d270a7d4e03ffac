"""Reading byte-level BPE vocabularies written as text: GPT-2 `encoder.json` + `vocab.bpe`,
Hugging Face `tokenizer.json`, and GGUF metadata (`tokenizer.ggml.*`).

All three write each token's bytes as a printable string with GPT-2's byte-to-unicode table:
bytes that are printable Latin-1 characters stand for themselves, the other 68 bytes are shifted
to U+0100.. (so a space, 0x20, is written "Ġ" = U+0120, and a newline "Ċ"). Merges are lines
"left right" in rank order (the `pairs` rule of `bpe.py`).

Each reader returns the keyword arguments of `Tokenizer(...)`.
"""
from __future__ import annotations

import unicodedata

from .pattern_names import GPT2_PATTERN, LLAMA_CPP_IGNORE_MERGES, NAMED_PATTERNS
from .validate import check_vocabulary, shown


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


def token_string_to_bytes(s: str) -> bytes:
    """"Ġworld" -> b" world"."""
    try:
        return bytes(_UNICODE_TO_BYTE[ch] for ch in s)
    except KeyError as exc:
        raise ValueError(f"token {s!r} is not in GPT-2's byte-to-unicode alphabet (character "
                         f"{exc.args[0]!r}); is this a byte-level BPE vocabulary?") from None


def parse_merges(lines, token_to_bytes=token_string_to_bytes) -> dict[tuple[bytes, bytes], int]:
    """["Ġ t", "h e", ...] (or [["Ġ", "t"], ...]) -> {(b" ", b"t"): 0, (b"h", b"e"): 1, ...}."""
    merges: dict[tuple[bytes, bytes], int] = {}
    for rank, line in enumerate(lines):
        pair = line.split(" ") if isinstance(line, str) else line
        if not isinstance(pair, list) or len(pair) != 2 or not all(isinstance(p, str) and p for p in pair):
            raise ValueError(f"merge {rank} must be 'left right' or [left, right], got {shown(line)}")
        merges.setdefault((token_to_bytes(pair[0]), token_to_bytes(pair[1])), rank)
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


def read_gpt2_files(encoder_json: dict, vocab_bpe: str) -> dict:
    """GPT-2's original release. `<|endoftext|>` (50256) is an entry of encoder.json: a special."""
    if not isinstance(encoder_json, dict):
        raise ValueError("encoder.json must map token strings to ids")
    specials = {s: i for s, i in encoder_json.items() if s == "<|endoftext|>"}
    lines = [ln for ln in vocab_bpe.splitlines() if ln and not ln.startswith("#version")]
    return dict(encoder=vocab_from_strings(encoder_json, specials), merges=parse_merges(lines),
                pattern=(GPT2_PATTERN,), special_tokens=specials, whole_piece_lookup=False,
                eos_id=specials.get("<|endoftext|>"))


def _pre_tokenizer_stages(pre: dict | None) -> list[str]:
    """A Hugging Face pre_tokenizer -> regex stages; it must contain a ByteLevel step."""
    if pre is None:
        raise ValueError("tokenizer.json has no pre_tokenizer: not a byte-level BPE tokenizer")
    kind = pre.get("type")
    if kind == "Sequence":
        return [s for p in pre["pretokenizers"] for s in _pre_tokenizer_stages(p)]
    if kind == "ByteLevel":
        if pre.get("add_prefix_space"):
            raise ValueError("ByteLevel with add_prefix_space=true is not supported")
        return [GPT2_PATTERN] if pre.get("use_regex", True) else []
    if kind == "Split":
        pattern, behavior = pre.get("pattern", {}), pre.get("behavior")
        if behavior != "Isolated" or pre.get("invert"):
            raise ValueError(f"Split pre-tokeniser with behavior={shown(behavior)}, invert="
                             f"{shown(pre.get('invert'))}: only Isolated without invert is supported")
        if "Regex" in pattern:
            return [pattern["Regex"]]
        import regex
        return [regex.escape(pattern["String"])]
    if kind == "Digits":
        return [r"\p{N}" if pre.get("individual_digits") else r"\p{N}+"]
    raise ValueError(f"pre-tokeniser {shown(kind)} is not supported (supported: Sequence, ByteLevel, "
                     f"Split, Digits)")


def _normalizer(norm: dict | None) -> str | None:
    if norm is None:
        return None
    if norm.get("type") == "NFC":
        return "NFC"
    if norm.get("type") == "Sequence" and not norm["normalizers"]:
        return None
    raise ValueError(f"normalizer {shown(norm.get('type'))} is not supported (only NFC or none)")


def read_hf_json(data: dict, config: dict | None = None) -> dict:
    """A Hugging Face tokenizer.json (BPE model, byte-level) -> Tokenizer kwargs.

    Added tokens become special tokens. `config` is tokenizer_config.json, if present: it names
    bos_token / eos_token. Not applied: the post-processor (e.g. Llama-3 prepending BOS); add BOS
    yourself.
    """
    check_hf_features(data, config)
    model = data.get("model") or {}
    if model.get("type") != "BPE":
        raise ValueError(f"tokenizer.json model type is {shown(model.get('type'))}; "
                         f"only BPE is supported")
    if model.get("byte_fallback") or model.get("continuing_subword_prefix") \
            or model.get("end_of_word_suffix"):
        raise ValueError("BPE with byte_fallback / subword prefixes / suffixes is not "
                         "byte-level BPE")
    if not isinstance(model.get("vocab"), dict) or not isinstance(model.get("merges", []), list):
        raise ValueError("tokenizer.json model needs a vocab object and a merges list")
    try:
        specials = {t["content"]: t["id"] for t in data.get("added_tokens", [])}
    except (KeyError, TypeError):
        raise ValueError("tokenizer.json added_tokens must be objects with content and id") from None
    stages = _pre_tokenizer_stages(data.get("pre_tokenizer"))
    if not _has_byte_level(data.get("pre_tokenizer")):
        raise ValueError("tokenizer.json: the pre_tokenizer has no ByteLevel step, so its "
                         "vocabulary is not byte-level; minillm implements byte-level BPE only")
    kwargs = dict(encoder=vocab_from_strings(model["vocab"], specials),
                  merges=parse_merges(model.get("merges", [])), pattern=tuple(stages),
                  special_tokens=specials, whole_piece_lookup=bool(model.get("ignore_merges")),
                  normalizer=_normalizer(data.get("normalizer")))
    unk = model.get("unk_token")
    kwargs["unk_id"] = specials.get(unk, model["vocab"].get(unk)) if unk else None
    for key in ("bos", "eos"):
        tok = (config or {}).get(f"{key}_token")
        tok = tok.get("content") if isinstance(tok, dict) else tok
        kwargs[f"{key}_id"] = specials.get(tok) if isinstance(tok, str) else None
    return kwargs


def _has_byte_level(pre) -> bool:
    if not isinstance(pre, dict):
        return False
    if pre.get("type") == "Sequence" and isinstance(pre.get("pretokenizers"), list):
        return any(_has_byte_level(p) for p in pre["pretokenizers"])
    return pre.get("type") == "ByteLevel"


def _check_pre_tokenizer(pre, depth: int = 0) -> None:
    """The pre_tokenizer tree has the JSON shape the readers expect (depth at most 8)."""
    if not isinstance(pre, dict) or depth > 8:
        raise ValueError(f"tokenizer.json: a pre_tokenizer must be an object (nested at most 8 "
                         f"deep), got {shown(pre)}")
    if pre.get("type") == "Sequence":
        if not isinstance(pre.get("pretokenizers"), list):
            raise ValueError("tokenizer.json: a Sequence pre_tokenizer needs a pretokenizers list")
        for p in pre["pretokenizers"]:
            _check_pre_tokenizer(p, depth + 1)
    if pre.get("type") == "Split":
        pattern = pre.get("pattern")
        if not (isinstance(pattern, dict) and len(pattern) == 1
                and isinstance(pattern.get("Regex", pattern.get("String")), str)):
            raise ValueError(f"tokenizer.json: a Split pattern must be {{\"Regex\": str}} or "
                             f"{{\"String\": str}}, got {shown(pattern)}")


def check_hf_features(data: dict, config: dict | None) -> None:
    """Refuse every tokenizer.json feature minillm does not implement (ValueError naming it),
    and fields of the wrong JSON type, before anything is built from the file."""
    if data.get("pre_tokenizer") is not None:
        _check_pre_tokenizer(data["pre_tokenizer"])
    norm = data.get("normalizer")
    if norm is not None and not (isinstance(norm, dict) and (norm.get("type") != "Sequence"
                                                             or isinstance(norm.get("normalizers"), list))):
        raise ValueError(f"tokenizer.json: normalizer must be an object, got {shown(norm)}")
    if config is not None and not isinstance(config, dict):
        raise ValueError("tokenizer_config.json must hold a JSON object")
    model = data.get("model")
    if not isinstance(model, dict):
        raise ValueError("tokenizer.json: 'model' must be an object")
    if model.get("dropout") not in (None, 0, 0.0):
        raise ValueError(f"tokenizer.json: BPE dropout={shown(model['dropout'])} is not supported "
                         f"(minillm's BPE is deterministic)")
    if model.get("fuse_unk"):
        raise ValueError("tokenizer.json: fuse_unk=true is not supported")
    if not isinstance(model.get("unk_token"), (str, type(None))):
        raise ValueError(f"tokenizer.json: unk_token must be a string, got {shown(model['unk_token'])}")
    for name in ("ignore_merges", "byte_fallback"):
        if not isinstance(model.get(name), (bool, type(None))):
            raise ValueError(f"tokenizer.json: model.{name} must be true or false, got "
                             f"{shown(model[name])}")
    decoder = data.get("decoder")     # absent: accepted (the vocabulary decides: ByteLevel below)
    if decoder is not None and not (isinstance(decoder, dict) and decoder.get("type") == "ByteLevel"):
        kind = decoder.get("type") if isinstance(decoder, dict) else decoder
        raise ValueError(f"tokenizer.json: decoder {shown(kind)} is not supported (minillm decodes "
                         f"byte-level: the decoder must be ByteLevel)")
    added = data.get("added_tokens", [])
    if not isinstance(added, list) or not all(isinstance(t, dict) for t in added):
        raise ValueError("tokenizer.json: added_tokens must be a list of objects")
    changes = data.get("normalizer") not in (None, {"type": "Sequence", "normalizers": []})
    for t in added:
        content, i = t.get("content"), t.get("id")
        if not isinstance(content, str) or not content or type(i) is not int or i < 0:
            raise ValueError(f"tokenizer.json: added token {shown(content)}: content must be a "
                             f"non-empty string and id an integer >= 0, got id {shown(i)}")
        for flag in ("lstrip", "rstrip", "single_word"):
            if t.get(flag):
                raise ValueError(f"tokenizer.json: added token {shown(content)} has {flag}=true, "
                                 f"which minillm does not implement")
        if t.get("normalized") and changes and normalize(content, "NFC") != content:
            raise ValueError(f"tokenizer.json: added token {shown(content)} is matched after "
                             f"normalisation (normalized=true), which minillm does not implement")
    for key in ("bos_token", "eos_token"):
        tok = (config or {}).get(key)
        tok = tok.get("content") if isinstance(tok, dict) else tok
        if not isinstance(tok, (str, type(None))):
            raise ValueError(f"tokenizer_config.json: {key} must be a string, got {shown(tok)}")


# token_type: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte
GGUF_SPECIAL_TYPES = (3, 4)


def read_gguf_metadata(meta: dict, pattern=None) -> dict:
    """GGUF `tokenizer.ggml.*` metadata (a plain dict) -> Tokenizer kwargs.

    Control (3) and user-defined (4) tokens are special; their text is stored as is. The
    pre-tokeniser is named by `tokenizer.ggml.pre` (llama.cpp's names and regexes, see
    patterns.py; without the key llama.cpp uses "default", and so does this reader).
    `tokenizer.ggml.unknown_token_id` stands for bytes missing from the vocabulary (as Hugging
    Face's unk_token; llama.cpp itself fails on them).
    """
    model = meta.get("tokenizer.ggml.model")
    if model != "gpt2":
        raise ValueError(f'tokenizer.ggml.model is {shown(model)}; only "gpt2" (byte-level BPE) '
                         f'is supported')
    tokens, merges = meta.get("tokenizer.ggml.tokens"), meta.get("tokenizer.ggml.merges")
    if not isinstance(tokens, list) or not isinstance(merges, list):
        raise ValueError("GGUF metadata needs tokenizer.ggml.tokens and tokenizer.ggml.merges "
                         "lists")
    types = meta.get("tokenizer.ggml.token_type") or [1] * len(tokens)
    if len(types) != len(tokens):
        raise ValueError(f"{len(types)} token types for {len(tokens)} tokens")
    pre = meta.get("tokenizer.ggml.pre", "default")
    if not all(isinstance(t, str) for t in tokens) or not all(isinstance(m, str) for m in merges) \
            or not all(type(t) is int for t in types) or not isinstance(pre, str):
        raise ValueError("GGUF metadata: tokenizer.ggml.tokens and .merges must be lists of "
                         "strings, .token_type a list of integers, .pre a string")
    if pattern is None and pre not in NAMED_PATTERNS:
        raise ValueError(f"unknown pre-tokeniser tokenizer.ggml.pre={pre!r}; pass pattern= "
                         f"(known: {', '.join(sorted(NAMED_PATTERNS))})")
    specials = {t: i for i, (t, ty) in enumerate(zip(tokens, types)) if ty in GGUF_SPECIAL_TYPES}
    vocab = {}
    for i, t in enumerate(tokens):
        if vocab.setdefault(t, i) != i and t not in specials:
            raise ValueError(f"GGUF metadata: token {t!r} is listed twice (ids {vocab[t]} and {i})")
    bos, eos = meta.get("tokenizer.ggml.bos_token_id"), meta.get("tokenizer.ggml.eos_token_id")
    kw = dict(encoder=vocab_from_strings(vocab, specials), merges=parse_merges(merges),
              pattern=pattern if pattern is not None else NAMED_PATTERNS[pre],
              special_tokens=specials, whole_piece_lookup=pre in LLAMA_CPP_IGNORE_MERGES,
              bos_id=bos, eos_id=eos, unk_id=meta.get("tokenizer.ggml.unknown_token_id"))
    check_vocabulary(kw["encoder"], kw["merges"], specials, "GGUF metadata",
                     bos_id=bos, eos_id=eos, unk_id=kw["unk_id"])
    return kw


def normalize(text: str, form: str | None) -> str:
    return unicodedata.normalize(form, text) if form else text
