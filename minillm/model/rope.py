"""Rotary position embeddings (RoPE): position enters attention by rotating Q and K.

Split a head's D dimensions into D/2 pairs. Pair i of the vector at position m is rotated by the
angle m·θ_i, with θ_i = theta^(−2i/D) (theta = ``config.rope_theta``: 10,000 for Llama 2, 100,000
for SmolLM2). A rotation preserves lengths, and since R(m)ᵀR(n) = R(n − m), the score q_m · k_n
depends on the two positions only through their distance n − m.

    [a']   [cos mθ_i  −sin mθ_i] [a]
    [b'] = [sin mθ_i   cos mθ_i] [b]

Which two dimensions form pair i is a *layout* choice, and the two layouts in the wild differ:

- Hugging Face ("rotate half"): pair i = (i, i + D/2) — the first half of the head against the
  second. This module rotates in this layout.
- llama.cpp / GGUF (adjacent pairs): pair i = (2i, 2i + 1). llama.cpp's converter permutes the
  rows of the Q and K weight matrices so that the same model computes the same scores with
  adjacent pairs. minillm's GGUF loader undoes that permutation (``io/gguf/model.py``), so one
  rotation serves both formats.

Example: D = 4, position m = 1, theta = 10000 -> θ = [1, 0.01]: dims (0, 2) turn by 1 rad,
dims (1, 3) by 0.01 rad; at position 0 nothing turns.

subtle: the angles m·θ_i are computed in float64 and only cos/sin are stored as float32. Hugging
Face computes m·θ_i in float32, which at m ≈ 8000 is off by ~5e-4 rad; at the short contexts of the
parity fixtures the two agree far inside the 1e-4 tolerance.
"""
from __future__ import annotations

import numpy as np


def apply_rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """Rotate pairs (i, i + D/2) of x [B, heads, T, D] by the angles in cos/sin [B, 1, T, D/2]."""
    half = x.shape[-1] // 2
    a, b = x[..., :half], x[..., half:]                           # [B, h, T, D/2] each
    return np.concatenate([a * cos - b * sin,                     # [B, h, T, D/2]
                           b * cos + a * sin], axis=-1)           # -> [B, h, T, D]


def rope_angles(positions: np.ndarray, d_head: int, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of m·θ_i for each position m: positions [...] int -> two [..., D/2] float32.

    Computed for the positions asked for only, so a config allowing 2²⁸ positions costs nothing
    until it uses them (a full table would be gigabytes).
    """
    i = np.arange(d_head // 2, dtype=np.float64)                  # [D/2]
    inv_freq = theta ** (-2.0 * i / d_head)                        # [D/2]  θ_i
    angles = np.asarray(positions, np.float64)[..., None] * inv_freq   # [..., D/2]  m·θ_i
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
