"""Backward of the two FFNs: the GELU MLP (GPT-2) and SwiGLU (Llama).

GELU MLP: FFN(x) = GELU(x W_up + b_up) W_down + b_down.

Forward with a cache (``gelu_mlp_forward``) calls the engine's ``gelu_tanh_fast`` (model/ffn.py's formula, in place) and keeps
h = x W_up + b_up and g = GELU(h): the two [N, F] activations the backward needs.

Backward, with dy = ∂L/∂y [N, C] (rows flattened over batch and positions):

    ∂L/∂W_down = gᵀ dy          ∂L/∂b_down = Σ dy          dg = dy W_downᵀ
    dh = dg ⊙ GELU'(h)
    ∂L/∂W_up = xᵀ dh            ∂L/∂b_up = Σ dh            ∂L/∂x = dh W_upᵀ

GELU (tanh form): GELU(h) = ½ h (1 + tanh u), u = √(2/π) (h + 0.044715 h³), so
    GELU'(h) = ½ (1 + tanh u) + ½ h (1 − tanh² u) · √(2/π) (1 + 3 · 0.044715 h²)

SwiGLU: FFN(x) = (SiLU(a) ⊙ u) W_down with a = x W_gate, u = x W_up (no biases). The forward
with a cache (``swiglu_forward``) keeps a, u and h = SiLU(a) ⊙ u. With dh = dy W_downᵀ:

    ∂L/∂W_down = hᵀ dy
    du = dh ⊙ SiLU(a)                      (u is multiplied by SiLU(a) …)
    da = dh ⊙ u ⊙ SiLU'(a)                 (… and SiLU(a) by u: the product rule)
    ∂L/∂W_gate = xᵀ da      ∂L/∂W_up = xᵀ du      ∂L/∂x = da W_gateᵀ + du W_upᵀ

SiLU(a) = a σ(a), σ' = σ (1 − σ), so SiLU'(a) = σ(a) + a σ(a)(1 − σ(a)) = σ(a) (1 + a (1 − σ(a))).

Example: GELU'(0) = ½ (the curve passes through 0 with slope one half); SiLU'(0) = σ(0) = ½ too.
"""
from __future__ import annotations

import math

import numpy as np

from minillm.engine.ops import gelu_tanh_fast, silu_fast
from minillm.train.frozen import input_grad, is_trained, project, weight_grads

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


def gelu_mlp_hidden(x: np.ndarray, p, h: np.ndarray | None = None) -> tuple:
    """x [B, T, C] -> the cache (x, h, g): everything before the down product (``h``: given, when
    kept from an earlier forward, instead of computed)."""
    if h is None:
        h = project(x, p.w_up, p.b_up)        # [B, T, C] @ [C, F] -> [B, T, F]
    g = gelu_tanh_fast(h)                    # [B, T, F]
    return x, h, g


def gelu_mlp_forward(x: np.ndarray, p) -> tuple[np.ndarray, tuple]:
    """x [B, T, C] -> y [B, T, C] and the cache (x, h, g). Same arithmetic as ``gelu_mlp``."""
    cache = gelu_mlp_hidden(x, p)             # (x, h, g [B, T, F])
    y = project(cache[2], p.w_down, p.b_down)  # [B, T, F] @ [F, C] -> [B, T, C]
    return y, cache


def gelu_mlp_backward(dy: np.ndarray, cache: tuple, p) -> tuple[np.ndarray, dict]:
    """dy [B, T, C] -> dx [B, T, C] and {"w_up", "b_up", "w_down", "b_down"} gradients."""
    x, h, g = cache
    C, F = p.w_up.shape
    dy2 = dy.reshape(-1, C)                                  # [N, C]
    grads = weight_grads("w_down", g.reshape(-1, F), dy2, p.w_down)   # [F, N] @ [N, C] -> [F, C]
    dh = gelu_tanh_backward(input_grad(dy2, p.w_down), h.reshape(-1, F))   # [N, C] @ [C, F] -> [N, F]
    grads |= weight_grads("w_up", x.reshape(-1, C), dh, p.w_up)        # [C, N] @ [N, F] -> [C, F]
    if p.b_up is not None and is_trained(p.w_up):            # (a config without MLP biases)
        grads["b_up"] = dh.sum(axis=0)                       # [F]
    if p.b_down is not None and is_trained(p.w_down):
        grads["b_down"] = dy2.sum(axis=0)                    # [C]
    dx = input_grad(dh, p.w_up).reshape(dy.shape)            # [N, F] @ [F, C] -> [B, T, C]
    return dx, grads


def sigmoid(x: np.ndarray) -> np.ndarray:
    """σ(x) = ½ (1 + tanh(x/2)): 1 / (1 + e^(−x)) without e^(−x)'s float32 overflow (model/ffn.py)."""
    return 0.5 + 0.5 * np.tanh(0.5 * x)                      # [...]


def silu_backward(dsilu: np.ndarray, a: np.ndarray) -> np.ndarray:
    """dsilu = ∂L/∂SiLU(a), a [...] -> ∂L/∂a = dsilu ⊙ σ(a) (1 + a (1 − σ(a))) (elementwise)."""
    s = sigmoid(a)                                           # [...]
    return dsilu * s * (1.0 + a * (1.0 - s))                 # [...]


def swiglu_forward(x: np.ndarray, p) -> tuple[np.ndarray, tuple]:
    """x [B, T, C] -> y [B, T, C] and the cache (x, a, u, h). Same arithmetic as ``swiglu``."""
    a = project(x, p.w_gate)                  # [B, T, C] @ [C, F] -> [B, T, F]  the gate's input
    u = project(x, p.w_up)                    # [B, T, C] @ [C, F] -> [B, T, F]
    h = silu_fast(a)                         # [B, T, F]  SiLU(a) …
    h *= u                                   # [B, T, F]  … ⊙ u (in place: h is fresh)
    y = project(h, p.w_down)                  # [B, T, F] @ [F, C] -> [B, T, C]
    return y, (x, a, u, h)


def swiglu_backward(dy: np.ndarray, cache: tuple, p) -> tuple[np.ndarray, dict]:
    """dy [B, T, C] -> dx [B, T, C] and {"w_gate", "w_up", "w_down"} gradients."""
    x, a, u, h = cache
    C, F = p.w_up.shape
    dy2 = dy.reshape(-1, C)                                  # [N, C]
    a2, u2 = a.reshape(-1, F), u.reshape(-1, F)              # [N, F] each
    grads = weight_grads("w_down", h.reshape(-1, F), dy2, p.w_down)   # [F, N] @ [N, C] -> [F, C]
    dh = input_grad(dy2, p.w_down)                           # [N, C] @ [C, F] -> [N, F]
    du = dh * silu_fast(a2)                                  # [N, F]  ∂L/∂u = dh ⊙ SiLU(a)
    da = silu_backward(dh * u2, a2)                          # [N, F]  ∂L/∂a = dh ⊙ u ⊙ SiLU'(a)
    x2 = x.reshape(-1, C)                                    # [N, C]
    grads |= weight_grads("w_gate", x2, da, p.w_gate)       # [C, N] @ [N, F] -> [C, F]
    grads |= weight_grads("w_up", x2, du, p.w_up)           # [C, N] @ [N, F] -> [C, F]
    dx = input_grad(da, p.w_gate) + input_grad(du, p.w_up)   # [N, F] @ [F, C] -> [N, C]
    return dx.reshape(dy.shape), grads


def ffn_forward(x: np.ndarray, p, kind: str) -> tuple[np.ndarray, tuple]:
    """The config's FFN (``"gelu_mlp"`` or ``"swiglu"``) with its cache."""
    return swiglu_forward(x, p) if kind == "swiglu" else gelu_mlp_forward(x, p)


def ffn_backward(dy: np.ndarray, cache: tuple, p, kind: str) -> tuple[np.ndarray, dict]:
    """The backward of ``ffn_forward``: dy [B, T, C] -> dx [B, T, C] and the FFN's gradients."""
    return swiglu_backward(dy, cache, p) if kind == "swiglu" else gelu_mlp_backward(dy, cache, p)
