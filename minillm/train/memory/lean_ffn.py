"""The FFN's cache and backward as the memory-saving step runs them: SwiGLU without h in the
cache and with one σ(a) for the whole backward, the same numbers as grad_ffn.py's.

grad_ffn.py's SwiGLU keeps (x, a, u, h = SiLU(a) ⊙ u) and its backward evaluates σ(a) twice
(once inside SiLU(a) for du, once for SiLU'(a)): with the forward and its recomputation, four
tanh passes over [N, F] per block, the dearest element-wise work of a step. Here the cache is
(x, a, u) (the recomputation forms no h) and the backward evaluates σ(a) once and builds
everything from it — two tanh passes per block, the forward's and this one:

    σ = σ(a) = ½ + ½ tanh(a/2)      SiLU(a) = a σ      h = SiLU(a) ⊙ u        (rebuilt, not kept)
    ∂L/∂W_down from h and dy        dh = dy W_downᵀ
    du = dh ⊙ SiLU(a)               da = (dh ⊙ u) ⊙ σ ⊙ (1 + a (1 − σ))      (SiLU'(a), grad_ffn.py)

on a few [N, F] buffers written in place. Every array is formed by the same float32 operations
in the same order as grad_ffn.py forms it (σ as ``sigmoid``, SiLU(a) as ``silu_fast``, the
products left to right), so the gradients are equal bit for bit (tested); only fewer
temporaries and one tanh instead of two. subtle: that equality uses only the commutativity of
a float32 product (a·σ = σ·a exactly), never a regrouping. The GELU MLP takes grad_ffn.py's
path unchanged.

Example: ``dx, g = ffn_backward_lean(dy, ffn_cache_lean(x, p, "swiglu"), p, "swiglu")`` gives
``ffn_backward(dy, swiglu_forward(x, p)[1], p, "swiglu")``'s numbers.
"""
from __future__ import annotations

import numpy as np

from minillm.train.frozen import input_grad, project, weight_grads
from minillm.train.grad_ffn import ffn_backward, gelu_mlp_hidden


def ffn_cache_lean(x: np.ndarray, p, kind: str, kept: tuple = ()) -> tuple:
    """x [B, T, C] -> the FFN's cache without the output product: SwiGLU (x, a, u), the GELU MLP
    grad_ffn.py's (x, h, g). ``kept``: the pre-activations (a, u or h) if an earlier forward kept them."""
    if kind != "swiglu":
        return gelu_mlp_hidden(x, p, *kept)
    if kept:
        return (x, *kept)
    return x, project(x, p.w_gate), project(x, p.w_up)       # [B, T, C] @ [C, F] -> [B, T, F] each


def swiglu_backward_lean(dy: np.ndarray, cache: tuple, p) -> tuple[np.ndarray, dict]:
    """dy [B, T, C], cache (x, a, u) -> dx [B, T, C] and {"w_gate", "w_up", "w_down"} gradients
    (or their adapters'), equal to ``swiglu_backward``'s."""
    x, a, u = cache
    C, F = p.w_up.shape
    dy2 = dy.reshape(-1, C)                                  # [N, C]
    a2, u2 = a.reshape(-1, F), u.reshape(-1, F)              # [N, F] each
    s = a2 * 0.5                                             # [N, F]  a/2
    np.tanh(s, out=s)
    s *= 0.5
    s += 0.5                                                 # σ(a)
    silu = a2 * s                                            # [N, F]  SiLU(a)
    h = silu * u2                                            # [N, F]  h = SiLU(a) ⊙ u
    grads = weight_grads("w_down", h, dy2, p.w_down)         # [F, N] @ [N, C] -> [F, C]
    dh = input_grad(dy2, p.w_down)                           # [N, C] @ [C, F] -> [N, F]
    du = np.multiply(dh, silu, out=h)                        # [N, F]  dh ⊙ SiLU(a) (h is spent)
    da = dh                                                  # (dh is spent after du: reused)
    da *= u2                                                 # dh ⊙ u
    da *= s                                                  # … ⊙ σ
    t = np.subtract(1.0, s, out=silu)                        # 1 − σ (SiLU(a) is spent)
    t *= a2                                                  # a (1 − σ)
    t += 1.0                                                 # 1 + a (1 − σ)
    da *= t                                                  # ∂L/∂a = dh ⊙ u ⊙ SiLU'(a)
    x2 = x.reshape(-1, C)                                    # [N, C]
    grads |= weight_grads("w_gate", x2, da, p.w_gate)       # [C, N] @ [N, F] -> [C, F]
    grads |= weight_grads("w_up", x2, du, p.w_up)           # [C, N] @ [N, F] -> [C, F]
    dx = input_grad(da, p.w_gate)                            # [N, F] @ [F, C] -> [N, C]
    dx += input_grad(du, p.w_up)                             # (in place: dx is fresh)
    return dx.reshape(dy.shape), grads


def ffn_backward_lean(dy: np.ndarray, cache: tuple, p, kind: str) -> tuple[np.ndarray, dict]:
    """The backward of ``ffn_cache_lean``'s cache: dy [B, T, C] -> dx [B, T, C] and the gradients."""
    return swiglu_backward_lean(dy, cache, p) if kind == "swiglu" else ffn_backward(dy, cache, p, kind)
