"""The transformer block (pre-norm, as GPT-2 and Llama both use; OLMo 2 normalises each
sub-layer's output instead, ``config.post_norms``: x = x + Norm₁(Attention(x)), …):

    x = x + Attention(Norm₁(x))      positions exchange information (only with the past)
    x = x + FFN(Norm₂(x))            each position is transformed on its own (or: MoE, k of E FFNs)

The additions are the residual stream: each sub-layer reads the stream and writes a correction
into it, so a deep stack starts out close to the identity and gradients flow straight through.
Gemma normalises each correction too before adding it (``config.sandwich_norms``: 4 norms a block).
Where it runs — copied (the engine's own: engine/layers.py::block, tested equal in tests/engine/test_engine_equals_model.py): block.
"""
from __future__ import annotations

import numpy as np

from minillm.model.attention import attention
from minillm.model.ffn import ffn
from minillm.model.moe import moe        # (a mixture of experts: model/moe.py, beyond the afternoon)
from minillm.model.norm import norm


def block(x: np.ndarray, p, config, mask: np.ndarray, rope=None, cache=None, layer: int = 0,
          return_weights: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """x [B, T, C] -> [B, T, C], plus this block's attention weights [B, H, T, S] (None when
    ``return_weights`` is False)."""
    if config.post_norms:                   # OLMo 2: the norms after the sub-layers, none before
        a, weights = attention(x, p.attn, config, mask, rope=rope, cache=cache, layer=layer,
                               return_weights=return_weights)           # [B, T, C]
        x = x + norm(a, p.norm1, config.norm, config.norm_eps)          # [B, T, C]
        return x + norm(ffn(x, p.ffn, config.ffn), p.norm2, config.norm, config.norm_eps), weights
    a, weights = attention(norm(x, p.norm1, config.norm, config.norm_eps), p.attn, config,
                           mask, rope=rope, cache=cache, layer=layer,
                           return_weights=return_weights)               # [B, T, C]
    if p.post_attn_norm is not None:                                    # Gemma: Norm(Attention(…))
        a = norm(a, p.post_attn_norm, config.norm, config.norm_eps)     # [B, T, C]
    x = x + a                                                           # [B, T, C]
    h = norm(x, p.norm2, config.norm, config.norm_eps)                  # [B, T, C]
    f = moe(h, p.ffn, config) if config.n_experts else ffn(h, p.ffn, config.ffn)  # [B, T, C]
    if p.post_ffn_norm is not None:                                     # Gemma: Norm(FFN(…))
        f = norm(f, p.post_ffn_norm, config.norm, config.norm_eps)      # [B, T, C]
    return x + f, weights
