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
  adjacent pairs. minillm's GGUF loader undoes that permutation (``io/gguf_model.py``), so one
  rotation serves both formats.

Example: D = 4, position m = 1, theta = 10000 -> θ = [1, 0.01]: dims (0, 2) turn by 1 rad,
dims (1, 3) by 0.01 rad; at position 0 nothing turns.

subtle: the angles m·θ_i are computed in float64 and only cos/sin are stored as float32. Hugging
Face computes m·θ_i in float32, which at m ≈ 8000 is off by ~5e-4 rad; at the short contexts of the
parity fixtures the two agree far inside the 1e-4 tolerance.
"""
from __future__ import annotations

import numpy as np


def rope_tables(n_positions: int, d_head: int, theta: float, grow: bool = False):
    """cos and sin of m·θ_i for every position m < n_positions: two [n_positions, D/2] float32.

    ``grow=True`` returns two ``GrowingTable``s instead: indexed the same way (``cos[positions]``),
    they compute rows only up to the highest position asked for so far (doubling), never past
    ``n_positions``. A model whose config allows 2²⁸ positions costs nothing until it uses them
    (the full table would be 2 × 2²⁸ × D/2 float32: gigabytes).
    """
    if grow:
        angles = _Angles(n_positions, d_head, theta)
        return GrowingTable(angles, 0), GrowingTable(angles, 1)
    return _cos_sin(0, n_positions, d_head, theta)


def _cos_sin(start: int, stop: int, d_head: int, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of m·θ_i for start <= m < stop: two [stop - start, D/2] float32."""
    i = np.arange(d_head // 2, dtype=np.float64)                 # [D/2]
    inv_freq = theta ** (-2.0 * i / d_head)                       # [D/2]  θ_i
    angles = np.outer(np.arange(start, stop, dtype=np.float64), inv_freq)  # [N, D/2]  m·θ_i
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


class _Angles:
    """The rows of cos and sin computed so far; ``grow(n)`` makes rows 0 … n−1 exist."""

    def __init__(self, limit: int, d_head: int, theta: float):
        self.limit, self.d_head, self.theta = limit, d_head, theta
        self.tables = _cos_sin(0, min(limit, 256), d_head, theta)        # [n, D/2] each

    def grow(self, need: int) -> None:
        have = len(self.tables[0])
        if need <= have:
            return
        if need > self.limit:
            raise IndexError(f"position {need - 1} is past the RoPE table's {self.limit} positions")
        size = min(self.limit, max(need, 2 * have))                     # doubling: O(N) in all
        new = _cos_sin(have, size, self.d_head, self.theta)             # [size - have, D/2] each
        self.tables = tuple(np.concatenate([old, add])                  # [size, D/2] each
                            for old, add in zip(self.tables, new))


class GrowingTable:
    """``table[positions]`` -> rows of cos (or sin), as for the full [N, D/2] array."""

    def __init__(self, angles: _Angles, which: int):
        self._angles, self._which = angles, which

    def __getitem__(self, positions):
        idx = np.asarray(positions)
        if idx.size:
            if idx.min() < 0:   # subtle: -1 would pick the last row computed SO FAR, not N − 1
                raise IndexError(f"positions must be >= 0, got {int(idx.min())}")
            self._angles.grow(int(idx.max()) + 1)
        return self._angles.tables[self._which][idx]                     # [..., D/2]

    def __len__(self) -> int:
        return self._angles.limit


def apply_rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """Rotate pairs (i, i + D/2) of x [B, heads, T, D] by the angles in cos/sin [B, 1, T, D/2]."""
    half = x.shape[-1] // 2
    a, b = x[..., :half], x[..., half:]                           # [B, h, T, D/2] each
    return np.concatenate([a * cos - b * sin,                     # [B, h, T, D/2]
                           b * cos + a * sin], axis=-1)           # -> [B, h, T, D]
