"""The Tokenizer: text <-> ids with byte-level BPE.
Where it runs — shared (every encode and decode: the CLI, Chat, the engine and --reference alike): Tokenizer.encode, Tokenizer.decode_bytes; definition only (the default runs FastEncoder.encode, tested equal, and fast=False runs this): Tokenizer._read_ids.

    encode:  text -> [special-token split: special.py] -> pre-tokens (patterns.py) -> UTF-8 bytes
             -> BPE parts (bpe.merge_reference) -> ids
    decode:  ids -> bytes of each token, concatenated -> UTF-8 text (errors="replace")

    >>> tok = Tokenizer.load("gpt2")          # loading, saving, training: files.py
    >>> tok.encode("Hello world"), tok.decode([15496, 995])
    ([15496, 995], 'Hello world')
"""
from __future__ import annotations

from . import bpe
from .budget import encode_budget
from .checks import bad_id, check_tokenizer, check_type, without_lone_surrogates
from .fast import FastEncoder
from .files import TokenizerFiles
from .patterns import PreTokenizer
from .special import SpecialTokens


class Tokenizer(TokenizerFiles):
    """Byte-level BPE: `encoder` ({token bytes: id}), `merges` ({(left, right): rank}, or None:
    tiktoken's rule, bpe.py), `pattern` (given: a PreTokenizer or its pattern; kept: the stages),
    `pre_tokenizer`, `special_tokens` (str -> id; `user_defined`: special.py), bos_id / eos_id /
    unk_id (None: not named), `id_to_bytes` (id -> bytes; None: no token), `normalizer` (text ->
    text), `post_processor` (ids -> ids): callables or None; `fast_encoder` (None if fast=False)."""

    def __init__(self, encoder: dict[bytes, int], merges: dict[tuple[bytes, bytes], int] | None,
                 pattern=None, special_tokens: dict[str, int] | None = None, *,
                 whole_piece_lookup=False, normalizer=None, bos_id=None, eos_id=None, unk_id=None,
                 post_processor=None, user_defined=(), fast: bool = True):
        check_tokenizer(encoder, special_tokens or {}, user_defined, (normalizer, post_processor),
                        bos_id=bos_id, eos_id=eos_id, unk_id=unk_id)
        self.encoder, self.merges, self.whole_piece_lookup = encoder, merges, whole_piece_lookup
        self.normalizer, self.post_processor = normalizer, post_processor
        self.pre_tokenizer = pattern if isinstance(pattern, PreTokenizer) else PreTokenizer(pattern)
        self.pattern = self.pre_tokenizer.stages
        self._specials = SpecialTokens(special_tokens or {}, user_defined)
        self.special_tokens, self.user_defined = self._specials.tokens, self._specials.user_defined
        self.bos_id, self.eos_id, self.unk_id = bos_id, eos_id, unk_id
        table = {i: b for b, i in encoder.items()} | {i: s.encode() for s, i in self.special_tokens.items()}
        self.id_to_bytes = [table.get(i) for i in range(1 + max(table))]  # for decode
        self._rank = bpe.rank_function(encoder, merges)
        self.fast_encoder = FastEncoder(encoder, merges, self.pre_tokenizer, whole_piece_lookup,
                                        unk_id) if fast else None  # the seam: `_encode_text`

    def _encode_text(self, text: str) -> list[int]:  # no specials in it; the seam to fast/
        return self._read_ids(text) if self.fast_encoder is None else self.fast_encoder.encode(text)

    def _read_ids(self, text: str) -> list[int]:
        """The reading path: split into pre-tokens, merge each one's bytes, map parts to ids."""
        ids: list[int] = []
        for piece in self.pre_tokenizer.split(text):
            data = piece.encode("utf-8", errors="surrogateescape")  # surrogates: encode_bytes
            if self.whole_piece_lookup and data in self.encoder:  # (tiktoken's rule)
                ids.append(self.encoder[data])
                continue
            parts = bpe.merge_reference(data, self._rank)
            ids.extend(bpe.token_ids(parts, self.encoder, self.unk_id))
        return ids

    def _split_ids(self, text: str, allowed, encode_text) -> list[int]:  # (specials: special.py)
        with encode_budget(text):  # one time budget for a file's regexes (budget.py)
            return [i for segment, special_id in self._specials.split(text, allowed)
                    for i in (encode_text(segment) if special_id is None else [special_id])]

    def encode(self, text: str, *, allowed_special=frozenset(), disallowed_special="all",
               add_special_tokens: bool = False) -> list[int]:
        """Text -> ids with tiktoken's special-token semantics (see special.py);
        `add_special_tokens`: with the tokens a tokenizer.json post-processor adds."""
        check_type(text, str, "encode")
        allowed, disallowed = self._specials.resolve(allowed_special, disallowed_special)
        self._specials.guard(text, disallowed - allowed)
        norm = self.normalizer or str   # subtle: lone surrogates cannot be UTF-8 (tiktoken: U+FFFD)
        ids = self._split_ids(text, allowed, lambda s: self._encode_text(without_lone_surrogates(norm(s))))
        return self.post_processor(ids) if add_special_tokens and self.post_processor else ids

    def encode_ordinary(self, text: str) -> list[int]:
        """Text -> ids, special-token strings as text (user-defined ones split: special.py)."""
        return self.encode(text, disallowed_special=())

    def encode_bytes(self, data: bytes) -> list[int]:
        """Any bytes -> ids, `decode_bytes(encode_bytes(b)) == b`: bytes that are not UTF-8 pass
        pre-tokenisation as lone surrogates (`surrogateescape`), bytes again before BPE."""
        check_type(data, (bytes, bytearray), "encode_bytes")
        if self.normalizer:
            raise ValueError("encode_bytes is not defined for a tokenizer that normalises text")
        text = bytes(data).decode("utf-8", errors="surrogateescape")
        return self._split_ids(text, self.user_defined, self._encode_text)

    def encode_batch(self, texts, **kwargs) -> list[list[int]]:
        """[text, ...] -> [ids, ...]; one thread, sharing the pre-token cache (fast/)."""
        if isinstance(texts, str):
            raise TypeError("encode_batch expects a list of str; use encode for one text")
        return [self.encode(t, **kwargs) for t in texts]

    def merge_trace(self, piece: str) -> list[bpe.MergeStep]:
        """Every BPE merge of ONE pre-token, in order (bpe.merge_reference's; no whole-piece
        look-up): ``for step in tok.merge_trace("红光"): print(display.show_merge(step))``."""
        check_type(piece, str, "merge_trace")
        steps: list = []
        bpe.merge_reference(piece.encode("utf-8", errors="surrogateescape"), self._rank, steps)
        return steps

    def decode_bytes(self, ids) -> bytes:
        """ids -> the concatenated bytes of their tokens (exact; no UTF-8 involved)."""
        ids = ids if isinstance(ids, (list, tuple)) else list(ids)
        try:
            parts = [self.id_to_bytes[i] for i in ids]
            if not parts or min(ids) >= 0:  # subtle: table[-1] would silently be the last token
                return b"".join(parts)
        except (IndexError, TypeError):
            pass
        raise bad_id(ids, self.id_to_bytes)  # which id, and why

    def decode(self, ids, errors: str = "replace") -> str:
        """ids -> text; bytes that are not UTF-8 (a token ending mid-character) become U+FFFD
        (errors="replace"; "strict" raises instead)."""
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of one token: `token_bytes(995) == b" world"` (GPT-2)."""
        return self.decode_bytes([token_id])

    @property
    def vocab_size(self) -> int:  # 1 + the largest id (ids without a token are counted too)
        return len(self.id_to_bytes)

    def __repr__(self) -> str:
        return (f"Tokenizer(vocab_size={self.vocab_size}, specials={len(self.special_tokens)}, "
                f"rule={'ranks' if self.merges is None else 'pairs'})")
