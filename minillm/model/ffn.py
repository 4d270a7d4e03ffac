"""The feed-forward network: the same small MLP applied to every position independently.
Where it runs — copied (the engine's own: engine/layers.py::ffn, engine/ops.py's gelu_tanh_fast, silu_fast, tested equal in tests/engine/test_engine_equals_model.py): gelu_tanh, silu, gelu_mlp, swiglu, ffn.

GPT-2 (GELU MLP):   FFN(x) = GELU(x W_up + b_up) W_down + b_down
Llama (SwiGLU):     FFN(x) = (SiLU(x W_gate) ⊙ (x W_up)) W_down
Gemma (GeGLU):      FFN(x) = (GELU(x W_gate) ⊙ (x W_up)) W_down      (the same tanh GELU)

GELU here is the tanh approximation GPT-2 was trained with (HF's ``gelu_new``):
    GELU(x) = ½ x (1 + tanh(√(2/π) (x + 0.044715 x³)))
SiLU(x) = x · σ(x) = x / (1 + e^(−x)).

Example: gelu_tanh(np.array([0.0, 10.0, -10.0])) ≈ [0, 10, 0]: 0 at 0, ≈ x for large x, ≈ 0 for
very negative x.

(The engine computes GELU and SiLU on one temporary updated in place, and SwiGLU's two input
products as one: ``minillm/engine/ops.py``, ``engine/layers.py``, tested equal.)
"""
from __future__ import annotations

import math

import numpy as np

from minillm.model.linear import linear

# subtle: a Python float, not np.sqrt(2 / np.pi): a NumPy float64 scalar would promote the float32
# activations to float64 under NumPy 2 and make the whole FFN ~20x slower.
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """[...] -> [...], elementwise: the formula, one line."""
    return 0.5 * x * (1.0 + np.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x**3)))


def silu(x: np.ndarray) -> np.ndarray:
    """[...] -> [...], elementwise: x · σ(x), one line.

    subtle: σ(x) is written ½(1 + tanh(x/2)), the same function as 1/(1 + e^(−x)), because
    e^(−x) overflows float32 for x < −88 (a RuntimeWarning, then x/inf); tanh never overflows.
    """
    return x * (0.5 + 0.5 * np.tanh(0.5 * x))


def gelu_mlp(x: np.ndarray, p, look=lambda name, h: h) -> np.ndarray:
    """x [B, T, C] -> [B, T, C] with FFNParams p (w_up [C, F], w_down [F, C], biases or None);
    ``look`` is the hook point of the hidden activation h (minillm/hooks.py)."""
    h = look("mlp.hook_post", gelu_tanh(linear(x, p.w_up, p.b_up)))   # [B, T, C] @ [C, F] -> [B, T, F]
    return linear(h, p.w_down, p.b_down)                # [B, T, F] @ [F, C] -> [B, T, C]


def swiglu(x: np.ndarray, p, look=lambda name, h: h) -> np.ndarray:
    """x [B, T, C] -> [B, T, C] with FFNParams p (w_gate, w_up [C, F], w_down [F, C])."""
    h = look("mlp.hook_post", silu(linear(x, p.w_gate)) * linear(x, p.w_up))   # [B, T, F] ⊙ [B, T, F]
    return linear(h, p.w_down)                          # [B, T, F] @ [F, C] -> [B, T, C]


def geglu(x: np.ndarray, p, look=lambda name, h: h) -> np.ndarray:
    """``swiglu`` with GELU in place of SiLU (Gemma's ``gelu_pytorch_tanh``)."""
    h = look("mlp.hook_post", gelu_tanh(linear(x, p.w_gate)) * linear(x, p.w_up))   # [B, T, F] ⊙ [B, T, F]
    return linear(h, p.w_down)                          # [B, T, F] @ [F, C] -> [B, T, C]


def ffn(x: np.ndarray, p, kind: str, look=lambda name, h: h) -> np.ndarray:
    """Apply the config's FFN (``"gelu_mlp"``, ``"swiglu"`` or ``"geglu"``)."""
    return {"swiglu": swiglu, "geglu": geglu, "gelu_mlp": gelu_mlp}[kind](x, p, look)
