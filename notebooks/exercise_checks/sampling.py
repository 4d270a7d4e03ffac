"""Exercises of notebooks 06 (temperature, top-k, top-p, min-p) and 09 (allowed ids, options).
The properties are those of tests/sampling/test_filters.py."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .core import (LOGITS, Exercise, arrays_differ, filtered_logits_problem, fmt, kept,
                   order_desc, softmax64)

PROBS = np.log(np.array([0.5, 0.3, 0.15, 0.05]))     # the explainer articles' distribution


def with_probs(z) -> str:
    return f"logits {fmt(z)} (probabilities {fmt(softmax64(z))})"


def judge_temperature(fn, case):
    z, T = case
    want = softmax64(z / T)
    got = fn(z.copy(), T)
    if arrays_differ(got, want):
        return f"for {with_probs(z)} and T = {T} you returned {fmt(got)}; softmax(z / T) = {fmt(want)}"
    return None


def judge_top_k(fn, case):
    z, k = case
    out = fn(z.copy(), k)
    problem = filtered_logits_problem(z, out)
    if problem:
        return f"for logits {fmt(z)} and k = {k}: {problem}"
    want = sorted(order_desc(z)[:k])
    if kept(out) != want:
        return (f"for logits {fmt(z)} and k = {k} you kept ids {kept(out)}; the {k} largest "
                f"(ties: the lower id first) are {want}")
    return None


def judge_top_p(fn, case):
    z, p = case
    out = fn(z.copy(), p)
    problem = filtered_logits_problem(z, out)
    if problem:
        return f"for logits {fmt(z)} and p = {p}: {problem}"
    probs, order, K = softmax64(z), order_desc(z), kept(out)
    need = int(np.searchsorted(np.cumsum(probs[order]), p - 1e-9)) + 1     # smallest prefix
    if sorted(order[:len(K)]) != K:
        return (f"for {with_probs(z)} and p = {p} you kept ids {K}; keep the most probable "
                f"tokens first (ties: the lower id), i.e. ids {sorted(order[:len(K)])}")
    mass = probs[K].sum()
    if mass < p - 1e-9 or mass - probs[order[len(K) - 1]] >= p + 1e-9:
        return (f"for {with_probs(z)} and p = {p} you kept {len(K)} token{'s' * (len(K) != 1)} "
                f"(mass {fmt(mass)}); the smallest set with mass ≥ {p} has {need}")
    return None


def judge_min_p(fn, case):
    z, m = case
    probs = softmax64(z)
    ratio = probs / probs.max()
    if np.any(np.abs(ratio - m) < 1e-9):
        return None                                  # exactly on the threshold: either is fine
    out = fn(z.copy(), m)
    problem = filtered_logits_problem(z, out)
    if problem:
        return f"for logits {fmt(z)} and min_p = {m}: {problem}"
    want = np.flatnonzero(ratio >= m).tolist()
    if kept(out) != want:
        return (f"for {with_probs(z)} and min_p = {m} you kept ids {kept(out)}; the tokens with "
                f"p ≥ {m} · p_max = {fmt(m * probs.max())} are {want}")
    return None


def judge_allow(fn, case):
    z, allowed = case
    out = fn(z.copy(), list(allowed))
    problem = filtered_logits_problem(z, out)
    if problem:
        return f"for logits {fmt(z)} and allowed ids {allowed}: {problem}"
    if kept(out) != sorted(set(allowed)):
        return (f"for logits {fmt(z)} and allowed ids {allowed} you kept ids {kept(out)}; exactly "
                f"the allowed ones must survive")
    return None


def judge_options(fn, case):
    z, ids = case
    want = softmax64(z[ids])
    got = fn(z.copy(), list(ids))
    if arrays_differ(got, want):
        return (f"for logits {fmt(z)} and option ids {ids} you returned {fmt(got)}; renormalised "
                f"over the options only: {fmt(want)} (they must sum to 1)")
    return None


def subset(z):
    return st.lists(st.integers(0, len(z) - 1), min_size=1, max_size=len(z), unique=True)


HUNDREDTHS = st.integers(1, 100).map(lambda i: i / 100)
EXERCISES = [
    Exercise("temperature", "temperature(logits, T) -> probabilities softmax(logits / T), T > 0.",
             judge_temperature, lambda c: f"logits {fmt(c[0])}, T = {c[1]}",
             st.tuples(LOGITS, st.sampled_from([0.1, 0.25, 0.5, 0.7, 1.0, 1.5, 2.0, 5.0])),
             ((PROBS, 0.5), (PROBS, 2.0))),
    Exercise("top_k", "top_k(logits, k) -> logits with all but the k largest set to -inf "
             "(ties: the lower id kept).", judge_top_k, lambda c: f"logits {fmt(c[0])}, k = {c[1]}",
             LOGITS.flatmap(lambda z: st.tuples(st.just(z), st.integers(1, len(z)))),
             ((np.array([1.0, 3.0, 3.0, 2.0]), 2), (np.array([1.0, 3.0, 3.0, 2.0]), 1))),
    Exercise("top_p", "top_p(logits, p) -> logits with all but the smallest most-probable set "
             "of mass ≥ p set to -inf (ties: the lower id first).", judge_top_p,
             lambda c: f"logits {fmt(c[0])}, p = {c[1]}", st.tuples(LOGITS, HUNDREDTHS),
             ((PROBS, 0.8), (PROBS, 0.81), (PROBS, 0.3), (np.zeros(4), 0.5))),
    Exercise("min_p", "min_p(logits, m) -> logits with every token of p_i < m · p_max set to -inf.",
             judge_min_p, lambda c: f"logits {fmt(c[0])}, min_p = {c[1]}",
             st.tuples(LOGITS, HUNDREDTHS), ((PROBS, 0.2), (PROBS, 0.5))),
    Exercise("allow_only", "allow_only(logits, allowed) -> logits with every id not in allowed "
             "set to -inf (the hard constraint for a multiple-choice answer).", judge_allow,
             lambda c: f"logits {fmt(c[0])}, allowed {c[1]}",
             LOGITS.flatmap(lambda z: st.tuples(st.just(z), subset(z))),
             ((np.array([1.0, 2.0, 3.0]), [0, 2]),)),
    Exercise("option_probs", "option_probs(logits, option_ids) -> the probability of each option "
             "when only the options are allowed (sums to 1).", judge_options,
             lambda c: f"logits {fmt(c[0])}, options {c[1]}",
             LOGITS.flatmap(lambda z: st.tuples(st.just(z), subset(z))),
             ((np.array([2.0, 0.0, 1.0, 5.0]), [0, 1, 2]),)),
]
