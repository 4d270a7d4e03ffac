"""Ordinary text -> ids, fast: the pre-token cache and the ways BPE runs (fast/__init__.py).

`FastEncoder.encode(text)` splits the text (split.py) and turns the pre-tokens into ids.
Pre-tokens repeat a lot (" the", " and", "."), so:

- the ids of every pre-token are cached (memo.py: `CACHE_SIZE` entries) and the cache is read
  from C over the whole list (`map(cache.__getitem__, pieces)`): Python runs only on a miss;
- the new pre-tokens of a long text (at least `BATCH_MIN` pieces) are put in the cache before
  that read, so the misses are few (bulk.py): whole tokens directly, non-ASCII ones cut in
  bulk (wide.py), and, when there are at least `bulk.BATCH_BPE`, the rest merged all at once in
  NumPy (batch_bpe.py);
- a miss on a long non-ASCII pre-token (a clause of Chinese) is first cut where no merge can
  cross (segment.py), so that its segments hit the cache too;
- whatever is left runs merge.merge, one piece at a time (a heap for long pieces);
- a piece longer than `long.LONG` characters is cut in chunks or merged in compact arrays
  (long.py), never cached;
- the cyclic garbage collector is paused while a long text is encoded (`encode`).

Each way gives exactly bpe.merge_reference's parts (tested), so only the speed differs.
"""
from __future__ import annotations

import gc
import itertools

from .. import bpe
from ..patterns import PreTokenizer
from . import bulk, long, merge, wide
from .batch_bpe import BatchBPE
from .memo import Memo
from .segment import SafeCuts
from .split import FastSplit

CACHE_SIZE = 1 << 16  # pre-tokens whose ids are remembered (memo.py): words repeat a lot
BATCH_MIN = 64  # pieces in one text from which its new ones are cached in bulk
# subtle: measured on a fresh tokenizer, making batched BPE included: equal at ~1,000 new pieces
# of English, 1.1x faster at 2,000, 1.6x at 7,000 (a megabyte); once made, equal at ~600.
PAUSE_GC = 1 << 14  # characters from which `encode` pauses the cyclic garbage collector


class LongPiece(Exception):
    """A piece longer than `long.LONG` characters: `encode` handles it outside the cache."""


class FastEncoder:
    """Ordinary text -> ids for one vocabulary (`encoder` {bytes: id}, `merges` or None: bpe.py)
    and pre-tokeniser: the same ids as the Tokenizer's reading path (`fast=False`)."""

    def __init__(self, encoder: dict[bytes, int], merges: dict[tuple[bytes, bytes], int] | None,
                 pre: PreTokenizer, whole_piece_lookup: bool, unk_id: int | None):
        self.encoder, self.merges, self.split = encoder, merges, FastSplit(pre)
        # tiktoken (and HF's ignore_merges): a pre-token that is itself a token is that token
        self.whole_piece_lookup, self.unk_id = whole_piece_lookup, unk_id
        self.rank = bpe.rank_function(encoder, merges)
        self.piece_ids = Memo(self.encode_piece, CACHE_SIZE)  # pre-token -> ids
        self.segment_ids = Memo(self.bpe_ids, CACHE_SIZE)  # segment (segment.py) -> ids
        self.safe_cuts: SafeCuts | None = None  # built on first use (segment.py)
        self.batch: BatchBPE | None | bool = None  # None: not built yet; False: not usable
        self.pair_codes = None  # long.byte_pair_codes, built on first use
        self.kept: wide.KeptBoundaries | None = None  # built on first use

    def encode(self, text: str) -> list[int]:
        """Text (no special tokens) -> the concatenated ids of its pre-tokens.

        subtle: Python's cyclic garbage collector is paused while a long text is encoded. The
        ~15,000 tuples of a megabyte's new pieces set it off ~20 times, and each pass walks the
        young 260,000-item list of pieces (and the ids): ~40 of a fresh tokenizer's ~200 ms.
        Nothing here makes a cycle, so pausing it frees nothing later (`timeit` does the same).
        Left off if the caller had turned it off (subtle: another thread's `gc.disable()` during
        the encode is undone by it).
        """
        if len(text) < PAUSE_GC or not gc.isenabled():
            return self.encode_pieces(text)
        gc.disable()
        try:
            return self.encode_pieces(text)
        finally:
            gc.enable()

    def encode_pieces(self, text: str) -> list[int]:
        """`encode`, with the collector as it is."""
        pieces = self.split(text)
        if len(pieces) >= BATCH_MIN:
            bulk.cache_new_pieces(self, pieces)
        try:
            return list(itertools.chain.from_iterable(map(self.piece_ids.__getitem__, pieces)))
        except LongPiece:  # subtle: raised by a cache miss only, so other texts pay nothing
            pass
        ids: list[int] = []  # a long piece is neither cached nor copied through a tuple
        for piece in pieces:
            if len(piece) > long.LONG:
                self.add_long_ids(piece, ids)
            else:
                ids.extend(self.piece_ids[piece])
        return ids

    def build_batch(self) -> None:
        """Make batched BPE ready (its id -> bytes list: a few ms; built on first use)."""
        try:
            self.batch = BatchBPE(self.encoder, self.merges)
        except ValueError:  # a vocabulary it cannot hold (see batch_bpe.py)
            self.batch = False

    def clear(self) -> None:
        """Forget the ids of pre-tokens and segments seen (the benchmark's "cold" runs). Tables
        derived from the vocabulary stay (segment.py's per-character sets, batch_bpe.py's)."""
        self.piece_ids.clear()
        self.segment_ids.clear()

    def encode_piece(self, piece: str) -> tuple[int, ...]:
        """One pre-token -> its ids (a cache miss of `piece_ids`).

        subtle: the cut comes before the whole-piece look-up, which it makes unnecessary: a piece
        that is a token has no safe cut (that token spans each of its boundaries: segment.py).
        """
        if len(piece) > long.LONG:
            raise LongPiece(piece)
        if len(piece) > 1 and not piece.isascii():  # long runs of CJK: cut where BPE cannot merge
            segments = self.cuts().split(piece)
            if len(segments) > 1:
                return tuple(itertools.chain.from_iterable(
                    map(self.segment_ids.__getitem__, segments)))
        return self.uncut_ids(piece)

    def uncut_ids(self, piece: str) -> tuple[int, ...]:
        """The ids of a pre-token with no safe cut: the token it is, or its BPE."""
        data = piece.encode("utf-8", errors="surrogateescape")  # surrogates: see encode_bytes
        if self.whole_piece_lookup:
            i = self.encoder.get(data)
            if i is not None:
                return (i,)
        return self.bpe_ids(data)

    def cuts(self) -> SafeCuts:
        """The safe cuts of this vocabulary (segment.py), built on first use."""
        if self.safe_cuts is None:
            extra = (a + b for a, b in self.merges) if self.merges else ()
            self.safe_cuts = SafeCuts(itertools.chain(self.encoder, extra))
        return self.safe_cuts

    def add_long_ids(self, piece: str, ids: list[int]) -> None:
        """Append the ids of a piece longer than `long.LONG` characters to `ids`, in linear
        memory (long.py)."""
        if self.whole_piece_lookup and (i := self.encoder.get(
                piece.encode("utf-8", errors="surrogateescape"))) is not None:
            ids.append(i)
            return
        chunks = [piece] if piece.isascii() else long.safe_chunks(piece, self.cuts(), long.LONG)
        for chunk in chunks:
            if len(chunk) <= long.LONG:  # (cut at safe boundaries: the segments hit the cache)
                ids.extend(itertools.chain.from_iterable(
                    map(self.segment_ids.__getitem__, self.cuts().split(chunk))))
                continue
            if self.pair_codes is None:
                self.pair_codes = long.byte_pair_codes(self.rank)
            parts = long.merge_long(chunk.encode("utf-8", errors="surrogateescape"), self.rank,
                                    self.pair_codes)
            while block := list(itertools.islice(parts, 1 << 16)):
                ids.extend(bpe.token_ids(block, self.encoder, self.unk_id))

    def bpe_ids(self, piece: str | bytes) -> tuple[int, ...]:
        """BPE of a piece or segment (no whole-piece look-up: that rule is for pre-tokens)."""
        if isinstance(piece, str):
            piece = piece.encode("utf-8", errors="surrogateescape")
        parts = merge.merge(piece, self.rank)
        try:
            return tuple(map(self.encoder.__getitem__, parts))
        except KeyError:  # a part that is not a token (bpe.token_ids says what then)
            return tuple(bpe.token_ids(parts, self.encoder, self.unk_id))
