"""The merge loop of bpe.py, sooner: the same parts, re-ranking only what a merge changed.

`merge_list` keeps bpe.merge_reference's list of ranks and re-ranks only the two pairs a merge
changed (as tiktoken does); `merge_heap` does it in O(n log n) with a heap of candidate pairs
over a linked list, which matters for long pre-tokens such as a run of Chinese characters
(GPT-2's pattern keeps a whole clause of Han as one piece). `merge` picks one by length.
Both are tested equal to `merge_reference` (tests/tokenizer/fast/test_merge.py).
"""
from __future__ import annotations

import heapq

from ..bpe import NO_MERGE, RankFn

HEAP_THRESHOLD = 40  # bytes; below this `merge_list` is as fast or faster in CPython
SINGLE_BYTES = [bytes([b]) for b in range(256)]  # SINGLE_BYTES[0x68] == b"h"


def merge(piece: bytes, rank: RankFn) -> list[bytes]:
    """The BPE parts of `piece`; picks the list or the heap algorithm by length (same result)."""
    if len(piece) < HEAP_THRESHOLD:
        return merge_list(piece, rank)
    return merge_heap(piece, rank)


def merge_list(piece: bytes, rank: RankFn) -> list[bytes]:
    """`merge_reference`, but a merge re-ranks only the two pairs it changed (as tiktoken does).

    `ranks[i]` is the rank of `(parts[i], parts[i + 1])`; finding the lowest is a C-speed
    `min` + `index` over the list, and only 2 new ranks are computed per merge. The start is
    built by C loops: `map` over a table of the 256 one-byte strings, `map(rank, ...)`.
    """
    parts = list(map(SINGLE_BYTES.__getitem__, piece))  # b"hi" -> [b"h", b"i"]
    ranks = list(map(rank, parts, parts[1:]))
    best = min(ranks, default=NO_MERGE)
    while best != NO_MERGE:
        i = ranks.index(best)  # the leftmost of equal ranks
        merged = parts[i] = parts[i] + parts.pop(i + 1)
        del ranks[i]  # the merged pair; its neighbours' ranks change:
        if i > 0:
            ranks[i - 1] = rank(parts[i - 1], merged)
        if i < len(ranks):
            ranks[i] = rank(merged, parts[i + 1])
        best = min(ranks, default=NO_MERGE)
    return parts


def merge_heap(piece: bytes, rank: RankFn) -> list[bytes]:
    """Same parts as `merge_reference`, in O(n log n).

    Parts live in a doubly linked list indexed by their first byte's offset; the heap holds
    `(rank, offset of the left part)` for every adjacent pair, so popping gives the lowest rank
    and, among equal ranks, the leftmost pair. Merging changes the two neighbouring pairs: push
    them anew and leave the old entries in the heap.

    subtle: old entries are not removed but recognised when popped: an entry is acted on only if
    the pair now starting at that offset still has that rank. Every current pair always has an
    entry with its true key, so a popped entry that passes this check is a lowest current pair.
    """
    return merge_heap_parts([piece[i:i + 1] for i in range(len(piece))], rank)


def merge_heap_parts(start: list[bytes], rank: RankFn) -> list[bytes]:
    """`merge_heap` from given parts (SentencePiece-style BPE starts from characters: spm.py).
    Offsets below are indices into `start`."""
    n = len(start)
    parts: list[bytes | None] = list(start)
    nxt = list(range(1, n + 1))  # offset of the next part (n = end)
    prv = list(range(-1, n - 1))  # offset of the previous part (-1 = start)
    heap = [(r, i) for i in range(n - 1) if (r := rank(parts[i], parts[i + 1])) != NO_MERGE]
    heapq.heapify(heap)
    while heap:
        r, i = heapq.heappop(heap)
        j = nxt[i]
        if parts[i] is None or j >= n or rank(parts[i], parts[j]) != r:
            continue  # a stale entry: that pair has changed since it was pushed
        parts[i] = parts[i] + parts[j]
        parts[j] = None
        nxt[i] = nxt[j]
        if nxt[i] < n:
            prv[nxt[i]] = i
            if (r2 := rank(parts[i], parts[nxt[i]])) != NO_MERGE:
                heapq.heappush(heap, (r2, i))
        if prv[i] >= 0 and (r2 := rank(parts[prv[i]], parts[i])) != NO_MERGE:
            heapq.heappush(heap, (r2, prv[i]))
    out, i = [], 0
    while i < n:
        out.append(parts[i])
        i = nxt[i]
    return out
