"""Backward of LayerNorm, next to nothing but the formula.

Forward (``minillm.model.norm.layer_norm``), per position, over the C features:

    μ = mean(x)    σ² = mean((x − μ)²)    r = 1 / √(σ² + ε)    x̂ = (x − μ) · r
    y = x̂ ⊙ w + b

Backward, given dy = ∂L/∂y:

    ∂L/∂w = Σ_positions dy ⊙ x̂            ∂L/∂b = Σ_positions dy
    g = dy ⊙ w                             (the gradient reaching x̂)
    ∂L/∂x = r · (g − mean(g) − x̂ · mean(g ⊙ x̂))

The last line is the whole trick: x̂ depends on x directly *and* through μ and σ², and those two
paths subtract the mean of g and its component along x̂ (a normalised vector cannot change its
own mean or length).

Why no cache: the forward keeps only x (the block needs it anyway); μ and r are recomputed here,
one cheap pass over [N, C], so the forward can stay the inference function unchanged.

Example: for C = 2 every x̂ is ±1, so any dy gives ∂L/∂x = 0 when w = [1, 1] and dy = [1, 1]
(adding the same amount to both outputs is undone by the centring).
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
