"""tokenizer.json's SentencePiece-style BPE (Llama 2, TinyLlama, Mistral) -> SentencePieceBPE kwargs.

Such a file's model is BPE with `byte_fallback: true`: its tokens are text with "▁" for a space, a
character that is no token becomes its UTF-8 bytes' <0x00>..<0xFF> tokens, and merges are ranked
by the merges list (spm.py, `merges=`). Where the "▁" comes from is one of two forms:

    Llama 2, TinyLlama  normalizer Sequence [Prepend("▁"), Replace(" " -> "▁")], no pre_tokenizer
                        (the prefix on every text segment, as llama.cpp does); without the
                        Prepend: no prefix
    Mistral, newer      no normalizer, pre_tokenizer Metaspace("▁", prepend_scheme, split):
                        prepend "always" (each segment not starting with "▁"), "first" (only the
                        segment at the start of the text: it differs from "always" only after a
                        special token) or "never"; split=true cuts the text before every "▁"
                        (after either normaliser, Metaspace adds no "▁": the text has one)

and the decoder Sequence [Replace("▁" -> " "), ByteFallback, Fuse, Strip(" ", 1, 0)] (the Strip
optional). Everything else is refused by name, before anything is built:

    byte_fallback without all 256 <0xNN> tokens   (`tokenizers` would give unk_token for a
                        character with a missing byte token, fused by fuse_unk; fuse_unk is
                        accepted because, with every byte token present, no unk is ever produced)
    ignore_merges, continuing_subword_prefix, end_of_word_suffix
    two tokens on one id, a special token on an ordinary token's id (../validate.check_vocabulary)
    Metaspace with another replacement, another pre_tokenizer, a normalizer other than the two
    above (before a Metaspace too); neither of them (spaces would reach the vocabulary as " ")
    another decoder (Metaspace's, none: `tokenizers` would then join tokens with spaces)
    added tokens normalized=true with the Prepend normalizer (features.py)
"""
from __future__ import annotations

from ..gguf.token_types import BYTE_TOKEN, SPACE
from ..validate import check_vocabulary, shown
from .post_processors import post_processor

REPLACE_SPACES = {"type": "Replace", "pattern": {"String": " "}, "content": SPACE}
PREPEND = {"type": "Prepend", "prepend": SPACE}
DECODER = [{"type": "Replace", "pattern": {"String": SPACE}, "content": " "},
           {"type": "ByteFallback"}, {"type": "Fuse"}]
STRIP = {"type": "Strip", "content": " ", "start": 1, "stop": 0}
METASPACE_SPLIT = SPACE + "[^" + SPACE + "]*|[^" + SPACE + "]+"   # "a▁b▁▁c" -> a, ▁b, ▁, ▁c


def read_hf_spm(data: dict, specials: dict[str, int]) -> dict:
    """A tokenizer.json with a byte_fallback BPE model -> SentencePieceBPE kwargs (the caller,
    hf.read_hf_json, adds bos/eos and has checked the shared fields and the post-processor)."""
    model = data["model"]
    vocab = model.get("vocab")
    if not isinstance(vocab, dict) or not all(type(i) is int for i in vocab.values()):
        raise ValueError("tokenizer.json: model.vocab must map token strings to integer ids")
    for key in ("ignore_merges", "continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            raise ValueError(f"tokenizer.json: BPE with byte_fallback and {key}="
                             f"{shown(model[key])} is not supported (SentencePiece-style files "
                             f"leave it false or null)")
    missing = [BYTE_TOKEN.format(b) for b in range(256) if BYTE_TOKEN.format(b) not in vocab]
    if missing:
        raise ValueError(f"tokenizer.json: byte_fallback needs all 256 <0xNN> tokens; "
                         f"{len(missing)} are missing ({', '.join(missing[:4])}, ...): "
                         f"`tokenizers` would give unk_token for a character with a missing "
                         f"byte token, which minillm does not implement")
    prefix = _prefix_rule(data.get("normalizer"), data.get("pre_tokenizer"))
    strip = _strip_decoder(data.get("decoder"))
    pieces = {**vocab, **specials}
    unk = model.get("unk_token")
    # ids unique and in range, no special on an ordinary token's id (the merges: _merge_ranks)
    check_vocabulary({t: i for t, i in vocab.items() if t not in specials}, None, specials,
                     "tokenizer.json", unk_id=pieces.get(unk) if unk else None)
    return dict(pieces=pieces, merges=_merge_ranks(model.get("merges", []), vocab),
                byte_ids={b: vocab[BYTE_TOKEN.format(b)] for b in range(256)},
                kinds={i: "byte" if _is_byte_token(t) else "text" for t, i in pieces.items()},
                special_tokens=specials, post_processor=post_processor(data.get("post_processor")),
                user_defined=[t["content"] for t in data.get("added_tokens", [])
                              if not t.get("special", True)],
                unk_id=pieces.get(unk) if unk else None, strip_space=strip,
                byte_runs_replaced=True, **prefix)


def _prefix_rule(norm, pre) -> dict:
    """The normaliser and pre-tokeniser -> SentencePieceBPE's prefix settings (module docstring).
    subtle: after the Prepend normaliser, every segment already starts with "▁", so Metaspace
    adds nothing whatever its prepend_scheme (it only splits, if asked)."""
    steps = norm.get("normalizers") if isinstance(norm, dict) and norm.get("type") == "Sequence" \
        else [norm] if norm is not None else []
    if steps not in ([PREPEND, REPLACE_SPACES], [REPLACE_SPACES], []) or (pre is None and not steps):
        raise ValueError(f"tokenizer.json: BPE with byte_fallback and normalizer {shown(norm)}: "
                         f"minillm honours Sequence [Prepend('▁'), Replace(' ' -> '▁')] or "
                         f"Replace(' ' -> '▁'), each with or without a Metaspace pre_tokenizer, or "
                         f"Metaspace alone; anything else would let spaces reach the vocabulary "
                         f"as ' ' or change the text")
    if pre is None:
        return dict(add_space_prefix=steps[0] == PREPEND, pattern=None)
    if not isinstance(pre, dict) or pre.get("type") != "Metaspace":
        kind = pre.get("type") if isinstance(pre, dict) else pre
        raise ValueError(f"tokenizer.json: BPE with byte_fallback and pre_tokenizer {shown(kind)}:"
                         f" minillm honours Metaspace alone (or none, with a Replace normalizer)")
    scheme, split = pre.get("prepend_scheme", "always"), pre.get("split", True)
    if pre.get("replacement") != SPACE or scheme not in ("always", "first", "never") \
            or not isinstance(split, bool):
        raise ValueError(f"tokenizer.json: Metaspace replacement={shown(pre.get('replacement'))}, "
                         f"prepend_scheme={shown(scheme)}, split={shown(split)}: minillm honours "
                         f"replacement '▁', prepend_scheme always / first / never, split true / false")
    pattern = (METASPACE_SPLIT,) if split else None
    if steps and steps[0] == PREPEND:
        return dict(add_space_prefix=True, pattern=pattern)
    return dict(add_space_prefix=scheme != "never", prepend_scheme=scheme, pattern=pattern)


def _strip_decoder(decoder) -> bool:
    """True for the decoder that ends in Strip(" ", 1, 0), False without the Strip; else refused."""
    steps = decoder.get("decoders") if isinstance(decoder, dict) and \
        decoder.get("type") == "Sequence" else None
    if steps in (DECODER, DECODER + [STRIP]):
        return steps == DECODER + [STRIP]
    kind = decoder.get("type") if isinstance(decoder, dict) else decoder
    raise ValueError(f"tokenizer.json: BPE with byte_fallback and decoder {shown(kind)}"
                     f"{' ' + shown(steps) if steps else ''}: minillm decodes as the Sequence "
                     f"[Replace('▁' -> ' '), ByteFallback, Fuse] with an optional Strip(' ', 1, 0)")


def _merge_ranks(merges, vocab: dict) -> dict[tuple[str, str], int]:
    """"a b" strings or [a, b] pairs -> {(a, b): rank}; a pair listed twice keeps its LAST rank
    (as `tokenizers` does). Both parts and their join must be tokens (`tokenizers` refuses
    the file otherwise)."""
    if not isinstance(merges, list):
        raise ValueError("tokenizer.json: model.merges must be a list")
    ranks: dict[tuple[str, str], int] = {}
    for rank, m in enumerate(merges):
        pair = m.split(" ") if isinstance(m, str) else m
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)
                and all(p in vocab for p in (*pair, pair[0] + pair[1]))):
            raise ValueError(f"tokenizer.json: merge {shown(m)} must be two tokens of the "
                             f"vocabulary (\"a b\" or [a, b]) whose join is a token too")
        ranks[tuple(pair)] = rank
    return ranks


def _is_byte_token(text: str) -> bool:
    """`tokenizers`' ByteFallback decoder reads any "<0xNN>" (either case of hex) as a byte."""
    return len(text) == 6 and text.startswith("<0x") and text.endswith(">") and \
        all(c in "0123456789abcdefABCDEF" for c in text[3:5])
