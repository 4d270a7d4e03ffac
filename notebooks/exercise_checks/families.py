"""Exercises of notebook 16 (the model families): Gemma 2's soft-capping and a sliding window's
mask (Mistral; Gemma's local layers)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .core import Exercise, as_array, fmt, output_hint, visible


def softcap64(x, cap):
    """cap · tanh(x / cap), in float64."""
    return np.tanh(np.asarray(x, np.float64) / cap) * cap


def judge_softcap(fn, case):
    x, cap = case
    want = softcap64(x, cap)
    got = as_array(fn(x.copy(), cap), x.shape, "the capped values [N]")
    if not np.allclose(got, want, rtol=1e-5, atol=1e-5 * cap):
        return (f"you returned {fmt(got)}; cap · tanh(x / cap) = {fmt(want)}: ≈ x where |x| ≪ cap, "
                f"never beyond ±{fmt(cap)}")
    return None


def softcap_case(seed, N, cap):
    rng = np.random.default_rng(seed)
    return rng.normal(size=N) * cap * rng.choice([0.1, 1.0, 5.0]), float(cap)


def window64(T, W, extra=0):
    """[T, T] bool: query t sees key s when s ≤ t and t − s < W + extra."""
    t, s = np.arange(T)[:, None], np.arange(T)[None, :]
    return (s <= t) & (t - s < W + extra)


def judge_window(fn, case):
    T, W = case
    want = window64(T, W)
    got = visible(fn(T, W), (T, T))
    for t, s in zip(*np.nonzero(got != want)):
        if got[t, s] and s > t:
            return f"your mask lets query {t} see key {s}, which comes after it — the future leaks in"
        if got[t, s]:
            return (f"your mask lets query {t} see key {s}, {t - s} positions back; a window of "
                    f"W = {W} holds the query and the {W - 1} before it (t − s < W)")
        return (f"your mask hides key {s} from query {t}, {t - s} positions back; every key with "
                f"0 ≤ t − s < W = {W} must be visible")
    return None


EXERCISES = [
    Exercise("softcap", "softcap(x [N], cap) -> [N]: cap · tanh(x / cap), Gemma 2's soft cap: ≈ x "
             "for |x| ≪ cap, never beyond ±cap.", judge_softcap,
             lambda c: f"x {fmt(c[0])}, cap {fmt(c[1])}",
             st.builds(softcap_case, st.integers(0, 999), st.integers(1, 6), st.sampled_from([2.0, 30.0, 50.0])),
             ((np.array([1.0, 30.0, 300.0, -300.0]), 30.0), (np.array([0.5, -0.5]), 50.0),
              (np.array([3.0, -7.0]), 2.0)),
             (output_hint("soft-capping is smooth: np.clip cuts at ±cap, cap · tanh(x / cap) bends "
                          "towards it", lambda c: np.clip(c[0], -c[1], c[1])),
              output_hint("divide by cap inside the tanh: cap · tanh(x / cap), not cap · tanh(x)",
                          lambda c: c[1] * np.tanh(c[0])),
              output_hint("multiply by cap outside the tanh: tanh(x / cap) alone stays within ±1",
                          lambda c: np.tanh(c[0] / c[1])))),
    Exercise("sliding_window_mask", "sliding_window_mask(T, W) -> [T, T]: query t sees key s when "
             "s ≤ t and t − s < W (itself and the W − 1 before it). Bool (True: visible), 0/1, or "
             "additive (0 visible, −inf hidden).", judge_window,
             lambda c: f"T = {c[0]}, W = {c[1]}",
             st.integers(1, 8).flatmap(lambda T: st.tuples(st.just(T), st.integers(1, T + 1))),
             ((5, 3), (4, 1), (3, 5)),
             (output_hint("a window of W holds the query and the W − 1 before it: t − s < W, not "
                          "t − s ≤ W", lambda c: window64(*c, extra=1)),
              output_hint("the window is AND-ed with the causal mask: no key after the query",
                          lambda c: np.abs(np.arange(c[0])[:, None] - np.arange(c[0])[None, :]) < c[1]))),
]
