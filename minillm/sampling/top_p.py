"""Top-p (nucleus): keep the smallest set of most probable tokens whose mass is >= p.
Where it runs — shared (Sampler, for the engine and --reference alike): top_p; definition only (top_p runs, tested equal): top_p_sorted.

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
form. The explainer articles' example code (cumsum >= top_p, first index + 1) is this rule.

Two forms, tested equal: ``top_p_sorted`` is the definition (one full stable sort, O(V log V));
``top_p`` sorts only candidates — the M largest logits, M = 64, 256, … until their mass reaches
p — so a peaked distribution costs O(V) and a 50,000-token sort is never paid for 20 survivors.
"""
from __future__ import annotations

import numpy as np

from ..functional import softmax
from .checks import check_logits, check_probability, masked

TOL = 1e-12   # masses this close to p count as reaching p (float64 rounding, see above)


def keep_prefix(sorted_p: np.ndarray, p: float, total: float) -> np.ndarray:
    """[M] probabilities in descending order -> [M] bool: keep_j <=> mass before j < p · total."""
    before = np.zeros_like(sorted_p)                               # [M]
    before[1:] = np.cumsum(sorted_p)[:-1]                          # [M]  mass strictly before j
    keep = before < (p - TOL) * total                              # [M]
    keep[0] = True                                                 # the top token always
    return keep


def top_p_sorted(logits: np.ndarray, p: float) -> np.ndarray:
    """The definition: stable-sort every token, keep the prefix. ``[V]`` or ``[B, V]``."""
    check_logits(logits)
    p = check_probability(p, "top_p", low_open=True)
    if p == 1.0:
        return logits.copy()                                       # [..., V]  off
    z = np.atleast_2d(logits)                                      # [B, V]
    keep = np.zeros(z.shape, dtype=bool)                           # [B, V]
    for b, row in enumerate(z):
        probs = softmax(row.astype(np.float64))                    # [V] float64
        order = np.argsort(-row, kind="stable")                    # [V] ties: lower id first
        keep[b, order] = keep_prefix(probs[order], p, probs.sum())
    return masked(logits, keep.reshape(logits.shape))              # [..., V]


def top_p(logits: np.ndarray, p: float) -> np.ndarray:
    """``top_p_sorted``'s result, sorting only the candidates. ``[V]`` or ``[B, V]``, dtype kept.

    Candidates: every token whose logit is >= the M-th largest (ties at that value included, so
    they are a PREFIX of the full order), ids ascending, then stably sorted. If their mass reaches
    p · total, no later token can be kept (the first one left out has at least that mass before
    it); otherwise M grows 4× and we look again.
    """
    check_logits(logits)
    p = check_probability(p, "top_p", low_open=True)
    if p == 1.0:
        return logits.copy()                                       # [..., V]  off
    z = np.atleast_2d(logits)                                      # [B, V]
    V = z.shape[-1]
    keep = np.zeros(z.shape, dtype=bool)                           # [B, V]
    for b, row in enumerate(z):
        probs = softmax(row.astype(np.float64))                    # [V] float64
        total, M = probs.sum(), min(64, V)
        while True:
            mth = np.partition(row, V - M)[V - M]                  # the M-th largest logit
            cand = np.flatnonzero(row >= mth)                      # [≥ M] ids ascending, ties all in
            cand = cand[np.argsort(-row[cand], kind="stable")]     # [≥ M] descending, ties by id
            if np.cumsum(probs[cand])[-1] >= (p - TOL) * total or M == V:   # the same sum as keep_prefix's
                break
            M = min(4 * M, V)
        keep[b, cand] = keep_prefix(probs[cand], p, total)
    return masked(logits, keep.reshape(logits.shape))              # [..., V]
