"""Logit bias and an allowed-token set: fixed edits of the logits that ignore the history.

Logit bias (OpenAI's ``logit_bias``, llama.cpp's ``--logit-bias``): ``z_i -> z_i + b_i`` for each
``{id: b}`` given. A bias of -inf bans a token outright (OpenAI's -100 is "in practice a ban").
Example: z = [0, 0, 0], bias {2: 1.5} -> [0, 0, 1.5].

Allowed set (vLLM's ``allowed_token_ids``): every token NOT in the set is masked to -inf, e.g. to
force an answer among "A/B/C/D" — the hard constraint a prompt ("only answer A/B/C/D") cannot give.
Example: z = [1, 2, 3], allowed {0, 2} -> [1, -inf, 3].
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np

from .checks import check_float_array, masked


def _check_id(token: int, V: int, what: str) -> int:
    if isinstance(token, bool) or not isinstance(token, (int, np.integer)):
        raise TypeError(f"{what} token ids must be ints, got {type(token).__name__}")
    if not 0 <= token < V:
        raise ValueError(f"{what} token id {token} is outside the vocabulary [0, {V})")
    return int(token)


def logit_bias(logits: np.ndarray, bias: Mapping[int, float]) -> np.ndarray:
    """``z + b`` on the ids in ``bias`` (finite or -inf values), every row alike. Dtype kept."""
    check_float_array(logits)
    out = logits.copy()                                            # [..., V]
    for token, b in bias.items():
        token = _check_id(token, logits.shape[-1], "logit_bias")
        b = float(b)
        if math.isnan(b) or b == math.inf:
            raise ValueError(f"logit_bias[{token}] must be finite or -inf (a ban), got {b}")
        out[..., token] += logits.dtype.type(b)                    # [...]
    return out


def allow_only(logits: np.ndarray, allowed: Iterable[int]) -> np.ndarray:
    """Mask every token not in ``allowed`` to -inf, every row alike. Dtype kept."""
    V = check_float_array(logits).shape[-1]
    ids = [_check_id(t, V, "allowed_ids") for t in allowed]
    if not ids:
        raise ValueError("allowed_ids is empty: at least one token must be allowed")
    keep = np.zeros(V, dtype=bool)                                 # [V]
    keep[ids] = True                                               # [V]
    return masked(logits, np.broadcast_to(keep, logits.shape))     # [..., V]
