"""Exercises of notebooks 03 (attention, the block) and 05 (the KV cache)."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from .core import (LOGIT_ROWS, LOGITS, OVERFLOW, Exercise, Hint, arrays_differ, as_array, as_pair, fmt,
                   layer_norm64, output_hint, softmax64, visible)

def judge_softmax(fn, x):
    want = softmax64(x)
    got = as_array(fn(x.copy()), x.shape, "probabilities")
    if arrays_differ(got, want):
        return f"you returned {fmt(got)}; softmax over the last axis is {fmt(want)}"
    return None


def global_max_softmax(x):
    """The bug of the first softmax hint: one maximum for the whole array, not one per row."""
    with np.errstate(all="ignore"):
        e = np.exp(np.asarray(x, np.float64) - np.max(x))
        return e / e.sum(axis=-1, keepdims=True)


def rows_do_not_sum_to_one(x, got) -> bool:
    return x.ndim == 2 and np.isfinite(got).all() and not np.allclose(np.sum(got, axis=-1), 1)


def judge_square_mask(fn, case):
    return judge_mask(lambda T, S: fn(T), case)


def judge_mask(fn, case):
    T, S = case
    want = np.tril(np.ones((T, S), dtype=bool), k=S - T)
    got = visible(fn(T, S), (T, S))
    for t, s in zip(*np.nonzero(got != want)):
        pos = S - T + t
        if got[t, s]:
            return (f"your mask lets query {t} (position {pos}) see position {s}, which comes "
                    f"after it — the future leaks in")
        return (f"your mask hides position {s} from query {t} (position {pos}), but every "
                f"position ≤ {pos} must be visible")
    return None


def causal_scores(q, k):
    T, S = q.shape[0], k.shape[0]
    scores = q @ k.T / math.sqrt(q.shape[1])                       # [T, S]
    scores[~np.tril(np.ones((T, S), dtype=bool), k=S - T)] = -np.inf
    return scores


def attention_reference(q, k, v):
    return softmax64(causal_scores(q, k)) @ v                      # [T, S] @ [S, D] -> [T, D]


def judge_attention(fn, case):
    q, k, v = case
    want = attention_reference(q, k, v)
    got = as_array(fn(q.copy(), k.copy(), v.copy()), q.shape, "the head's output [T, D]")
    if arrays_differ(got, want):
        return (f"you returned {np.round(got, 3).tolist()}; softmax(q kᵀ / √D + mask) v = "
                f"{np.round(want, 3).tolist()}")
    return None


def judge_layer_norm(fn, case):
    x, w, b, eps = case
    want = layer_norm64(x, w, b, eps)
    got = as_array(fn(x.copy(), w.copy(), b.copy(), eps), x.shape, "the normalised rows [N, C]")
    if arrays_differ(got, want, 1e-5):
        return (f"you returned {np.round(got, 4).tolist()}; (x − mean) / √(var + eps) · w + b = "
                f"{np.round(want, 4).tolist()}, each row on its own")
    return None


def layer_norm_with(x, w, b, eps, ddof=0, eps_inside=True):
    """The bugs layer norm's hints name: var over C − 1 (ddof=1), eps outside the root, no eps."""
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, ddof=ddof, keepdims=True)
    return (x - mu) / (np.sqrt(var + eps) if eps_inside else np.sqrt(var) + eps) * w + b


def judge_append(fn, case):
    K, V, k_new, v_new = case
    keys, values = as_pair(fn(K.copy(), V.copy(), k_new.copy(), v_new.copy()), "a pair (keys, values)")
    shape = (len(K) + len(k_new), K.shape[1])
    for what, got, want in (("keys", keys, np.concatenate([K, k_new])),
                            ("values", values, np.concatenate([V, v_new]))):
        if arrays_differ(as_array(got, shape, f"the {what} [S + T, D]"), want, 1e-12):
            return (f"your {what} are {np.asarray(got).tolist()}; the old rows then the new ones "
                    f"give {want.tolist()}")
    return None


def qkv(seed, T, S, D, scale=1):
    rng = np.random.default_rng(seed)
    return tuple(rng.integers(-3, 4, shape).astype(float) * scale for shape in ((T, D), (S, D), (S, D)))


def kv_case(seed, S, T, D):
    rng = np.random.default_rng(seed)
    return tuple(rng.integers(-9, 10, (n, D)).astype(float) for n in (S, S, T, T))


def ln_case(seed, N, C, eps):
    rng = np.random.default_rng(seed)
    return (*(rng.integers(-5, 6, shape).astype(float) for shape in ((N, C), (C,), (C,))), eps)


def show_qkv(c):
    return f"q {c[0].tolist()}, k {c[1].tolist()}, v {c[2].tolist()}"


def show_ln(c):
    return f"x {c[0].tolist()}, w {fmt(c[1])}, b {fmt(c[2])}, eps {c[3]:g}"


def show_kv(c):
    return (f"cached keys {c[0].tolist()}, values {c[1].tolist()} and new keys {c[2].tolist()}, "
            f"values {c[3].tolist()}")


EXERCISES = [
    Exercise("softmax", "softmax(x [..., N]) -> the same shape: exp(x_i) / Σ_j exp(x_j) over the "
             "last axis (each row of a 2-D x sums to 1), without overflowing for large x.",
             judge_softmax, fmt,
             st.one_of(LOGITS, LOGITS.map(lambda z: z * 80), LOGIT_ROWS, LOGIT_ROWS.map(lambda z: z * 80)),
             (np.array([1.0, 2.0, 3.0]), np.array([1000.0, 999.0, 998.0]),
              np.array([[1.0, 2.0, 3.0], [2.0, 2.0, 2.0]]), np.array([[1.0, 2.0, 3.0], [1000.0, 999.0, 998.0]])),
             (output_hint("you subtracted the maximum of the whole array; subtract each row's own "
                          "(x.max(axis=-1, keepdims=True)): a row far below the global maximum "
                          "underflows to 0/0", global_max_softmax),
              OVERFLOW,
              Hint("each row must sum to 1: sum over the last axis (axis=-1, keepdims=True)",
                   rows_do_not_sum_to_one))),
    Exercise("causal_mask", "causal_mask(T) -> [T, T]: query t may see key s when s ≤ t. Bool "
             "(True: visible), 0/1, or additive (0 visible, −inf hidden).",
             judge_square_mask, lambda c: f"T = {c[0]}",
             st.integers(1, 7).map(lambda T: (T, T)), ((1, 1), (3, 3))),
    Exercise("attention_head", "attention(q [T, D], k [T, D], v [T, D]) -> [T, D]: "
             "softmax(q kᵀ / √D + causal mask) v for one head.", judge_attention, show_qkv,
             st.builds(lambda s, T, D, scale: qkv(s, T, T, D, scale), st.integers(0, 999),
                       st.integers(1, 4), st.integers(1, 4), st.sampled_from([1, 1, 30])),
             (qkv(0, 3, 3, 2), qkv(1, 4, 4, 4), qkv(2, 3, 3, 2, scale=30)),
             (OVERFLOW,
              output_hint("that is attention WITHOUT the causal mask: earlier positions used later ones",
                          lambda c: softmax64(c[0] @ c[1].T / math.sqrt(c[0].shape[1])) @ c[2]),
              output_hint("that is attention without dividing the scores by √D",
                          lambda c: attention_reference(c[0] * math.sqrt(c[0].shape[1]), c[1], c[2])),
              output_hint("masking the weights after the softmax leaves rows that no longer sum to "
                          "1: put −inf in the scores before the softmax",
                          lambda c: (softmax64(c[0] @ c[1].T / math.sqrt(c[0].shape[1]))
                                     * np.tril(np.ones((len(c[0]), len(c[1]))))) @ c[2]))),
    Exercise("layer_norm", "layer_norm(x [N, C], w [C], b [C], eps) -> [N, C]: each row centred, "
             "divided by √(var + eps) (var: mean of squares, divide by C), times w, plus b.",
             judge_layer_norm, show_ln,
             st.builds(ln_case, st.integers(0, 999), st.integers(1, 3), st.integers(2, 5),
                       st.sampled_from([1e-5, 0.1, 1.0])),
             ((np.array([[1.0, 3.0]]), np.ones(2), np.zeros(2), 1e-5),
              (np.array([[1.0, 3.0], [0.0, 0.01]]), np.ones(2), np.zeros(2), 1e-5),
              (np.array([[1.0, 3.0, 2.0], [2.0, 2.0, 2.0]]), np.array([1.0, 2.0, 0.5]), np.ones(3), 1.0)),
             (output_hint("var divides by C, not C − 1: use x.var(axis=-1) or the mean of squares",
                          lambda c: layer_norm_with(*c, ddof=1)),
              output_hint("eps goes inside the square root: √(var + eps), not √var + eps",
                          lambda c: layer_norm_with(*c, eps_inside=False)),
              output_hint("you left out eps: √(var + eps) keeps a constant row from dividing by 0",
                          lambda c: layer_norm_with(*c[:3], 0.0)))),
    Exercise("kv_append", "append(K [S, D], V [S, D], k [T, D], v [T, D]) -> (K', V') [S + T, D]: "
             "the cached rows, then the new ones (a tuple or a list of the two).", judge_append, show_kv,
             st.builds(kv_case, st.integers(0, 999), st.integers(0, 4), st.integers(1, 3), st.integers(1, 3)),
             (kv_case(0, 0, 1, 2), kv_case(1, 2, 1, 2)),
             (output_hint("the cached rows come first, the new ones after them",
                          lambda c: (np.concatenate([c[2], c[0]]), np.concatenate([c[3], c[1]]))),)),
    Exercise("cached_causal_mask", "mask(T, S) -> [T, S]: T new queries after S − T cached "
             "positions; query t sits at position S − T + t and may see keys s ≤ S − T + t. Bool "
             "(True: visible), 0/1, or additive (0 visible, −inf hidden).",
             judge_mask, lambda c: f"T = {c[0]}, S = {c[1]}",
             st.integers(1, 6).flatmap(lambda S: st.tuples(st.integers(1, S), st.just(S))),
             ((1, 3), (2, 4))),
]
