"""Solutions to the exercises of notebook 02."""
import numpy as np


def embedding_lookup(wte, ids):
    return wte[ids]                               # [V, C] indexed by [T] -> [T, C]


def cosine_similarity(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def rope_rotate(x, positions, theta):
    half = x.shape[-1] // 2
    i = np.arange(half)                                           # pair index
    angles = np.asarray(positions)[:, None] * theta ** (-2 * i / x.shape[-1])   # [T, D/2]  m·θ_i
    a, b = x[:, :half], x[:, half:]                               # [T, D/2] each: the two halves
    return np.concatenate([a * np.cos(angles) - b * np.sin(angles),
                           b * np.cos(angles) + a * np.sin(angles)], axis=-1)
