"""Solutions to the exercises of notebook 16."""
import numpy as np


def softcap(x, cap):
    return cap * np.tanh(x / cap)                 # ≈ x for |x| ≪ cap, bends towards ±cap


def sliding_window_mask(T, W):
    t, s = np.arange(T)[:, None], np.arange(T)[None, :]    # [T, 1] queries, [1, T] keys
    return (s <= t) & (t - s < W)                 # causal AND within the last W positions
