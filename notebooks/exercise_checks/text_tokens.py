"""Exercises of notebooks 01 (BPE), 02 (embeddings) and 08 (context window, cost)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from minillm.tokenizer.bpe import NO_MERGE, merge_reference

from .core import Exercise, Wrong, arrays_differ, as_array, as_ids, as_number, fmt, kind, output_hint


def bar(parts) -> str:
    """[b'a', b'bc'] -> 'a|bc'."""
    return "|".join(p.decode("utf-8", "replace") for p in parts)


def show_ranks(ranks) -> str:
    return "{" + ", ".join(f"{t.decode()}: {r}" for t, r in sorted(ranks.items(), key=lambda kv: kv[1])) + "}"


def merge_once(parts: list[bytes], ranks: dict[bytes, int]) -> list[bytes]:
    """Reference: merge the leftmost adjacent pair whose concatenation has the lowest rank."""
    pair_ranks = [ranks.get(a + b, NO_MERGE) for a, b in zip(parts, parts[1:])]
    if not pair_ranks or min(pair_ranks) == NO_MERGE:
        return list(parts)
    i = pair_ranks.index(min(pair_ranks))                   # the leftmost of equal ranks
    return [*parts[:i], parts[i] + parts[i + 1], *parts[i + 2:]]


def first_mergeable(parts, ranks) -> list[bytes]:
    """The bug of ignoring the ranks' order: merge the first adjacent pair that has a rank."""
    for i, (a, b) in enumerate(zip(parts, parts[1:])):
        if a + b in ranks:
            return [*parts[:i], a + b, *parts[i + 2:]]
    return list(parts)


ALPHABET = [b"a", b"b", b"c", b"ab", b"bc"]
MERGED = sorted({x + y for x in ALPHABET for y in ALPHABET})
RANKS = st.lists(st.sampled_from(MERGED), unique=True, max_size=8).map(
    lambda toks: {t: r for r, t in enumerate(toks)})


def as_parts(got, what: str = "parts") -> list[bytes]:
    """A list or tuple of bytes objects, else Wrong."""
    if not isinstance(got, (list, tuple)) or not all(isinstance(p, bytes) for p in got):
        raise Wrong(f"you returned {kind(got)}{types_of(got)}; expected a list of bytes {what} "
                    f"like [b'ab', b'c']")
    return list(got)


def types_of(got) -> str:
    if isinstance(got, (list, tuple)) and got:
        return " holding " + ", ".join(sorted({type(p).__name__ for p in got}))
    return ""


def judge_merge_step(fn, case):
    parts, ranks = case
    got, want = as_parts(fn(list(parts), dict(ranks))), merge_once(parts, ranks)
    if got != want:
        return (f"you returned {bar(got)}; merging the lowest-ranked adjacent pair, once (the "
                f"leftmost if it occurs twice), gives {bar(want)}")
    return None


def judge_merge(fn, case):
    word, ranks = case
    want = merge_reference(word, lambda a, b: ranks.get(a + b, NO_MERGE))
    got = as_parts(fn(word, dict(ranks)))
    if got != want:
        return (f"you returned {bar(got)}; merging the lowest-ranked pair again and again until "
                f"none is in the ranks gives {bar(want)}")
    return None


def judge_lookup(fn, case):
    wte, ids = case
    want = wte[ids]
    got = as_array(fn(wte.copy(), np.array(ids)), want.shape, "rows [T, C]")
    if arrays_differ(got, want):
        return f"you returned {got.tolist()}; row i of wte for each id i gives {want.tolist()}"
    return None


def judge_cosine(fn, case):
    a, b = case
    want = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
    got = as_number(fn(a.copy(), b.copy()), "the cosine, a number")
    if arrays_differ(got, want):
        return f"you returned {fmt(got)}; a·b / (|a| |b|) = {fmt(want)} (the cosine ignores lengths)"
    return None


def judge_window(fn, case):
    ids, n_ctx = case
    want = ids[-n_ctx:]
    got = as_ids(fn(list(ids), n_ctx))
    if got != want:
        return f"you returned {got}; the model can only read the last {n_ctx}: {want}"
    return None


def judge_cost(fn, case):
    n_in, n_out, p_in, p_out = case
    want = n_in / 1e6 * p_in + n_out / 1e6 * p_out
    got = as_number(fn(n_in, n_out, p_in, p_out), "the cost, a number")
    if arrays_differ(got, want, 1e-9):
        return (f"you returned {fmt(got, 6)}; {n_in}/10⁶·{p_in} + {n_out}/10⁶·{p_out} = "
                f"{fmt(want, 6)}")
    return None


def vectors(n):
    return st.lists(st.integers(-9, 9), min_size=n, max_size=n).map(lambda v: np.array(v, float))


EXERCISES = [
    Exercise("bpe_merge_step",
             "merge_step(parts, ranks) -> new parts: merge the adjacent pair (a, b) whose a + b has "
             "the lowest rank in ranks (the leftmost if tied); no pair in ranks -> parts unchanged.",
             judge_merge_step, lambda c: f"parts {bar(c[0])}, ranks {show_ranks(c[1])}",
             st.tuples(st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=6), RANKS),
             (([b"a", b"b", b"c", b"a", b"b"], {b"bc": 0, b"ab": 1}),
              ([b"a", b"b"], {}), ([b"a", b"b", b"a", b"b"], {b"ab": 3})),
             (output_hint("take the pair with the LOWEST rank, not the first pair that has a rank",
                          lambda c: first_mergeable(*c)),)),
    Exercise("bpe_merge",
             "bpe(word, ranks) -> parts: start from single bytes and repeat the merge step until "
             "no adjacent pair is in ranks.",
             judge_merge, lambda c: f"word {c[0].decode()}, ranks {show_ranks(c[1])}",
             st.tuples(st.lists(st.sampled_from([b"a", b"b", b"c"]), min_size=1, max_size=7)
                       .map(b"".join), RANKS),
             ((b"abc", {b"bc": 0, b"ab": 1, b"abc": 2}), (b"aaaa", {b"aa": 0}),
              (b"abc", {b"bc": 0, b"ab": 1}))),   # the first pair with a rank is not the lowest
    Exercise("embedding_lookup",
             "lookup(wte [V, C], ids [T]) -> [T, C]: the row of wte for each id.",
             judge_lookup, lambda c: f"wte {c[0].tolist()}, ids {c[1]}",
             st.tuples(st.integers(2, 5), st.integers(1, 3), st.integers(0, 999)).flatmap(
                 lambda v: st.tuples(st.just(np.random.default_rng(v[2]).integers(-9, 9, (v[0], v[1])).astype(float)),
                                     st.lists(st.integers(0, v[0] - 1), min_size=1, max_size=4))),
             ((np.array([[0., 0.], [1., 2.], [3., 4.]]), [2, 1]),)),
    Exercise("cosine_similarity",
             "cosine(a, b) -> float: a·b / (|a| |b|), between -1 and 1.",
             judge_cosine, lambda c: f"a = {fmt(c[0])}, b = {fmt(c[1])}",
             st.integers(1, 4).flatmap(lambda n: st.tuples(vectors(n), vectors(n))).filter(
                 lambda ab: np.linalg.norm(ab[0]) > 0 and np.linalg.norm(ab[1]) > 0),
             ((np.array([1., 0.]), np.array([3., 0.])), (np.array([1., 2.]), np.array([-2., 3.]))),
             (output_hint("divide the dot product by both lengths", lambda c: float(c[0] @ c[1])),)),
    Exercise("sliding_window",
             "window(ids, n_ctx) -> the last n_ctx ids (all of them if there are fewer).",
             judge_window, lambda c: f"ids {c[0]}, n_ctx = {c[1]}",
             st.tuples(st.lists(st.integers(0, 99), max_size=8), st.integers(1, 6)),
             (([1, 2, 3, 4, 5], 3), ([1, 2], 5), ([1, 2, 3], 5), ([], 2)),
             (output_hint("those are the FIRST n_ctx ids; the window keeps the most recent",
                          lambda c: c[0][:c[1]]),)),
    Exercise("estimate_cost",
             "cost(n_in, n_out, price_in, price_out) -> money: prices are per million tokens, input "
             "and output priced separately.",
             judge_cost, lambda c: f"{c[0]} input and {c[1]} output tokens at {c[2]} and {c[3]} per million",
             st.tuples(st.integers(0, 10**6), st.integers(0, 10**5), st.sampled_from([0.5, 1.0, 2.0]),
                       st.sampled_from([1.5, 3.0, 8.0])),
             ((24576, 1000, 2.0, 8.0),),
             (output_hint("the prices are per million tokens: divide the counts by 1,000,000",
                          lambda c: c[0] * c[2] + c[1] * c[3]),)),
]
