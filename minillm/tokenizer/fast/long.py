"""One very long pre-token (10 MB without a space, a book of Han): linear memory, O(n log n) time.

GPT-2's pattern makes any run of letters one piece, so a text without spaces is one pre-token of
millions of bytes. merge.py's heap keeps a bytes object, two list slots and a heap tuple per
byte (~220 bytes per character). Here a long piece is handled in two ways, both exact:

* **cut where no merge can cross** (segment.py): a non-ASCII piece is cut into chunks of about
  `LONG` characters at safe boundaries (a property of two adjacent characters only, so it can
  be checked window by window); each chunk is merged alone.
* **`merge_long`**, for what cannot be cut (ASCII letters: every boundary is spanned by some
  token): merge.py's algorithm with 4 bytes per entry instead of Python objects. The parts are
  a linked list in two `array('i')`; the candidate pairs are kept in one bucket per rank (an
  `array('i')` of offsets, a stack with the leftmost on top) and a heap of the ranks only.

subtle: a merge at offset i re-ranks the pairs at i and at prv[i], both left of every offset
still waiting in the active bucket, so pushing them on top keeps the stack leftmost-first. A
merge may create a pair ranked *below* the active bucket: its bucket becomes active first (the
heap of ranks says so), and a bucket that received offsets while inactive is sorted again
before it is used. Stale entries (a pair that changed) are recognised when popped, as in merge.py.
"""
from __future__ import annotations

import heapq
from array import array
from typing import Iterator

import numpy as np

from ..bpe import NO_MERGE, RankFn
from .segment import SafeCuts

LONG = 4096  # characters; longer pieces take this module's paths (shorter: pieces.py, merge.py)
DEAD = -2  # prv[j] of a part j merged into its left neighbour


def byte_pair_codes(rank: RankFn) -> tuple[list[int], np.ndarray]:
    """The ranks of the 65,536 pairs of single bytes, as (the distinct ranks, sorted; a 2-byte
    code per pair: the index of its rank in that list, at `left * 256 + right`)."""
    singles = [bytes([b]) for b in range(256)]
    ranks = np.array([[rank(a, b) for b in singles] for a in singles], np.int64)  # [256, 256]
    values, codes = np.unique(ranks, return_inverse=True)  # [R], [256 * 256]
    return values.tolist(), codes.reshape(-1).astype(np.uint16)  # [R], [65536]


def safe_chunks(piece: str, cuts: SafeCuts, size: int = LONG) -> Iterator[str]:
    """`piece` in chunks of about `size` characters, each ending at a safe cut (segment.py).
    A stretch with no safe cut stays in one chunk."""
    start = 0
    while len(piece) - start > size:
        lo, width = start + size, 16  # the first safe cut at lo, lo + 1, ...: growing windows
        while lo < len(piece):
            segments = cuts.split(piece[lo - 1:lo + width])  # boundaries lo .. lo + width - 1
            if len(segments) > 1:
                lo += len(segments[0]) - 1  # (a str result: every boundary is safe)
                break
            lo, width = lo + width, min(2 * width, size)
        yield piece[start:lo]
        start = lo
    if start < len(piece):
        yield piece[start:]


def merge_long(piece: bytes, rank: RankFn, pair_codes) -> Iterator[bytes]:
    """merge.merge_heap's parts, in about 12 bytes per input byte (module docstring).
    `pair_codes`: `byte_pair_codes(rank)`."""
    n = len(piece)
    buckets, dirty = _first_buckets(piece, *pair_codes), set()  # rank -> offsets (a stack)
    nxt, prv = array("i"), array("i")  # offset of the next / previous part (n: end, -1: start)
    nxt.frombytes(np.arange(1, n + 1, dtype=np.int32).tobytes())
    prv.frombytes(np.arange(-1, n - 1, dtype=np.int32).tobytes())
    heap = sorted(buckets)  # the ranks that have a bucket (a sorted list is a heap)

    def push(r: int, i: int) -> None:
        if r == NO_MERGE:
            return
        if r not in buckets:
            buckets[r] = array("i")
            heapq.heappush(heap, r)
        elif r != active:
            dirty.add(r)
        buckets[r].append(i)

    while heap:
        active = heap[0]
        stack = buckets.get(active)
        if not stack:  # this rank is done
            heapq.heappop(heap)
            del buckets[active]
            continue
        if active in dirty:  # offsets arrived while inactive: leftmost on top again
            dirty.discard(active)
            stack = buckets[active] = array("i", np.sort(np.frombuffer(stack, np.int32))[::-1]
                                            .tobytes())
        while stack and heap[0] == active:  # (a lower rank pushed by a merge goes first)
            i = stack.pop()
            j = nxt[i]
            if prv[i] == DEAD or j >= n or rank(piece[i:j], piece[j:nxt[j]]) != active:
                continue  # a stale entry: that pair has changed since it was pushed
            k = nxt[i] = nxt[j]
            prv[j] = DEAD
            if k < n:
                prv[k] = i
                push(rank(piece[i:k], piece[k:nxt[k]]), i)
            if prv[i] >= 0:
                push(rank(piece[prv[i]:i], piece[i:k]), prv[i])
    i = 0
    while i < n:
        yield piece[i:nxt[i]]
        i = nxt[i]


def _first_buckets(piece: bytes, values: list[int], codes: np.ndarray) -> dict[int, array]:
    """The byte pairs of `piece` grouped by rank: rank -> offsets, leftmost last (a stack).

    subtle: memory. Each byte pair has a 2-byte code (`byte_pair_codes`), and one stable
    argsort of the codes lists the offsets rank by rank, left to right: ~12 bytes per byte."""
    raw = np.frombuffer(piece, np.uint8).astype(np.uint16)  # [n]
    code = codes[raw[:-1] * 256 + raw[1:]]  # [n - 1] uint16
    order = np.argsort(code, kind="stable")  # [n - 1] offsets, by rank then offset
    ends = np.cumsum(np.bincount(code, minlength=len(values))).tolist()  # [R]
    buckets, start = {}, 0
    for r, end in zip(values, ends):
        if end > start and r != NO_MERGE:
            buckets[r] = array("i", order[start:end][::-1].astype(np.int32).tobytes())
        start = end
    return buckets
