"""Batched BPE: the merges of many pieces at once, in NumPy, one merge per piece per round.

bpe.py merges one piece at a time in Python (~1 µs of interpreter per merge). Here all pieces
(the distinct pre-tokens of a text not yet cached) live in one flat array of *symbol ids*, and
each round merges, in every piece at once, that piece's lowest-ranked adjacent pair (the leftmost
of equal ranks): exactly bpe.merge_reference's steps, so exactly its parts. A piece with no mergeable pair
left is done and leaves the arrays. With the merges (l, l) 1, (a, a) 2, (h, e) 3, (he, ll) 4,
(hell, o) 5::

    start     h e l l o | a a a
    round 1   h e ll o  | aa a     (l l in one piece; in the other, the leftmost a a)
    round 2   he ll o             (aa a has no rank: that piece is done and leaves)
    round 3   hell o
    round 4   hello               (rounds = the most merges any piece needs)

A pair's rank and merged symbol come from a sorted table of keys `left * S + right` (S symbols;
`np.searchsorted`), built once per vocabulary from either rule of bpe.py: `ranks` (every split
of every token t into two symbols: rank = merged = id of t) or `pairs` (each listed merge).
Symbols are the tokens (symbol id = token id) plus, as extra ids, the byte strings that BPE can
form but the vocabulary lacks (missing single bytes, a `pairs` result that is not a token).
After a merge only its two neighbouring pairs are looked up again; the first round's byte pairs
come from a dense 256 x 256 table.

subtle: the lowest rank and its leftmost position are found together: `rank << 32 | position`
packs both in one int64, so one `np.minimum.reduceat` over each piece's slice gives both.
"""
from __future__ import annotations

import numpy as np

NONE = (1 << 31) - 1  # the rank of a pair that never merges (every real rank must be below)


class BatchBPE:
    """`BatchBPE(encoder, merges)(pieces)` -> per piece, its parts' symbol ids (tuples).

    Ids >= `n_tokens` are extra symbols (no token): the caller handles those pieces itself.
    Raises ValueError when the vocabulary does not fit (duplicate ids, a rank >= 2**31 - 1)."""

    def __init__(self, encoder: dict[bytes, int], merges: dict[tuple[bytes, bytes], int] | None):
        if len(set(encoder.values())) != len(encoder):
            raise ValueError("batched BPE needs one token per id")
        symbols = dict(encoder)  # bytes -> symbol id
        self.n_tokens = max(encoder.values()) + 1
        self.extras: list[bytes] = []  # symbol n_tokens + k is extras[k]: not a token

        def symbol(b: bytes) -> int:
            if b not in symbols:
                symbols[b] = self.n_tokens + len(self.extras)
                self.extras.append(b)
            return symbols[b]

        self.byte_ids = np.array([symbol(bytes([x])) for x in range(256)], np.int64)  # [256]
        if merges is None:  # rank(a, b) = id of a + b, for every split of every token
            get = symbols.get
            rows = [(a, b, i, i) for t, i in encoder.items() for k in range(1, len(t))
                    if (a := get(t[:k])) is not None and (b := get(t[k:])) is not None]
        else:
            rows = [(symbol(a), symbol(b), r, symbol(a + b)) for (a, b), r in merges.items()]
        rows = rows or [(-1, 0, 0, 0)]  # (a key no pair has: keeps the table non-empty)
        table = np.array(rows, np.int64)  # [M, 4] left, right, rank, merged
        if table[:, 2].max() >= NONE or table[:, 2].min() < 0:
            raise ValueError(f"batched BPE needs ranks in [0, {NONE})")
        self.n_symbols = self.n_tokens + len(self.extras)
        if self.n_symbols >= 1 << 31:  # subtle: keys left * S + right must fit in an int64
            raise ValueError(f"batched BPE needs ids below 2**31, got {self.n_symbols - 1}")
        keys = table[:, 0] * self.n_symbols + table[:, 1]  # [M]
        order = np.argsort(keys)  # [M]
        self.keys, self.ranks, self.merged = keys[order], table[order, 2], table[order, 3]  # [M]
        first = self.byte_ids[:, None] * self.n_symbols + self.byte_ids[None, :]  # [256, 256]
        self.byte_rank, self.byte_merged = self.lookup(first.ravel())  # [65536] each

    def lookup(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pair keys `left * S + right` -> (rank, or NONE; merged symbol id)."""
        at = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)  # [K]
        found = self.keys[at] == keys  # [K] bool
        return np.where(found, self.ranks[at], NONE), self.merged[at]  # [K], [K] int64

    def __call__(self, pieces: list[bytes]) -> list[tuple[int, ...]]:
        """Every piece's parts, as symbol ids (pieces must be non-empty)."""
        if not pieces:
            return []
        raw = np.frombuffer(b"".join(pieces), np.uint8).astype(np.int64)  # [N] bytes
        lengths = np.fromiter(map(len, pieces), np.int64, len(pieces))  # [P]
        if not lengths.all() or len(raw) >= 1 << 32:  # positions are packed in 32 bits
            raise ValueError("batched BPE takes non-empty pieces, under 4 GB in all")
        ids = self.byte_ids[raw]  # [N] symbol ids of all pieces, back to back
        rank = np.full(len(ids), NONE, np.int64)  # [N] rank of pair (i, i + 1), NONE at the end
        merged = np.zeros(len(ids), np.int64)  # [N] symbol of that pair merged
        rank[:-1], merged[:-1] = self.lookup_bytes(raw[:-1] * 256 + raw[1:])  # [N - 1]
        ends = np.cumsum(lengths)  # [P] one past each piece's last part
        rank[ends - 1] = NONE  # subtle: no pair across two pieces
        piece = np.arange(len(pieces))  # [P] the input index of each piece still merging
        done_ids, done_lengths, done_piece = [], [], []
        while len(piece):
            starts = ends - lengths  # [P]
            packed = rank << 32 | np.arange(len(ids), dtype=np.int64)  # [N] rank, then position
            best = np.minimum.reduceat(packed, starts)  # [P] lowest rank, leftmost
            live = best >> 32 != NONE  # [P] bool: has a pair to merge
            live_parts = np.repeat(live, lengths)  # [N] bool
            done_ids.append(ids[~live_parts])  # [N_done]
            done_lengths.append(lengths[~live])  # [P_done]
            done_piece.append(piece[~live])  # [P_done]
            j, start, end = best[live] & 0xFFFFFFFF, starts[live], ends[live]  # [A] each
            ids[j] = merged[j]  # [A] the merge: left part becomes the merged symbol
            left = j[j > start] - 1  # [A_l] the pairs (previous part, merged part)
            rank[left], merged[left] = self.lookup(ids[left] * self.n_symbols + ids[left + 1])
            rank[j] = NONE  # [A] the pairs (merged part, next part): none if it is the last,
            right = j[j + 2 < end]  # [A_r] else the part after j + 1, which is merged away
            rank[right], merged[right] = self.lookup(ids[right] * self.n_symbols + ids[right + 2])
            live_parts[j + 1] = False  # the right part of each merge is gone
            ids, rank, merged = ids[live_parts], rank[live_parts], merged[live_parts]  # [N']
            lengths, piece = lengths[live] - 1, piece[live]  # [P']
            ends = np.cumsum(lengths)  # [P']
        flat = np.concatenate(done_ids).tolist()  # every piece's ids, in the order they finished
        cuts = np.cumsum(np.concatenate(done_lengths)).tolist()  # [P]
        parts = list(map(tuple, map(flat.__getitem__, map(slice, [0, *cuts[:-1]], cuts))))
        order = np.argsort(np.concatenate(done_piece)).tolist()  # [P] back to input order
        return list(map(parts.__getitem__, order))

    def lookup_bytes(self, pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`lookup` for pairs of single bytes given as `left * 256 + right` (a dense table)."""
        return self.byte_rank[pairs], self.byte_merged[pairs]  # [K], [K]
