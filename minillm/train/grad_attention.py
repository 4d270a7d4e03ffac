"""Backward of causal multi-head self-attention (GPT-2: one K/V head per query head, no RoPE).

Forward, per head (``attention_forward`` calls the model's own ``split_heads``,
``scaled_dot_product`` and ``merge_heads``, keeping what the backward needs):

    q, k, v = x W_q + b_q, x W_k + b_k, x W_v + b_v         [B, T, C] each, split into H heads
    P = softmax(q kᵀ / √D + M)                               [B, H, T, T]   M: the causal mask
    o = P v ;  y = merge(o) W_o + b_o

Backward, given dy:

    dW_o = merge(o)ᵀ dy      do = split(dy W_oᵀ)
    dP = do vᵀ               dv = Pᵀ do
    dS = P ⊙ (dP − rowsum(dP ⊙ P))              the softmax backward (one row at a time)
    dq = dS k / √D           dk = dSᵀ q / √D
    dx = dq W_qᵀ + dk W_kᵀ + dv W_vᵀ            (x feeds all three projections)

subtle: the causal mask needs no backward of its own. A masked score is −∞, its weight P is
exactly 0, and the softmax backward multiplies by P: the future receives exactly zero gradient.

Example: with T = 1 the only weight is P = 1, so dS = 1 · (dP − dP) = 0: q and k get no
gradient, and the layer is y = (x W_v + b_v) W_o + b_o.
"""
from __future__ import annotations

import math

import numpy as np

from minillm.engine.ops import linear
from minillm.model.attention import merge_heads, scaled_dot_product, split_heads


def softmax_backward(dp: np.ndarray, p: np.ndarray) -> np.ndarray:
    """p = softmax(s) along the last axis, dp = ∂L/∂p -> ∂L/∂s = p ⊙ (dp − Σ_j dp_j p_j)."""
    return p * (dp - (dp * p).sum(axis=-1, keepdims=True))      # [..., S]


def attention_forward(x: np.ndarray, p, config, mask: np.ndarray) -> tuple[np.ndarray, tuple]:
    """x [B, T, C] -> y [B, T, C] and the cache (x, q, k, v, P, merged o).

    The same arithmetic as ``minillm.model.attention.attention`` without RoPE or a KV cache
    (training sees whole sequences); the tests check the two give the same logits.
    """
    H = config.n_heads
    q = split_heads(linear(x, p.wq, p.bq), H)        # [B, T, C] @ [C, C] -> [B, H, T, D]
    k = split_heads(linear(x, p.wk, p.bk), H)        # [B, H, T, D]
    v = split_heads(linear(x, p.wv, p.bv), H)        # [B, H, T, D]
    o, weights = scaled_dot_product(q, k, v, mask)   # [B, H, T, D], [B, H, T, T]
    merged = merge_heads(o)                          # [B, T, C]
    y = linear(merged, p.wo, p.bo)                   # [B, T, C] @ [C, C] -> [B, T, C]
    return y, (x, q, k, v, weights, merged)


def attention_backward(dy: np.ndarray, cache: tuple, p, config) -> tuple[np.ndarray, dict]:
    """dy [B, T, C] -> dx [B, T, C] and {"wq", "bq", "wk", "bk", "wv", "bv", "wo", "bo"} grads."""
    x, q, k, v, weights, merged = cache
    B, T, C = x.shape
    scale = 1.0 / math.sqrt(q.shape[-1])             # a Python float
    dy2 = dy.reshape(-1, C)                          # [N, C]
    grads = {"wo": merged.reshape(-1, C).T @ dy2,    # [C, N] @ [N, C] -> [C, C]
             "bo": dy2.sum(axis=0)}                  # [C]
    do = split_heads((dy2 @ p.wo.T).reshape(B, T, C), config.n_heads)   # [B, H, T, D]
    dweights = do @ v.transpose(0, 1, 3, 2)          # [B, H, T, D] @ [B, H, D, T] -> [B, H, T, T]
    dv = weights.transpose(0, 1, 3, 2) @ do          # [B, H, T, T] @ [B, H, T, D] -> [B, H, T, D]
    dscores = softmax_backward(dweights, weights)    # [B, H, T, T]  zero above the diagonal
    dscores *= scale                                 # the 1/√D of the scores
    dq = dscores @ k                                 # [B, H, T, T] @ [B, H, T, D] -> [B, H, T, D]
    dk = dscores.transpose(0, 1, 3, 2) @ q           # [B, H, T, T] @ [B, H, T, D] -> [B, H, T, D]
    x2 = x.reshape(-1, C)                            # [N, C]
    dx = np.zeros_like(x2)                           # [N, C]
    for name, d in (("q", dq), ("k", dk), ("v", dv)):
        d2 = merge_heads(d).reshape(-1, C)           # [B, H, T, D] -> [N, C]
        grads["w" + name] = x2.T @ d2                # [C, N] @ [N, C] -> [C, C]
        grads["b" + name] = d2.sum(axis=0)           # [C]
        dx += d2 @ getattr(p, "w" + name).T          # [N, C] @ [C, C] -> [N, C]
    return dx.reshape(B, T, C), grads
