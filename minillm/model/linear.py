"""A weight product: y = x W + b.
Where it runs — copied (the engine's own: engine/ops.py::linear, tested equal in tests/engine/test_engine_equals_model.py): linear.

    linear(x [..., C], W [C, N], b [N]) = x W + b   -> [..., N]

Every weight matrix is stored ``[in, out]`` (``params.py``), so the line reads as the formula is
written: position t's output is its input row times W, plus the bias.

Example: linear(np.ones((2, 1, 3), np.float32), np.ones((3, 4), np.float32)) -> [2, 1, 4] of 3s.

(The engine's ``linear``, ``minillm/engine/ops.py``, computes the same product as ONE [B·T, C]
matrix times W, so that a batch of rows reads each weight from memory once.)
"""
from __future__ import annotations

import numpy as np


def linear(x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """x [..., C] @ w [C, N] (+ b [N]) -> [..., N]."""
    y = x @ w                                       # [..., C] @ [C, N] -> [..., N]
    return y if b is None else y + b                # [..., N] + [N]
