"""The Tokenizer: text <-> ids with byte-level BPE.

    encode:  text -> [special-token split: special.py] -> pre-tokens (patterns.py) -> UTF-8 bytes
             -> BPE parts (bpe.merge_reference) -> ids
    decode:  ids -> bytes of each token, concatenated -> UTF-8 text (errors="replace")

    >>> tok = Tokenizer.load("gpt2")
    >>> tok.encode("Hello world"), tok.decode([15496, 995])
    ([15496, 995], 'Hello world')

A vocabulary: `encoder` ({token bytes: id}), `merges` ({(left, right): rank}, or None for
tiktoken's rule: bpe.py), a pattern and special tokens. Loading, saving, training: files.py.
"""
from __future__ import annotations

from . import bpe
from .formats.hf import normalizers as hf_normalize, post_processors as hf_post
from .fast import FastEncoder
from .files import TokenizerFiles
from .patterns import PreTokenizer
from .special import SpecialTokens
from .formats.validate import bad_id, check_tokenizer, without_lone_surrogates


class Tokenizer(TokenizerFiles):
    """Byte-level BPE: encode, encode_ordinary, decode, decode_bytes; the rest in files.py.
    Attributes: special_tokens (str -> id), bos_id / eos_id / unk_id (None: not named), pattern."""

    def __init__(self, encoder: dict[bytes, int], merges: dict[tuple[bytes, bytes], int] | None,
                 pattern=None, special_tokens: dict[str, int] | None = None, *,
                 whole_piece_lookup: bool = False, normalizer: str | dict | None = None,
                 bos_id: int | None = None, eos_id: int | None = None, unk_id: int | None = None,
                 post_processor: dict | None = None, user_defined=(), fast: bool = True):
        check_tokenizer(encoder, special_tokens or {}, user_defined, bos_id=bos_id, eos_id=eos_id,
                        unk_id=unk_id)
        self._encoder, self.merges = encoder, merges
        self.whole_piece_lookup, self.normalizer = whole_piece_lookup, normalizer  # (tiktoken)
        self.post_processor = post_processor  # tokenizer.json's, for add_special_tokens: hf_post
        self._pre = PreTokenizer(pattern)
        self.pattern = self._pre.stages
        self._specials = SpecialTokens(special_tokens or {}, user_defined)  # user_defined: some
        self.special_tokens = self._specials.tokens  # str -> id
        self.bos_id, self.eos_id, self.unk_id = bos_id, eos_id, unk_id
        table = [None] * (1 + max([*encoder.values(), *self.special_tokens.values()]))
        for b, i in encoder.items():
            table[i] = b
        for s, i in self.special_tokens.items():
            table[i] = s.encode("utf-8")
        self._id_to_bytes: list[bytes | None] = table  # id -> bytes, for decode; None: no token
        self._rank = bpe.rank_function(encoder, merges)
        self._fast = FastEncoder(encoder, merges, self._pre, whole_piece_lookup, unk_id) \
            if fast else None  # the seam (`_encode_text`); None: the reading path

    def encode_ordinary(self, text: str) -> list[int]:
        """Text -> ids, special-token strings as text (user-defined ones split: special.py)."""
        return self.encode(text, disallowed_special=())

    def _encode_segment(self, text: str) -> list[int]:
        text = hf_normalize.normalize(text, self.normalizer) if self.normalizer else text
        return self._encode_text(without_lone_surrogates(text))  # subtle: those cannot be UTF-8

    def _encode_text(self, text: str) -> list[int]:
        """Text without special tokens -> ids. The one seam between the reading path and the
        speed-ups: `fast=False` runs `_read_ids`; fast/ (caches, cuts, batched BPE) gives the
        same ids sooner."""
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

    def encode(self, text: str, *, allowed_special=frozenset(), disallowed_special="all",
               add_special_tokens: bool = False) -> list[int]:
        """Text -> ids with tiktoken's special-token semantics (see special.py);
        `add_special_tokens`: with the tokens a tokenizer.json post-processor adds (hf_post)."""
        if not isinstance(text, str):
            raise TypeError(f"encode expects a str, got {type(text).__name__}")
        allowed, disallowed = self._specials.resolve(allowed_special, disallowed_special)
        self._specials.guard(text, disallowed - allowed)
        ids: list[int] = []
        for segment, special_id in self._specials.split(text, allowed):  # (text, None) or (s, id)
            ids.extend(self._encode_segment(segment) if special_id is None else [special_id])
        return hf_post.apply(self.post_processor, ids) if add_special_tokens else ids

    def decode_bytes(self, ids) -> bytes:
        """ids -> the concatenated bytes of their tokens (exact; no UTF-8 involved)."""
        ids = ids if isinstance(ids, (list, tuple)) else list(ids)
        try:
            parts = [self._id_to_bytes[i] for i in ids]
            if not parts or min(ids) >= 0:  # subtle: table[-1] would silently be the last token
                return b"".join(parts)
        except (IndexError, TypeError):
            pass
        raise bad_id(ids, self._id_to_bytes)  # which id, and why

    def decode(self, ids, errors: str = "replace") -> str:
        """ids -> text. Bytes that are not valid UTF-8 (a token ending mid-character) become
        U+FFFD with errors="replace"; "strict" raises instead."""
        return self.decode_bytes(ids).decode("utf-8", errors=errors)
