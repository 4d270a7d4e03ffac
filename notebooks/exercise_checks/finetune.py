"""Exercises of notebook 15 (fine-tuning): the loss on the assistant's tokens only, a LoRA merge."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .core import Exercise, arrays_differ, as_array, as_number, fmt, output_hint


def nll(logits, targets) -> np.ndarray:
    """−log softmax(logits[t])[targets[t]] per position, float64 [T]."""
    z = logits - logits.max(axis=-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))           # [T, V]
    return -logp[np.arange(len(targets)), targets]


def masked_loss_reference(logits, targets, mask) -> float:
    m = np.asarray(mask, dtype=np.float64)
    return float((nll(logits, targets) * m).sum() / m.sum())


def judge_masked_loss(fn, case):
    logits, targets, mask = case
    want = masked_loss_reference(logits, targets, mask)
    got = as_number(fn(logits.copy(), targets.copy(), mask.copy()), "the loss, a number")
    if arrays_differ(got, want):
        return (f"you returned {fmt(got, 5)}; the mean of −log p(target) over the {int(mask.sum())} "
                f"counted positions is {fmt(want, 5)}")
    return None


def merge_reference(W, A, B, alpha):
    return W + (alpha / A.shape[1]) * (A @ B)


def judge_merge(fn, case):
    W, A, B, alpha = case
    want = merge_reference(W, A, B, alpha)
    got = as_array(fn(W.copy(), A.copy(), B.copy(), alpha), W.shape, "W' [in, out]")
    if arrays_differ(got, want, 1e-5):
        return f"you returned {np.round(got, 3).tolist()}; W + (α / r) · A B is {np.round(want, 3).tolist()}"
    return None


def mask_case(seed, T, V, counted):
    rng = np.random.default_rng(seed)
    mask = np.zeros(T, np.int64)
    mask[rng.choice(T, counted, replace=False)] = 1
    return np.round(rng.normal(size=(T, V)) * 2, 2), rng.integers(0, V, T), mask


def merge_case(seed, n_in, n_out, r, alpha):
    rng = np.random.default_rng(seed)
    return (np.round(rng.normal(size=(n_in, n_out)), 2), np.round(rng.normal(size=(n_in, r)), 2),
            np.round(rng.normal(size=(r, n_out)), 2), alpha)


EXERCISES = [
    Exercise("masked_loss", "masked_loss(logits [T, V], targets [T], mask [T] of 0/1) -> float: the "
             "mean of −log softmax(logits[t])[targets[t]] over the positions where mask[t] = 1 "
             "only (at least one).", judge_masked_loss,
             lambda c: f"logits {c[0].tolist()}, targets {c[1].tolist()}, mask {c[2].tolist()}",
             st.tuples(st.integers(0, 999), st.integers(2, 5), st.integers(2, 4)).flatmap(
                 lambda s: st.integers(1, s[1]).map(lambda k: mask_case(s[0], s[1], s[2], k))),
             (mask_case(0, 4, 3, 2), mask_case(1, 3, 3, 1), mask_case(2, 4, 3, 4)),
             (output_hint("divide by the number of counted positions, not by T: the masked "
                          "positions must not dilute the mean",
                          lambda c: float((nll(c[0], c[1]) * c[2]).sum() / len(c[1]))),
              output_hint("the mask is ignored: every position counted",
                          lambda c: float(nll(c[0], c[1]).mean())))),
    Exercise("merge_lora", "merge_lora(W [in, out], A [in, r], B [r, out], alpha) -> W' = W + "
             "(alpha / r) · A B, the adapted weight (r = A's second dimension).", judge_merge,
             lambda c: f"W {c[0].tolist()}, A {c[1].tolist()}, B {c[2].tolist()}, alpha {c[3]}",
             st.builds(merge_case, st.integers(0, 999), st.integers(1, 4), st.integers(1, 4),
                       st.integers(1, 3), st.sampled_from([1.0, 2.0, 16.0])),
             (merge_case(0, 3, 2, 2, 4.0), merge_case(1, 2, 3, 1, 2.0)),
             (output_hint("scale by alpha / r, not by alpha", lambda c: c[0] + c[3] * (c[1] @ c[2])),
              output_hint("A B alone is only the update: add it to W", lambda c: merge_reference(*c) - c[0]))),
]
