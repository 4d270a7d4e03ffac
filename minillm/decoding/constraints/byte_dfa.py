"""The character DFA -> a DFA over bytes 0..255, with only its live states kept.

Tokens are bytes, and a token may end inside a UTF-8 character, so the index walks bytes.
Each character edge [lo, hi] -> t becomes byte paths: the range is cut where the encoded
length changes (U+007F, U+07FF, U+FFFF) and then where a continuation byte would not run over
its whole 0x80..0xBF, until each piece is a product of byte ranges:

    [U+0800, U+FFFF] (no surrogates) -> E0 [A0-BF] [80-BF] | [E1-EC] [80-BF] [80-BF]
                                        | ED [80-9F] [80-BF] | [EE-EF] [80-BF] [80-BF]

These paths (their shared tails shared) form a byte NFA; the subset construction over bytes
(the same cut-into-intervals step as for characters) makes it deterministic. A state is *live*
if an accepting state can be reached from it; edges into other states are dropped (-1), so
"still live" is simply "the walk did not reach -1". Example: for ``é+`` the table has
start --C3--> 1 --A9--> 2 (accepting) --C3--> 1.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .automaton import CharDFA, MAX_DFA_STATES, intervals

LENGTH_BOUNDS = (0x7F, 0x7FF, 0xFFFF)   # the last code point of 1-, 2- and 3-byte UTF-8


def utf8_sequences(lo: int, hi: int) -> list[list[tuple[int, int]]]:
    """The code points lo..hi (no surrogates) as byte-range sequences, each a product:
    `utf8_sequences(0x41, 0x5A) == [[(0x41, 0x5A)]]`; `(0xE9, 0xE9) -> [[(0xC3, 0xC3), (0xA9, 0xA9)]]`."""
    out, todo = [], [(lo, hi)]
    while todo:
        lo, hi = todo.pop()
        cut = next((b for b in LENGTH_BOUNDS if lo <= b < hi), None)
        if cut is None:                          # one encoded length: cut at continuation bytes
            for i in (1, 2, 3):
                m = (1 << (6 * i)) - 1           # the code point's bits held by the last i bytes
                if lo & ~m != hi & ~m and lo & m != 0:
                    cut = lo | m                 # lo's tail does not start at 80..80
                    break
                if lo & ~m != hi & ~m and hi & m != m:
                    cut = (hi & ~m) - 1          # hi's tail does not end at BF..BF
                    break
        if cut is not None:
            todo += [(cut + 1, hi), (lo, cut)]
            continue
        out.append(list(zip(chr(lo).encode("utf-8"), chr(hi).encode("utf-8"))))
    return out


@dataclass
class ByteDFA:
    table: np.ndarray           # [S, 256] int32: the next state, -1 where the text is dead
    accepting: np.ndarray       # [S] bool
    start: int = 0

    @property
    def n_states(self) -> int:
        return self.table.shape[0]

    def walk(self, state: int, data: bytes) -> int:
        """The state after `data` from `state` (-1: a dead end on the way)."""
        for b in data:
            state = int(self.table[state, b])
            if state < 0:
                return -1
        return state

    def fullmatch(self, data: bytes) -> bool:
        end = self.walk(self.start, data) if self.n_states else -1
        return end >= 0 and bool(self.accepting[end])


def byte_nfa(dfa: CharDFA) -> tuple[list, int]:
    """Byte edges [(lo, hi, target)] per state: the char DFA's states first, then the states
    inside a character, shared by (byte-range tail, target)."""
    n = len(dfa.edges)
    edges: list[list] = [[] for _ in range(n)]
    tails: dict = {}

    def tail_state(tail: tuple, target: int) -> int:   # a state whose bytes `tail` lead to target
        if not tail:
            return target
        key = (tail, target)
        if key not in tails:
            after = tail_state(tail[1:], target)
            tails[key] = len(edges)
            edges.append([(tail[0][0], tail[0][1], after)])
        return tails[key]

    for state, row in enumerate(dfa.edges):
        for lo, hi, target in row:
            for seq in utf8_sequences(lo, hi):
                edges[state].append((seq[0][0], seq[0][1], tail_state(tuple(seq[1:]), target)))
    return edges, n


def build_byte_dfa(dfa: CharDFA) -> ByteDFA:
    """Subset construction over bytes, then only the live states kept (start = 0)."""
    edges, n = byte_nfa(dfa)
    start = frozenset([dfa.start])
    number, subsets, rows = {start: 0}, [start], []
    while len(rows) < len(subsets):
        labelled = [(((lo, hi),), t) for s in subsets[len(rows)] for lo, hi, t in edges[s]]
        row = []
        for lo, hi, targets in intervals(labelled):
            if targets not in number:
                if len(subsets) >= MAX_DFA_STATES:
                    raise ValueError(f"the regex is too large: over {MAX_DFA_STATES} byte DFA states")
                number[targets] = len(subsets)
                subsets.append(targets)
            row.append((lo, hi, number[targets]))
        rows.append(row)
    table = np.full((len(rows), 256), -1, dtype=np.int32)          # [S, 256]
    for state, row in enumerate(rows):
        for lo, hi, target in row:
            table[state, lo:hi + 1] = target
    accepting = np.array([any(s in dfa.accepting for s in subset if s < n) for subset in subsets])
    return minimise(prune(table, accepting))


def live_states(table: np.ndarray, accepting: np.ndarray) -> np.ndarray:
    """[S] bool: the states from which an accepting state can be reached (backwards search)."""
    sources = [[] for _ in range(len(table))]
    for s, t in zip(*np.nonzero(table >= 0)):
        sources[int(table[s, t])].append(int(s))
    live = accepting.copy()
    todo = [int(s) for s in np.flatnonzero(accepting)]
    while todo:
        for s in sources[todo.pop()]:
            if not live[s]:
                live[s] = True
                todo.append(s)
    return live


def prune(table: np.ndarray, accepting: np.ndarray) -> ByteDFA:
    """Drop the dead states and the edges into them; renumber the rest in order (start stays 0,
    or there are no states at all when the pattern matches nothing)."""
    live = live_states(table, accepting)
    if not live[0]:
        return ByteDFA(np.zeros((0, 256), np.int32), np.zeros(0, bool))
    renumber = np.where(live, np.cumsum(live) - 1, -1).astype(np.int32)    # [S]
    kept = table[live]                                                      # [S', 256]
    new = np.where(kept >= 0, renumber[np.maximum(kept, 0)], -1).astype(np.int32)
    return ByteDFA(new, accepting[live].copy())


def minimise(dfa: ByteDFA) -> ByteDFA:
    """Merge states no byte string tells apart (Moore's partition refinement): start from
    {accepting, not}, split a block while two of its states go, on some byte, to different
    blocks (-1, dead, a block of its own); the fewer states, the smaller the index."""
    if dfa.n_states == 0:
        return dfa
    block = dfa.accepting.astype(np.int64)                               # [S]
    while True:
        seen = np.where(dfa.table >= 0, block[np.maximum(dfa.table, 0)], -1)   # [S, 256]
        signature = np.concatenate([block[:, None], seen], axis=1)       # [S, 257]
        _, first, new = np.unique(signature, axis=0, return_index=True, return_inverse=True)
        new = new.reshape(-1)
        if len(first) == len(np.unique(block)):
            break
        block = new
    order = np.argsort(first)              # number the blocks by their first state: start -> 0
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    block = rank[new]                                                    # [S]
    reps = np.sort(first)                                                # one state per block
    table = np.where(dfa.table[reps] >= 0, block[np.maximum(dfa.table[reps], 0)], -1)
    return ByteDFA(table.astype(np.int32), dfa.accepting[reps].copy())
