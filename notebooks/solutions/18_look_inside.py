"""Solutions to the exercises of notebook 18."""
import numpy as np


def logit_lens(resid, w, head, eps):
    rms = np.sqrt(np.mean(resid * resid, axis=-1, keepdims=True) + eps)   # [L + 1, T, 1]: each vector's own
    return (resid / rms * w) @ head                  # [L + 1, T, C] @ [C, V] -> [L + 1, T, V]


def prefix_matching(pattern, n):
    t = np.arange(n, 2 * n)                          # the queries of the second copy
    return pattern[:, t, t - n + 1].mean(-1)         # [H, n] -> [H]: the key after the first copy
