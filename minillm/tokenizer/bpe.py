"""Byte-pair encoding: one pre-token's bytes -> the parts BPE merges them into -> ids.
Where it runs — shared (the fast encoder ranks pairs with it too): rank_function; definition only (the default's batched and heap merges are tokenizer/fast/, tested equal, and fast=False runs these): merge_reference, token_ids.

Start from single bytes and repeatedly merge the adjacent pair with the lowest *rank* (the merge
learned earliest) until no adjacent pair has a rank::

    b"hello" -> [h, e, l, l, o] -> [h, e, ll, o] -> [he, ll, o] -> [hell, o] -> [hello]

Two rules give a pair's rank; real vocabularies need both:
* **ranks** (tiktoken): rank(a, b) = the id of the token `a + b`, if it is in the vocabulary.
* **pairs** (GPT-2's `vocab.bpe`, Hugging Face, GGUF, minillm's trainer): rank(a, b) = the
  position of `(a, b)` in the merge list; a token is only merged from the split the list names.

Ties go to the leftmost pair, as in tiktoken, Hugging Face and llama.cpp: `b"aaa"` -> `[aa, a]`.
"""
from __future__ import annotations

import sys
from typing import Callable, NamedTuple

from .checks import no_token_for

NO_MERGE = sys.maxsize  # the rank of a pair that never merges
RankFn = Callable[[bytes, bytes], int]


class MergeStep(NamedTuple):
    """One merge of `merge_reference`: the pair merged, its rank, the parts after (display.py)."""
    pair: tuple[bytes, bytes]
    rank: int
    parts: tuple[bytes, ...]


def rank_function(encoder: dict[bytes, int], merges: dict | None) -> RankFn:
    """rank(a, b) under the `ranks` rule (`merges is None`) or the `pairs` rule."""
    if merges is None:
        get = encoder.get
        return lambda a, b: get(a + b, NO_MERGE)
    get_pair = merges.get
    return lambda a, b: get_pair((a, b), NO_MERGE)


def merge_reference(piece: bytes, rank: RankFn, trace: list | None = None) -> list[bytes]:
    """The textbook loop, to read: rank every adjacent pair, merge the lowest, repeat; ``trace``:
    a list that receives one ``MergeStep`` per merge, in order (for teaching).

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


def token_ids(parts: list[bytes], encoder: dict[bytes, int], unk_id: int | None) -> list[int]:
    """Parts -> their ids. subtle: some vocabularies (SmolLM2's) lack a few single bytes (control
    characters, bytes never valid in UTF-8): Hugging Face emits its unk token, llama.cpp fails;
    we emit `unk_id` when the vocabulary names one, else raise."""
    ids = [encoder.get(part, unk_id) for part in parts]
    if None in ids:
        raise no_token_for(parts[ids.index(None)])
    return ids
