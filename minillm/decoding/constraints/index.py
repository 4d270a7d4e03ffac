"""The vocabulary index (Willard & Louf, 2023): for each byte-DFA state, the tokens it allows.

    allowed(s) = { t : walk(s, bytes(t)) is live },   next(s, t) = walk(s, bytes(t))

A token is allowed when every one of its bytes can be read from s without reaching a dead end
(the DFA keeps only live states, so "not -1" is the test); the end-of-text ids are added at
sampling time, in accepting states only (guide.py). A token with no bytes (a special token) is
never allowed: it would leave the text unchanged forever. Two forms, tested equal:
``walk_index`` reads every token through the DFA from every state, one byte at a time (the
definition); ``fast_index`` does the same walk for a block of states and all tokens at once,
one byte column at a time, over a [V, Lmax] byte matrix with the tokens longest first, so
column j touches only the tokens longer than j. Example: DFA of ``[0-9]{1,3}`` and tokens
[b"1", b"23", b"a", b"4567"] -> state 0 allows ids [0, 1] leading to states [1, 2].
"""
from __future__ import annotations

import numpy as np

from .byte_dfa import ByteDFA

BLOCK_CELLS = 1 << 22       # states x tokens walked at once by fast_index (16 MiB of int32)


def token_bytes_of(tokenizer) -> list[bytes]:
    """Each id's bytes (`tokenizer.token_bytes(i)`: a SentencePiece ▁ is a space, a <0xNN>
    token its byte); special tokens and ids without a token -> b"" (never allowed)."""
    specials = set(getattr(tokenizer, "special_tokens", {}).values())
    table = getattr(tokenizer, "id_to_bytes", None)
    if table is None:
        raise TypeError(f"token_bytes_of needs a minillm tokenizer, got {type(tokenizer).__name__}")
    return [b"" if i in specials or table[i] is None else tokenizer.token_bytes(i)
            for i in range(len(table))]


def walk_index(dfa: ByteDFA, token_bytes: list[bytes]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The definition: per state, (allowed ids [n] int32 ascending, their next states [n] int32)."""
    index = []
    for state in range(dfa.n_states):
        ids, nexts = [], []
        for token_id, data in enumerate(token_bytes):
            end = dfa.walk(state, data) if data else -1
            if end >= 0:
                ids.append(token_id)
                nexts.append(end)
        index.append((np.array(ids, np.int32), np.array(nexts, np.int32)))
    return index


def token_matrix(token_bytes: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The non-empty tokens, longest first: (ids [N], lengths [N], bytes [N, Lmax] uint8)."""
    lengths = np.array([len(b) for b in token_bytes], dtype=np.int64)        # [V]
    ids = np.flatnonzero(lengths > 0)
    ids = ids[np.argsort(-lengths[ids], kind="stable")]                       # [N] longest first
    width = int(lengths.max()) if len(ids) else 0
    matrix = np.zeros((len(ids), width), dtype=np.uint8)                      # [N, Lmax]
    for row, token_id in enumerate(ids):
        data = token_bytes[token_id]
        matrix[row, :len(data)] = np.frombuffer(data, dtype=np.uint8)
    return ids, lengths[ids], matrix


def fast_index(dfa: ByteDFA, token_bytes: list[bytes]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The same index as walk_index, every token walked at once for a block of states."""
    ids, lengths, matrix = token_matrix(token_bytes)
    # subtle: row -1 of the padded table is all -1, so a dead walk (-1) indexes it and stays dead
    table = np.vstack([dfa.table, np.full((1, 256), -1, np.int32)])           # [S + 1, 256]
    longer = [int(np.sum(lengths > j)) for j in range(matrix.shape[1])]       # tokens longer than j
    order = np.argsort(ids, kind="stable")                                    # back to id order
    block = max(1, BLOCK_CELLS // max(1, len(ids)))
    index = []
    for first in range(0, dfa.n_states, block):
        states = np.arange(first, min(first + block, dfa.n_states), dtype=np.int32)
        walk = np.repeat(states[:, None], len(ids), axis=1)                   # [b, N]
        for j, n in enumerate(longer):
            walk[:, :n] = table[walk[:, :n], matrix[:n, j]]                   # [b, n] one byte on
        for row in walk[:, order]:                                            # [N] in id order
            live = row >= 0
            index.append((ids[order][live].astype(np.int32), row[live].astype(np.int32)))
    return index
