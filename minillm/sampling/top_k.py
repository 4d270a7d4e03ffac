"""Top-k: keep the k most probable tokens, mask the rest to -inf.

Definition (ours): sort the tokens by logit, descending, ties broken by LOWER id first; keep the
first k. Exactly k tokens survive (fewer only if fewer than k are finite: masked entries stay
masked). k = 0 or k >= V means "off" (the explainer articles' table writes top-k 0 for creative
writing).
Example: z = [1, 3, 3, 2], k = 2 -> [-inf, 3, 3, -inf]; k = 1 -> [-inf, 3, -inf, -inf] (id 1 wins
the tie with id 2).

Alternatives: HF's TopKLogitsWarper removes logits strictly below the k-th largest value, so every
token tied with the k-th survives and more than k may be kept; vLLM does the same with a threshold;
llama.cpp partially sorts the candidates, leaving the order of ties unspecified. We keep exactly k
so the support is a function of the logits alone, which the tests check.

How: ``np.argpartition`` finds k largest logits in O(V) (no full sort), in no particular order and
with ties at the k-th value broken arbitrarily; every logit above the k-th value is kept, and the
remaining slots go to the tokens equal to it, lowest ids first. ``top_k_ids`` returns those ids
(ascending), which lets the sampler run every later step on k entries instead of V.
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


def top_k_ids(logits: np.ndarray, k: int) -> np.ndarray:
    """The ids ``top_k`` keeps, ascending: ``[V] -> [k]``, ``[B, V] -> [B, k]`` (1 <= k <= V).

    Rows with fewer than k finite logits include some -inf ids (the lowest): masked either way.
    """
    rows = np.atleast_2d(logits)                                   # [B, V]
    V = rows.shape[-1]
    out = np.empty((rows.shape[0], k), dtype=np.int64)             # [B, k]
    for b, z in enumerate(rows):
        best = np.argpartition(z, V - k)[V - k:]                   # [k]  any order, ties arbitrary
        kth = z[best].min()                                        # the k-th largest value
        above = best[z[best] > kth]                                # [< k] all of them are in best
        tied = np.flatnonzero(z == kth)[:k - len(above)]           # lowest tied ids fill the rest
        out[b] = np.sort(np.concatenate([above, tied]))            # [k] ascending
    return out.reshape(logits.shape[:-1] + (k,))


def top_k(logits: np.ndarray, k: int) -> np.ndarray:
    """Mask all but the k largest logits (ties: lower id kept). ``[V]`` or ``[B, V]``, dtype kept."""
    check_logits(logits)
    k = check_top_k(k)
    if k == 0 or k >= logits.shape[-1]:
        return logits.copy()                                       # [..., V]  off
    keep = np.zeros(logits.shape, dtype=bool)                      # [..., V]
    np.put_along_axis(keep, top_k_ids(logits, k), True, axis=-1)   # [..., V]  exactly k kept
    return masked(logits, keep)                                    # [..., V]
