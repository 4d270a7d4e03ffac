"""Exercise of notebook 13 (the formulas): RMSNorm. (Its RoPE check is notebook 02's exercise,
`rope_rotate` in positions.py, run again after the derivation.)"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .core import Exercise, arrays_differ, as_array, fmt, output_hint


def rms_norm64(x, w, eps, centred=False, eps_inside=True):
    """x / √(mean(x²) + eps) · w, row by row, in float64; the flags make the bugs its hints name."""
    x = np.asarray(x, np.float64)
    ms = x.var(axis=-1, keepdims=True) if centred else (x * x).mean(axis=-1, keepdims=True)
    with np.errstate(all="ignore"):
        return x / (np.sqrt(ms + eps) if eps_inside else np.sqrt(ms) + eps) * w


def judge_rms_norm(fn, case):
    x, w, eps = case
    want = rms_norm64(x, w, eps)
    got = as_array(fn(x.copy(), w.copy(), eps), x.shape, "the normalised rows [N, C]")
    if arrays_differ(got, want, 1e-5):
        return (f"you returned {np.round(got, 4).tolist()}; x / √(mean(x²) + eps) · w = "
                f"{np.round(want, 4).tolist()}, each row on its own")
    return None


def rms_case(seed, N, C, eps):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(N, C)) * 2 + rng.integers(-2, 3), rng.normal(size=C) + 1, eps


EXERCISES = [
    Exercise("rms_norm", "rms_norm(x [N, C], w [C], eps) -> [N, C]: each row divided by "
             "√(mean(x²) + eps), times w (no centring, no bias).", judge_rms_norm,
             lambda c: f"x {np.round(c[0], 3).tolist()}, w {fmt(c[1])}, eps {c[2]:g}",
             st.builds(rms_case, st.integers(0, 999), st.integers(1, 3), st.integers(2, 5),
                       st.sampled_from([1e-5, 0.1, 1.0])),
             ((np.array([[1.0, 3.0]]), np.ones(2), 1e-5),
              (np.array([[2.0, 2.0, 2.0], [0.0, 0.0, 0.0]]), np.array([1.0, 2.0, 0.5]), 1e-5),
              (np.array([[0.01, -0.02]]), np.ones(2), 1e-5)),
             (output_hint("that is the variance about the mean (x.var()): RMSNorm uses mean(x²), "
                          "no centring", lambda c: rms_norm64(*c, centred=True)),
              output_hint("eps goes inside the square root: √(mean(x²) + eps)",
                          lambda c: rms_norm64(*c, eps_inside=False)),
              output_hint("you left out eps: an all-zero row gives 0/0", lambda c: rms_norm64(c[0], c[1], 0.0)))),
]
