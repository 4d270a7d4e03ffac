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


def layer_norm_fast(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """``layer_norm`` with every step after the centring in place on ``y``; ``x`` is not modified."""
    mean = x.mean(axis=-1, keepdims=True)                 # [..., 1]
    y = x - mean                                          # [..., C]  centred (the one temporary)
    var = np.square(y).mean(axis=-1, keepdims=True)       # [..., 1]  biased variance
    y *= 1.0 / np.sqrt(var + eps)                         # [..., C]  eps: a Python float
    y *= weight                                           # [..., C]
    y += bias                                             # [..., C]
    return y


def rms_norm_fast(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    """``rms_norm`` on one temporary; ``x`` is not modified."""
    ms = np.square(x).mean(axis=-1, keepdims=True)        # [..., 1]  mean of squares
    y = x * (1.0 / np.sqrt(ms + eps))                     # [..., C]  x · rsqrt, as HF computes it
    y *= weight                                           # [..., C]
    return y


def norm(x: np.ndarray, p, kind: str, eps: float) -> np.ndarray:
    """Apply the config's norm (``"layernorm"`` or ``"rmsnorm"``) with NormParams ``p``."""
    if kind == "layernorm":
        return layer_norm_fast(x, p.weight, p.bias, eps)
    return rms_norm_fast(x, p.weight, eps)
