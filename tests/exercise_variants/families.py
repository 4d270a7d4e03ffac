"""Variants of the exercises of notebook 16 (soft-capping, the sliding window's mask)."""
import numpy as np

from .common import SOLUTIONS as S, Attempt, as_list, forgets_return, in_float32


def window_by_tril(T, W):
    ones = np.ones((T, T), bool)
    return np.tril(ones) & ~np.tril(ones, k=-W)      # below the diagonal, above its W-th sub-diagonal


def additive_window(T, W):
    return np.where(S["sliding_window_mask"](T, W), 0.0, -np.inf)


VARIANTS = {
    "softcap": (
        [Attempt("the solution", S["softcap"]),
         Attempt("float32", in_float32(S["softcap"])),
         Attempt("tanh written with exp", lambda x, cap: cap * (1 - 2 / (np.exp(2 * x / cap) + 1))),
         Attempt("a list", as_list(S["softcap"]))],
        [Attempt("clips at ±cap", lambda x, cap: np.clip(x, -cap, cap), hint="soft-capping is smooth"),
         Attempt("tanh(x) · cap", lambda x, cap: cap * np.tanh(x), hint="divide by cap inside"),
         Attempt("tanh(x / cap) alone", lambda x, cap: np.tanh(x / cap), hint="multiply by cap outside"),
         Attempt("x / cap · tanh", lambda x, cap: x / cap * np.tanh(cap)),
         forgets_return(S["softcap"])]),
    "sliding_window_mask": (
        [Attempt("the solution: bool", S["sliding_window_mask"]),
         Attempt("tril minus a lower tril", window_by_tril),
         Attempt("additive 0 / −inf", additive_window),
         Attempt("0/1 as a list", as_list(lambda T, W: S["sliding_window_mask"](T, W).astype(int)))],
        [Attempt("W + 1 keys: t − s ≤ W", lambda T, W: window_by_tril(T, W + 1), hint="a window of W holds"),
         Attempt("not causal: |t − s| < W",
                 lambda T, W: np.abs(np.arange(T)[:, None] - np.arange(T)[None, :]) < W,
                 hint="the window is AND-ed"),
         Attempt("the causal mask alone", lambda T, W: np.tril(np.ones((T, T), bool))),
         Attempt("the window hides the query itself", lambda T, W: window_by_tril(T, W) & ~np.eye(T, dtype=bool)),
         forgets_return(S["sliding_window_mask"])]),
}
