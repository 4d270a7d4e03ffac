"""Variants of the exercises of notebook 17 (a byte DFA's walk, the tokens a state allows)."""
import numpy as np

from .common import SOLUTIONS as S, Attempt, forgets_return


def walk_on_from_dead(table, state, data):        # never checks for -1: row -1 is the last row
    for b in data:
        state = int(table[state, b])
    return state


def walk_returns_last_live(table, state, data):
    for b in data:
        if table[state, b] < 0:
            return state
        state = int(table[state, b])
    return state


def walk_numpy_int(table, state, data):
    for b in data:
        state = table[state, b]
        if state < 0:
            return np.int64(-1)
    return np.int64(state)


VARIANTS = {
    "dfa_walk": (
        [Attempt("the solution", S["dfa_walk"]),
         Attempt("a NumPy int", walk_numpy_int),
         Attempt("recursive", lambda t, s, d: s if not d else -1 if t[s, d[0]] < 0 else S["dfa_walk"](t, int(t[s, d[0]]), d[1:]))],
        [Attempt("reads on from -1", walk_on_from_dead, hint="stop at the first -1"),
         Attempt("returns the state before the dead end", walk_returns_last_live, hint="a dead end returns -1"),
         Attempt("returns the start state", lambda t, s, d: s),
         forgets_return(S["dfa_walk"])]),
    "allowed_tokens": (
        [Attempt("the solution", S["allowed_tokens"]),
         Attempt("an array, largest id first", lambda t, s, v: np.array(S["allowed_tokens"](t, s, v)[::-1], np.int32)),
         Attempt("a tuple", lambda t, s, v: tuple(S["allowed_tokens"](t, s, v)))],
        [Attempt("allows the empty token", lambda t, s, v: [i for i, b in enumerate(v) if S["dfa_walk"](t, s, b) >= 0],
                 hint="a token with no bytes"),
         Attempt("checks the first byte only", lambda t, s, v: [i for i, b in enumerate(v) if b and t[s, b[0]] >= 0],
                 hint="walk every byte"),
         Attempt("allows every token", lambda t, s, v: list(range(len(v)))),
         forgets_return(S["allowed_tokens"])]),
}
