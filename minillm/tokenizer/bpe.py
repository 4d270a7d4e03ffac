"""The byte-pair-encoding core: one pre-token's bytes -> the parts that BPE merges them into.

Start from single bytes and repeatedly merge the adjacent pair with the lowest *rank* (the merge
learned earliest) until no adjacent pair has a rank::

    b"hello" -> [h, e, l, l, o] -> [h, e, ll, o] -> [he, ll, o] -> [hell, o] -> [hello]

Two rules say what the rank of a pair is, and real vocabularies need both:

* **ranks** (tiktoken): rank(a, b) = the id of the token `a + b`, if it is in the vocabulary.
* **pairs** (GPT-2's `vocab.bpe`, Hugging Face, GGUF, minillm's trainer): rank(a, b) = the
  position of the pair `(a, b)` in the merge list. A token reachable by two different splits is
  only merged from the split the list names.

Ties (the same rank at two places, as in `b"aaa"`) go to the leftmost pair, as in tiktoken,
Hugging Face and llama.cpp: `b"aaa"` -> `[aa, a]`.

`merge_reference` is the textbook loop (O(n^2) rank look-ups for n bytes); `merge_list` gives the
same parts re-ranking only the pairs a merge changed; `merge_heap` does it in O(n log n) with a
heap of candidate pairs over a linked list, which matters for long pre-tokens such as a run of
Chinese characters (GPT-2's pattern keeps a whole clause of Han as one piece).
"""
from __future__ import annotations

import heapq
import sys
from typing import Callable, NamedTuple

NO_MERGE = sys.maxsize  # the rank of a pair that never merges
RankFn = Callable[[bytes, bytes], int]
HEAP_THRESHOLD = 40  # bytes; below this `merge_list` is as fast or faster in CPython
SINGLE_BYTES = [bytes([b]) for b in range(256)]  # SINGLE_BYTES[0x68] == b"h"


def rank_function(encoder: dict[bytes, int],
                  merges: dict[tuple[bytes, bytes], int] | None) -> RankFn:
    """rank(a, b) under the `ranks` rule (`merges is None`) or the `pairs` rule."""
    if merges is None:
        get = encoder.get
        return lambda a, b: get(a + b, NO_MERGE)
    get_pair = merges.get
    return lambda a, b: get_pair((a, b), NO_MERGE)


def merge(piece: bytes, rank: RankFn) -> list[bytes]:
    """The BPE parts of `piece`; picks the list or the heap algorithm by length (same result)."""
    if len(piece) < HEAP_THRESHOLD:
        return merge_list(piece, rank)
    return merge_heap(piece, rank)


class MergeStep(NamedTuple):
    """One merge of the reading loop: the pair that merged, its rank, and the parts after it."""
    pair: tuple[bytes, bytes]
    rank: int
    parts: tuple[bytes, ...]


def merge_reference(piece: bytes, rank: RankFn, trace: list | None = None) -> list[bytes]:
    """The textbook loop, to read: rank every adjacent pair, merge the lowest, repeat.

    ``trace``: a list that receives one ``MergeStep`` per merge, in order (for teaching).

    >>> merge_reference(b"aaa", lambda a, b: 0 if a + b == b"aa" else NO_MERGE)
    [b'aa', b'a']
    """
    parts = [piece[i:i + 1] for i in range(len(piece))]
    while len(parts) > 1:
        ranks = [rank(a, b) for a, b in zip(parts, parts[1:])]
        best = min(ranks)
        if best == NO_MERGE:
            break
        i = ranks.index(best)  # the leftmost of equal ranks
        pair = (parts[i], parts[i + 1])
        parts[i:i + 2] = [parts[i] + parts[i + 1]]
        if trace is not None:
            trace.append(MergeStep(pair, best, tuple(parts)))
    return parts


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
    n = len(piece)
    parts: list[bytes | None] = [piece[i:i + 1] for i in range(n)]
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
