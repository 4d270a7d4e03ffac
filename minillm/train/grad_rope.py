"""Backward of RoPE: the transpose of a rotation is the rotation by the opposite angle.

Forward (``minillm.model.rope.apply_rope``): pair i = (a, b) = (x_i, x_{i+D/2}) of the vector at
position m is turned by the angle φ = m·θ_i,

    [a']   [cos φ  −sin φ] [a]                    y = R(φ) x
    [b'] = [sin φ   cos φ] [b]

The map is linear in x, with matrix R(φ); the angles are constants (they depend on the position,
not on any parameter). So the backward is multiplication by the transpose,

    ∂L/∂x = R(φ)ᵀ dy = R(−φ) dy          (cos(−φ) = cos φ, sin(−φ) = −sin φ)

i.e. ``apply_rope`` itself with sin negated: the gradient is rotated back by −m·θ_i. Nothing is
cached and nothing has a gradient of its own: RoPE has no parameters.

Example: a gradient that arrives at position 0 passes unchanged (φ = 0); one at position m with
D = 2 and θ = 1 is turned by −m radians.
"""
from __future__ import annotations

import numpy as np

from minillm.model.rope import apply_rope


def rope_backward(dy: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """dy = ∂L/∂apply_rope(x, cos, sin) [B, heads, T, D], cos/sin [B, 1, T, D/2] -> ∂L/∂x
    [B, heads, T, D]: the rotation by −φ."""
    return apply_rope(dy, cos, -sin)                           # [B, heads, T, D]
