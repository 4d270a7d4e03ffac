"""Input checks shared by every sampler: what a logits array must look like.

A logits array is ``[V]`` (one distribution) or ``[B, V]`` (one per row), of a floating dtype.
Entries may be ``-inf`` (a token already masked out), never ``NaN`` or ``+inf`` (a ``+inf`` logit
would make softmax ``inf / inf = NaN``), and every row needs at least one finite entry: an
all-masked row has no distribution to sample from.
"""
from __future__ import annotations

import numpy as np


def check_float_array(logits: np.ndarray, what: str = "logits") -> np.ndarray:
    """Return ``logits`` unchanged if it is a ``[V]`` or ``[B, V]`` float array, else raise.

    subtle: the edits that keep the dtype (``z + dtype.type(b)``) would silently truncate a
    bias or penalty to an integer on integer logits, hence the dtype check."""
    if not isinstance(logits, np.ndarray) or not np.issubdtype(logits.dtype, np.floating):
        raise TypeError(f"{what} must be a floating NumPy array of shape [V] or [B, V], "
                        f"got {type(logits).__name__} {getattr(logits, 'dtype', '')}")
    if logits.ndim not in (1, 2) or logits.shape[-1] == 0:
        raise ValueError(f"{what} must have shape [V] or [B, V] with V >= 1, got {logits.shape}")
    return logits


def check_logits(logits: np.ndarray, what: str = "logits") -> np.ndarray:
    """``check_float_array``, and no NaN / +inf, and a finite entry in every row; else raise."""
    check_float_array(logits, what)
    top = logits.max(axis=-1)          # [B] or []: NaN if the row holds one, +inf if it holds one,
    if np.isfinite(top).all():         # -inf if every entry is -inf; else finite: all is well
        return logits                  # (one pass over the logits, no [B, V] temporaries)
    if np.isnan(top).any() or np.isposinf(top).any():
        raise ValueError(f"{what} contain NaN or +inf; only finite values and -inf (masked) "
                         f"are allowed")
    raise ValueError(f"{what}: every entry of a row is -inf (all tokens masked), so there "
                     f"is no distribution to sample from")


def check_probability(value: float, name: str, low_open: bool) -> float:
    """``value`` as a float in (0, 1] (``low_open``) or [0, 1], else a ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    value = float(value)
    ok = (0.0 < value <= 1.0) if low_open else (0.0 <= value <= 1.0)
    if not ok:
        allowed = "(0, 1]" if low_open else "[0, 1]"
        raise ValueError(f"{name} must be in {allowed}, got {value}")
    return value


def masked(logits: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Copy of ``logits`` with the entries where ``keep`` is False set to -inf (dtype kept)."""
    out = logits.copy()                                            # [..., V]
    out[~keep] = -np.inf                                           # [..., V]  float32 stays float32
    return out
