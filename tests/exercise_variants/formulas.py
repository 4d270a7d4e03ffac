"""Variants of the exercises of notebook 13 (RMSNorm, RoPE's rotation)."""
import numpy as np

from .common import SOLUTIONS as S, Attempt, as_list, forgets_return, in_float32


def rope_by_complex_numbers(x, positions, theta):
    D = x.shape[-1]
    z = (x[:, :D // 2] + 1j * x[:, D // 2:]) * np.exp(1j * np.outer(positions, theta ** (-2 * np.arange(D // 2) / D)))
    return np.concatenate([z.real, z.imag], axis=-1)


def rope_with(x, positions, theta, adjacent=False, sign=1.0, exponent=2.0):
    D = x.shape[-1]
    t = sign * np.outer(positions, theta ** (-exponent * np.arange(D // 2) / D))
    if adjacent:
        out = x.copy()
        out[:, 0::2] = x[:, 0::2] * np.cos(t) - x[:, 1::2] * np.sin(t)
        out[:, 1::2] = x[:, 1::2] * np.cos(t) + x[:, 0::2] * np.sin(t)
        return out
    a, b = x[:, :D // 2], x[:, D // 2:]
    return np.concatenate([a * np.cos(t) - b * np.sin(t), b * np.cos(t) + a * np.sin(t)], axis=-1)


VARIANTS = {
    "rms_norm": (
        [Attempt("the solution", S["rms_norm"]),
         Attempt("float32", in_float32(S["rms_norm"])),
         Attempt("by the vector's length", lambda x, w, eps: x / np.sqrt(
             np.linalg.norm(x, axis=-1, keepdims=True) ** 2 / x.shape[-1] + eps) * w),
         Attempt("a list", as_list(S["rms_norm"]))],
        [Attempt("the variance about the mean", lambda x, w, eps: x / np.sqrt(x.var(-1, keepdims=True) + eps) * w,
                 hint="that is the variance about the mean"),
         Attempt("eps outside the root", lambda x, w, eps: x / (np.sqrt((x * x).mean(-1, keepdims=True)) + eps) * w,
                 hint="eps goes inside the square root"),
         Attempt("no eps", lambda x, w, eps: x / np.sqrt((x * x).mean(-1, keepdims=True)) * w,
                 hint="you left out eps"),
         Attempt("forgets w", lambda x, w, eps: x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)),
         forgets_return(S["rms_norm"])]),
    "rope_rotate": (
        [Attempt("the solution", S["rope_rotate"]),
         Attempt("complex numbers", rope_by_complex_numbers),
         Attempt("float32", in_float32(S["rope_rotate"])),
         Attempt("a list", as_list(S["rope_rotate"]))],
        [Attempt("adjacent pairs", lambda x, p, th: rope_with(x, p, th, adjacent=True),
                 hint="you rotated adjacent pairs"),
         Attempt("the other way", lambda x, p, th: rope_with(x, p, th, sign=-1.0), hint="you turned the other way"),
         Attempt("theta^(−i/D)", lambda x, p, th: rope_with(x, p, th, exponent=1.0), hint="θ_i = theta^(−2i/D)"),
         Attempt("positions from 0", lambda x, p, th: rope_with(x, np.arange(len(x)), th)),
         forgets_return(S["rope_rotate"])]),
}
