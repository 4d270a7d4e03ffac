"""Exercise of notebook 02 (positions): one RoPE rotation step, in the layout minillm uses."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .core import Exercise, arrays_differ, as_array, fmt, output_hint


def rope64(x, positions, theta) -> np.ndarray:
    """Reference, in float64: pair i = (x[:, i], x[:, i + D/2]) of row t turned by positions[t]·θ_i,
    θ_i = theta^(−2i/D) (counter-clockwise: a' = a cos − b sin, b' = b cos + a sin)."""
    x = np.asarray(x, dtype=np.float64)
    half = x.shape[-1] // 2
    angles = np.asarray(positions, dtype=np.float64)[:, None] * theta ** (-2.0 * np.arange(half) / x.shape[-1])
    a, b = x[:, :half], x[:, half:]                               # [T, D/2] each
    return np.concatenate([a * np.cos(angles) - b * np.sin(angles),
                           b * np.cos(angles) + a * np.sin(angles)], axis=-1)


def adjacent_pairs(x, positions, theta) -> np.ndarray:
    """The bug of the other layout: pairs (2i, 2i + 1) instead of (i, i + D/2)."""
    D = x.shape[-1]
    order = np.concatenate([np.arange(0, D, 2), np.arange(1, D, 2)])   # adjacent -> halves
    out = np.empty_like(np.asarray(x, dtype=np.float64))
    out[:, order] = rope64(np.asarray(x)[:, order], positions, theta)
    return out


def clockwise(x, positions, theta) -> np.ndarray:
    """The bug of the sign: every pair turned by −angle."""
    return rope64(x, -np.asarray(positions, dtype=np.float64), theta)


def judge_rope(fn, case):
    x, positions, theta = case
    want = rope64(x, positions, theta)
    got = as_array(fn(x.copy(), np.array(positions), theta), want.shape, "the rotated rows [T, D]")
    if arrays_differ(got, want, tol=1e-5):              # float32 cos/sin are fine
        return f"you returned {fmt(got)}; turning pair (i, i + D/2) of row t by positions[t]·θ_i gives {fmt(want)}"
    return None


def cases():
    one = np.array([[1.0, 0.0]])                        # D = 2: one pair, θ_0 = 1
    four = np.array([[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0]])
    return ((one, [1], 10000.0), (four, [0, 1], 100.0), (four, [3, 2], 10000.0))


ROWS = st.tuples(st.integers(1, 3), st.sampled_from([2, 4, 6]), st.integers(0, 999)).map(
    lambda v: np.random.default_rng(v[2]).integers(-4, 5, (v[0], v[1])).astype(float))

EXERCISES = [
    Exercise("rope_rotate",
             "rope(x [T, D], positions [T], theta) -> [T, D]: pair i of row t is (x[t, i], "
             "x[t, i + D/2]), turned counter-clockwise by the angle positions[t]·θ_i, "
             "θ_i = theta^(−2i/D).",
             judge_rope, lambda c: f"x {fmt(c[0])}, positions {list(c[1])}, theta {fmt(c[2])}",
             ROWS.flatmap(lambda x: st.tuples(st.just(x), st.lists(st.integers(0, 20), min_size=len(x),
                                                                   max_size=len(x)),
                                               st.sampled_from([100.0, 10000.0]))),
             cases(),
             (output_hint("pair i is (i, i + D/2) — the first half of the row against the second, "
                          "not neighbours (2i, 2i + 1)", lambda c: adjacent_pairs(*c)),
              output_hint("turn counter-clockwise: a' = a·cos − b·sin, b' = b·cos + a·sin",
                          lambda c: clockwise(*c)),
              output_hint("θ_i = theta^(−2i/D): i counts pairs, so the exponent has 2i",
                          lambda c: rope64(c[0], c[1], c[2] ** 0.5)))),
]
