"""Temperature: divide the logits by T before softmax, p_i = exp(z_i / T) / Σ_j exp(z_j / T).
Where it runs — shared (Sampler, for the engine and --reference alike): apply_temperature.

In probabilities this is p_i ∝ q_i^(1/T) where q = softmax(z): T < 1 sharpens the distribution,
T > 1 flattens it, T = 1 changes nothing. Example from the explainer articles,
q = [0.5, 0.3, 0.15, 0.05]: T = 0.5 gives [0.6849, 0.2466, 0.0616, 0.0068] and T = 2 gives
[0.3790, 0.2936, 0.2076, 0.1199] (the articles' rounded [0.64, 0.24, 0.09, 0.03] and
[0.33, 0.27, 0.22, 0.18] are illustrations, not this formula; tests/sampling/test_temperature.py
checks the exact values).

T = 0 is defined as greedy: the limit T -> 0+ puts all mass on the argmax, so we keep only the
argmax (lowest id on ties, see ``greedy``) and mask the rest to -inf instead of dividing by zero.
T < 0 would invert the ranking and is rejected. Alternatives: llama.cpp's temperature sampler does
the same for T <= 0 (keeps only the max logit); vLLM switches to greedy below T = 1e-5; HF's
TemperatureLogitsWarper rejects T = 0 (greedy is ``do_sample=False`` there).
"""
from __future__ import annotations

import math

import numpy as np

from .checks import check_logits
from .greedy import greedy_mask


def check_temperature(temperature: float) -> float:
    """``temperature`` as a float >= 0 (finite), else ValueError/TypeError."""
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float, np.number)):
        raise TypeError(f"temperature must be a number, got {type(temperature).__name__}")
    temperature = float(temperature)
    if not (math.isfinite(temperature) and temperature >= 0.0):
        raise ValueError(f"temperature must be a finite number >= 0 (0 means greedy), "
                         f"got {temperature}")
    return temperature


def apply_temperature(logits: np.ndarray, temperature: float) -> np.ndarray:
    """``(z - max z) / T`` for T > 0, the greedy mask for T = 0; ``[V]`` or ``[B, V]``, dtype kept.

    subtle: the max is subtracted first (softmax does not see a per-row constant) so that a tiny T
    cannot overflow a large logit to +inf; the most likely token sits at 0 and the rest at <= 0,
    where an overflow just gives -inf (probability 0, which is the right limit).
    """
    check_logits(logits)
    t = logits.dtype.type(check_temperature(temperature))  # subtle: a T below the dtype's
    if t == 0:                                             # smallest number rounds to 0: greedy
        return greedy_mask(logits)                                 # [..., V]  argmax kept
    shifted = logits - logits.max(axis=-1, keepdims=True)         # [..., V]  max entry is 0
    with np.errstate(over="ignore"):                               # -big / tiny T -> -inf: fine
        return shifted / t                                         # [..., V]  dtype kept
