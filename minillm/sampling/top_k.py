"""Top-k: keep the k most probable tokens, mask the rest to -inf.

Definition (ours): sort the tokens by logit, descending, ties broken by LOWER id first; keep the
first k. Exactly k tokens survive (fewer only if fewer than k are finite: masked entries stay
masked). k = 0 or k >= V means "off" (the seed's table writes top-k 0 for creative writing).
Example: z = [1, 3, 3, 2], k = 2 -> [-inf, 3, 3, -inf]; k = 1 -> [-inf, 3, -inf, -inf] (id 1 wins
the tie with id 2).

Alternatives: HF's TopKLogitsWarper removes logits strictly below the k-th largest value, so every
token tied with the k-th survives and more than k may be kept; vLLM does the same with a threshold;
llama.cpp partially sorts the candidates, leaving the order of ties unspecified. We keep exactly k
so the support is a function of the logits alone, which the tests check.

How: ``np.partition`` finds the k-th largest value in O(V) (no full sort); every logit above it is
kept, and the remaining slots go to the tokens equal to it, lowest ids first (a running count).
"""
from __future__ import annotations

import numpy as np

from .checks import check_logits, masked


def check_top_k(k: int) -> int:
    """``k`` as an int >= 0 (0 = off), else ValueError/TypeError."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"top_k must be an int (0 = off), got {type(k).__name__}")
    if k < 0:
        raise ValueError(f"top_k must be >= 0 (0 = off), got {k}")
    return int(k)


def top_k(logits: np.ndarray, k: int) -> np.ndarray:
    """Mask all but the k largest logits (ties: lower id kept). ``[V]`` or ``[B, V]``, dtype kept."""
    check_logits(logits)
    k = check_top_k(k)
    if k == 0 or k >= logits.shape[-1]:
        return logits.copy()                                       # [..., V]  off
    V = logits.shape[-1]
    kth = np.partition(logits, V - k, axis=-1)[..., V - k, None]   # [..., 1]  k-th largest
    above = logits > kth                                           # [..., V]  fewer than k
    tied = logits == kth                                           # [..., V]  at the k-th value
    room = k - above.sum(axis=-1, keepdims=True)                   # [..., 1]  >= 1 slots left
    keep = above | (tied & (np.cumsum(tied, axis=-1) <= room))     # [..., V]  lowest tied ids
    return masked(logits, keep)                                    # [..., V]  exactly k kept
