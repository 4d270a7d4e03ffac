"""Rotary position embeddings (RoPE): position enters attention by rotating Q and K.
Where it runs — shared (the engine, training, --reference): apply_rope, rope_angles.

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

Llama 3.1 / 3.2 stretch the slow frequencies to read longer texts than they were trained on
(``config.rope_scaling``, rope_type "llama3": ``llama3_frequencies``); the angles stay m·θ_i.

subtle: the angles m·θ_i are computed in float64 and only cos/sin are stored as float32. Hugging
Face computes m·θ_i in float32, which at m ≈ 8000 is off by ~5e-4 rad; at the short contexts of the
parity fixtures the two agree far inside the 1e-4 tolerance.
"""
from __future__ import annotations

import math

import numpy as np


def apply_rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """Rotate pairs (i, i + D/2) of x [B, heads, T, D] by the angles in cos/sin [B, 1, T, D/2]."""
    half = x.shape[-1] // 2
    a, b = x[..., :half], x[..., half:]                           # [B, h, T, D/2] each
    return np.concatenate([a * cos - b * sin,                     # [B, h, T, D/2]
                           b * cos + a * sin], axis=-1)           # -> [B, h, T, D]


def llama3_frequencies(inv_freq: np.ndarray, factor: float, low_freq_factor: float,
                       high_freq_factor: float, original_max_position_embeddings: int) -> np.ndarray:
    """Llama 3's RoPE scaling: θ_i [D/2] -> the scaled θ'_i [D/2], by each pair's wavelength.

    With wavelength λ_i = 2π / θ_i (positions per turn), L = original_max_position_embeddings
    (the context the model was trained with), lo = low_freq_factor and hi = high_freq_factor:

        λ_i < L / hi:    θ'_i = θ_i                              fast pairs (local order): kept
        λ_i > L / lo:    θ'_i = θ_i / factor                     slow pairs: stretched
        otherwise:       θ'_i = (1 − s)·θ_i / factor + s·θ_i,    s = (L / λ_i − lo) / (hi − lo)

    s runs from 0 at λ = L / lo to 1 at λ = L / hi, so θ' is continuous.

    Example: theta = 500, D = 8 -> θ = [1, 0.2115, 0.0447, 0.0095], λ = [6.3, 29.7, 140, 664];
    with factor 8, low 1, high 4, L = 64 (bounds 16 and 64): θ' = [1, 0.0976, 0.0056, 0.0012]
    (kept, smoothed with s = 0.385, stretched, stretched).
    """
    wavelength = 2 * math.pi / inv_freq                            # [D/2]  λ_i
    L = original_max_position_embeddings
    s = (L / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)   # [D/2]
    smoothed = (1 - s) * inv_freq / factor + s * inv_freq          # [D/2]
    return np.where(wavelength < L / high_freq_factor, inv_freq,
                    np.where(wavelength > L / low_freq_factor, inv_freq / factor, smoothed))


def rope_frequencies(d_head: int, theta: float, scaling: dict | None = None) -> np.ndarray:
    """θ_i = theta^(−2i/D) for i = 0 … D/2 − 1, float64 [D/2]; scaled when ``scaling`` (a
    config's ``rope_scaling``) says so."""
    i = np.arange(d_head // 2, dtype=np.float64)                  # [D/2]
    inv_freq = theta ** (-2.0 * i / d_head)                        # [D/2]  θ_i
    if scaling is not None:                                        # (rope_type "llama3": config.py)
        inv_freq = llama3_frequencies(inv_freq, **{k: v for k, v in scaling.items() if k != "rope_type"})
    return inv_freq


def rope_angles(positions: np.ndarray, d_head: int, theta: float, scaling: dict | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of m·θ_i for each position m: positions [...] int -> two [..., D/2] float32.

    Computed for the positions asked for only, so a config allowing 2²⁸ positions costs nothing
    until it uses them (a full table would be gigabytes).
    """
    inv_freq = rope_frequencies(d_head, theta, scaling)            # [D/2]  θ_i
    angles = np.asarray(positions, np.float64)[..., None] * inv_freq   # [..., D/2]  m·θ_i
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
