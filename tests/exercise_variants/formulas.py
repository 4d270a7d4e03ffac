"""Variants of the exercise of notebook 13 (RMSNorm)."""
import numpy as np

from .common import SOLUTIONS as S, Attempt, as_list, forgets_return, in_float32


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
}
