"""Solutions to the exercises of notebook 02."""
import numpy as np


def embedding_lookup(wte, ids):
    return wte[ids]                               # [V, C] indexed by [T] -> [T, C]


def cosine_similarity(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
