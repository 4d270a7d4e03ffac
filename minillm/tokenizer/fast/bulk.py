"""The bulk step of the fast encoder (pieces.py): a long text's new pre-tokens given their ids
all at once, before the text is read through the cache.

    whole tokens            one look-up each (under ``whole_piece_lookup``)
    non-ASCII pieces        cut at segment.py's safe boundaries for all pieces at once (wide.py)
    the rest                one batched BPE (batch_bpe.py), from BATCH_BPE new pieces

Each gives exactly what ``FastEncoder.encode_piece`` would (tested: tests/tokenizer/fast/,
test_fast_equals_reading.py), so only the speed differs.
"""
from __future__ import annotations

import itertools

import numpy as np

from . import long, merge, wide
from .segment import cut_where

BATCH_BPE = 1024  # new pieces from which batched BPE (batch_bpe.py) beats merge.merge


def cache_new_pieces(enc, pieces: list[str]) -> None:
    """Put the ids of new pieces in the cache: whole tokens (under `whole_piece_lookup`)
    directly, non-ASCII pieces cut at safe boundaries (`cache_non_ascii`), the rest by
    one batched BPE (batch_bpe.py). Left to `encode_piece`: what `cache_non_ascii` leaves,
    pieces of one byte or of HEAP_THRESHOLD bytes and more (merge.py), pieces with a part
    that is not a token (batch_bpe.py), new pieces beyond half the cache's size when they do not all fit (they
    go through the cache's own bound), the rest when there are fewer than BATCH_BPE."""
    cache, new, data, non_ascii = enc.piece_ids, [], [], []
    if all(map(cache.__contains__, pieces[::16])):  # subtle: a cheap test first, or a text
        return  # seen before would pay for the set below (~10% of a cached encode)
    unseen = set(pieces).difference(cache)
    if len(cache) + len(unseen) > cache.size:  # keep memo.py's bound (as Memo would)
        cache.clear()
    room = len(unseen) if len(unseen) <= cache.size else cache.size // 2  # (all fit, or
    whole = enc.encoder.get if enc.whole_piece_lookup else {}.get  # ({}: finds nothing)
    for piece in itertools.islice(unseen, room):  # keep room for the misses: memo.py)
        if piece.isascii():
            b = piece.encode()  # (ASCII: no surrogate to escape; the plain call is quicker)
        elif len(piece) == 1:
            b = piece.encode("utf-8", errors="surrogateescape")
        else:
            if len(piece) <= long.LONG:
                non_ascii.append(piece)
            continue
        if (i := whole(b)) is not None:
            cache[piece] = (i,)  # as in `encode_piece`
        elif 1 < len(b) < merge.HEAP_THRESHOLD:  # (a round per merge: not for long ones)
            new.append(piece)
            data.append(b)
    if non_ascii:
        cache_non_ascii(enc, non_ascii)
    if len(new) < BATCH_BPE:
        return
    if enc.batch is None:
        enc.build_batch()
    if enc.batch is False:
        return
    parts, n_tokens = enc.batch(data), enc.batch.n_tokens
    if not enc.batch.extras:  # (the usual case: every part is a token)
        cache.update(zip(new, parts))
        return
    for piece, ids in zip(new, parts):
        if max(ids) < n_tokens:
            cache[piece] = ids

def cache_non_ascii(enc, pieces: list[str]) -> None:
    """Cache the ids of new non-ASCII pieces cut as segment.py cuts them, found for all the
    pieces at once (wide.py): a piece cut before every character (most of a Chinese text's)
    gets its characters' ids one after the other, a piece cut at some boundaries its
    segments' ids, a piece with no cut `uncut_ids`. Left to `encode_piece`: those with a
    surrogate or a character above U+FFFF. (A piece with a cut is no token: a token spans
    each of its boundaries, see `encode_piece`.)"""
    if enc.kept is None:
        enc.kept = wide.KeptBoundaries(enc.cuts())
    code, lengths = wide.code_points(pieces)  # [N], [P]
    kept = enc.kept(code, lengths)  # [N] bool: no cut after that character
    everywhere, uncut, some = wide.kinds(kept, code, lengths)  # [P] bool each
    if everywhere.any():
        ids = wide.ids_by_character(code[np.repeat(everywhere, lengths)], lengths[everywhere],
                                    enc.segment_ids.__getitem__)
        enc.piece_ids.update(zip(itertools.compress(pieces, everywhere.tolist()), ids))
    for piece in itertools.compress(pieces, uncut.tolist()):
        enc.piece_ids[piece] = enc.uncut_ids(piece)
    starts = (np.cumsum(lengths) - lengths)[some].tolist()
    for piece, start in zip(itertools.compress(pieces, some.tolist()), starts):
        cut = (~kept[start:start + len(piece) - 1]).tolist()  # cut before character j?
        enc.piece_ids[piece] = tuple(itertools.chain.from_iterable(
            map(enc.segment_ids.__getitem__, cut_where(piece, cut))))
