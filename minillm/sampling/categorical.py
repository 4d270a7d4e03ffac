"""Weighted random draw (inverse CDF): pick token i with probability p_i.
Where it runs — shared (Sampler, for the engine and --reference alike): categorical.

Lay the probabilities end to end on [0, total): token i owns [cdf_{i-1}, cdf_i). Draw
u ~ Uniform[0, 1) and return the token whose interval holds u · total,

    i = #{j : cdf_j <= u · total}      (``searchsorted(cdf, u · total, side="right")``).

The explainer articles' example: p = [0.5, 0.3, 0.15, 0.05] -> cdf = [0.5, 0.8, 0.95, 1.0]; u in [0, 0.5)
gives token 0, [0.5, 0.8) token 1, [0.8, 0.95) token 2, [0.95, 1) token 3.

subtle: the cumulative sum is taken in float64 and scaled by its own last entry (not assumed to be
1), so a float32 distribution that sums to 0.9999999 is still sampled exactly. Each row is first
divided by its largest entry, so the sum lies in [1, V] and cannot overflow (float64 weights of
1e308 would sum to inf and every draw would land past the end) nor sink into subnormals; dividing
by a power of two changes no draw. A zero-probability token owns an empty interval and is never
chosen, the trailing ones included: u <= 1 - 2⁻⁵³, so with round-to-nearest u · total < total
for every total >= 1, and the count stops at the last token with p > 0 (no fallback is needed).
Randomness only from the ``np.random.Generator`` passed in: same seed, same draws.
"""
from __future__ import annotations

import numpy as np


def categorical(probs: np.ndarray, rng: np.random.Generator) -> int | np.ndarray:
    """One draw per row of ``probs`` (``[V]`` -> int, ``[B, V]`` -> int64 ``[B]``)."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a np.random.Generator (e.g. np.random.default_rng(0)), "
                        f"got {type(rng).__name__}")
    if not isinstance(probs, np.ndarray) or probs.ndim not in (1, 2) or probs.shape[-1] == 0:
        raise ValueError("probs must be a NumPy array of shape [V] or [B, V] with V >= 1")
    p = np.atleast_2d(probs).astype(np.float64)                    # [B, V]
    if not np.isfinite(p).all() or (p < 0).any():
        raise ValueError("probs must be finite and >= 0")
    top = p.max(axis=-1, keepdims=True)                            # [B, 1]
    if not (top > 0).all():
        raise ValueError("a row of probs sums to 0: there is nothing to sample")
    cdf = np.cumsum(p / top, axis=-1)                              # [B, V]  in [0, V]: no overflow
    total = cdf[:, -1:]                                            # [B, 1]  >= 1
    u = rng.random(size=(p.shape[0], 1))                           # [B, 1]  float64 in [0, 1)
    ids = (cdf <= u * total).sum(axis=-1)                          # [B]  searchsorted, side="right"
    return int(ids[0]) if probs.ndim == 1 else ids.astype(np.int64)
