"""The transformer block (pre-norm, as GPT-2 and Llama both use; OLMo 2 normalises each
sub-layer's output instead, ``config.post_norms``: x = x + Norm₁(Attention(x)), …):

    x = x + Attention(Norm₁(x))      positions exchange information (only with the past)
    x = x + FFN(Norm₂(x))            each position is transformed on its own (or: MoE, k of E FFNs)

The additions are the residual stream: each sub-layer reads the stream and writes a correction
into it, so a deep stack starts out close to the identity and gradients flow straight through.
Gemma normalises each correction too before adding it (``config.sandwich_norms``: 4 norms a block).
Where it runs — copied (the engine's own: engine/layers.py::block, and engine/step.py::decode_step for one token a row, tested equal in tests/engine/test_engine_equals_model.py and tests/engine/test_step.py): block.
"""
from __future__ import annotations

import numpy as np

from minillm.model.attention import attention
from minillm.model.ffn import ffn
from minillm.model.moe import moe        # (a mixture of experts: model/moe.py, beyond the afternoon)
from minillm.model.norm import norm


def block(x: np.ndarray, p, ctx) -> np.ndarray:
    """x [B, T, C] -> [B, T, C]; ``ctx`` is the layer's context (``Layer``, minillm/hooks.py: the
    config, mask, RoPE angles, cache, layer index and hook points)."""
    c, look = ctx.config, ctx.look
    x = look("hook_resid_pre", x)                                       # [B, T, C]
    if c.post_norms:                        # OLMo 2: the norms after the sub-layers, none before
        a = look("hook_attn_out", norm(attention(x, p.attn, ctx), p.norm1, c.norm, c.norm_eps))
        x = look("hook_resid_mid", x + a)                               # [B, T, C]
        f = norm(ffn(x, p.ffn, c.ffn, look), p.norm2, c.norm, c.norm_eps)   # [B, T, C]
        return look("hook_resid_post", x + look("hook_mlp_out", f))
    a = attention(look("ln1.hook_normalized", norm(x, p.norm1, c.norm, c.norm_eps)), p.attn, ctx)
    if p.post_attn_norm is not None:                                    # Gemma: Norm(Attention(…))
        a = look("ln1_post.hook_normalized", norm(a, p.post_attn_norm, c.norm, c.norm_eps))
    x = look("hook_resid_mid", x + look("hook_attn_out", a))            # [B, T, C]
    h = look("ln2.hook_normalized", norm(x, p.norm2, c.norm, c.norm_eps))   # [B, T, C]
    f = moe(h, p.ffn, c, look=look) if c.n_experts else ffn(h, p.ffn, c.ffn, look)  # [B, T, C]
    if p.post_ffn_norm is not None:                                     # Gemma: Norm(FFN(…))
        f = look("ln2_post.hook_normalized", norm(f, p.post_ffn_norm, c.norm, c.norm_eps))
    return look("hook_resid_post", x + look("hook_mlp_out", f))         # [B, T, C]
