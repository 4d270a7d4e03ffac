"""Backward of the two norms, LayerNorm (GPT-2) and RMSNorm (Llama), next to nothing but the formula.

LayerNorm (``minillm.model.norm.layer_norm``), per position, over the C features:

    μ = mean(x)    σ² = mean((x − μ)²)    r = 1 / √(σ² + ε)    x̂ = (x − μ) · r
    y = x̂ ⊙ w + b

Backward, given dy = ∂L/∂y:

    ∂L/∂w = Σ_positions dy ⊙ x̂            ∂L/∂b = Σ_positions dy
    g = dy ⊙ w                             (the gradient reaching x̂)
    ∂L/∂x = r · (g − mean(g) − x̂ · mean(g ⊙ x̂))

The last line is the whole trick: x̂ depends on x directly *and* through μ and σ², and those two
paths subtract the mean of g and its component along x̂ (a normalised vector cannot change its
own mean or length).

RMSNorm (``minillm.model.norm.rms_norm``) is LayerNorm without the centring and the bias:

    r = 1 / √(mean(x²) + ε)    x̂ = x · r    y = x̂ ⊙ w

    ∂r/∂x_j = −r³ x_j / C  (the chain rule through mean(x²)), so with g = dy ⊙ w:
    ∂L/∂x_j = g_j r + Σ_i g_i x_i · (−r³ x_j / C) = r · (g_j − x̂_j · mean(g ⊙ x̂))
    ∂L/∂w = Σ_positions dy ⊙ x̂

The same formula as LayerNorm's with the ``mean(g)`` term gone: with no centring there is no
path through μ, only the one through the length (x̂ still cannot change its own length).

Why no cache: the forward keeps only x (the block needs it anyway); μ and r are recomputed here,
one cheap pass over [N, C], so the forward can stay the inference function unchanged.

Example: for C = 2 every x̂ is ±1, so any dy gives ∂L/∂x = 0 when w = [1, 1] and dy = [1, 1]
(adding the same amount to both outputs is undone by the centring). RMSNorm at C = 1: y = w ·
x/√(x² + ε) ≈ ±w, so ∂L/∂x ≈ 0 for |x| ≫ √ε.
"""
from __future__ import annotations

import numpy as np


def layer_norm_backward(dy: np.ndarray, x: np.ndarray, weight: np.ndarray, eps: float
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """dy, x [..., C], weight [C] -> dx [..., C], dweight [C], dbias [C] (dtype of x)."""
    mean = x.mean(axis=-1, keepdims=True)                      # [..., 1]
    centered = x - mean                                        # [..., C]
    var = (centered * centered).mean(axis=-1, keepdims=True)   # [..., 1]
    r = 1.0 / np.sqrt(var + eps)                               # [..., 1]  eps: a Python float
    xhat = centered * r                                        # [..., C]
    C = x.shape[-1]
    dweight = (dy * xhat).reshape(-1, C).sum(axis=0)           # [N, C] -> [C]
    dbias = dy.reshape(-1, C).sum(axis=0)                      # [N, C] -> [C]
    g = dy * weight                                            # [..., C]
    dx = r * (g - g.mean(axis=-1, keepdims=True)
              - xhat * (g * xhat).mean(axis=-1, keepdims=True))   # [..., C]
    return dx, dweight, dbias


def rms_norm_backward(dy: np.ndarray, x: np.ndarray, weight: np.ndarray, eps: float
                      ) -> tuple[np.ndarray, np.ndarray]:
    """dy, x [..., C], weight [C] -> dx [..., C], dweight [C] (dtype of x)."""
    r = 1.0 / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps)   # [..., 1]  eps: a Python float
    xhat = x * r                                               # [..., C]
    C = x.shape[-1]
    dweight = (dy * xhat).reshape(-1, C).sum(axis=0)           # [N, C] -> [C]
    g = dy * weight                                            # [..., C]
    dx = r * (g - xhat * (g * xhat).mean(axis=-1, keepdims=True))   # [..., C]
    return dx, dweight


def norm_backward(dy: np.ndarray, x: np.ndarray, p, kind: str, eps: float
                  ) -> tuple[np.ndarray, dict]:
    """The config's norm (``"layernorm"`` or ``"rmsnorm"``) with NormParams p: dy, x [..., C] ->
    dx [..., C] and {"weight"[, "bias"]} gradients."""
    if kind == "layernorm":
        dx, dweight, dbias = layer_norm_backward(dy, x, p.weight, eps)
        return dx, {"weight": dweight, "bias": dbias}
    dx, dweight = rms_norm_backward(dy, x, p.weight, eps)
    return dx, {"weight": dweight}
