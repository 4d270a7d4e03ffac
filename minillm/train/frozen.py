"""Projections whose weight is frozen, optionally with a low-rank adapter: the LoRA fast path.

A projection y = x W (+ b) has three backward products (grad_attention.py, grad_ffn.py):

    ∂L/∂W = xᵀ dy        ∂L/∂b = Σ dy        ∂L/∂x = dy Wᵀ

When W is frozen the first two are not wanted; the third still is (the gradient flows *through*
W to the layers below). LoRA adds a trained low-rank path beside the frozen W (lora/adapters.py):

    y = x W + s · (x A) B          A [in, r], B [r, out], s = α / r
    u = x A                        [N, r]   (recomputed in the backward: N·in·r, cheap for r ≪ out)
    ∂L/∂B = s · uᵀ dy              [r, N] @ [N, out] -> [r, out]
    ∂L/∂A = s · xᵀ (dy Bᵀ)         [in, N] @ ([N, out] @ [out, r]) -> [in, r]
    ∂L/∂x = dy Wᵀ + s · (dy Bᵀ) Aᵀ

These equal the merged form's s · G Bᵀ and s · Aᵀ G with G = xᵀ dy (associativity), but never
form the [in, out] matrices W + s·A B or G: each step reads the frozen W and writes only
r · (in + out) numbers per adapted matrix.

``Frozen`` marks a weight so; ``project``, ``weight_grads`` and ``input_grad`` are the three
operations the layers' forward and backward call, plain arrays passing through unchanged (full
training). Example: ``Frozen(W)`` in place of ``W`` makes ``weight_grads("wq", x, dy, Frozen(W))``
return ``{}``; ``Frozen(W, A, B, 2.0)`` returns ``{"wq.lora_A": …, "wq.lora_B": …}``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from minillm.engine.ops import linear


@dataclass(frozen=True)
class Frozen:
    """A frozen weight W [in, out] (read, never written or copied), with an optional adapter
    s · A B (A [in, r], B [r, out]; both None: no adapter)."""
    w: np.ndarray
    A: np.ndarray | None = None
    B: np.ndarray | None = None
    scale: float = 0.0

    @property
    def shape(self) -> tuple[int, int]:
        return self.w.shape


def is_trained(w) -> bool:
    """True for a plain array (its gradient is wanted), False for a Frozen weight."""
    return not isinstance(w, Frozen)


def project(x: np.ndarray, w, b: np.ndarray | None = None) -> np.ndarray:
    """x [..., in] -> x W (+ b) [..., out], plus s · (x A) B when ``w`` carries an adapter."""
    if is_trained(w):
        return linear(x, w, b)                          # [..., in] @ [in, out] -> [..., out]
    y = linear(x, w.w, b)                               # [..., out]  the frozen path
    if w.A is not None:
        x2 = x.reshape(-1, x.shape[-1])                 # [N, in]
        y += (((x2 @ w.A) * w.scale) @ w.B).reshape(y.shape)   # [N, in] @ [in, r] @ [r, out]
        # (s applied to the [N, r] product, not the [N, out] one: a pass over r columns, not out)
    return y


def weight_grads(name: str, x2: np.ndarray, d2: np.ndarray, w) -> dict[str, np.ndarray]:
    """x2 [N, in], d2 = ∂L/∂y [N, out] -> {name: xᵀ dy} for a trained weight, {} for a frozen
    one, {name + ".lora_A": ∂L/∂A, name + ".lora_B": ∂L/∂B} for a frozen one with an adapter."""
    if is_trained(w):
        return {name: x2.T @ d2}                        # [in, N] @ [N, out] -> [in, out]
    if w.A is None:
        return {}
    dyB = d2 @ w.B.T                                    # [N, out] @ [out, r] -> [N, r]
    return {name + ".lora_A": w.scale * (x2.T @ dyB),   # [in, N] @ [N, r] -> [in, r]
            name + ".lora_B": w.scale * ((x2 @ w.A).T @ d2)}   # [r, N] @ [N, out] -> [r, out]


def input_grad(d2: np.ndarray, w) -> np.ndarray:
    """d2 = ∂L/∂y [N, out] -> ∂L/∂x [N, in] = dy Wᵀ (+ s · (dy Bᵀ) Aᵀ with an adapter)."""
    if is_trained(w):
        return d2 @ w.T                                 # [N, out] @ [out, in] -> [N, in]
    dx = d2 @ w.w.T                                     # [N, in]  through the frozen W
    if w.A is not None:
        dx += ((d2 @ w.B.T) * w.scale) @ w.A.T          # [N, out] @ [out, r] @ [r, in] -> [N, in]
    return dx
