"""Min-p: keep the tokens at least ``min_p`` times as likely as the most likely one.
Where it runs — shared (Sampler, for the engine and --reference alike): min_p.

    keep_i  <=>  p_i >= min_p · p_max  <=>  exp(z_i - z_max) >= min_p

(the softmax normaliser cancels in p_i / p_max, so no softmax is needed). The most likely token
always survives; min_p = 0 is "off", min_p = 1 keeps only the tokens tied with the maximum. The
boundary is inclusive: a token exactly at min_p · p_max is kept (HF removes p < threshold; llama.cpp
compares logits with z_max + log(min_p): the same rule).
Example: p = [0.5, 0.3, 0.15, 0.05], min_p = 0.2 -> threshold 0.1 -> keeps {0, 1, 2}.

Where in the chain: the rule is applied to the distribution at that point, so its place matters.
We follow HF (MinPLogitsWarper after temperature, top-k and top-p) and vLLM (after temperature):
min-p sees the tempered distribution. llama.cpp's default chain runs min-p before temperature
(temperature is its last step), so there the threshold is on the T = 1 distribution.
subtle: the ratio is computed in float64 so a float32 rounding cannot flip a token at the edge.
"""
from __future__ import annotations

import numpy as np

from .checks import check_logits, check_probability, masked


def min_p(logits: np.ndarray, min_p: float) -> np.ndarray:
    """Mask the tokens with p_i < min_p · p_max. ``[V]`` or ``[B, V]``, dtype kept."""
    check_logits(logits)
    threshold = check_probability(min_p, "min_p", low_open=False)
    if threshold == 0.0:
        return logits.copy()                                       # [..., V]  off
    z = logits.astype(np.float64)                                  # [..., V]
    ratio = np.exp(z - z.max(axis=-1, keepdims=True))              # [..., V]  p_i / p_max in [0, 1]
    return masked(logits, ratio >= threshold)                      # [..., V]
