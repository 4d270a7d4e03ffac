"""Causal multi-head self-attention, with explicit Q, K and V.
Where it runs — shared (the engine, training, --reference): scaled_dot_product, split_heads, merge_heads; copied (the engine's own: engine/layers.py::attention, tested equal in tests/engine/test_engine_equals_model.py): attention; definition only (scaled_dot_product runs): attend_per_head.

For one head, with queries Q [T, D], keys K [S, D] and values V [S, D]:

    Attention(Q, K, V) = softmax(Q Kᵀ / √D + M) V,   M[t, s] = 0 if s ≤ t else −∞

- Q asks "what am I looking for?", K says "what do I contain?", V is "what I hand over".
  Q Kᵀ scores every (query, key) pair; the softmax turns a query's row of scores into weights
  that sum to 1; the output is the weighted average of the values.
- The causal mask M is a lower-triangular matrix: position t may use positions ≤ t only.
  exp(−∞) = 0, so after the softmax every weight above the diagonal is *exactly* 0 — the edges to
  the future are removed from the graph, which is what lets training score every position of a
  sequence in one parallel pass without any position seeing its own answer.
- Multi-head: C is split into H heads of width D = C / H that attend independently; their outputs
  are concatenated and mixed by W_o. (Qwen3 sets D apart from C / H — ``config.head_dim`` — and
  RMS-normalises each head's q and k before RoPE: ``config.qk_norm``.)
- Grouped-query attention (Llama family): only KV ≤ H key/value heads; each group of G = H / KV
  query heads shares one: query head h uses KV head h // G (heads 0 … G−1 use KV head 0, the next
  G use KV head 1, …). The cache then stores KV heads, not H. (K is the keys; KV their heads' count.)

    for h in 0 … H−1:   out_h = softmax(Q_h K_{h//G}ᵀ / √D + M) V_{h//G}       (``attend_per_head``)

Gemma scales the scores by s^−½ (``config.query_pre_attn_scalar``) instead of D^−½, Gemma 2
soft-caps them (``attn_softcap``), and a sliding window is one more mask (``model/variants.py``).

subtle: with a KV cache the T new queries sit at absolute positions offset … offset + T − 1 with
offset = S − T, so the mask is ``tril(ones(T, S), k=offset)``, not ``tril(ones(T, T))``.

``attend_per_head`` is that loop as written; ``scaled_dot_product`` computes the same thing for
all heads at once (one reshape groups the G query heads of each KV head; tested equal), and is
what ``attention`` calls.
"""
from __future__ import annotations

import math

import numpy as np

from minillm.functional import softmax
from minillm.model.linear import linear
from minillm.model.norm import rms_norm
from minillm.model.rope import apply_rope


def attend_per_head(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray,
                    scale: float | None = None, softcap: float | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The definition, one query head at a time: query head h attends with KV head h // G.

    q [B, H, T, D], k and v [B, KV, S, D] (KV divides H), mask [B or 1, T, S] bool (True: may see)
    -> output [B, H, T, D] and weights [B, H, T, S]. ``scale`` (default 1/√D) multiplies the
    scores; ``softcap`` (default none) then squashes them: softcap · tanh(scores / softcap).
    """
    H, D = q.shape[1], q.shape[3]
    scale = 1.0 / math.sqrt(D) if scale is None else scale
    G = H // k.shape[1]                                     # query heads per KV head
    outs, weights = [], []
    for h in range(H):
        k_h, v_h = k[:, h // G], v[:, h // G]               # [B, S, D] the KV head h uses
        scores = q[:, h] @ k_h.transpose(0, 2, 1) * scale   # [B, T, D] @ [B, D, S] -> [B, T, S]
        if softcap is not None:
            scores = np.tanh(scores / softcap) * softcap    # [B, T, S] within (−cap, cap)
        scores = np.where(mask, scores, -np.inf)            # [B, T, S]  no edges to the future
        w = softmax(scores)                                 # [B, T, S]  each row sums to 1
        outs.append(w @ v_h)                                # [B, T, S] @ [B, S, D] -> [B, T, D]
        weights.append(w)
    return np.stack(outs, axis=1), np.stack(weights, axis=1)   # [B, H, T, D], [B, H, T, S]


def scaled_dot_product(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray,
                       scale: float | None = None, softcap: float | None = None,
                       look=lambda name, x: x) -> tuple[np.ndarray, np.ndarray]:
    """``attend_per_head`` for all heads at once (the same arguments and shapes); ``look`` is the
    hook point of the scores and the weights (minillm/hooks.py's ``Layer.look``)."""
    B, H, T, D = q.shape
    KV, S = k.shape[1], k.shape[2]                              # KV heads, key positions
    G = H // KV                                                 # query heads per KV head
    # Query head h = kv·G + g uses KV head kv = h // G. Heads kv·G … kv·G + G − 1 are adjacent,
    # so this reshape stacks each group's G heads under its KV head (no copy of k or v):
    qg = q.reshape(B, KV, G * T, D)                              # [B, H, T, D] -> [B, KV, G·T, D]
    scale = 1.0 / math.sqrt(D) if scale is None else scale
    scores = (qg * scale) @ k.transpose(0, 1, 3, 2)              # [B, KV, G·T, D] @ [B, KV, D, S] -> [B, KV, G·T, S]
    if softcap is not None:
        scores = np.tanh(scores / softcap) * softcap             # within (−cap, cap) (Gemma 2)
    scores = scores.reshape(B, KV, G, T, S)                      # [B, KV, G, T, S]
    if not mask.all():                                          # (one new token, no padding: nothing to mask)
        np.copyto(scores, -np.inf, where=~mask[:, None, None])  # [B, KV, G, T, S] no edges to the future
    scores = look("attn.hook_attn_scores", scores.reshape(B, H, T, S))     # [B, H, T, S] (a view)
    weights = look("attn.hook_pattern", softmax(scores))        # [B, H, T, S]  rows sum to 1
    out = weights.reshape(B, KV, G * T, S) @ v                   # [B, KV, G·T, S] @ [B, KV, S, D] -> [B, KV, G·T, D]
    return out.reshape(B, H, T, D), weights


def causal_mask(T: int, S: int) -> np.ndarray:
    """[T, S] bool: query t (absolute position S − T + t) may see key s iff s ≤ S − T + t.

    Example: causal_mask(3, 3) = [[1, 0, 0], [1, 1, 0], [1, 1, 1]]; causal_mask(1, 3) = [[1, 1, 1]]
    (one new token after two cached ones sees all three).
    """
    return np.tril(np.ones((T, S), dtype=bool), k=S - T)


def split_heads(x: np.ndarray, n_heads: int) -> np.ndarray:
    """[B, T, n·D] -> [B, n, T, D]: give each head its own slice of the features."""
    B, T, HD = x.shape
    return x.reshape(B, T, n_heads, HD // n_heads).transpose(0, 2, 1, 3)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """[B, n, T, D] -> [B, T, n·D]: concatenate the heads again."""
    B, n, T, D = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, n * D)


def attention(x: np.ndarray, p, ctx) -> np.ndarray:
    """One attention sub-layer: x [B, T, C] -> [B, T, C].

    ``p`` holds wq, wk, wv, wo, optional biases and q/k norm gains (``config.qk_norm``); ``ctx``
    (a ``Layer``, minillm/hooks.py) the config, ``ctx.mask`` [B or 1, T, S] (which keys each query
    may see), ``ctx.rope`` (cos, sin) [B, 1, T, D/2] for rotary models (None: learned positions),
    ``ctx.cache`` (a KVCache: the earlier keys and values; it stores this call's) and the hook
    points ``ctx.look`` (the identity unless something records or edits).
    """
    c = ctx.config
    q = split_heads(linear(x, p.wq, p.bq), c.n_heads)          # [B, T, C] @ [C, H·D] -> [B, H, T, D]
    k = split_heads(linear(x, p.wk, p.bk), c.n_kv_heads)       # [B, T, C] @ [C, KV·D] -> [B, KV, T, D]
    v = ctx.heads("attn.hook_v", split_heads(linear(x, p.wv, p.bv), c.n_kv_heads))  # [B, KV, T, D]
    if c.qk_norm_whole:                             # OLMo 2: over all heads' H·D (KV·D) values at once
        q = split_heads(rms_norm(merge_heads(q), p.q_norm, c.norm_eps), c.n_heads)
        k = split_heads(rms_norm(merge_heads(k), p.k_norm, c.norm_eps), c.n_kv_heads)
    elif c.qk_norm:                                 # Qwen3: each head's q and k RMS-normalised over D
        q = rms_norm(q, p.q_norm, c.norm_eps)                   # [B, H, T, D]
        k = rms_norm(k, p.k_norm, c.norm_eps)                   # [B, KV, T, D]
    q, k = ctx.heads("attn.hook_q", q), ctx.heads("attn.hook_k", k)    # (hooked before RoPE)
    if ctx.rope is not None:                        # position enters by rotating q and k
        q, k = apply_rope(q, *ctx.rope), apply_rope(k, *ctx.rope)      # [B, H, T, D], [B, KV, T, D]
        q, k = ctx.heads("attn.hook_rot_q", q), ctx.heads("attn.hook_rot_k", k)
    if ctx.cache is not None:                       # earlier positions' k, v plus these
        k, v = ctx.cache.store(ctx.index, k, v)     # [B, KV, S, D] with S = cached + T
    s = c.query_pre_attn_scalar                     # (Gemma: the scores times s^−½, not D^−½)
    out, _ = scaled_dot_product(q, k, v, ctx.mask, None if s is None else s ** -0.5,
                                c.attn_softcap, ctx.look)      # [B, H, T, D]
    out = ctx.heads("attn.hook_z", out)             # each head's output, before W_o
    return linear(merge_heads(out), p.wo, p.bo)     # [B, T, H·D] @ [H·D, C] (+ [C]) -> [B, T, C]
