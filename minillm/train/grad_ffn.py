"""Backward of the GELU MLP: FFN(x) = GELU(x W_up + b_up) W_down + b_down.

Forward with a cache (``gelu_mlp_forward``) calls the engine's ``gelu_tanh_fast`` (model/ffn.py's formula, in place) and keeps
h = x W_up + b_up and g = GELU(h): the two [N, F] activations the backward needs.

Backward, with dy = ∂L/∂y [N, C] (rows flattened over batch and positions):

    ∂L/∂W_down = gᵀ dy          ∂L/∂b_down = Σ dy          dg = dy W_downᵀ
    dh = dg ⊙ GELU'(h)
    ∂L/∂W_up = xᵀ dh            ∂L/∂b_up = Σ dh            ∂L/∂x = dh W_upᵀ

GELU (tanh form): GELU(h) = ½ h (1 + tanh u), u = √(2/π) (h + 0.044715 h³), so
    GELU'(h) = ½ (1 + tanh u) + ½ h (1 − tanh² u) · √(2/π) (1 + 3 · 0.044715 h²)

Example: GELU'(0) = ½ (the curve passes through 0 with slope one half).
"""
from __future__ import annotations

import math

import numpy as np

from minillm.engine.ops import gelu_tanh_fast, linear

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)   # a Python float: keeps float32 arrays float32


def gelu_tanh_backward(dg: np.ndarray, h: np.ndarray) -> np.ndarray:
    """dg = ∂L/∂GELU(h), h [...] -> ∂L/∂h [...] (elementwise).

    Written with in-place operations on two scratch arrays: this is the largest elementwise
    computation of a training step ([B·T, F]), and each temporary costs a pass over memory.
    """
    h2 = h * h                                               # [...] h²
    t = h2 * 0.044715                                        # [...]
    t += 1.0
    t *= h
    t *= _SQRT_2_OVER_PI                                     # u = √(2/π) (h + 0.044715 h³)
    np.tanh(t, out=t)                                        # t = tanh u
    h2 *= 0.134145                                           # 3 · 0.044715 h²
    h2 += 1.0
    h2 *= h
    h2 *= 0.5 * _SQRT_2_OVER_PI                              # ½ h √(2/π) (1 + 3 · 0.044715 h²)
    h2 *= 1.0 - t * t                                        # … · (1 − tanh² u)
    t += 1.0
    t *= 0.5                                                 # ½ (1 + tanh u)
    t += h2                                                  # GELU'(h)
    t *= dg
    return t                                                 # [...]


def gelu_mlp_forward(x: np.ndarray, p) -> tuple[np.ndarray, tuple]:
    """x [B, T, C] -> y [B, T, C] and the cache (x, h, g). Same arithmetic as ``gelu_mlp``."""
    h = linear(x, p.w_up, p.b_up)            # [B, T, C] @ [C, F] -> [B, T, F]
    g = gelu_tanh_fast(h)                    # [B, T, F]
    y = linear(g, p.w_down, p.b_down)        # [B, T, F] @ [F, C] -> [B, T, C]
    return y, (x, h, g)


def gelu_mlp_backward(dy: np.ndarray, cache: tuple, p) -> tuple[np.ndarray, dict]:
    """dy [B, T, C] -> dx [B, T, C] and {"w_up", "b_up", "w_down", "b_down"} gradients."""
    x, h, g = cache
    C, F = p.w_up.shape
    dy2 = dy.reshape(-1, C)                                  # [N, C]
    grads = {"w_down": g.reshape(-1, F).T @ dy2,             # [F, N] @ [N, C] -> [F, C]
             "b_down": dy2.sum(axis=0)}                      # [C]
    dh = gelu_tanh_backward(dy2 @ p.w_down.T, h.reshape(-1, F))   # [N, C] @ [C, F] -> [N, F]
    grads["w_up"] = x.reshape(-1, C).T @ dh                  # [C, N] @ [N, F] -> [C, F]
    grads["b_up"] = dh.sum(axis=0)                           # [F]
    dx = (dh @ p.w_up.T).reshape(dy.shape)                   # [N, F] @ [F, C] -> [B, T, C]
    return dx, grads
