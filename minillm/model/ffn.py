"""The feed-forward network: the same small MLP applied to every position independently.

GPT-2 (GELU MLP):   FFN(x) = GELU(x W_up + b_up) W_down + b_down
Llama (SwiGLU):     FFN(x) = (SiLU(x W_gate) ⊙ (x W_up)) W_down

GELU here is the tanh approximation GPT-2 was trained with (HF's ``gelu_new``):
    GELU(x) = ½ x (1 + tanh(√(2/π) (x + 0.044715 x³)))
SiLU(x) = x · σ(x) = x / (1 + e^(−x)).

``gelu_tanh`` and ``silu`` are those lines as written; the model calls ``gelu_tanh_fast`` and
``silu_fast``, the same arithmetic on one temporary updated in place (tested equal).

Example: gelu_tanh(np.array([0.0, 10.0, -10.0])) ≈ [0, 10, 0]: 0 at 0, ≈ x for large x, ≈ 0 for
very negative x.
"""
from __future__ import annotations

import math

import numpy as np

from minillm.model.linear import joined_still, linear, split_columns

# subtle: a Python float, not np.sqrt(2 / np.pi): a NumPy float64 scalar would promote the float32
# activations to float64 under NumPy 2 and make the whole FFN ~20x slower.
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_CUBIC = 0.044715 * _SQRT_2_OVER_PI   # b below


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """[...] -> [...], elementwise: the formula, one line."""
    return 0.5 * x * (1.0 + np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x**3)))


def silu(x: np.ndarray) -> np.ndarray:
    """[...] -> [...], elementwise: x · σ(x), one line.

    subtle: σ(x) is written ½(1 + tanh(x/2)), the same function as 1/(1 + e^(−x)), because
    e^(−x) overflows float32 for x < −88 (a RuntimeWarning, then x/inf); tanh never overflows.
    """
    return x * (0.5 + 0.5 * np.tanh(0.5 * x))


def gelu_tanh_fast(x: np.ndarray) -> np.ndarray:
    """``gelu_tanh`` in place on one temporary; ``x`` is not modified.

    The inner term factored, √(2/π)(x + 0.044715x³) = x · (a + b·x²), a = √(2/π),
    b = 0.044715·a. Why: written as one expression it makes eight temporaries, and a fresh 6 MB
    array (a [512, 3072] activation) costs about as much to obtain from the OS (page faults on
    first touch) as the arithmetic on it; in place halves the GELU's time in a 512-token prefill.
    """
    u = x * x                                    # [...] x²
    u *= _CUBIC                                  # [...] b·x²
    u += _SQRT_2_OVER_PI                         # [...] a + b·x²
    u *= x                                       # [...] a·(x + 0.044715·x³)
    np.tanh(u, out=u)                            # [...] tanh(...)
    u += 1.0                                     # [...] 1 + tanh(...)
    u *= x                                       # [...] x·(1 + tanh(...))
    u *= 0.5                                     # [...] ½·x·(1 + tanh(...))
    return u


def silu_fast(x: np.ndarray) -> np.ndarray:
    """``silu`` in place on one temporary; ``x`` is not modified."""
    u = x * 0.5                           # [...] x/2
    np.tanh(u, out=u)                     # [...] tanh(x/2)
    u *= 0.5                              # [...]
    u += 0.5                              # [...] σ(x) = ½ + ½·tanh(x/2)
    u *= x                                # [...] x · σ(x)
    return u


def gelu_mlp(x: np.ndarray, p) -> np.ndarray:
    """x [B, T, C] -> [B, T, C] with FFNParams p (w_up [C, F], w_down [F, C], biases or None)."""
    h = linear(x, p.w_up, p.b_up)                       # [B, T, C] @ [C, F] -> [B, T, F]
    return linear(gelu_tanh_fast(h), p.w_down, p.b_down)   # [B, T, F] @ [F, C] -> [B, T, C]


def swiglu(x: np.ndarray, p) -> np.ndarray:
    """x [B, T, C] -> [B, T, C] with FFNParams p (w_gate, w_up [C, F], w_down [F, C]):
    (SiLU(x W_gate) ⊙ (x W_up)) W_down, the product ⊙ taken in place on the gate."""
    if not joined_still(p.w_gate_up, (p.w_gate, p.w_up)):
        gate, up = linear(x, p.w_gate), linear(x, p.w_up)       # [B, T, C] @ [C, F] -> [B, T, F] each
    else:                                                       # the same two products as ONE (arena.py)
        gate, up = split_columns(linear(x, p.w_gate_up), (p.w_gate.shape[1], p.w_up.shape[1]),
                                 (None, None))                  # [B, T, 2F] -> [B, T, F] each
    gate = silu_fast(gate)                              # [B, T, F]
    gate *= up                                          # [B, T, F] ⊙ [B, T, F]
    return linear(gate, p.w_down)                       # [B, T, F] @ [F, C] -> [B, T, C]


def ffn(x: np.ndarray, p, kind: str) -> np.ndarray:
    """Apply the config's FFN (``"gelu_mlp"`` or ``"swiglu"``)."""
    return swiglu(x, p) if kind == "swiglu" else gelu_mlp(x, p)
