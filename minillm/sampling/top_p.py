"""Top-p (nucleus): keep the smallest set of most probable tokens whose mass is >= p.

Definition (ours): sort by probability, descending, ties broken by LOWER id first, and keep a
prefix: token j (in that order) is kept iff the mass of the tokens strictly before it is < p,

    keep_j  <=>  Σ_{i before j} p_i  <  p.

So the token that crosses p is included, the kept mass is >= p, and dropping the last kept token
leaves < p (minimal). The probabilities are those of the distribution at this point of the pipeline,
i.e. softmax of the (already masked) logits: renormalised after temperature and top-k. p = 1 means
"off" (no rounding can then drop a tail token). Example: p = [0.5, 0.3, 0.15, 0.05] with top_p = 0.8
keeps {0, 1} (0.5 < 0.8, then 0.8 >= 0.8 stops); top_p = 0.81 keeps {0, 1, 2}.

subtle: the mass is summed in float64 and compared with p times the row total (not assumed 1), and a
mass within TOL = 1e-12 of p counts as reaching it: softmax rounds 0.5 + 0.3 to 0.79999999999999993,
and without the tolerance top_p = 0.8 would keep a third token. (float32 logits carry only ~1e-7
relative precision, so for them the boundary is only as sharp as that.) At exact probability ties
the set is not unique and the lower id wins.

Alternatives: HF's TopPLogitsWarper sorts ascending and removes tokens whose cumulative mass is
<= 1 - p, keeping those above it: the same set up to rounding at the boundary, but torch.sort is not
stable, so ties there are broken arbitrarily. llama.cpp sorts descending and stops at the first
index whose cumulative sum is >= p (also including the crossing token); vLLM follows HF's ascending
form. The seed's example code (cumsum >= top_p, first index + 1) is this rule.
"""
from __future__ import annotations

import numpy as np

from ..functional import softmax
from .checks import check_logits, check_probability, masked

TOL = 1e-12   # masses this close to p count as reaching p (float64 rounding, see above)


def descending_order(logits: np.ndarray) -> np.ndarray:
    """Token ids by logit, largest first, ties by lower id first: ``[..., V]`` int64.

    By definition this is a stable sort of -z. subtle: NumPy's stable sort is ~10x slower than its
    (unstable, SIMD) quicksort on 50k floats, so we quicksort, number the runs of equal values,
    and quicksort the unique keys ``run · V + id``, which puts every run of ties in id order.
    """
    V = logits.shape[-1]
    order = np.argsort(-logits, axis=-1)                           # [..., V]  ties in any order
    s = np.take_along_axis(logits, order, axis=-1)                 # [..., V]  non-increasing
    run = np.zeros(order.shape, dtype=np.int64)                    # [..., V]
    run[..., 1:] = np.cumsum(s[..., 1:] != s[..., :-1], axis=-1)   # [..., V]  0, 0, 1, 2, 2, ...
    key = run * V + order                                          # [..., V]  unique per entry
    return np.take_along_axis(order, np.argsort(key, axis=-1), axis=-1)   # [..., V]


def candidates_descending(logits: np.ndarray) -> np.ndarray:
    """Ids of the finite logits (at most M per row, M = most finite in any row), in descending
    order with ties by lower id: ``[..., V] -> [..., M]``.

    Only finite entries can be kept, and after top-k there are few (50 of 50 257), so partition
    them out in O(V) and sort only those. Rows with fewer than M finite entries get some -inf ids
    at their end, with probability 0: never kept.
    """
    M = int(np.isfinite(logits).sum(axis=-1).max())
    if M == logits.shape[-1]:
        return descending_order(logits)                            # [..., V]
    cand = np.argpartition(-logits, M - 1, axis=-1)[..., :M]       # [..., M]  any order
    cand = np.sort(cand, axis=-1)                                  # [..., M]  id order: the tie
    sub = np.take_along_axis(logits, cand, axis=-1)                # [..., M]  break then is by id
    return np.take_along_axis(cand, descending_order(sub), axis=-1)   # [..., M]


def top_p(logits: np.ndarray, p: float) -> np.ndarray:
    """Mask all but the smallest top set with mass >= p. ``[V]`` or ``[B, V]``, dtype kept."""
    check_logits(logits)
    p = check_probability(p, "top_p", low_open=True)
    if p == 1.0:
        return logits.copy()                                       # [..., V]  off
    probs = softmax(logits.astype(np.float64))                     # [..., V]  float64
    order = candidates_descending(logits)                          # [..., M]  M <= V
    sorted_p = np.take_along_axis(probs, order, axis=-1)           # [..., M]  descending
    cum = np.cumsum(sorted_p, axis=-1)                             # [..., M]  inclusive mass
    before = np.zeros_like(cum)                                    # [..., M]
    before[..., 1:] = cum[..., :-1]                                # [..., M]  mass strictly before
    keep_sorted = before < (p - TOL) * cum[..., -1:]               # [..., M]  needed to reach p
    keep_sorted[..., 0] = True                                     # [..., M]  the top token always
    keep = np.zeros(logits.shape, dtype=bool)                      # [..., V]
    np.put_along_axis(keep, order, keep_sorted, axis=-1)           # [..., V]  back to id order
    return masked(logits, keep)                                    # [..., V]
