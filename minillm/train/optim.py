"""The optimiser: AdamW, gradient-norm clipping, and a warmup + cosine learning-rate schedule.

AdamW (Loshchilov & Hutter), for each parameter θ with gradient g at step t = 1, 2, …:

    m ← β₁ m + (1 − β₁) g              running mean of the gradient
    v ← β₂ v + (1 − β₂) g²             running mean of its square
    m̂ = m / (1 − β₁ᵗ),  v̂ = v / (1 − β₂ᵗ)      bias corrections (m, v start at 0)
    θ ← θ − lr · (m̂ / (√v̂ + ε) + λ θ)   λ: weight decay, *decoupled* from the gradient

Weight decay applies to the matrices (≥ 2-D: projections and embeddings) and not to biases or
norm gains, as in GPT-2 / nanoGPT practice (decaying a gain towards 0 would fight the norm).

Clipping: if ‖g‖₂ over *all* parameters exceeds ``max_norm``, every gradient is scaled by
max_norm / ‖g‖ — the direction is kept, only the step length is bounded.

Schedule: lr rises linearly for ``warmup`` steps (Adam's early v̂ is noisy), then follows half a
cosine from ``max_lr`` down to ``min_lr`` at the last step.

Example: ``lr_at(0, 1e-3, 1e-4, warmup=10, total=100)`` = 1e-4 (step 1 of 10 of the warmup);
``lr_at(99, …)`` = 1e-4 (the end of the cosine).
"""
from __future__ import annotations

import math

import numpy as np


def lr_at(step: int, max_lr: float, min_lr: float, warmup: int, total: int) -> float:
    """Learning rate of step ``step`` (0-based) of ``total``."""
    if step < warmup:
        return max_lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - 1 - warmup)           # 0 … 1
    return min_lr + 0.5 * (max_lr - min_lr) * (1.0 + math.cos(math.pi * min(progress, 1.0)))


def clip_grad_norm(grads: dict[str, np.ndarray], max_norm: float) -> float:
    """Scale all gradients in place so their global L2 norm is ≤ max_norm; return the norm before."""
    total = math.sqrt(sum(float(np.vdot(g, g)) for g in grads.values()))
    if total > max_norm:
        scale = max_norm / (total + 1e-6)
        for g in grads.values():
            g *= scale
    return total


class AdamW:
    """AdamW over a dict of named arrays, updated in place.

    ``opt = AdamW(model.params.named()); opt.step(grads, lr)``. The state (``m``, ``v``, ``t``) is
    what a checkpoint must save to resume exactly (``state_arrays`` / ``load_state_arrays``).
    """

    def __init__(self, params: dict[str, np.ndarray], betas: tuple[float, float] = (0.9, 0.95),
                 eps: float = 1e-8, weight_decay: float = 0.1):
        other = [k for k, p in params.items() if not isinstance(p, np.ndarray)]
        if other:       # a list or a framework's tensor: an in-place update would not reach it
            raise TypeError(f"AdamW updates NumPy arrays in place; {other[0]!r} is a "
                            f"{type(params[other[0]]).__name__}. Train a model of plain arrays: "
                            f"load_model(path, fast=False)")
        self.params = params
        self.beta1, self.beta2 = float(betas[0]), float(betas[1])
        self.eps, self.weight_decay = float(eps), float(weight_decay)
        self.m = {k: np.zeros_like(p) for k, p in params.items()}
        self.v = {k: np.zeros_like(p) for k, p in params.items()}
        self.t = 0

    def step(self, grads: dict[str, np.ndarray], lr: float) -> None:
        """One update of every parameter. ``grads`` has the same names and shapes."""
        if set(grads) != set(self.params):
            raise ValueError(f"gradient names differ from the parameters: "
                             f"{sorted(set(grads) ^ set(self.params))[:5]}")
        wrong = [k for k, p in self.params.items() if grads[k].shape != p.shape]
        if wrong:  # subtle: NumPy would broadcast a [C] gradient over a [T, C] parameter silently
            raise ValueError(f"gradient {wrong[0]!r} has shape {grads[wrong[0]].shape}, its "
                             f"parameter {self.params[wrong[0]].shape}")
        self.t += 1
        b1, b2 = self.beta1, self.beta2
        c1, c2 = 1.0 - b1 ** self.t, 1.0 - b2 ** self.t                # Python floats
        step_size = lr / c1
        for name, p in self.params.items():
            g, m, v = grads[name], self.m[name], self.v[name]           # [...] θ's shape, all four
            m *= b1                                                     # [...]
            m += (1.0 - b1) * g                                         # [...] running mean
            v *= b2                                                     # [...]
            v += (1.0 - b2) * (g * g)                                   # [...] running mean of g²
            if p.ndim >= 2 and self.weight_decay:
                p *= 1.0 - lr * self.weight_decay                       # [...] decoupled decay
            denom = np.sqrt(v * (1.0 / c2))                             # [...] √v̂
            denom += self.eps                                           # [...]
            p -= step_size * (m / denom)                                # [...] θ −= lr m̂/(√v̂+ε)

    def state_arrays(self) -> dict[str, np.ndarray]:
        """{"m.<name>": …, "v.<name>": …} — with ``t``, everything needed to resume."""
        return {**{f"m.{k}": a for k, a in self.m.items()}, **{f"v.{k}": a for k, a in self.v.items()}}

    def load_state_arrays(self, arrays: dict[str, np.ndarray], t: int) -> None:
        """Restore ``state_arrays()`` and the step count (copies: the arrays stay writable)."""
        want = set(self.state_arrays())
        if set(arrays) != want:
            raise ValueError(f"optimiser state does not match the parameters: "
                             f"{sorted(set(arrays) ^ want)[:5]}")
        for k in self.m:
            self.m[k][...] = arrays[f"m.{k}"]
            self.v[k][...] = arrays[f"v.{k}"]
        self.t = int(t)
