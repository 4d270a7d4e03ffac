"""Backward of causal self-attention: multi-head (GPT-2) and grouped-query with RoPE (Llama).

Forward (``attention_forward`` calls the model's own ``split_heads``, ``apply_rope``,
``scaled_dot_product`` and ``merge_heads``, keeping what the backward needs). H query heads,
KV key/value heads, G = H / KV query heads per KV head (GPT-2: KV = H, G = 1); query head h
reads KV head h // G:

    q = x W_q + b_q  [B, H, T, D]      k, v = x W_k + b_k, x W_v + b_v  [B, KV, T, D]
    q̃, k̃ = RoPE(q), RoPE(k)                                (Llama; GPT-2: q̃ = q, k̃ = k)
    P_h = softmax(q̃_h k̃_{h//G}ᵀ / √D + M)                  [B, H, T, T]   M: the mask
    o_h = P_h v_{h//G} ;  y = merge(o) W_o + b_o

Backward, given dy:

    dW_o = merge(o)ᵀ dy      do = split(dy W_oᵀ)
    dP_h = do_h v_{h//G}ᵀ    dv_h = P_hᵀ do_h                   (one per *query* head)
    dS_h = P_h ⊙ (dP_h − rowsum(dP_h ⊙ P_h))                    the softmax backward, row by row
    dq̃_h = dS_h k̃_{h//G} / √D      dk̃_h = dS_hᵀ q̃_h / √D
    dk̃_kv = Σ_{g<G} dk̃_{kv·G+g}    dv_kv = Σ_{g<G} dv_{kv·G+g}  a KV head used G times: its
                                                                gradient is the sum of the G uses
    dq, dk = RoPE⁻¹(dq̃), RoPE⁻¹(dk̃)                            (grad_rope.py: rotate by −θ)
    dW_q = xᵀ dq, db_q = Σ dq (likewise k and v);  dx = dq W_qᵀ + dk W_kᵀ + dv W_vᵀ

subtle: the mask needs no backward of its own. A masked score is −∞, its weight P is exactly 0,
and the softmax backward multiplies by P: the future (and padding) receives exactly zero gradient.

subtle: the sum over the G query heads is taken *before* the inverse rotation; the rotation is
linear and the same for every head at one position, so the order does not matter, and it is G
times cheaper.

Example: with T = 1 the only weight is P = 1, so dS = 1 · (dP − dP) = 0: q and k get no
gradient, and the layer is y = (x W_v + b_v) W_o + b_o.
"""
from __future__ import annotations

import math

import numpy as np

from minillm.train.frozen import input_grad, is_trained, project, weight_grads
from minillm.model.attention import merge_heads, scaled_dot_product, split_heads
from minillm.model.rope import apply_rope
from minillm.train.grad_rope import rope_backward


def softmax_backward(dp: np.ndarray, p: np.ndarray) -> np.ndarray:
    """p = softmax(s) along the last axis, dp = ∂L/∂p -> ∂L/∂s = p ⊙ (dp − Σ_j dp_j p_j)."""
    return p * (dp - (dp * p).sum(axis=-1, keepdims=True))      # [..., S]


def sum_over_groups(d: np.ndarray, n_kv_heads: int) -> np.ndarray:
    """d [B, H, T, D], one gradient per query head -> [B, KV, T, D]: KV head kv gets the sum over
    the query heads kv·G … kv·G + G − 1 that read it (adjacent: a reshape groups them)."""
    B, H, T, D = d.shape
    return d.reshape(B, n_kv_heads, H // n_kv_heads, T, D).sum(axis=2)   # [B, KV, G, T, D] -> [B, KV, T, D]


def attention_forward(x: np.ndarray, p, config, mask: np.ndarray, rope=None
                      ) -> tuple[np.ndarray, tuple]:
    """x [B, T, C] -> y [B, T, C] and the cache (x, q̃, k̃, v, P, merged o, rope).

    The same arithmetic as ``minillm.model.attention.attention`` without a KV cache (training
    sees whole sequences); ``rope`` is (cos, sin) [B, 1, T, D/2] or None, ``mask`` [B or 1, T, T]
    (causal, and may hide padding). The tests check the two give the same logits.
    """
    q = split_heads(project(x, p.wq, p.bq), config.n_heads)      # [B, T, C] @ [C, H·D] -> [B, H, T, D]
    k = split_heads(project(x, p.wk, p.bk), config.n_kv_heads)   # [B, T, C] @ [C, KV·D] -> [B, KV, T, D]
    v = split_heads(project(x, p.wv, p.bv), config.n_kv_heads)   # [B, KV, T, D]
    if rope is not None:
        q, k = apply_rope(q, *rope), apply_rope(k, *rope)       # [B, H, T, D], [B, KV, T, D]
    o, weights = scaled_dot_product(q, k, v, mask)              # [B, H, T, D], [B, H, T, T]
    merged = merge_heads(o)                                     # [B, T, H·D]
    y = project(merged, p.wo, p.bo)                              # [B, T, H·D] @ [H·D, C] -> [B, T, C]
    return y, (x, q, k, v, weights, merged, rope)


def attention_backward(dy: np.ndarray, cache: tuple, p, config) -> tuple[np.ndarray, dict]:
    """dy [B, T, C] -> dx [B, T, C] and {"wq", "wk", "wv", "wo"} gradients, plus those of the
    biases the layer has ("bq", "bk", "bv": GPT-2 and Qwen2; "bo": GPT-2)."""
    x, q, k, v, weights, merged, rope = cache
    B, T, C = x.shape
    H, KV = config.n_heads, config.n_kv_heads
    G = H // KV                                      # query heads per KV head
    scale = 1.0 / math.sqrt(q.shape[-1])             # a Python float
    dy2 = dy.reshape(-1, C)                          # [N, C]
    grads = weight_grads("wo", merged.reshape(-1, merged.shape[-1]), dy2, p.wo)   # [H·D, C]
    if p.bo is not None and is_trained(p.wo):
        grads["bo"] = dy2.sum(axis=0)                # [C]
    do = split_heads(input_grad(dy2, p.wo).reshape(B, T, -1), H)   # [N, C] @ [C, H·D] -> [B, H, T, D]
    k_h = np.repeat(k, G, axis=1)                    # [B, KV, T, D] -> [B, H, T, D]: head h's keys
    v_h = np.repeat(v, G, axis=1)                    # [B, H, T, D]: head h's values (h // G)
    dweights = do @ v_h.transpose(0, 1, 3, 2)        # [B, H, T, D] @ [B, H, D, T] -> [B, H, T, T]
    dv = sum_over_groups(weights.transpose(0, 1, 3, 2) @ do, KV)   # [B, H, T, D] -> [B, KV, T, D]
    dscores = softmax_backward(dweights, weights)    # [B, H, T, T]  zero where masked
    dscores *= scale                                 # the 1/√D of the scores
    dq = dscores @ k_h                               # [B, H, T, T] @ [B, H, T, D] -> [B, H, T, D]
    dk = sum_over_groups(dscores.transpose(0, 1, 3, 2) @ q, KV)    # [B, H, T, D] -> [B, KV, T, D]
    if rope is not None:                             # back through the rotation: by −θ
        dq, dk = rope_backward(dq, *rope), rope_backward(dk, *rope)
    x2 = x.reshape(-1, C)                            # [N, C]
    dx = np.zeros_like(x2)                           # [N, C]
    for name, d in (("q", dq), ("k", dk), ("v", dv)):
        d2 = merge_heads(d).reshape(B * T, -1)       # [B, heads, T, D] -> [N, heads·D]
        w = getattr(p, "w" + name)                   # [C, heads·D] (or Frozen: train/frozen.py)
        grads |= weight_grads("w" + name, x2, d2, w)  # [C, N] @ [N, heads·D] -> [C, heads·D]
        if getattr(p, "b" + name) is not None and is_trained(w):
            grads["b" + name] = d2.sum(axis=0)       # [heads·D]
        dx += input_grad(d2, w)                      # [N, heads·D] @ [heads·D, C] -> [N, C]
    return dx.reshape(B, T, C), grads
