"""Top-k: keep the k most probable tokens, mask the rest to -inf.
Where it runs — shared (Sampler, for the engine and --reference alike): top_k; definition only (top_k runs, tested equal): top_k_sorted.

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

``top_k_sorted`` is that definition as written (a stable sort of the whole row). ``top_k`` gives
the same result without sorting (tested equal): ``np.argpartition`` finds k largest logits in O(V) (no full sort; on a row of 50,000+ it
first keeps the few logits above a threshold that provably leaves the k largest in,
``candidates``), in no particular order and with ties at the k-th value broken arbitrarily; every logit above the k-th value is kept, and the
remaining slots go to the tokens equal to it, lowest ids first. ``top_k_ids`` returns those ids
(ascending), which lets the sampler run every later step on k entries instead of V.
"""
from __future__ import annotations

import numpy as np

from .checks import check_logits, masked


def top_k_sorted(logits: np.ndarray, k: int) -> np.ndarray:
    """The definition: order the tokens by logit, descending, ties by lower id first (a stable
    sort), keep the first k. ``[V]`` or ``[B, V]``, dtype kept."""
    if is_off(logits, k):
        return logits.copy()                                       # [..., V]
    order = np.argsort(-logits, axis=-1, kind="stable")            # [..., V]  best first
    return keep_only(logits, order[..., :k])                       # [..., V]  the first k


def top_k(logits: np.ndarray, k: int) -> np.ndarray:
    """Mask all but the k largest logits (ties: lower id kept). ``[V]`` or ``[B, V]``, dtype kept.
    The same as ``top_k_sorted``, in O(V)."""
    if is_off(logits, k):
        return logits.copy()                                       # [..., V]
    return keep_only(logits, top_k_ids(logits, k))                 # [..., V]  exactly k kept


def keep_only(logits: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """``logits`` [..., V] with every entry but ``ids`` [..., k] masked to -inf."""
    keep = np.zeros(logits.shape, dtype=bool)                      # [..., V]
    np.put_along_axis(keep, ids, True, axis=-1)                    # [..., V]
    return masked(logits, keep)                                    # [..., V]


def top_k_ids(logits: np.ndarray, k: int) -> np.ndarray:
    """The ids ``top_k`` keeps, ascending: ``[V] -> [k]``, ``[B, V] -> [B, k]`` (1 <= k <= V).

    Rows with fewer than k finite logits include some -inf ids (the lowest): masked either way.
    """
    rows = np.atleast_2d(logits)                                   # [B, V]
    out = np.empty((rows.shape[0], k), dtype=np.int64)             # [B, k]
    for b, z in enumerate(rows):
        pool = candidates(z, k)                                    # [n ≥ k] ids holding the top k
        n = len(pool)
        best = pool[np.argpartition(z[pool], n - k)[n - k:]]       # [k]  any order, ties arbitrary
        kth = z[best].min()                                        # the k-th largest value
        above = best[z[best] > kth]                                # [< k] all of them are in best
        tied = np.flatnonzero(z == kth)[:k - len(above)]           # lowest tied ids fill the rest
        out[b] = np.sort(np.concatenate([above, tied]))            # [k] ascending
    return out.reshape(logits.shape[:-1] + (k,))


def candidates(z: np.ndarray, k: int, stride: int = 16) -> np.ndarray:
    """Ids that surely include the k largest of ``z`` [V]: usually a few times k, else all V.

    Speed only (the partition over V is most of a sample's cost at V = 50,000+). Take every
    stride-th logit, and t = the value ranked 2k/stride + 1 among them: about 2k logits of the
    whole row should reach t. If at least k do, the k-th largest is >= t, so every one of the k
    largest is among them — the partition then runs on those few. If fewer than k do, all V.
    """
    sample = z[::stride]                                           # [V / stride]
    r = 2 * k // stride + 1                                        # rank of t in the sample
    if len(z) < 4096 or r > len(sample):
        return np.arange(len(z))                                   # [V] small rows: all of them
    t = np.partition(sample, len(sample) - r)[len(sample) - r]     # r-th largest of the sample
    pool = np.flatnonzero(z >= t)                                  # [n] every logit reaching t
    return pool if len(pool) >= k else np.arange(len(z))


def is_off(logits: np.ndarray, k: int) -> bool:
    """Check both arguments; k = 0 or k >= V keeps every token."""
    check_logits(logits)
    k = check_top_k(k)
    return k == 0 or k >= logits.shape[-1]


def check_top_k(k: int) -> int:
    """``k`` as an int >= 0 (0 = off), else ValueError/TypeError."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"top_k must be an int (0 = off), got {type(k).__name__}")
    if k < 0:
        raise ValueError(f"top_k must be >= 0 (0 = off), got {k}")
    return int(k)
