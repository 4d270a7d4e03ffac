"""Penalties on tokens already seen: repetition (CTRL), frequency and presence (OpenAI).

All three read a token history: ``token_ids`` is a 1-D sequence of ids for ``[V]`` logits, or a
list of B such sequences (or a ``[B, S]`` int array) for ``[B, V]`` logits. The history is exactly
what counts: pass ``history[prompt_len:]`` to ignore the prompt. ``Sampler`` does that slicing, by
default counting the prompt for the repetition penalty (HF and vLLM do) and not for frequency and
presence (OpenAI counts tokens *sampled so far*; vLLM applies them to the output only). llama.cpp
applies all three to its last ``penalty_last_n`` (64) tokens, prompt included.

Repetition (Keskar et al. 2019, CTRL; HF's RepetitionPenaltyLogitsProcessor), θ > 0, θ = 1 off:
    z_i -> z_i / θ  if z_i > 0,   z_i · θ  otherwise,     for every token i seen at least once
(dividing a negative logit would *raise* it, hence the sign split). Counts do not matter.
Example: z = [2, -1, 0.5], seen {0, 1}, θ = 2 -> [1, -2, 0.5].

Frequency and presence (OpenAI), with c_i the number of times token i occurs in the history:
    z_i -> z_i - α_f · c_i - α_p · [c_i > 0]
Example: z = [1, 1, 1], history [0, 0, 2], α_f = 0.5, α_p = 1 -> [-1, 1, -0.5].
"""
from __future__ import annotations

import math

import numpy as np

from .checks import check_float_array


def token_counts(token_ids, shape: tuple[int, ...]) -> np.ndarray:
    """Occurrence counts ``[V]`` (or ``[B, V]``) of a history, validated against ``shape``."""
    V = shape[-1]
    rows = [token_ids] if len(shape) == 1 else list(token_ids)
    if len(shape) == 2 and len(rows) != shape[0]:
        raise ValueError(f"[B, V] logits need one history per row: B = {shape[0]}, "
                         f"got {len(rows)} histories")
    counts = np.zeros((len(rows), V), dtype=np.int64)              # [B, V]
    for b, row in enumerate(rows):
        ids = np.asarray(row)                                      # [S]
        if ids.size and (ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer)):
            raise TypeError(f"a token history must be a 1-D sequence of ints, got {ids.dtype} "
                            f"with shape {ids.shape}")
        if ids.size and (ids.min() < 0 or ids.max() >= V):
            raise ValueError(f"token ids must be in [0, {V}), got range "
                             f"[{ids.min()}, {ids.max()}]")
        counts[b] = np.bincount(ids.astype(np.int64), minlength=V)  # [S] -> [V]
    return counts.reshape(shape)                                   # [V] or [B, V]


def check_finite(value: float, name: str) -> float:
    """``value`` as a finite float, else TypeError/ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return float(value)


def check_repetition_penalty(penalty: float) -> float:
    """θ as a float > 0 (1 = off), else TypeError/ValueError."""
    theta = check_finite(penalty, "repetition_penalty")
    if theta <= 0.0:
        raise ValueError(f"repetition_penalty must be > 0 (1 = off), got {theta}")
    return theta


def repetition_penalty(logits: np.ndarray, token_ids, penalty: float) -> np.ndarray:
    """CTRL repetition penalty on every token of ``token_ids``. Shape and dtype kept."""
    theta = check_repetition_penalty(penalty)
    check_float_array(logits)
    seen = token_counts(token_ids, logits.shape) > 0               # [..., V]  bool
    theta = logits.dtype.type(theta)                               # subtle: keep float32
    penalised = np.where(logits > 0, logits / theta, logits * theta)   # [..., V]
    return np.where(seen, penalised, logits)                       # [..., V]


def frequency_presence_penalty(logits: np.ndarray, token_ids, frequency: float = 0.0,
                               presence: float = 0.0) -> np.ndarray:
    """OpenAI's z - α_f · count - α_p · [count > 0]. Shape and dtype kept; α may be negative."""
    alpha_f = check_finite(frequency, "frequency_penalty")
    alpha_p = check_finite(presence, "presence_penalty")
    check_float_array(logits)
    counts = token_counts(token_ids, logits.shape)                 # [..., V]  int64
    c = counts.astype(logits.dtype)                                # [..., V]  subtle: not float64
    present = (counts > 0).astype(logits.dtype)                    # [..., V]  0 or 1
    return logits - alpha_f * c - alpha_p * present                # [..., V]
