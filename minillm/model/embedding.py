"""Embedding lookup: token ids become vectors by selecting rows of a matrix.
Where it runs — shared (the engine, training, --reference): embed.

    h[b, t] = wte[ids[b, t]] + wpe[positions[b, t]]        (GPT-2: learned positions)
    h[b, t] = wte[ids[b, t]]                               (Llama: positions enter later, as RoPE)

There is no arithmetic in a lookup: id 48572 simply picks row 48572 of ``wte``. Multiplying a
one-hot vector by ``wte`` would give the same row at V times the cost.

Example: wte = [[0, 0], [1, 2], [3, 4]], ids = [[2, 1]] -> [[[3, 4], [1, 2]]] (before positions).
"""
from __future__ import annotations

import numpy as np


def embed(wte: np.ndarray, ids: np.ndarray, wpe: np.ndarray | None = None,
          positions: np.ndarray | None = None) -> np.ndarray:
    """wte [V, C], ids [B, T] int, wpe [n_ctx, C], positions [B, T] int -> h [B, T, C]."""
    h = wte[ids]                          # [B, T] -> [B, T, C]   row lookup (a copy: safe to add to)
    if wpe is not None:
        h += wpe[positions]               # [B, T, C] + [B, T, C]
    return h
