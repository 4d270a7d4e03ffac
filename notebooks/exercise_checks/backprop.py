"""Exercises of notebook 19 (how it learns), the backward passes: the loss's (softmax and
cross-entropy together), a linear layer's, RMSNorm's and one causal attention head's. Each
reference below is the formula in float64 (the notebook checks the same formulas against finite
differences and against minillm/train/). AdamW, the schedule, batches and LoRA: updates.py."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from .core import Exercise, Wrong, arrays_differ, as_array, fmt, kind, output_hint, softmax64


def as_arrays(got, shapes, names: str) -> list[np.ndarray]:
    """``got`` as len(shapes) arrays of those shapes (a tuple or list of them), else Wrong."""
    n = len(shapes)
    if not isinstance(got, (tuple, list)) or len(got) != n:
        raise Wrong(f"you returned {kind(got)}; expected {n} arrays: return {names}")
    return [as_array(a, s, name) for a, s, name in zip(got, shapes, names.split(", "))]


def first_wrong(got, want, names: str, tol: float = 1e-6) -> str | None:
    """'you returned dW = …; … is …' for the first of ``got`` that differs from ``want``."""
    for name, g, w in zip(names.split(", "), got, want):
        if arrays_differ(g, w, tol):
            return f"you returned {name} = {np.round(g, 4).tolist()}; it is {np.round(w, 4).tolist()}"
    return None


def rounded(*arrays):
    return tuple(np.round(a, 2) for a in arrays)


# ---- the loss's backward: softmax and cross-entropy together -----------------------------------

def ce_grad_reference(logits, targets):
    N = len(targets)
    onehot = np.eye(logits.shape[1])[targets]                           # [N, V]
    return (softmax64(logits) - onehot) / N                             # [N, V]


def judge_ce_grad(fn, case):
    logits, targets = case
    want = ce_grad_reference(logits, targets)
    got = as_array(fn(logits.copy(), targets.copy()), logits.shape, "dL/dlogits [N, V]")
    if arrays_differ(got, want):
        return f"you returned {np.round(got, 4).tolist()}; (softmax − onehot) / N is {np.round(want, 4).tolist()}"
    return None


def ce_case(seed, N, V, scale=1.0):
    rng = np.random.default_rng(seed)
    return np.round(rng.normal(size=(N, V)) * scale, 2), rng.integers(0, V, N)


# ---- a linear layer y = x W + b -----------------------------------------------------------------

def linear_reference(dy, x, W):
    return dy @ W.T, x.T @ dy, dy.sum(axis=0)                           # [N, in], [in, out], [out]


def judge_linear(fn, case):
    dy, x, W = case
    names = "dx, dW, db"
    got = as_arrays(fn(dy.copy(), x.copy(), W.copy()), [x.shape, W.shape, (W.shape[1],)], names)
    return first_wrong(got, linear_reference(dy, x, W), names)


def linear_case(seed, N, n_in, n_out):
    rng = np.random.default_rng(seed)
    return rounded(rng.normal(size=(N, n_out)), rng.normal(size=(N, n_in)), rng.normal(size=(n_in, n_out)))


# ---- RMSNorm y = x / √(mean(x²) + ε) ⊙ w --------------------------------------------------------

def rms_reference(dy, x, w, eps):
    r = 1.0 / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps)      # [N, 1]
    xhat, g = x * r, dy * w                                             # [N, C]
    return r * (g - xhat * (g * xhat).mean(axis=-1, keepdims=True)), (dy * xhat).sum(axis=0)


def judge_rms(fn, case):
    dy, x, w = case
    names = "dx, dw"
    got = as_arrays(fn(dy.copy(), x.copy(), w.copy(), 1e-5), [x.shape, w.shape], names)
    return first_wrong(got, rms_reference(dy, x, w, 1e-5), names, 1e-5)


def norm_case(seed, N, C):
    rng = np.random.default_rng(seed)
    return rounded(rng.normal(size=(N, C)), rng.normal(size=(N, C)) * 2, rng.normal(size=C) + 1)


# ---- one causal attention head -------------------------------------------------------------------

def attention_reference(dout, q, k, v, scale=True, full_softmax=True):
    T, D = q.shape
    s = 1.0 / math.sqrt(D) if scale else 1.0
    scores = np.where(np.tril(np.ones((T, T), bool)), q @ k.T * (1.0 / math.sqrt(D)), -np.inf)
    P = softmax64(scores)                                               # [T, T]
    dP = dout @ v.T                                                     # [T, T]
    dS = P * (dP - (dP * P).sum(axis=-1, keepdims=True)) if full_softmax else P * dP
    return dS @ k * s, dS.T @ q * s, P.T @ dout                         # dq, dk, dv [T, D]


def judge_attention(fn, case):
    dout, q, k, v = case
    names = "dq, dk, dv"
    got = as_arrays(fn(dout.copy(), q.copy(), k.copy(), v.copy()), [q.shape] * 3, names)
    return first_wrong(got, attention_reference(dout, q, k, v), names, 1e-5)


def attention_case(seed, T, D):
    rng = np.random.default_rng(seed)
    return rounded(*(rng.normal(size=(T, D)) for _ in range(4)))


def shapes(*letters):
    return st.tuples(*(st.integers(lo, hi) for lo, hi in letters))


def show_arrays(names):
    return lambda c: ", ".join(f"{n} {np.asarray(a).tolist()}" if isinstance(a, np.ndarray) else f"{n} {a}"
                               for n, a in zip(names.split(", "), c))


EXERCISES = [
    Exercise("ce_grad", "ce_grad(logits [N, V], targets [N]) -> dL/dlogits [N, V] for L = the mean "
             "over the N rows of −log softmax(logits[n])[targets[n]]: (softmax − onehot) / N.",
             judge_ce_grad, show_arrays("logits, targets"),
             st.builds(ce_case, st.integers(0, 999), st.integers(2, 4), st.integers(2, 5),
                       st.sampled_from([1.0, 3.0, 1000.0])),
             (ce_case(0, 2, 3), ce_case(1, 3, 3, 1000.0)),
             (output_hint("the sign: dL/dz = p − onehot (raising the target's logit lowers the loss)",
                          lambda c: -ce_grad_reference(*c)),
              output_hint("the loss is a mean over the N rows: divide the gradient by N",
                          lambda c: ce_grad_reference(*c) * len(c[1])),
              output_hint("subtract onehot(target): the target's logit appears in the loss twice, "
                          "in its own −z and in log Σ exp", lambda c: softmax64(c[0]) / len(c[1])))),
    Exercise("linear_backward", "linear_backward(dy [N, out], x [N, in], W [in, out]) -> (dx [N, in], "
             "dW [in, out], db [out]) for y = x W + b.", judge_linear, show_arrays("dy, x, W"),
             st.builds(linear_case, st.integers(0, 999), st.integers(1, 3), st.integers(1, 4), st.integers(1, 4)),
             (linear_case(0, 2, 3, 2), linear_case(1, 3, 2, 4)),
             (output_hint("db sums dy over the N rows (each row added b once), not a mean",
                          lambda c: (*linear_reference(*c)[:2], c[0].mean(axis=0))),)),
    Exercise("rms_norm_backward", "rms_norm_backward(dy, x [N, C], w [C], eps) -> (dx [N, C], dw [C]) "
             "for y = x / √(mean(x²) + eps) ⊙ w.", judge_rms,
             lambda c: f"dy {c[0].tolist()}, x {c[1].tolist()}, w {fmt(c[2])}, eps 1e-5",
             st.builds(norm_case, st.integers(0, 999), st.integers(1, 3), st.integers(2, 5)),
             (norm_case(0, 1, 3), norm_case(1, 2, 4)),
             (output_hint("that is dy · w / rms alone: x also moves the rms it is divided by",
                          lambda c: (c[0] * c[2] / np.sqrt((c[1] ** 2).mean(-1, keepdims=True) + 1e-5),
                                     rms_reference(*c, 1e-5)[1])),)),
    Exercise("attention_backward", "attention_backward(dout, q, k, v [T, D]) -> (dq, dk, dv) [T, D] "
             "each, for out = softmax(q kᵀ / √D, causal mask) v (one head).", judge_attention,
             show_arrays("dout, q, k, v"),
             st.builds(attention_case, st.integers(0, 999), st.integers(1, 4), st.integers(1, 3)),
             (attention_case(0, 3, 2), attention_case(1, 4, 2)),
             (output_hint("the scores are q kᵀ / √D: dq and dk carry the 1/√D too",
                          lambda c: attention_reference(*c, scale=False)),
              output_hint("the softmax backward is dS = P ⊙ (dP − rowsum(dP ⊙ P)): each weight "
                          "moves the others of its row", lambda c: attention_reference(*c, full_softmax=False)))),
]
