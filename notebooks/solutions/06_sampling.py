"""Solutions to the exercises of notebook 06."""
import numpy as np


def softmax(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))      # as in notebook 03: over the last axis
    return e / e.sum(axis=-1, keepdims=True)


def temperature(logits, T):
    return softmax(logits / T)


def top_k(logits, k):
    order = sorted(range(len(logits)), key=lambda i: (-logits[i], i))   # ties: lower id first
    out = np.full_like(logits, -np.inf)
    out[order[:k]] = logits[order[:k]]
    return out


def top_p(logits, p):
    probs = softmax(logits)
    order = sorted(range(len(logits)), key=lambda i: (-logits[i], i))
    out, mass = np.full_like(logits, -np.inf), 0.0
    for i in order:
        if mass >= p - 1e-12:                      # the set before i already reaches p
            break
        out[i] = logits[i]
        mass += probs[i]
    return out


def min_p(logits, m):
    probs = softmax(logits)
    return np.where(probs >= m * probs.max(), logits, -np.inf)
