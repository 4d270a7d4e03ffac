"""The engine's attention, FFN and block: model/'s formulas with the joined products, query
blocks for long prompts, one RoPE call for q and k, and the in-place forms of ``ops.py``.

Each function takes the layer's ``GPTParams`` entries (views into the arena) and its ``Joined``
matrices (``arena.py``); with no joined matrix it makes the separate products. The math is
model/attention.py's and model/ffn.py's; tests/engine/ checks the engine's logits against the
model's.
"""
from __future__ import annotations

import numpy as np

from minillm.engine.ops import (gelu_tanh_fast, linear, norm_fast, rms_norm_fast, silu_fast,
                                split_columns)
from minillm.model.attention import merge_heads, scaled_dot_product, split_heads
from minillm.model.moe import moe
from minillm.model.rope import apply_rope
from minillm.model.variants import is_sliding, window_start

QUERY_BLOCK = 64   # queries per block in query_blocks: [B, H, 64, S] scores instead of [B, H, T, S]
# The plan's block per head shape (H, KV, D) (``plan.use``: measured on the machine, plan.py);
# empty, or a shape it lacks: QUERY_BLOCK.
BLOCKS: dict = {}


def query_blocks(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray,
                 block: int = QUERY_BLOCK, scale=None, softcap=None, window=None) -> np.ndarray:
    """``scaled_dot_product(q, k, v, mask)[0]`` computed ``block`` queries at a time.

    A long prompt's T × S score matrix is mostly the masked triangle. Queries t0 … t1 − 1 sit at
    absolute positions < S − T + t1, so under a causal mask they see only the keys before
    s1 = S − T + t1; the keys after s1 would get weight exactly 0:

        T = S = 4, block 2:   rows 0-1 use keys 0-1     [■ ■ | · ·]
                              rows 2-3 use keys 0-3     [■ ■ | ■ ■]   (· = skipped, always 0)

    ~½ the work at T = S, and each block's scores stay in the CPU cache. With a sliding
    ``window`` W the keys before ``window_start`` are skipped too (weight exactly 0 as well).
    ``scale`` and ``softcap`` go to ``scaled_dot_product``.

    subtle: this needs ``mask`` to be causal (possibly also hiding padding), as the model's masks
    are; a mask letting a query see a later key would be silently cut. Equal to the full formula
    up to float32 summation order (tested; HF parity holds either way). ``GPT.__call__`` rejects
    a mask that is not causal.
    """
    T, S = q.shape[2], k.shape[2]
    out = np.empty(q.shape, dtype=q.dtype)                      # [B, H, T, D]
    for t0 in range(0, T, block):
        t1 = min(T, t0 + block)
        s1 = S - T + t1                                         # keys this block can see
        s0 = 0 if window is None else window_start(s1, t1 - t0, window)   # … from here
        out[:, :, t0:t1] = scaled_dot_product(q[:, :, t0:t1], k[:, :, s0:s1], v[:, :, s0:s1],
                                              mask[:, t0:t1, s0:s1], scale, softcap)[0]   # [B, H, t1 − t0, D]
    return out


def attention(x: np.ndarray, p, qkv, config, mask: np.ndarray, rope=None, cache=None,
              layer: int = 0, return_weights: bool = False):
    """``model.attention.attention`` (same arguments, plus ``qkv``: wq | wk | wv as one matrix,
    or None): x [B, T, C] -> output [B, T, C] and weights [B, H, T, S] or None. Without
    ``return_weights``, a prompt longer than the block (the plan's for these heads, else
    QUERY_BLOCK) takes ``query_blocks``."""
    if qkv is None:
        q = linear(x, p.wq, p.bq)                   # [B, T, C] @ [C, H·D] (+ [H·D]) -> [B, T, H·D]
        k = linear(x, p.wk, p.bk)                   # [B, T, C] @ [C, KV·D] (+ [KV·D]) -> [B, T, KV·D]
        v = linear(x, p.wv, p.bv)                   # [B, T, C] @ [C, KV·D] (+ [KV·D]) -> [B, T, KV·D]
    else:                                           # the same three products as ONE
        q, k, v = split_columns(linear(x, qkv), (p.wq.shape[1], p.wk.shape[1], p.wv.shape[1]),
                                (p.bq, p.bk, p.bv))     # [B, T, H·D + 2·KV·D] -> the three above
    if config.qk_norm_whole:                        # OLMo 2: q and k over their whole width
        q = rms_norm_fast(q, p.q_norm, config.norm_eps)             # [B, T, H·D]
        k = rms_norm_fast(k, p.k_norm, config.norm_eps)             # [B, T, KV·D]
    q = split_heads(q, config.n_heads)              # [B, H, T, D]
    k = split_heads(k, config.n_kv_heads)           # [B, KV, T, D]
    v = split_heads(v, config.n_kv_heads)           # [B, KV, T, D]
    if config.qk_norm and not config.qk_norm_whole:     # Qwen3: each head's q and k over D
        q = rms_norm_fast(q, p.q_norm, config.norm_eps)             # [B, H, T, D]
        k = rms_norm_fast(k, p.k_norm, config.norm_eps)             # [B, KV, T, D]
    if rope is not None:                            # q and k rotated in one call
        qk = apply_rope(np.concatenate([q, k], axis=1), *rope)    # [B, H + KV, T, D]
        q, k = qk[:, :config.n_heads], qk[:, config.n_heads:]    # [B, H, T, D], [B, KV, T, D]
    if cache is not None:
        k, v = cache.store(layer, k, v)             # [B, KV, S, D] with S = cached + T
    window = config.sliding_window if is_sliding(config, layer) else None
    if window is not None and not return_weights:   # only the last W keys can get weight: a
        s0 = window_start(k.shape[2], q.shape[2], window)   # step's cost stays flat past W
        k, v, mask = k[:, :, s0:], v[:, :, s0:], mask[..., s0:]     # [B, KV, ≤ W + T − 1, D]
    s = config.query_pre_attn_scalar
    scale, cap = (None if s is None else s ** -0.5), config.attn_softcap
    size = BLOCKS.get((q.shape[1], k.shape[1], q.shape[3]), QUERY_BLOCK)   # this machine's block
    if return_weights or q.shape[2] <= size:
        out, weights = scaled_dot_product(q, k, v, mask, scale, cap)    # [B, H, T, D], [B, H, T, S]
    else:
        out, weights = query_blocks(q, k, v, mask, size, scale, cap, window), None
    out = linear(merge_heads(out), p.wo, p.bo)      # [B, T, H·D] @ [H·D, C] (+ [C]) -> [B, T, C]
    return out, (weights if return_weights else None)


def ffn(x: np.ndarray, p, gate_up, kind: str) -> np.ndarray:
    """``model.ffn.ffn`` in place, SwiGLU's two input products as ONE when ``gate_up`` (w_gate |
    w_up) is given: x [B, T, C] -> [B, T, C]."""
    if kind == "gelu_mlp":
        h = gelu_tanh_fast(linear(x, p.w_up, p.b_up))           # [B, T, C] @ [C, F] -> [B, T, F]
        return linear(h, p.w_down, p.b_down)                    # [B, T, F] @ [F, C] -> [B, T, C]
    if gate_up is None:
        gate, up = linear(x, p.w_gate), linear(x, p.w_up)       # [B, T, C] @ [C, F] -> [B, T, F] each
    else:
        gate, up = split_columns(linear(x, gate_up), (p.w_gate.shape[1], p.w_up.shape[1]),
                                 (None, None))                  # [B, T, 2F] -> [B, T, F] each
    gate = silu_fast(gate) if kind == "swiglu" else gelu_tanh_fast(gate)   # [B, T, F] (GeGLU: GELU)
    gate *= up                                                  # [B, T, F] ⊙ [B, T, F]
    return linear(gate, p.w_down)                               # [B, T, F] @ [F, C] -> [B, T, C]


def block(x: np.ndarray, p, joined, config, mask: np.ndarray, rope=None, cache=None,
          layer: int = 0, return_weights: bool = False):
    """``model.block.block`` with the engine's layers: x [B, T, C] -> [B, T, C], weights."""
    if config.post_norms:                   # OLMo 2: each sub-layer's output normalised, then added
        a, weights = attention(x, p.attn, joined.qkv, config, mask, rope, cache, layer,
                               return_weights)                          # [B, T, C]
        x = x + norm_fast(a, p.norm1, config.norm, config.norm_eps)     # [B, T, C]
        h = ffn(x, p.ffn, joined.gate_up, config.ffn)                   # [B, T, C]
        return x + norm_fast(h, p.norm2, config.norm, config.norm_eps), weights
    h = norm_fast(x, p.norm1, config.norm, config.norm_eps)             # [B, T, C]
    a, weights = attention(h, p.attn, joined.qkv, config, mask, rope, cache, layer,
                           return_weights)                              # [B, T, C]
    if p.post_attn_norm is not None:                                    # Gemma
        a = norm_fast(a, p.post_attn_norm, config.norm, config.norm_eps)
    x = x + a                                                           # [B, T, C]
    h = norm_fast(x, p.norm2, config.norm, config.norm_eps)             # [B, T, C]
    if config.n_experts:                                                # tokens grouped by expert
        f = moe(h, p.ffn, config, ffn=lambda rows, q: ffn(rows, q, None, "swiglu"))
    else:
        f = ffn(h, p.ffn, joined.gate_up, config.ffn)                   # [B, T, C]
    if p.post_ffn_norm is not None:                                     # Gemma
        f = norm_fast(f, p.post_ffn_norm, config.norm, config.norm_eps)
    return x + f, weights
