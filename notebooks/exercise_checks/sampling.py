"""Exercises of notebooks 06 (temperature, top-k, top-p, min-p) and 09 (allowed ids, options).
The properties are those of tests/sampling/test_filters.py."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .core import (LOGITS, OVERFLOW, Exercise, arrays_differ, as_array, filtered_logits, fmt,
                   kept, order_desc, output_hint, softmax64)

PROBS = np.log(np.array([0.5, 0.3, 0.15, 0.05]))     # the explainer articles' distribution


def with_probs(z) -> str:
    return f"logits {fmt(z)} (probabilities {fmt(softmax64(z))})"


def max_before_scaling(z, T):
    """The bug of the first temperature hint: exp(z / T − max z), the maximum of the unscaled z."""
    with np.errstate(all="ignore"):
        e = np.exp(np.asarray(z, np.float64) / T - np.max(z))
        return e / e.sum()


def judge_temperature(fn, case):
    z, T = case
    want = softmax64(z / T)
    got = as_array(fn(z.copy(), T), z.shape, "probabilities")
    if arrays_differ(got, want):
        return f"you returned {fmt(got)}; softmax(z / T) = {fmt(want)}"
    return None


def judge_top_k(fn, case):
    z, k = case
    K = kept(filtered_logits(z, fn(z.copy(), k)))
    if len(K) != k:
        return (f"you kept {len(K)} ids {K}; top-k keeps exactly k = {k} (on a tie at the k-th "
                f"place, any of the tied ids will do)")
    removed = sorted(set(range(len(z))) - set(K))
    if removed and z[K].min() < z[removed].max():
        return (f"you kept ids {K}; the {k} largest are {sorted(order_desc(z)[:k])} (on a tie "
                f"at the k-th place, any of the tied ids will do)")
    return None


def judge_top_p(fn, case):
    z, p = case
    K = kept(filtered_logits(z, fn(z.copy(), p)))
    probs, order = softmax64(z), order_desc(z)
    tol = 1e-6                                   # float32 sums are as good as float64 ones
    need = int(np.searchsorted(np.cumsum(probs[order]), p - tol)) + 1      # smallest prefix
    removed = sorted(set(range(len(z))) - set(K))
    if K and removed and z[K].min() < z[removed].max():
        return (f"you kept ids {K}; keep the most probable tokens "
                f"first, i.e. ids {sorted(order[:len(K)])}")
    mass = probs[K].sum()
    if not K or mass < p - tol or mass - probs[K].min() >= p + tol:
        return (f"you kept {len(K)} token{'s' * (len(K) != 1)} "
                f"(mass {fmt(mass)}); the smallest set with mass ≥ {p} has {need}")
    return None


def judge_min_p(fn, case):
    z, m = case
    probs = softmax64(z)
    ratio = probs / probs.max()
    if np.any(np.abs(ratio - m) < 1e-9):
        return None                                  # exactly on the threshold: either is fine
    K = kept(filtered_logits(z, fn(z.copy(), m)))
    want = np.flatnonzero(ratio >= m).tolist()
    if K != want:
        return (f"you kept ids {K}; the tokens with p ≥ {m} · p_max "
                f"= {fmt(m * probs.max())} are {want}")
    return None


def judge_allow(fn, case):
    z, allowed = case
    K = kept(filtered_logits(z, fn(z.copy(), list(allowed))))
    if K != sorted(set(allowed)):
        return f"you kept ids {K}; exactly the allowed ones must survive"
    return None


def judge_options(fn, case):
    z, ids = case
    want = softmax64(z[ids])
    got = as_array(fn(z.copy(), list(ids)), want.shape, "one probability per option")
    if arrays_differ(got, want):
        return f"you returned {fmt(got)}; renormalised over the options only: {fmt(want)}"
    return None


def subset(z):
    return st.lists(st.integers(0, len(z) - 1), min_size=1, max_size=len(z), unique=True)


HUNDREDTHS = st.integers(1, 100).map(lambda i: i / 100)
LARGE = np.array([1000.0, 999.0, 995.0, 990.0])                 # exp overflows without the max
TIES = np.array([0.0, 0.0, 0.0, -0.25, 0.0, 0.0, 0.0])
EXERCISES = [
    Exercise("temperature", "temperature(logits [V], T) -> probabilities softmax(logits / T), T > 0 "
             "(without overflowing: at T = 0.05, logits 38 and 30 become 760 and 600).",
             judge_temperature, lambda c: f"logits {fmt(c[0])}, T = {c[1]}",
             st.tuples(LOGITS, st.sampled_from([0.05, 0.1, 0.25, 0.5, 0.7, 1.0, 1.5, 2.0, 5.0])),
             # (700, 690) at T = 0.98 overflows exp(z / T) but not exp(z / T − max z), so each of
             # the two overflow bugs meets first the case that shows its own hint
             ((PROBS, 0.5), (PROBS, 2.0), (np.array([700.0, 690.0]), 0.98), (np.array([38.0, 30.0]), 0.05)),
             (output_hint("you subtracted max z, the maximum before scaling; subtract the maximum "
                          "of z / T (at T < 1 the scaled logits grow past max z and exp overflows)",
                          lambda c: max_before_scaling(*c)),
              OVERFLOW, output_hint("divide the logits by T; multiplying sharpens where it "
                                    "should flatten", lambda c: softmax64(c[0] * c[1])))),
    Exercise("top_k", "top_k(logits, k) -> logits with all but k of the largest set to -inf: "
             "exactly k kept (on a tie at the k-th place, any of the tied ids).",
             judge_top_k, lambda c: f"logits {fmt(c[0])}, k = {c[1]}",
             LOGITS.flatmap(lambda z: st.tuples(st.just(z), st.integers(1, len(z)))),
             ((np.array([1.0, 3.0, 3.0, 2.0]), 2), (np.array([1.0, 3.0, 3.0, 2.0]), 1), (TIES, 5))),
    Exercise("top_p", "top_p(logits, p) -> logits with all but the smallest most-probable set "
             "of mass ≥ p set to -inf (on ties, any order of the tied ids).", judge_top_p,
             lambda c: f"{with_probs(c[0])}, p = {c[1]}", st.tuples(LOGITS, HUNDREDTHS),
             ((PROBS, 0.8), (PROBS, 0.81), (PROBS, 0.3), (np.zeros(4), 0.5), (LARGE, 0.9))),
    Exercise("min_p", "min_p(logits, m) -> logits with every token of p_i < m · p_max set to -inf.",
             judge_min_p, lambda c: f"{with_probs(c[0])}, min_p = {c[1]}",
             st.tuples(LOGITS, HUNDREDTHS), ((PROBS, 0.2), (PROBS, 0.5), (LARGE, 0.1)),
             (output_hint("compare with m · p_max, not with m alone",
                          lambda c: np.where(softmax64(c[0]) >= c[1], c[0], -np.inf)),)),
    Exercise("allow_only", "allow_only(logits, allowed) -> logits with every id not in allowed "
             "set to -inf (the hard constraint for a multiple-choice answer).", judge_allow,
             lambda c: f"logits {fmt(c[0])}, allowed {c[1]}",
             LOGITS.flatmap(lambda z: st.tuples(st.just(z), subset(z))),
             ((np.array([1.0, 2.0, 3.0]), [0, 2]),)),
    Exercise("option_probs", "option_probs(logits, option_ids) -> the probability of each option "
             "when only the options are allowed (sums to 1).", judge_options,
             lambda c: f"logits {fmt(c[0])}, options {c[1]}",
             LOGITS.flatmap(lambda z: st.tuples(st.just(z), subset(z))),
             ((np.array([2.0, 0.0, 1.0, 5.0]), [0, 1, 2]), (LARGE, [1, 3])),
             (OVERFLOW, output_hint("renormalise over the options only: softmax of their logits",
                                    lambda c: softmax64(c[0])[c[1]]))),
]
