"""Chunking a long document: overlapping pieces that each fit the window.

A document longer than the window cannot be read in one forward pass. Cut it into chunks of at
most ``size`` tokens, each starting ``size - overlap`` tokens after the previous one, so that
consecutive chunks share ``overlap`` tokens (a sentence cut at a boundary is whole in one of the
two). Chunk k covers

    [k · step, min(k · step + size, n))      with step = size - overlap,

for k = 0, 1, … up to the first chunk that reaches the end n. So every token is in some chunk,
every chunk but the last holds exactly ``size`` tokens, and the last one ends at n.

Then map-reduce: run the model on each chunk (map: a summary, an extracted answer, a score),
and combine the per-chunk results (reduce). The cost is one forward pass per chunk, each over
at most ``size`` tokens plus the instruction — but no chunk sees another, so a fact that needs
two distant passages together is lost, which one large window would keep.

Choosing ``size``: the window must hold the instruction, the chunk and the answer, so
``size <= window - instruction tokens - answer tokens`` (``context_budget`` does the sum).

Example: ``chunk_spans(10, 4, 1)`` -> [(0, 4), (3, 7), (6, 10)];
``chunk_ids([1, 2, 3, 4, 5, 6], 4, 2)`` -> [[1, 2, 3, 4], [3, 4, 5, 6]].
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def chunk_spans(n_tokens: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """The (start, stop) of each chunk of an ``n_tokens``-token document; [] when n_tokens = 0."""
    for name, value in (("n_tokens", n_tokens), ("size", size), ("overlap", overlap)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name} must be an int (tokens), got {value!r}")
    if n_tokens < 0:
        raise ValueError(f"n_tokens must be >= 0, got {n_tokens}")
    if size < 1:
        raise ValueError(f"size must be >= 1 token, got {size}")
    if not 0 <= overlap < size:
        raise ValueError(f"overlap must be in [0, size - 1] = [0, {size - 1}] (an overlap of "
                         f"size or more would never advance), got {overlap}")
    step = size - overlap
    spans, start = [], 0
    while start < n_tokens:
        stop = min(start + size, n_tokens)
        spans.append((start, stop))
        if stop == n_tokens:            # subtle: stop here, or the next chunk lies inside this one
            break
        start += step
    return spans


def chunk_ids(ids: Sequence[int], size: int, overlap: int) -> list[list[int]]:
    """``ids`` (a list or a 1-D array) cut into overlapping chunks of at most ``size`` tokens
    (see ``chunk_spans``), each a list."""
    if isinstance(ids, np.ndarray) and ids.ndim == 1:
        ids = ids.tolist()                                         # [n] -> a list of n ints
    if isinstance(ids, (str, bytes, bytearray)) or not isinstance(ids, Sequence):
        raise ValueError(f"ids must be a list or 1-D array of token ids, got {type(ids).__name__}")
    return [list(ids[start:stop]) for start, stop in chunk_spans(len(ids), size, overlap)]
