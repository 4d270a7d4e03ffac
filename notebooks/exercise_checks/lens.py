"""Exercises of notebook 18 (looking inside): the logit lens (a stream read through the final
RMSNorm and the head) and the prefix-matching score that finds induction heads."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .core import Exercise, arrays_differ, as_array, fmt, output_hint


def rms64(x, w, eps, centre=False, eps_outside=False, whole=False):
    """RMSNorm of each row (the reference), or a bug: ``centre`` subtracts the mean (LayerNorm's
    step), ``eps_outside`` adds eps after the root, ``whole`` takes one scale for all rows."""
    x = np.asarray(x, np.float64)
    if centre:
        x = x - x.mean(-1, keepdims=True)
    ms = np.mean(x * x) if whole else np.mean(x * x, axis=-1, keepdims=True)
    scale = np.sqrt(ms) + eps if eps_outside else np.sqrt(ms + eps)
    return x / scale * np.asarray(w, np.float64)


def lens64(resid, w, head, eps, **bug):
    """[L + 1, T, C] -> [L + 1, T, V]: RMSNorm(h) · w, then @ head (the reference, or a bug)."""
    return rms64(resid, w, eps, **bug) @ np.asarray(head, np.float64)


def lens_case(seed, L, T, C, V):
    """Streams that grow with depth (as real ones do), so forgetting the norm shows."""
    rng = np.random.default_rng(seed)
    growth = 2.0 ** np.arange(L + 1)[:, None, None]                  # [L + 1, 1, 1]
    resid = rng.normal(size=(L + 1, T, C)) * growth + rng.choice([0.0, 3.0])
    return resid, rng.uniform(0.5, 2.0, C), rng.normal(size=(C, V)), float(rng.choice([1e-5, 0.1]))


def judge_lens(fn, case):
    resid, w, head, eps = case
    want = lens64(resid, w, head, eps)
    got = as_array(fn(resid.copy(), w.copy(), head.copy(), eps), want.shape, "the lens's logits [L + 1, T, V]")
    if arrays_differ(got, want, tol=1e-4):
        l, t = (int(i) for i in np.argwhere(~np.isclose(got, want, rtol=1e-4, atol=1e-4))[0][:2])
        return (f"you returned {fmt(got[l, t])} at layer {l}, position {t}; "
                f"RMSNorm(h) · w @ head gives {fmt(want[l, t])}")
    return None


def pattern_case(seed, H, n):
    """Causal attention weights [H, 2n, 2n] of random heads, one of them (often) an induction head."""
    rng = np.random.default_rng(seed)
    T = 2 * n
    scores = rng.normal(size=(H, T, T)) * rng.uniform(0.5, 3.0)
    t = np.arange(n, T)
    scores[rng.integers(H), t, t - n + 1] += 6.0                     # the key after the first copy
    scores = np.where(np.tril(np.ones((T, T), bool)), scores, -np.inf)
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True), n


def prefix64(pattern, n, back=1, queries=None, total=False):
    """[H, 2n, 2n] -> [H]: the mean of A[t, t − n + back] over the second repeat's queries (the
    reference has back = 1), or a bug: another range of ``queries``, a sum instead of a mean."""
    t = np.arange(n, 2 * n) if queries is None else queries
    picked = np.asarray(pattern, np.float64)[:, t, t - n + back]     # [H, n]
    return picked.sum(-1) if total else picked.mean(-1)


def judge_prefix(fn, case):
    pattern, n = case
    want = prefix64(pattern, n)
    got = as_array(fn(pattern.copy(), n), want.shape, "one score per head [H]")
    if arrays_differ(got, want, tol=1e-6):
        return (f"you returned {fmt(got)}; the mean over t = n … 2n − 1 of A[h, t, t − n + 1] is "
                f"{fmt(want)}")
    return None


def perfect(n):
    """Head 0 a perfect induction head, head 1 attends to the token itself, head 2 to the first copy."""
    T, t = 2 * n, np.arange(n, 2 * n)
    p = np.zeros((3, T, T))
    p[:, np.arange(T), 0] = 1.0                                     # (the first repeat: to the start)
    p[:, t] = 0.0
    p[0, t, t - n + 1] = 1.0
    p[1, t, t] = 1.0
    p[2, t, t - n] = 1.0
    return p, n


LENS_CASES = (lens_case(1, 2, 3, 4, 5), lens_case(2, 1, 1, 3, 2), lens_case(3, 3, 2, 2, 3))
PREFIX_CASES = (perfect(3), perfect(1), pattern_case(4, 2, 4))

EXERCISES = [
    Exercise("logit_lens", "logit_lens(resid [L + 1, T, C], w [C], head [C, V], eps) -> logits "
             "[L + 1, T, V]: every stream vector h read as if it were the last one: "
             "RMSNorm(h) = h / √(mean(h²) + eps) · w over its own C numbers, then @ head.", judge_lens,
             lambda c: (f"resid of shape {c[0].shape}, w {fmt(c[1])}, head of shape {c[2].shape}, "
                        f"eps {fmt(c[3], 6)}"),
             st.builds(lens_case, st.integers(0, 999), st.integers(0, 3), st.integers(1, 4),
                       st.integers(2, 5), st.integers(2, 5)),
             LENS_CASES,
             (output_hint("apply the final norm before the head: the head was trained on normalised "
                          "vectors, and the stream grows with depth", lambda c: c[0] @ c[2]),
              output_hint("multiply by the norm's weight w after dividing by the RMS",
                          lambda c: lens64(c[0], np.ones_like(c[1]), c[2], c[3])),
              output_hint("eps goes inside the square root: √(mean(h²) + eps)",
                          lambda c: lens64(*c, eps_outside=True)),
              output_hint("RMSNorm does not subtract the mean (that is LayerNorm)",
                          lambda c: lens64(*c, centre=True)),
              output_hint("normalise each vector alone: the mean of h² is over its last axis (C), "
                          "not over the whole array", lambda c: lens64(*c, whole=True)))),
    Exercise("prefix_matching", "prefix_matching(pattern [H, 2n, 2n], n) -> [H]: on a sequence of "
             "n tokens seen twice, each head's mean attention weight, over the queries t = n … 2n − 1 "
             "of the second copy, on the key t − n + 1: the token that FOLLOWED the query's token "
             "the first time.", judge_prefix,
             lambda c: f"n = {c[1]}, a pattern of {c[0].shape[0]} heads [H, 2n, 2n] = {c[0].shape}",
             st.builds(pattern_case, st.integers(0, 999), st.integers(1, 3), st.integers(1, 4)),
             PREFIX_CASES,
             (output_hint("attend to the key AFTER the first copy of the token (t − n + 1): a head on "
                          "t − n finds the token itself, not what comes next", lambda c: prefix64(*c, back=0)),
              output_hint("average over the second copy's queries only (t = n … 2n − 1): in the first "
                          "copy there is nothing to match yet",
                          lambda c: prefix64(*c, queries=np.arange(c[1] - 1, 2 * c[1]))),
              output_hint("a mean, not a sum: divide by the n queries",
                          lambda c: prefix64(*c, total=True)))),
]
