"""Greedy decoding: always pick the most probable token, ``argmax_i z_i``.
Where it runs — shared (Sampler at T = 0, for the engine and --reference alike): greedy.

No randomness: the same logits give the same token. Ties go to the LOWEST id (``np.argmax``
returns the first maximum), so the choice is deterministic even when two logits are equal.
Softmax is monotone, so the argmax of the logits is the argmax of the probabilities and no
softmax is needed. Example: ``greedy(np.array([1., 3., 3.]))`` -> 1.
"""
from __future__ import annotations

import numpy as np

from .checks import check_logits, masked


def greedy(logits: np.ndarray) -> int | np.ndarray:
    """The argmax id: an ``int`` for ``[V]`` logits, an int64 array ``[B]`` for ``[B, V]``."""
    check_logits(logits)
    ids = np.argmax(logits, axis=-1)                               # [B, V] -> [B]  (or [V] -> [])
    return int(ids) if logits.ndim == 1 else ids.astype(np.int64)


def greedy_mask(logits: np.ndarray) -> np.ndarray:
    """``logits`` with every entry but the (lowest-id) argmax set to -inf: greedy, in logit space."""
    keep = np.zeros(logits.shape, dtype=bool)                      # [..., V]
    best = np.argmax(logits, axis=-1)[..., None]                   # [..., 1]
    np.put_along_axis(keep, best, True, axis=-1)                   # [..., V]  one True per row
    return masked(logits, keep)                                    # [..., V]
