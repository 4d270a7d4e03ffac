"""One new token per row: the decode step with its Python cut down to what the math needs.

While decoding, every forward call is [B, 1] (one new token per row) and reads every weight
once. Reading the weights is the cost: ~19 ms for SmolLM2-135M on a machine that streams 28
GB/s. The general forward (``layers.py``) adds ~3-4 ms to that: per layer about 90 function
calls (counted by cProfile, besides the arithmetic operators: the norms' helpers, heads split
and merged, q and k concatenated for one RoPE call, the sliding-window and q/k-norm checks, the
joined outputs split), each a microsecond or more on arrays of a few hundred numbers.
``decode_step`` runs the same layers for [B, 1] in about 55, with what they need and no more:

    norm        Σx² by one dot product per row, then x · (1/√(mean + eps)) · w  (``rms_rows``)
    Q|K|V       one product (``rows.product``: the plan's form); q, k, v are views of it
    RoPE        model/rope.py's ``apply_rope`` on q and k together (one view, no concatenation)
    attention   the cache's ``store`` and model/attention.py's ``scaled_dot_product``, as they are
    FFN         one product for gate | up, SiLU in place, one for down; residuals added in place

So an edit to the attention, RoPE, the embedding or the cache shows in the engine's decoding as
in the readable model (``tests/test_map_by_edits.py``); the norms and the layer's frame are the
engine's own, as in ``layers.py``.

What it covers (``covers``): the arena's joined Q|K|V (and gate|up), RMSNorm or LayerNorm,
SwiGLU or the GELU MLP, RoPE or learned positions, biases — GPT-2, Llama, Qwen2, SmolLM2 and
Mistral without a window. Anything else (a sliding window, q/k norms, sandwich or post norms,
soft-caps, experts, Gemma's scalings, NoPE layers) takes the general forward, as do prompts
(T > 1), calls without a cache and calls asking for attention weights.

Tested equal to the readable model's logits (tests/engine/test_step.py: |Δ| ≤ 1e-4 · max(1,
max |logits|), as tests/engine/test_engine_equals_model.py) over random configs, batches,
padding masks, layouts and plans; what it saves is measured by benchmarks/bench_plan.py.
"""
from __future__ import annotations

import math

import numpy as np

from minillm.engine.ops import gelu_tanh_fast, layer_norm_fast, silu_fast
from minillm.engine.rows import product
from minillm.model.attention import scaled_dot_product
from minillm.model.embedding import embed
from minillm.model.rope import apply_rope, rope_angles


def covers(config, arena) -> bool:
    """Can ``decode_step`` run this model? (Otherwise the general forward does.)"""
    c = config
    joined = all(j.qkv is not None for j in arena.joined) and (
        c.ffn == "gelu_mlp" or all(j.gate_up is not None for j in arena.joined))
    return (joined and c.sliding_window is None and not c.qk_norm and not c.qk_norm_whole
            and not c.post_norms and not c.sandwich_norms and not c.embed_scale
            and c.query_pre_attn_scalar is None and c.attn_softcap is None
            and c.final_softcap is None and not c.n_experts and not c.nope_layers)


def rms_rows(x: np.ndarray, w: np.ndarray, eps: float) -> np.ndarray:
    """RMSNorm of x [B, C]: x · 1/√(mean_c x² + eps) · w -> a new [B, C] (``model.norm``'s
    formula; Σx² by a dot product per row, the scale a Python float when B = 1)."""
    B, C = x.shape
    if B == 1:
        ms = float(np.dot(x[0], x[0])) / C                        # mean of squares, one row
        y = x * (1.0 / math.sqrt(ms + eps))                       # [1, C]
    else:
        ms = np.einsum("bc,bc->b", x, x)[:, None]                 # [B, 1]  Σ_c x²
        ms *= 1.0 / C
        ms += eps
        y = x * (1.0 / np.sqrt(ms))                               # [B, C]
    y *= w                                                        # [B, C] · [C]
    return y


class Lanes:
    """The per-layer arrays ``decode_step`` reads, gathered once: attribute look-ups and the
    variant checks are paid at load, not per layer per token."""

    def __init__(self, model):
        c, p = model.config, model.params
        self.H, self.KV, self.D = c.n_heads, c.n_kv_heads, c.d_head
        self.rms, self.eps = c.norm == "rmsnorm", c.norm_eps
        self.swiglu = c.ffn == "swiglu"
        self.layers = []
        for b, j in zip(p.blocks, model.arena.joined):
            a, f = b.attn, b.ffn
            qkv_bias = None if a.bq is None else (a.bq, a.bk, a.bv)     # (views: no stale copy)
            self.layers.append((b.norm1, j.qkv, qkv_bias, a.wo, a.bo, b.norm2,
                                j.gate_up if self.swiglu else f.w_up,
                                f.b_up if not self.swiglu else None, f.w_down, f.b_down))
        self.norm_f = p.norm_f
        self.head = p.wte.T if p.lm_head is None else p.lm_head    # [C, V]


def norm(x: np.ndarray, p, lanes: Lanes) -> np.ndarray:
    """The model's norm of x [B, C] -> [B, C] (a new array)."""
    if lanes.rms:
        return rms_rows(x, p.weight, lanes.eps)
    return layer_norm_fast(x, p.weight, p.bias, lanes.eps)


def decode_step(model, lanes: Lanes, ids: np.ndarray, positions: np.ndarray, mask: np.ndarray,
                cache) -> np.ndarray:
    """ids [B, 1] after the ``cache.length`` cached positions -> logits [B, 1, V]; stores each
    layer's k, v in the cache (``GPT.__call__`` advances it). ``mask`` [B or 1, 1, S]."""
    c, p = model.config, model.params
    B, (H, KV, D) = ids.shape[0], (lanes.H, lanes.KV, lanes.D)
    x = embed(p.wte, ids, p.wpe, positions)[:, 0]                 # [B, C]  (a copy: added to below)
    if c.position == "rope":
        cos, sin = rope_angles(positions, D, c.rope_theta, c.rope_scaling)   # [B, 1, D/2] each
        cos, sin = cos[:, None], sin[:, None]                     # [B, 1, 1, D/2]: every head
    for layer, (n1, qkv_w, qkv_b, wo, bo, n2, w_in, b_in, w_down, b_down) in enumerate(lanes.layers):
        qkv = product(norm(x, n1, lanes), qkv_w)                  # [B, C] @ [C, (H + 2KV)·D]
        if qkv_b is not None:                                     # GPT-2, Qwen2: + bq | bk | bv
            qkv[:, :H * D] += qkv_b[0]
            qkv[:, H * D:(H + KV) * D] += qkv_b[1]
            qkv[:, (H + KV) * D:] += qkv_b[2]
        qk = qkv[:, :(H + KV) * D].reshape(B, H + KV, 1, D)       # [B, H + KV, 1, D] q and k (a view)
        if c.position == "rope":
            qk = apply_rope(qk, cos, sin)                         # q and k rotated in one call
        v_new = qkv[:, (H + KV) * D:].reshape(B, KV, 1, D)        # [B, KV, 1, D]
        k, v = cache.store(layer, qk[:, H:], v_new)               # [B, KV, S, D] each
        out, _ = scaled_dot_product(qk[:, :H], k, v, mask)        # [B, H, 1, D]
        a = product(out.reshape(B, H * D), wo)                    # [B, H·D] @ [H·D, C] -> [B, C]
        if bo is not None:
            a += bo
        x += a                                                    # [B, C]  the residual
        h = product(norm(x, n2, lanes), w_in)                     # [B, C] @ [C, 2F] (or [C, F])
        if lanes.swiglu:
            F = h.shape[1] // 2
            h, up = silu_fast(h[:, :F]), h[:, F:]                 # [B, F] each
            h *= up
        else:
            if b_in is not None:
                h += b_in
            h = gelu_tanh_fast(h)                                 # [B, F]
        f = product(h, w_down)                                    # [B, F] @ [F, C] -> [B, C]
        if b_down is not None:
            f += b_down
        x += f                                                    # [B, C]
    logits = product(norm(x, lanes.norm_f, lanes), lanes.head)    # [B, C] @ [C, V] -> [B, V]
    return logits[:, None, :]                                     # [B, 1, V]
