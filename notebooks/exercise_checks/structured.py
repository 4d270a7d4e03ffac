"""Exercises of notebook 17 (structured output): one walk through a byte DFA, and the tokens a
state allows, found by brute force (the vocabulary index's definition)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .core import Exercise, as_ids, as_number, output_hint

LETTERS = b"abc"                                # the toy DFAs read only these bytes


def walk64(table, state, data, stop=True, before=False):
    """The state after `data` from `state`; -1 once a byte has no edge (the reference), or a bug:
    ``stop=False`` reads on from row -1 (NumPy wraps to the last row), ``before=True`` returns
    the state before the dead byte."""
    for b in data:
        nxt = int(table[state, b])
        if nxt < 0 and stop:
            return state if before else -1
        state = nxt
    return state


def allowed64(table, state, token_bytes, empty=False, first_only=False):
    """Ids whose bytes all walk from `state` without dying (empty tokens never; or a bug)."""
    out = []
    for i, b in enumerate(token_bytes):
        if not b:
            if empty:
                out.append(i)
            continue
        if (int(table[state, b[0]]) >= 0) if first_only else walk64(table, state, b) >= 0:
            out.append(i)
    return out


def dfa_case(seed, S):
    """A random byte DFA on S states over the letters a, b, c: table [S, 256], -1 = no edge."""
    rng = np.random.default_rng(seed)
    table = np.full((S, 256), -1, np.int64)
    for s in range(S):
        for c in LETTERS:
            if rng.random() < 0.6:
                table[s, c] = rng.integers(S)
    return table


def edges(table) -> str:
    parts = [f"{s}-{chr(c)}->{int(table[s, c])}" for s in range(len(table)) for c in LETTERS if table[s, c] >= 0]
    return f"a DFA of {len(table)} states (edges {', '.join(parts) or 'none'})"


def walk_case(seed, S, n):
    rng = np.random.default_rng(seed + 1)
    return dfa_case(seed, S), int(rng.integers(S)), bytes(rng.choice(list(LETTERS), n).tolist())


def tokens_case(seed, S, V):
    rng = np.random.default_rng(seed + 2)
    vocab = [bytes(rng.choice(list(LETTERS), int(rng.integers(0, 4))).tolist()) for _ in range(V)]
    return dfa_case(seed, S), int(rng.integers(S)), vocab


def judge_walk(fn, case):
    table, state, data = case
    want = walk64(table, state, data)
    got = as_number(fn(table.copy(), state, data), "a state (an int, -1 when the text dies)")
    if got != want:
        return (f"you returned {got:g}; the walk ends in {want}" if want >= 0 else
                f"you returned {got:g}; the walk dies (a byte with no edge: -1), so the answer is -1")
    return None


def judge_allowed(fn, case):
    table, state, vocab = case
    want = allowed64(table, state, vocab)
    got = sorted(set(as_ids(fn(table.copy(), state, list(vocab)))))
    if got != want:
        extra, missing = sorted(set(got) - set(want)), sorted(set(want) - set(got))
        if extra:
            i = extra[0]
            return (f"you allowed id {i} ({vocab[i]!r}), but its bytes cannot all be read from "
                    f"state {state}" if vocab[i] else f"you allowed id {i}, a token with no bytes")
        return f"you left out id {missing[0]} ({vocab[missing[0]]!r}), whose bytes all walk from state {state}"
    return None


def two_states() -> np.ndarray:
    """0 -a-> 1 -b-> 0, nothing else: "ab" loops, "aa" dies at its second byte."""
    t = np.full((2, 256), -1, np.int64)
    t[0, ord("a")], t[1, ord("b")] = 1, 0
    return t


WALK_CASES = ((two_states(), 0, b"ab"), (two_states(), 0, b"aa"), (two_states(), 0, b"aab"),
              (two_states(), 1, b""))
TOKEN_CASES = ((two_states(), 0, [b"a", b"ab", b"aa", b"", b"b", b"aba"]),
               (two_states(), 1, [b"b", b"ba", b"bb", b"c"]))

EXERCISES = [
    Exercise("dfa_walk", "dfa_walk(table [S, 256], state, data: bytes) -> int: the state after "
             "reading data's bytes one by one (table[s, b] is the next state), or -1 as soon as a "
             "byte has no edge (-1 in the table): the text left the pattern.", judge_walk,
             lambda c: f"{edges(c[0])}, state {c[1]}, data {c[2]!r}",
             st.builds(walk_case, st.integers(0, 999), st.integers(1, 4), st.integers(0, 5)),
             WALK_CASES,
             (output_hint("stop at the first -1: table[-1] is the LAST row in NumPy, so reading on "
                          "from -1 walks from the wrong state", lambda c: walk64(*c, stop=False)),
              output_hint("a dead end returns -1, not the state before it: the text has left the pattern",
                          lambda c: walk64(*c, before=True)))),
    Exercise("allowed_tokens", "allowed_tokens(table [S, 256], state, token_bytes: list of bytes) "
             "-> ids: every id whose bytes can ALL be read from `state` without reaching -1 "
             "(a token with no bytes is never allowed), in any order.", judge_allowed,
             lambda c: f"{edges(c[0])}, state {c[1]}, tokens {c[2]}",
             st.builds(tokens_case, st.integers(0, 999), st.integers(1, 4), st.integers(1, 6)),
             TOKEN_CASES,
             (output_hint("a token with no bytes is never allowed: it would leave the text as it is, forever",
                          lambda c: allowed64(*c, empty=True)),
              output_hint("walk every byte of the token, not only the first: a token may die half-way",
                          lambda c: allowed64(*c, first_only=True)))),
]
