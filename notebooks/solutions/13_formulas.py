"""Solutions to the exercises of notebook 13."""
import numpy as np


def rms_norm(x, w, eps):
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * w


def rope_rotate(x, positions, theta):
    D = x.shape[-1]
    angles = np.asarray(positions)[:, None] * theta ** (-2 * np.arange(D // 2) / D)   # [T, D/2]
    a, b = x[:, :D // 2], x[:, D // 2:]
    return np.concatenate([a * np.cos(angles) - b * np.sin(angles), b * np.cos(angles) + a * np.sin(angles)], axis=-1)
