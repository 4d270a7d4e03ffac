"""One residual block, forward with its caches and backward: the layers of grad_norm,
grad_attention and grad_ffn called in order (grad_model.py runs it once per block).

    x₁ = x + Attn(Norm₁(x))        y = x₁ + FFN(Norm₂(x₁))

The backward walks the same lines in reverse; each residual passes dy straight through and adds
its branch's backward (dx₁ = dy + Norm₂ᵀ FFNᵀ dy, then dx = dx₁ + Norm₁ᵀ Attnᵀ dx₁).

Example: ``y, cache = block_forward(x, params.blocks[0], config, mask, rope)``, then
``dx = block_backward(dy, cache, params.blocks[0], config, grads, "blocks.0.")``.
"""
from __future__ import annotations

import numpy as np

from minillm.engine.ops import norm_fast
from minillm.train.grad_attention import attention_backward, attention_forward
from minillm.train.grad_ffn import ffn_backward, ffn_forward
from minillm.train.grad_norm import norm_backward


def block_forward(x: np.ndarray, bp, config, mask: np.ndarray, rope=None) -> tuple[np.ndarray, tuple]:
    """One block, x [B, T, C] -> [B, T, C], keeping each sub-layer's cache."""
    kind, eps = config.norm, config.norm_eps
    a, attn_cache = attention_forward(norm_fast(x, bp.norm1, kind, eps), bp.attn, config, mask,
                                      rope)                             # [B, T, C]
    x1 = x + a                                                          # [B, T, C]
    f, ffn_cache = ffn_forward(norm_fast(x1, bp.norm2, kind, eps), bp.ffn, config.ffn)  # [B, T, C]
    return x1 + f, (x, attn_cache, x1, ffn_cache)                       # [B, T, C]


def block_backward(dy: np.ndarray, cache: tuple, bp, config, grads: dict, prefix: str,
                   frozen: bool = False, ffn_grad=ffn_backward) -> np.ndarray:
    """dy [B, T, C] -> dx [B, T, C]; writes the block's gradients into grads[prefix + name]
    (``frozen``: not the norms'; the projections' follow their ``Frozen`` marks, train/frozen.py).
    ``ffn_grad``: the FFN's backward for the cache's form (train/memory/lean_ffn.py's, or this)."""
    x, attn_cache, x1, ffn_cache = cache
    kind, eps = config.norm, config.norm_eps
    dnorm2, g = ffn_grad(dy, ffn_cache, bp.ffn, config.ffn)             # [B, T, C]
    grads.update({f"{prefix}ffn.{k}": v for k, v in g.items()})
    dx1, g = norm_backward(dnorm2, x1, bp.norm2, kind, eps)             # [B, T, C]
    if not frozen:
        grads.update({f"{prefix}norm2.{k}": v for k, v in g.items()})
    dx1 += dy                                                           # the residual path
    dnorm1, g = attention_backward(dx1, attn_cache, bp.attn, config)   # [B, T, C]
    grads.update({f"{prefix}attn.{k}": v for k, v in g.items()})
    dx, g = norm_backward(dnorm1, x, bp.norm1, kind, eps)               # [B, T, C]
    if not frozen:
        grads.update({f"{prefix}norm1.{k}": v for k, v in g.items()})
    dx += dx1                                                           # the residual path
    return dx
