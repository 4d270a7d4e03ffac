"""The engine's forms of model/'s small operations: the same arithmetic, arranged for speed.

Each is tested equal to the model's definition (tests/engine/test_ops.py):

    linear          model.linear.linear, as ONE [B·T, C] @ [C, N] product (rows.py's choice)
    split_columns   the outputs of one product by side-by-side matrices [C, N₁ | N₂ | …]
    layer_norm_fast, rms_norm_fast   model.norm's formulas on one temporary, in place
    gelu_tanh_fast, silu_fast        model.ffn's formulas on one temporary, in place

Why in place: a fresh [..., C] array per step costs page faults on first touch — a fresh 6 MB
array (a [512, 3072] activation) costs about as much to obtain from the OS as the arithmetic on
it; in place halves the GELU's time in a 512-token prefill.
"""
from __future__ import annotations

import numpy as np

from minillm.engine.rows import product
from minillm.model.ffn import SQRT_2_OVER_PI

_CUBIC = 0.044715 * SQRT_2_OVER_PI   # b in gelu_tanh_fast (a Python float: no float64 promotion)


def linear(x: np.ndarray, w, b: np.ndarray | None = None) -> np.ndarray:
    """x [..., C] @ w [C, N] (+ b [N]) -> [..., N], computed as one [M, C] @ [C, N] product.

    Why not ``x @ w``: for a 3-D ``x``, NumPy's matmul treats [B, T, C] @ [C, N] as B separate
    [T, C] @ [C, N] products, and each one streams the whole of W from memory. While decoding
    (T = 1) W is the expensive part — a batch of 8 rows would read every weight 8 times per step.
    Flattening the leading dimensions first gives ONE product that reads W once; ``rows.py``
    picks how (one matrix-vector product, 32-row tiles, or the general product).
    """
    x2 = x.reshape(-1, x.shape[-1])                 # [..., C] -> [M, C]
    y = product(x2, w)                              # [M, C] @ [C, N] -> [M, N]
    if b is not None:
        y += b                                      # [M, N] + [N]  (in place: y is fresh)
    return y.reshape(*x.shape[:-1], w.shape[-1])    # [M, N] -> [..., N]


def split_columns(y: np.ndarray, widths, biases) -> list[np.ndarray]:
    """y [..., N₁ + N₂ + …] -> [y₁ [..., N₁], y₂ [..., N₂], …] (views), each plus its bias if
    not None: the outputs of one product by side-by-side matrices [C, N₁ | N₂ | …]
    (``arena.py``), as the separate ``linear(x, w_i, b_i)`` would give them.

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


def mean_last(x: np.ndarray) -> np.ndarray:
    """x [..., C] -> [..., 1]: ``x.mean(-1, keepdims=True)``, the same float32 sum divided by C.

    Why not ``np.mean``: its Python wrapper (dtype and count bookkeeping) costs ~10 µs per call,
    more than the arithmetic on one position's 576 values; a decode step of a 30-layer Llama
    calls it 61 times (``benchmarks/README.md``, "Single stream").
    """
    s = np.add.reduce(x, axis=-1, keepdims=True)          # [..., 1]  Σ_c x_c
    s /= x.shape[-1]                                      # [..., 1]  ÷ C (as np.mean divides)
    return s


def layer_norm_fast(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """``layer_norm`` with every step after the centring in place on ``y``; ``x`` is not modified."""
    y = x - mean_last(x)                                  # [..., C]  centred (the one temporary)
    var = mean_last(np.square(y))                         # [..., 1]  biased variance
    var += eps                                            # [..., 1]  eps: a Python float
    y *= 1.0 / np.sqrt(var)                               # [..., C]
    y *= weight                                           # [..., C]
    y += bias                                             # [..., C]
    return y


def rms_norm_fast(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    """``rms_norm`` on one temporary; ``x`` is not modified."""
    ms = mean_last(np.square(x))                          # [..., 1]  mean of squares
    ms += eps                                             # [..., 1]
    y = x * (1.0 / np.sqrt(ms))                           # [..., C]  x · rsqrt, as HF computes it
    y *= weight                                           # [..., C]
    return y


def norm_fast(x: np.ndarray, p, kind: str, eps: float) -> np.ndarray:
    """``model.norm.norm`` with the in-place forms."""
    if kind == "layernorm":
        return layer_norm_fast(x, p.weight, p.bias, eps)
    return rms_norm_fast(x, p.weight, eps)


def gelu_tanh_fast(x: np.ndarray) -> np.ndarray:
    """``gelu_tanh`` in place on one temporary; ``x`` is not modified.

    The inner term factored, √(2/π)(x + 0.044715x³) = x · (a + b·x²), a = √(2/π),
    b = 0.044715·a: written as one expression it makes eight temporaries.
    """
    u = x * x                                    # [...] x²
    u *= _CUBIC                                  # [...] b·x²
    u += SQRT_2_OVER_PI                          # [...] a + b·x²
    u *= x                                       # [...] a·(x + 0.044715·x³)
    np.tanh(u, out=u)                            # [...] tanh(...)
    u += 1.0                                     # [...] 1 + tanh(...)
    u *= x                                       # [...] x·(1 + tanh(...))
    u *= 0.5                                     # [...] ½·x·(1 + tanh(...))
    return u


def silu_fast(x: np.ndarray) -> np.ndarray:
    """``silu`` in place on one temporary; ``x`` is not modified."""
    u = x * 0.5                           # [...] x/2
    np.tanh(u, out=u)                     # [...] tanh(x/2)
    u *= 0.5                              # [...]
    u += 0.5                              # [...] σ(x) = ½ + ½·tanh(x/2)
    u *= x                                # [...] x · σ(x)
    return u
