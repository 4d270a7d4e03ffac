"""The Tokenizer: text <-> ids with byte-level BPE.

    encode:  text -> [special-token split: special.py] -> pre-tokens (patterns.py) -> UTF-8 bytes
             -> BPE parts (bpe.merge_reference) -> ids
    decode:  ids -> bytes of each token, concatenated -> UTF-8 text (errors="replace")

The one seam between this reading path and the speed-ups is `_encode_text` (text without special
tokens -> ids): `Tokenizer(..., fast=False)` runs the plain loop `_read_ids`; `fast=True` (the
default) hands the text to fast/ (caches, cuts, batched BPE), which gives the same ids sooner.

    >>> tok = Tokenizer.load("gpt2")
    >>> tok.encode("Hello world"), tok.decode([15496, 995])
    ([15496, 995], 'Hello world')

A vocabulary is `encoder` ({token bytes: id}; normally every single byte is a token, so any text
can be encoded: see bpe.token_ids for the exceptions), a merge rule (`merges`: {(left, right):
rank}, or None for tiktoken's rule, where the rank of a pair is the id of the merged token: see
bpe.py), a pre-tokenisation pattern and the special tokens.
"""
from __future__ import annotations

import operator

from . import bpe, formats, gguf_meta, hf
from .fast import FastEncoder
from .patterns import PreTokenizer, without_lone_surrogates
from .special import SpecialTokens
from .validate import MAX_ID  # the largest token id accepted + 1


class Tokenizer:
    """Byte-level BPE. Public: encode, encode_ordinary, encode_batch, encode_bytes, decode,
    decode_bytes, token_bytes, save, load, train, from_gguf_metadata; vocab_size, special_tokens
    (str -> id), bos_id / eos_id / unk_id (None when the vocabulary names none), pattern."""

    def __init__(self, encoder: dict[bytes, int], merges: dict[tuple[bytes, bytes], int] | None,
                 pattern=None, special_tokens: dict[str, int] | None = None, *,
                 whole_piece_lookup: bool = False, normalizer: str | None = None,
                 bos_id: int | None = None, eos_id: int | None = None, unk_id: int | None = None,
                 fast: bool = True):
        if not isinstance(encoder, dict) or not encoder:
            raise ValueError("a tokenizer needs a non-empty {token bytes: id} vocabulary")
        if min(encoder.values()) < 0:
            raise ValueError(f"token ids must be >= 0, got {min(encoder.values())}")
        top = max([*encoder.values(), *(special_tokens or {}).values()])
        if top >= MAX_ID:  # (the id -> bytes table below has one slot per id)
            raise ValueError(f"token ids must be below {MAX_ID:,} (real vocabularies have up to "
                             f"~260,000 tokens), got {top:,}")
        self._encoder = encoder
        self.merges = merges
        # tiktoken (and HF's ignore_merges): a pre-token that is itself a token is that token
        self.whole_piece_lookup = whole_piece_lookup
        self.normalizer = normalizer
        self._pre = PreTokenizer(pattern)
        self.pattern = self._pre.stages
        self._specials = SpecialTokens(special_tokens or {})
        self.special_tokens = self._specials.tokens  # str -> id
        # id -> bytes; None where an id has no token
        size = 1 + max([*encoder.values(), *self.special_tokens.values()])
        self._id_to_bytes: list[bytes | None] = [None] * size
        for b, i in encoder.items():
            self._id_to_bytes[i] = b
        for s, i in self.special_tokens.items():
            self._id_to_bytes[i] = s.encode("utf-8")
        for name, value in (("bos_id", bos_id), ("eos_id", eos_id), ("unk_id", unk_id)):
            if value is not None and not (0 <= value < size):
                raise ValueError(f"{name}={value} is outside the vocabulary [0, {size})")
        self.bos_id, self.eos_id, self.unk_id = bos_id, eos_id, unk_id
        self._rank = bpe.rank_function(encoder, merges)
        self._fast = FastEncoder(encoder, merges, self._pre, whole_piece_lookup, unk_id) \
            if fast else None  # the seam (`_encode_text`); None: the reading path

    # ----- encoding -------------------------------------------------------------------------
    def encode_ordinary(self, text: str) -> list[int]:
        """Text -> ids, treating special-token strings as ordinary text."""
        if not isinstance(text, str):
            raise TypeError(f"encode expects a str, got {type(text).__name__}")
        if self.normalizer:
            text = hf.normalize(text, self.normalizer)
        # subtle: lone surrogates cannot be UTF-8 (encode_bytes carries invalid bytes so)
        return self._encode_text(without_lone_surrogates(text))

    def _encode_text(self, text: str) -> list[int]:
        """Text without special tokens -> ids: the seam (module docstring)."""
        return self._read_ids(text) if self._fast is None else self._fast.encode(text)

    def _read_ids(self, text: str) -> list[int]:
        """The reading path: split into pre-tokens, merge each one's bytes, map parts to ids."""
        ids: list[int] = []
        for piece in self._pre.split(text):
            data = piece.encode("utf-8", errors="surrogateescape")  # surrogates: encode_bytes
            if self.whole_piece_lookup and data in self._encoder:  # (tiktoken's rule)
                ids.append(self._encoder[data])
                continue
            parts = bpe.merge_reference(data, self._rank)
            ids.extend(bpe.token_ids(parts, self._encoder, self.unk_id))
        return ids

    def merge_trace(self, piece: str) -> list:
        """Every BPE merge of ONE pre-token: ``bpe.MergeStep(pair, rank, parts)`` in order, e.g.
        ``for step in tok.merge_trace("红光"): print(step)`` (no whole-piece look-up here)."""
        if not isinstance(piece, str):
            raise TypeError(f"merge_trace expects a str, got {type(piece).__name__}")
        steps: list = []
        bpe.merge_reference(piece.encode("utf-8", errors="surrogateescape"), self._rank,
                            trace=steps)
        return steps

    def encode_bytes(self, data: bytes) -> list[int]:
        """Arbitrary bytes -> ids, so that `decode_bytes(encode_bytes(b)) == b` for any bytes.

        Valid UTF-8 gives exactly `encode_ordinary(data.decode())`. Invalid bytes are carried
        through pre-tokenisation as lone surrogates (`surrogateescape`) and turned back into
        those bytes before BPE.
        """
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError(f"encode_bytes expects bytes, got {type(data).__name__}")
        if self.normalizer:
            raise ValueError("encode_bytes is not defined for a tokenizer that normalises text")
        return self._encode_text(bytes(data).decode("utf-8", errors="surrogateescape"))

    def encode(self, text: str, *, allowed_special=frozenset(),
               disallowed_special="all") -> list[int]:
        """Text -> ids with tiktoken's special-token semantics (see special.py)."""
        if not isinstance(text, str):
            raise TypeError(f"encode expects a str, got {type(text).__name__}")
        allowed, disallowed = self._specials.resolve(allowed_special, disallowed_special)
        self._specials.guard(text, disallowed - allowed)
        if not allowed:
            return self.encode_ordinary(text)
        ids: list[int] = []
        for segment, special_id in self._specials.split(text, allowed):
            if special_id is None:
                ids.extend(self.encode_ordinary(segment))
            else:
                ids.append(special_id)
        return ids

    def encode_batch(self, texts, **kwargs) -> list[list[int]]:
        """[text, ...] -> [ids, ...]; one thread, sharing the pre-token cache (fast/)."""
        if isinstance(texts, str):
            raise TypeError("encode_batch expects a list of str; use encode for one text")
        return [self.encode(t, **kwargs) for t in texts]

    # ----- decoding -------------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        """1 + the largest id (ids without a token, if any, are counted too)."""
        return len(self._id_to_bytes)

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of one token: `token_bytes(995) == b" world"` (GPT-2)."""
        return self.decode_bytes([token_id])

    def decode_bytes(self, ids) -> bytes:
        """ids -> the concatenated bytes of their tokens (exact; no UTF-8 involved)."""
        table = self._id_to_bytes
        ids = ids if isinstance(ids, (list, tuple)) else list(ids)
        try:
            parts = [table[i] for i in ids]
            if not parts or min(ids) >= 0:  # subtle: table[-1] would silently be the last token
                return b"".join(parts)
        except (IndexError, TypeError):
            pass
        bad = next((i for i in ids if not _names_a_token(i, table)), None)
        raise ValueError(f"cannot decode id {bad!r}: ids must be ints in [0, {len(table)}) that "
                         f"name a token")

    def decode(self, ids, errors: str = "replace") -> str:
        """ids -> text. Bytes that are not valid UTF-8 (a token ending mid-character) become
        U+FFFD with errors="replace"; "strict" raises instead."""
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    def __repr__(self) -> str:
        return (f"Tokenizer(vocab_size={self.vocab_size}, specials={len(self.special_tokens)}, "
                f"rule={'ranks' if self.merges is None else 'pairs'})")

    # ----- loading, saving, training --------------------------------------------------------
    @classmethod
    def load(cls, path_or_name, pattern=None, *, fast: bool = True) -> "Tokenizer":
        """"gpt2" / "r50k" / "cl100k" / "o200k" (shipped), "smollm2" / "deepseek-v4" (downloaded),
        a model folder, or a file: .tiktoken(.gz), tokenizer.json(.gz) (Hugging Face or minillm's
        format), .gguf (see locate.py). `pattern` overrides the pre-tokenisation pattern;
        `fast=False` encodes on the reading path alone (the same ids, slower)."""
        return cls(**formats.read(path_or_name, pattern), fast=fast)

    @classmethod
    def from_gguf_metadata(cls, meta: dict, pattern=None) -> "Tokenizer":
        """Build from GGUF `tokenizer.ggml.*` metadata already parsed into a dict."""
        return cls(**gguf_meta.read_gguf_metadata(meta, pattern))

    @classmethod
    def train(cls, text: str, vocab_size: int, pattern=None, special_tokens=(),
              trainer: str = "fast") -> "Tokenizer":
        """Learn merges on `text` (see train.py). `vocab_size` counts the 256 bytes, the merges
        and the special tokens (ids after the merges)."""
        from .train import train_tokenizer
        return cls(**train_tokenizer(text, vocab_size, pattern, special_tokens, trainer))

    def save(self, path, format: str | None = None, **options) -> None:
        """tokenizer.json -> Hugging Face's format (+ tokenizer_config.json), other names (e.g.
        tokenizer.minillm.json) -> minillm's readable one; and a dump, `path`.vocab (formats.py)."""
        formats.write(self, path, format, **options)


def _names_a_token(token_id, table: list) -> bool:
    """Is `token_id` an integer (int, NumPy integer) with a token in `table`?"""
    try:
        i = operator.index(token_id)  # (a 1-D array, a float or a str is not an integer)
    except TypeError:
        return False
    return 0 <= i < len(table) and table[i] is not None
