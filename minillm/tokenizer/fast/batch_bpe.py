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

A pair's rank and merged symbol are found by the rule of bpe.py (`ranks` or `pairs`) the first
time the pair is seen (all of a round's new pairs at once), and remembered under the key
`left << 32 | right` in a sorted array that each round searches (`np.searchsorted`: no Python
per pair, unlike a dict). Symbols are the tokens
(symbol id = token id) plus, as extra ids, the byte strings BPE can form that the vocabulary
lacks (a missing single byte, a `pairs` result that is not a token), numbered as they are met.
After a merge only its two neighbouring pairs are looked up again.

subtle: no table of every pair is built up front. 1 MB of English meets ~23,000 distinct pairs;
a table of all splits of all tokens (GPT-2: 108,000 of 270,000 splits) took 0.13 s to build,
more than batched BPE then saves on that megabyte, so a fresh tokenizer could not use it.

subtle: the lowest rank and its leftmost position are found together: `rank << 32 | position`
packs both in one int64, so one `np.minimum.reduceat` over each piece's slice gives both.
"""
from __future__ import annotations

import operator
from itertools import compress, repeat

import numpy as np

NONE = (1 << 31) - 1  # the rank of a pair that never merges (every real rank must be below)
LOW = (1 << 32) - 1  # the low half of a packed int64 (`rank << 32 | symbol`, `left << 32 | right`)
PAIRS = 1 << 18  # pairs remembered (then forgotten all at once): 1 MB of English meets ~23,000


class BatchBPE:
    """`BatchBPE(encoder, merges)(pieces)` -> per piece, its parts' symbol ids (tuples).

    Ids >= `n_tokens` are extra symbols (no token; `symbols[i]` is the bytes of any symbol i):
    the caller handles those pieces itself. Raises ValueError when the vocabulary does not fit
    (duplicate ids, an id or a rank >= 2**31 - 1)."""

    def __init__(self, encoder: dict[bytes, int], merges: dict[tuple[bytes, bytes], int] | None):
        self.n_tokens = max(encoder.values()) + 1
        self.symbols: list[bytes | None] = [None] * self.n_tokens  # symbol id -> its bytes
        for b, i in encoder.items():
            self.symbols[i] = b
        if self.n_tokens - self.symbols.count(None) != len(encoder):
            raise ValueError("batched BPE needs one token per id")
        ranks = merges.values() if merges else [0]  # (`ranks` rule: rank = a token's id)
        most = self.n_tokens + 256 + len(merges or ())  # symbols: tokens + extras, at most
        if max(ranks) >= NONE or min(ranks) < 0 or most >= NONE:
            raise ValueError(f"batched BPE needs ids and ranks in [0, {NONE})")
        self.encoder, self.merges, self.extra_ids = encoder, merges, {}  # extra_ids: bytes -> id
        self.keys = np.full(1, -1, np.int64)  # [L] the learnt pairs `left << 32 | right`, sorted
        # (-1 is no pair: it keeps the arrays non-empty for the search)
        self.values = np.full(1, NONE << 32, np.int64)  # [L] each one's `rank << 32 | merged`
        self.byte_ids = np.array([self.symbol(bytes([x])) for x in range(256)], np.int64)  # [256]

    @property
    def extras(self) -> list[bytes]:
        """The extra symbols met so far: symbol `n_tokens + k` is `extras[k]` (not a token)."""
        return self.symbols[self.n_tokens:]

    def symbol(self, b: bytes) -> int:
        """The symbol id of the byte string `b` (a new extra id the first time one is met)."""
        i = self.encoder.get(b)
        if i is None:
            i = self.extra_ids.get(b)
            if i is None:
                i = self.extra_ids[b] = len(self.symbols)
                self.symbols.append(b)
        return i

    def lookup(self, left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pairs of symbol ids [K] -> (rank, or NONE; merged symbol id) [K] each. Each distinct
        pair is found in the learnt pairs by a binary search; those never seen before are found
        all at once (`learn`) and put in their sorted place."""
        keys, where = np.unique(left << 32 | right, return_inverse=True)  # [U] sorted, [K]
        at = np.searchsorted(self.keys, keys)  # [U] where each key is, or would go
        near = np.minimum(at, len(self.keys) - 1)  # [U] (a key past the last: compare with it)
        packed = self.values[near]  # [U] `rank << 32 | merged`, if the key is there
        new = self.keys[near] != keys  # [U] bool: never seen
        if new.any():
            packed[new] = self.learn(keys[new], at[new])
        packed = packed[where]  # [K]
        return packed >> 32, packed & LOW  # [K], [K]

    def learn(self, keys: np.ndarray, at: np.ndarray) -> np.ndarray:
        """Add these new pairs [U] (distinct, sorted; `at`: their places in `keys`) to the
        learnt pairs and return their packed values [U], by
        bpe.py's rule: (`ranks`) rank = merged = the id of the token a + b; (`pairs`) rank =
        the pair's place in the merge list, merged = the symbol of a + b. Each step is a `map`
        run from C over all the pairs."""
        a = list(map(self.symbols.__getitem__, (keys >> 32).tolist()))  # [U] left bytes
        b = list(map(self.symbols.__getitem__, (keys & LOW).tolist()))  # [U] right bytes
        ab = list(map(operator.add, a, b))  # [U] the merged bytes
        if self.merges is None:
            rank = np.fromiter(map(self.encoder.get, ab, repeat(-1)), np.int64, len(ab))  # [U]
            merged = rank  # [U]
        else:
            rank = np.fromiter(map(self.merges.get, zip(a, b), repeat(-1)), np.int64, len(ab))
            merged = np.zeros(len(ab), np.int64)  # [U]
            merged[rank >= 0] = list(map(self.symbol, compress(ab, rank >= 0)))
        value = np.where(rank >= 0, rank << 32 | merged, NONE << 32)  # [U] (-1: no merge)
        if len(self.keys) + len(keys) > PAIRS:  # (a bound, as memo.py's: forget them all)
            self.keys, self.values = keys, value
        else:  # subtle: inserting sorted keys at their search places keeps `keys` sorted
            self.keys = np.insert(self.keys, at, keys)  # [L + U]
            self.values = np.insert(self.values, at, value)  # [L + U]
        return value

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
        rank[:-1], merged[:-1] = self.lookup(ids[:-1], ids[1:])  # [N - 1]
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
            j, start, end = best[live] & LOW, starts[live], ends[live]  # [A] each
            ids[j] = merged[j]  # [A] the merge: left part becomes the merged symbol
            left = j[j > start] - 1  # [A_l] the pairs (previous part, merged part)
            rank[left], merged[left] = self.lookup(ids[left], ids[left + 1])
            rank[j] = NONE  # [A] the pairs (merged part, next part): none if it is the last,
            right = j[j + 2 < end]  # [A_r] else the part after j + 1, which is merged away
            rank[right], merged[right] = self.lookup(ids[right], ids[right + 2])
            live_parts[j + 1] = False  # the right part of each merge is gone
            ids, rank, merged = ids[live_parts], rank[live_parts], merged[live_parts]  # [N']
            lengths, piece = lengths[live] - 1, piece[live]  # [P']
            ends = np.cumsum(lengths)  # [P']
        flat = np.concatenate(done_ids).tolist()  # every piece's ids, in the order they finished
        cuts = np.cumsum(np.concatenate(done_lengths)).tolist()  # [P]
        parts = list(map(tuple, map(flat.__getitem__, map(slice, [0, *cuts[:-1]], cuts))))
        order = np.argsort(np.concatenate(done_piece)).tolist()  # [P] back to input order
        return list(map(parts.__getitem__, order))
