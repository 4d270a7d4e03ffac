"""What generation asks of a constraint: the tokens allowed now, and where each one leads.

    g = Regex(r"[0-9]{1,3}").guide(tokenizer)      # or Guide.build(pattern, token_bytes, eos_ids)
    state = g.start
    mask = g.allowed(state)                        # [V] bool: mask the logits with it
    state = g.advance(state, token_id)             # after drawing an allowed token

End-of-text ids are allowed only in accepting states (the text so far matches the whole
pattern); drawing one there leaves the state as it is (nothing more is appended).
``is_finished(s)``: accepting and no token can extend the text, so generation must stop. A
guide is built once per (vocabulary, pattern, eos ids) and kept in a small LRU cache keyed by a
digest of the token bytes. Note: a state may allow no token at all when the vocabulary cannot
spell any continuation (a toy vocabulary); a byte-level vocabulary always can.
"""
from __future__ import annotations

import hashlib
from collections import OrderedDict

import numpy as np

from .automaton import build_dfa, build_nfa
from .byte_dfa import build_byte_dfa
from .index import fast_index, token_bytes_of
from .regex import parse

CACHE_SIZE = 16
_CACHE: OrderedDict = OrderedDict()


class Regex:
    """A regular expression the whole generated text must match (checked when built)."""

    def __init__(self, pattern: str):
        self.tree = parse(pattern)             # ValueError names an unsupported feature
        self.pattern = pattern

    def guide(self, tokenizer, eos_ids=None) -> "Guide":
        """The guide over this tokenizer's vocabulary; `eos_ids` default: its eos_id."""
        if eos_ids is None:
            eos_ids = [] if getattr(tokenizer, "eos_id", None) is None else [tokenizer.eos_id]
        return Guide.build(self.pattern, token_bytes_of(tokenizer), eos_ids)

    def __repr__(self) -> str:
        return f"Regex({self.pattern!r})"


def vocabulary_digest(token_bytes) -> bytes:
    h = hashlib.sha256()
    for data in token_bytes:
        h.update(len(data).to_bytes(4, "little"))
        h.update(data)
    return h.digest()


class Guide:
    """The byte DFA of a pattern and its vocabulary index (see index.py)."""

    def __init__(self, pattern: str, dfa, index, eos_ids: np.ndarray, vocab_size: int):
        self.pattern, self.dfa, self.index = pattern, dfa, index
        self.eos_ids, self.vocab_size = eos_ids, vocab_size
        self.start = dfa.start
        self._masks: dict[int, np.ndarray] = {}

    @classmethod
    def build(cls, pattern: str, token_bytes, eos_ids) -> "Guide":
        """The guide of `pattern` over a vocabulary of `token_bytes` (id -> bytes; b"": never
        allowed), `eos_ids` allowed in accepting states; cached."""
        tree = parse(pattern)
        token_bytes = list(token_bytes)
        if not token_bytes or not all(isinstance(b, bytes) for b in token_bytes):
            raise TypeError("token_bytes must be a non-empty list of bytes, one per token id")
        V = len(token_bytes)
        eos = sorted({int(i) for i in eos_ids})
        if any(not 0 <= i < V for i in eos):
            raise ValueError(f"eos_ids must be token ids in [0, {V}), got {eos}")
        key = (vocabulary_digest(token_bytes), pattern, tuple(eos))
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
        dfa = build_byte_dfa(build_dfa(build_nfa(tree)))
        if dfa.n_states == 0:
            raise ValueError(f"regex {pattern!r} matches no text at all")
        blank = [b"" if i in eos else b for i, b in enumerate(token_bytes)]  # eos: never walked
        guide = cls(pattern, dfa, fast_index(dfa, blank), np.array(eos, np.int64), V)
        _CACHE[key] = guide
        if len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
        return guide

    def _check(self, state) -> int:
        if not isinstance(state, (int, np.integer)) or not 0 <= state < self.dfa.n_states:
            raise ValueError(f"not a state of this guide: {state!r} (0..{self.dfa.n_states - 1})")
        return int(state)

    def is_accepting(self, state) -> bool:
        return bool(self.dfa.accepting[self._check(state)])

    def is_finished(self, state) -> bool:
        """Accepting, and no token can extend the text."""
        return self.is_accepting(state) and len(self.index[int(state)][0]) == 0

    def allowed(self, state) -> np.ndarray:
        """[V] bool, read-only: the ids that may be drawn in `state` (eos only if accepting)."""
        state = self._check(state)
        if state not in self._masks:
            mask = np.zeros(self.vocab_size, dtype=bool)                  # [V]
            mask[self.index[state][0]] = True
            if self.dfa.accepting[state]:
                mask[self.eos_ids] = True
            mask.flags.writeable = False
            self._masks[state] = mask
        return self._masks[state]

    def advance(self, state, token_id) -> int:
        """The state after drawing `token_id` (an eos id in an accepting state: the same)."""
        state = self._check(state)
        if not isinstance(token_id, (int, np.integer)) or isinstance(token_id, bool):
            raise TypeError(f"a token id must be an int, got {type(token_id).__name__}")
        ids, nexts = self.index[state]
        pos = int(np.searchsorted(ids, token_id))
        if pos < len(ids) and ids[pos] == token_id:
            return int(nexts[pos])
        if self.dfa.accepting[state] and token_id in self.eos_ids:
            return state
        raise ValueError(f"token {token_id!r} is not allowed in state {state} of regex "
                         f"{self.pattern!r}")

    def nbytes(self) -> int:
        """The index's memory: the table and the per-state id and next-state arrays."""
        return self.dfa.table.nbytes + sum(a.nbytes + b.nbytes for a, b in self.index)

    def __repr__(self) -> str:
        return f"Guide({self.pattern!r}, states={self.dfa.n_states}, vocab_size={self.vocab_size})"
