"""The small numerical functions everything else uses — one place for each.
Where it runs — shared (every sampler, the engine's attention, training, --reference): softmax.

softmax(x)_i = exp(x_i - max x) / Σ_j exp(x_j - max x)

Subtracting the maximum changes nothing mathematically (it cancels between numerator and
denominator) but keeps ``exp`` from overflowing. A row that is entirely ``-inf`` (every option
masked) has no distribution; callers that can produce one must reject it first.
"""
from __future__ import annotations

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """softmax along ``axis``, in the dtype of ``x``.

    Example: softmax([0, ln 3]) = [0.25, 0.75]. Entries equal to -inf get probability exactly 0,
    which is how the causal mask removes the edges to the future.
    """
    e = x - x.max(axis=axis, keepdims=True)              # [..., N]  max entry becomes 0
    np.exp(e, out=e)                                      # [..., N]  exp(-inf) = 0 exactly
    e /= e.sum(axis=axis, keepdims=True)                  # [..., N]  rows sum to 1
    return e     # (in place on the one temporary: attention's [B, H, T, S] is the largest array)


def log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """log softmax(x) = x - max - log Σ exp(x - max), computed without forming softmax first.

    Example: log_softmax([0, 0]) = [-ln 2, -ln 2].
    """
    shifted = x - x.max(axis=axis, keepdims=True)                          # [..., N]
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))  # [..., N]


def cross_entropy(logits: np.ndarray, targets: np.ndarray) -> float:
    """Mean of -log p(target) over every position: logits [..., V], targets [...] -> scalar.

    This is the language-model loss: position t's logits score the token at t + 1, so callers pass
    ``logits[:, :-1]`` with ``targets = ids[:, 1:]`` (see ``GPT.loss``). The mean is accumulated in
    float64 so that long sequences do not lose digits; the logits themselves stay float32.
    """
    logp = log_softmax(logits)                                            # [..., V]
    picked = np.take_along_axis(logp, targets[..., None], axis=-1)[..., 0]  # [...]
    return float(-picked.astype(np.float64).mean())
