"""A weight product: y = x W (+ b), for x with any number of leading dimensions.

    linear(x [B, T, C], W [C, N], b [N]) = x W + b   -> [B, T, N]

Why not just ``x @ w``: for a 3-D ``x``, NumPy's matmul treats [B, T, C] @ [C, N] as B separate
[T, C] @ [C, N] products, and each one streams the whole of W from memory. While decoding (T = 1)
W is the expensive part — a batch of 8 rows would read every weight 8 times per step. Flattening
the leading dimensions first gives ONE [B·T, C] @ [C, N] product that reads W once, which is
what makes a batch of rows nearly as cheap as one row. (``w`` may also be a ``TiledMatrix``, the
loaders' layout: the same product, cut into tiles for the BLAS; see ``tiled.py``.)

Example: linear(np.ones((2, 1, 3), np.float32), np.ones((3, 4), np.float32)) -> [2, 1, 4] of 3s.
"""
from __future__ import annotations

import numpy as np

from minillm.model.tiled import TiledMatrix, tiled_product


def linear(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """x [..., C] @ w [C, N] (+ b [N]) -> [..., N], computed as one [M, C] @ [C, N] product."""
    x2 = x.reshape(-1, x.shape[-1])                 # [..., C] -> [M, C]
    y = tiled_product(x2, w) if isinstance(w, TiledMatrix) else x2 @ w   # [M, C] @ [C, N] -> [M, N]
    if b is not None:
        y += b                                      # [M, N] + [N]  (in place: y is fresh)
    return y.reshape(*x.shape[:-1], w.shape[-1])    # [M, N] -> [..., N]


def joined_still(whole: np.ndarray | None, parts) -> bool:
    """Are the matrices ``parts`` still column blocks of ``whole`` (as ``model/arena.py`` lays
    them out)? False when ``whole`` is None, or when a part was REPLACED since by an array that
    is not a view of the same block (edits in place keep it true): one product by ``whole``
    would then use the old numbers. (It checks the owner, not the place in it: under 1 µs.)"""
    owner = None if whole is None else (whole if whole.base is None else whole.base)
    return owner is not None and all(w.base is owner for w in parts)


def split_columns(y: np.ndarray, widths, biases) -> list[np.ndarray]:
    """y [..., N₁ + N₂ + …] -> [y₁ [..., N₁], y₂ [..., N₂], …] (views), each plus its bias if
    not None: the outputs of one product by side-by-side matrices [C, N₁ | N₂ | …]
    (``model/arena.py``), as the separate ``linear(x, w_i, b_i)`` would give them.

    Example: split_columns(np.arange(5.0), (2, 3), (None, np.ones(3))) -> [[0, 1], [3, 4, 5]].
    (Slices, not np.split: its bookkeeping cost ~15 µs a call, ~1 ms per decode step.)
    """
    parts, start = [], 0
    for width, b in zip(widths, biases):
        part = y[..., start:start + width]              # [..., N_i] a view of y
        if b is not None:
            part += b                                   # [..., N_i] + [N_i] (in place: y is fresh)
        parts.append(part)
        start += width
    return parts
