"""Exercises of notebooks 03 (attention, the block) and 05 (the KV cache)."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from .core import LOGITS, Exercise, arrays_differ, fmt, layer_norm64, softmax64


def judge_softmax(fn, x):
    want = softmax64(x)
    got = np.asarray(fn(x.copy()), dtype=np.float64)
    if got.shape == want.shape and not np.isfinite(got).all():
        return (f"for logits {fmt(x)} you returned {fmt(got)}: exp overflows for large logits; "
                f"subtract the maximum first (it cancels out) — softmax is {fmt(want)}")
    if arrays_differ(got, want):
        return f"for logits {fmt(x)} you returned {fmt(got)}; softmax is {fmt(want)}"
    return None


def judge_square_mask(fn, case):
    return judge_mask(lambda T, S: fn(T), case)


def judge_mask(fn, case):
    T, S = case
    want = np.tril(np.ones((T, S), dtype=bool), k=S - T)
    got = np.asarray(fn(T, S))
    if got.shape != want.shape:
        return f"for T = {T}, S = {S} you returned shape {got.shape}; the mask is [T, S] = {want.shape}"
    got = got.astype(bool)
    for t, s in zip(*np.nonzero(got != want)):
        pos = S - T + t
        if got[t, s]:
            return (f"for T = {T}, S = {S} your mask lets query {t} (position {pos}) see position "
                    f"{s}, which comes after it — the future leaks in")
        return (f"for T = {T}, S = {S} your mask hides position {s} from query {t} (position "
                f"{pos}), but every position ≤ {pos} must be visible")
    return None


def attention_reference(q, k, v):
    T, S = q.shape[0], k.shape[0]
    scores = q @ k.T / math.sqrt(q.shape[1])                       # [T, S]
    scores[~np.tril(np.ones((T, S), dtype=bool), k=S - T)] = -np.inf
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)) @ v                 # [T, D]


def judge_attention(fn, case):
    q, k, v = case
    want = attention_reference(q, k, v)
    got = fn(q.copy(), k.copy(), v.copy())
    if not arrays_differ(got, want):
        return None
    T, D = q.shape
    hint = ""
    unmasked = softmax_rows(q @ k.T / math.sqrt(D)) @ v
    unscaled = attention_reference(q * math.sqrt(D), k, v)
    if not arrays_differ(got, unmasked):
        hint = " (that is attention WITHOUT the causal mask: position 0 used later positions)"
    elif not arrays_differ(got, unscaled):
        hint = " (that is attention without dividing the scores by √D)"
    return (f"for q = {q.tolist()}, k = {k.tolist()}, v = {v.tolist()} you returned "
            f"{np.round(np.asarray(got, float), 3).tolist()}; softmax(q kᵀ / √D + mask) v = "
            f"{np.round(want, 3).tolist()}{hint}")


def softmax_rows(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def judge_layer_norm(fn, case):
    x, w, b = case
    want = layer_norm64(x, w, b, 1e-5)
    got = fn(x.copy(), w.copy(), b.copy(), 1e-5)
    if arrays_differ(got, want, 1e-5):
        return (f"for x = {x.tolist()}, weight {fmt(w)}, bias {fmt(b)}, eps 1e-5 you returned "
                f"{np.round(np.asarray(got, float), 4).tolist()}; (x − mean) / √(var + eps) · w + b = "
                f"{np.round(want, 4).tolist()} (var divides by C, not C − 1)")
    return None


def judge_append(fn, case):
    K, V, k_new, v_new = case
    got = fn(K.copy(), V.copy(), k_new.copy(), v_new.copy())
    want = np.concatenate([K, k_new]), np.concatenate([V, v_new])
    if not isinstance(got, tuple) or len(got) != 2:
        return "return a pair (keys, values)"
    for what, g, w in (("keys", got[0], want[0]), ("values", got[1], want[1])):
        if arrays_differ(g, w, 1e-12):
            return (f"for cached keys {K.tolist()}, values {V.tolist()} and new keys "
                    f"{k_new.tolist()}, values {v_new.tolist()} your {what} are "
                    f"{np.asarray(g).tolist()}; the old rows then the new ones give {w.tolist()}")
    return None


def qkv(seed, T, S, D):
    rng = np.random.default_rng(seed)
    return tuple(rng.integers(-3, 4, shape).astype(float) for shape in ((T, D), (S, D), (S, D)))


def kv_case(seed, S, T, D):
    rng = np.random.default_rng(seed)
    return tuple(rng.integers(-9, 10, (n, D)).astype(float) for n in (S, S, T, T))


def show_qkv(c):
    return f"q {c[0].tolist()}, k {c[1].tolist()}, v {c[2].tolist()}"


EXERCISES = [
    Exercise("softmax", "softmax(x [N]) -> [N]: exp(x_i) / Σ exp(x_j), without overflowing for "
             "large x.", judge_softmax, fmt,
             st.one_of(LOGITS, LOGITS.map(lambda z: z * 80)),
             (np.array([1.0, 2.0, 3.0]), np.array([1000.0, 999.0, 998.0]))),
    Exercise("causal_mask", "causal_mask(T) -> [T, T] bool: True where query t may see key s, "
             "i.e. s ≤ t.", judge_square_mask, lambda c: f"T = {c[0]}",
             st.integers(1, 7).map(lambda T: (T, T)), ((1, 1), (3, 3))),
    Exercise("attention_head", "attention(q [T, D], k [T, D], v [T, D]) -> [T, D]: "
             "softmax(q kᵀ / √D + causal mask) v for one head.", judge_attention, show_qkv,
             st.builds(lambda s, T, D: qkv(s, T, T, D), st.integers(0, 999), st.integers(1, 4),
                       st.integers(1, 4)),
             (qkv(0, 3, 3, 2), qkv(1, 4, 4, 4))),
    Exercise("layer_norm", "layer_norm(x [N, C], w [C], b [C], eps) -> [N, C]: each row centred, "
             "divided by √(var + eps) (var: mean of squares, divide by C), times w, plus b.",
             judge_layer_norm, lambda c: f"x {c[0].tolist()}",
             st.builds(lambda s, N, C: tuple(np.random.default_rng(s).integers(-5, 6, sh).astype(float)
                                            for sh in ((N, C), (C,), (C,))),
                       st.integers(0, 999), st.integers(1, 3), st.integers(2, 5)),
             ((np.array([[1.0, 3.0]]), np.ones(2), np.zeros(2)),)),
    Exercise("kv_append", "append(K [S, D], V [S, D], k [T, D], v [T, D]) -> (K', V') [S + T, D]: "
             "the cached rows, then the new ones.", judge_append,
             lambda c: f"S = {len(c[0])}, T = {len(c[2])}",
             st.builds(kv_case, st.integers(0, 999), st.integers(0, 4), st.integers(1, 3), st.integers(1, 3)),
             (kv_case(0, 0, 1, 2), kv_case(1, 2, 1, 2))),
    Exercise("cached_causal_mask", "mask(T, S) -> [T, S] bool: T new queries after S − T cached "
             "positions; query t sits at position S − T + t and may see keys s ≤ S − T + t.",
             judge_mask, lambda c: f"T = {c[0]}, S = {c[1]}",
             st.integers(1, 6).flatmap(lambda S: st.tuples(st.integers(1, S), st.just(S))),
             ((1, 3), (2, 4))),
]
