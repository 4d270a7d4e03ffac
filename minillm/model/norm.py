"""Normalisation: rescale each position's vector before attention and the FFN.
Where it runs — copied (the engine's own: engine/ops.py::norm_fast and engine/step.py::rms_rows, tested equal in tests/engine/test_engine_equals_model.py): layer_norm, rms_norm, norm.

LayerNorm (GPT-2):  y = (x - mean(x)) / sqrt(var(x) + eps) * weight + bias
RMSNorm   (Llama):  y = x / sqrt(mean(x²) + eps) * weight

Both act on the last axis (the C features of one position) and never mix positions, which is why
they are safe under the causal mask. ``var`` is the biased variance (divide by C), as PyTorch does.

Example: layer_norm([1, 3], weight=[1, 1], bias=[0, 0]) ≈ [-1, 1] (mean 2, variance 1).

(The engine computes the same arithmetic on one temporary updated in place:
``minillm/engine/ops.py``, tested equal.)
"""
from __future__ import annotations

import numpy as np


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """x [..., C], weight [C], bias [C] -> [..., C]: the formula, one line."""
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps) * weight + bias


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    """x [..., C], weight [C] -> [..., C]: the formula, one line. No centring and no bias."""
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def norm(x: np.ndarray, p, kind: str, eps: float) -> np.ndarray:
    """Apply the config's norm (``"layernorm"`` or ``"rmsnorm"``) with NormParams ``p``."""
    if kind == "layernorm":
        return layer_norm(x, p.weight, p.bias, eps)
    return rms_norm(x, p.weight, eps)
