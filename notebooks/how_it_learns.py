"""How it learns (notebook 19): the library's training pieces in the shape of the exercises, and
a finite-difference gradient.

``LIBRARY[name]`` takes the same arguments as the exercise ``name`` (exercise_checks/backprop.py
and updates.py) and returns what minillm/train/ computes — the loss's gradient (grad_model.py), a
projection's three products (frozen.py), RMSNorm's and attention's backward (grad_norm.py,
grad_attention.py), AdamW's step, the schedule and the clipping (optim.py) — so a notebook can put yours beside
the library's, and run the library's in place of a part of yours that does not pass its check yet
(the notebook's ``use``).
"""
from __future__ import annotations

import types

import numpy as np

from minillm.model.attention import causal_mask
from minillm.train.frozen import input_grad, weight_grads
from minillm.train.grad_attention import attention_backward, attention_forward
from minillm.train.grad_model import cross_entropy_with_grad
from minillm.train.optim import clip_grad_norm
from minillm.train.grad_norm import rms_norm_backward
from minillm.train.optim import AdamW, lr_at


def numeric_grad(f, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Central differences of the scalar f at x (float64): (f(x + h eᵢ) − f(x − h eᵢ)) / 2h for
    every entry i. The error is O(h²) from the formula and O(ε/h) from rounding: h = 1e-6 in
    float64 (ε ≈ 1e-16) leaves about 1e-10 of each."""
    x = np.array(x, dtype=np.float64)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + h
        up = f(x)
        x[i] = old - h
        down = f(x)
        x[i] = old
        grad[i] = (up - down) / (2 * h)
    return grad


def relative_error(a, b) -> float:
    """max |a − b| / max(|a|, |b|, tiny): 1e-8 or less is agreement in float64."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.abs(a - b).max() / max(np.abs(a).max(), np.abs(b).max(), 1e-30))


def ce_grad(logits, targets):
    return cross_entropy_with_grad(logits, targets)[1]                  # [N, V]


def linear_backward(dy, x, W):
    """What every projection's backward calls (train/frozen.py): dx, dW; db = Σ dy."""
    return input_grad(dy, W), weight_grads("w", x, dy, W)["w"], dy.sum(axis=0)


def rms_backward(dy, x, w, eps):
    return rms_norm_backward(dy, x, w, eps)


def single_head_attention_backward(dout, q, k, v):
    """grad_attention.py's backward on one head, T positions: x = [q | k | v] [1, T, 3D], W_q,
    W_k, W_v pick its three parts and W_o = [I 0 0] writes the head's output into the first D of
    3D columns (the layer maps C to C), so ∂L/∂x is [dq | dk | dv] exactly."""
    T, D = q.shape
    eye, zero = np.eye(D), np.zeros((D, D))
    pick = [np.vstack([eye if j == i else zero for j in range(3)]) for i in range(3)]   # [3D, D] each
    p = types.SimpleNamespace(wq=pick[0], wk=pick[1], wv=pick[2], wo=pick[0].T, bq=None, bk=None, bv=None, bo=None)
    config = types.SimpleNamespace(n_heads=1, n_kv_heads=1)
    x = np.concatenate([q, k, v], axis=-1)[None]                        # [1, T, 3D]
    _, cache = attention_forward(x, p, config, causal_mask(T, T)[None])
    dy = np.concatenate([dout, np.zeros((T, 2 * D))], axis=-1)[None]    # [1, T, 3D]
    dx, _ = attention_backward(dy, cache, p, config)                    # [1, T, 3D]
    return tuple(dx[0, :, i * D:(i + 1) * D] for i in range(3))        # dq, dk, dv [T, D]


def adamw_step(theta, g, m, v, t, lr, beta1, beta2, eps, weight_decay):
    """One step of minillm's AdamW from the state (m, v, t − 1), on a copy of theta. (The library
    decays matrices only — biases and gains are not decayed — so a vector is given as [1, n].)"""
    shape = np.shape(theta)
    w = np.array(theta, dtype=np.float64).reshape(1, -1)                # [1, n]: a matrix, decayed
    opt = AdamW({"w": w}, betas=(beta1, beta2), eps=eps, weight_decay=weight_decay)
    opt.m["w"][...], opt.v["w"][...], opt.t = np.reshape(m, (1, -1)), np.reshape(v, (1, -1)), t - 1
    opt.step({"w": np.reshape(np.asarray(g, np.float64), (1, -1))}, lr)
    return w.reshape(shape), opt.m["w"].reshape(shape), opt.v["w"].reshape(shape)


def lr_schedule(step, max_lr, min_lr, warmup, total):
    return lr_at(step, max_lr, min_lr, warmup, total)


def lora_forward(x, W, A, B, alpha):
    return x @ W + (alpha / A.shape[1]) * (x @ A) @ B                   # lora/adapters.py's W + s A B


def lora_grads(G, A, B, alpha):
    s = alpha / A.shape[1]                                              # lora/adapters.py, the docstring's
    return s * G @ B.T, s * A.T @ G                                     # ∂L/∂A = s G Bᵀ, ∂L/∂B = s Aᵀ G


def batch_of(ids, starts, T):
    return (np.stack([ids[s:s + T] for s in starts]),                   # [B, T] (train/data.py's windows)
            np.stack([ids[s + 1:s + T + 1] for s in starts]))


def clip_grads(grads, max_norm):
    copies = {str(i): np.array(g, copy=True) for i, g in enumerate(grads)}   # optim.py clips in place
    clip_grad_norm(copies, max_norm)
    return [copies[str(i)] for i in range(len(grads))]


LIBRARY = {"ce_grad": ce_grad, "linear_backward": linear_backward, "rms_norm_backward": rms_backward,
           "attention_backward": single_head_attention_backward, "adamw_step": adamw_step,
           "lr_schedule": lr_schedule, "batch_of": batch_of, "lora_forward": lora_forward,
           "lora_grads": lora_grads, "clip_grads": clip_grads}

