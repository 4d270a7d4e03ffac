"""Normalisation: rescale each position's vector before attention and the FFN.

LayerNorm (GPT-2):  y = (x - mean(x)) / sqrt(var(x) + eps) * weight + bias
RMSNorm   (Llama):  y = x / sqrt(mean(x²) + eps) * weight

Both act on the last axis (the C features of one position) and never mix positions, which is why
they are safe under the causal mask. ``var`` is the biased variance (divide by C), as PyTorch does.

``layer_norm`` and ``rms_norm`` are those lines as written. The model calls ``layer_norm_fast``
and ``rms_norm_fast``: the same arithmetic on one temporary, updated in place (a fresh [..., C]
array per step costs page faults on first touch, see ``ffn.gelu_tanh_fast``); tested equal.

Example: layer_norm([1, 3], weight=[1, 1], bias=[0, 0]) ≈ [-1, 1] (mean 2, variance 1).
"""
from __future__ import annotations

import numpy as np


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """x [..., C], weight [C], bias [C] -> [..., C]: the formula, one line."""
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps) * weight + bias


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    """x [..., C], weight [C] -> [..., C]: the formula, one line. No centring and no bias."""
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def mean_last(x: np.ndarray) -> np.ndarray:
    """x [..., C] -> [..., 1]: ``x.mean(-1, keepdims=True)``, the same float32 sum divided by C.

    Why not ``np.mean``: its Python wrapper (dtype and count bookkeeping) costs ~10 µs per call,
    more than the arithmetic on one position's 576 values; a decode step of a 30-layer Llama
    calls it 61 times (``benchmarks/README.md``, "Single stream").
    """
    s = np.add.reduce(x, axis=-1, keepdims=True)          # [..., 1]  Σ_c x_c
    s /= x.shape[-1]                                      # [..., 1]  ÷ C (as np.mean divides)
    return s


def layer_norm_fast(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """``layer_norm`` with every step after the centring in place on ``y``; ``x`` is not modified."""
    y = x - mean_last(x)                                  # [..., C]  centred (the one temporary)
    var = mean_last(np.square(y))                         # [..., 1]  biased variance
    var += eps                                            # [..., 1]  eps: a Python float
    y *= 1.0 / np.sqrt(var)                               # [..., C]
    y *= weight                                           # [..., C]
    y += bias                                             # [..., C]
    return y


def rms_norm_fast(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    """``rms_norm`` on one temporary; ``x`` is not modified."""
    ms = mean_last(np.square(x))                          # [..., 1]  mean of squares
    ms += eps                                             # [..., 1]
    y = x * (1.0 / np.sqrt(ms))                           # [..., C]  x · rsqrt, as HF computes it
    y *= weight                                           # [..., C]
    return y


def norm(x: np.ndarray, p, kind: str, eps: float) -> np.ndarray:
    """Apply the config's norm (``"layernorm"`` or ``"rmsnorm"``) with NormParams ``p``."""
    if kind == "layernorm":
        return layer_norm_fast(x, p.weight, p.bias, eps)
    return rms_norm_fast(x, p.weight, eps)
