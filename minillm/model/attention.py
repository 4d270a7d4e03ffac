"""Causal multi-head self-attention, with explicit Q, K and V.

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
  are concatenated and mixed by W_o.
- Grouped-query attention (Llama family): only K ≤ H key/value heads; each group of G = H / K
  query heads shares one: query head h uses KV head h // G (heads 0 … G−1 use KV head 0, the next
  G use KV head 1, …). The cache then stores K heads, not H.

subtle: with a KV cache the T new queries sit at absolute positions offset … offset + T − 1 with
offset = S − T, so the mask is ``tril(ones(T, S), k=offset)``, not ``tril(ones(T, T))``.

Speed: the weight products go through ``linear`` (each matrix read once per call, whatever B).
A long prompt's T × S score matrix is mostly the masked triangle, so when nobody asks for
the weights, ``query_blocks`` runs the same formula a block of queries at a time, over only the
keys that block can see (the masked ones contribute exactly 0 either way): ~½ the work at T = S,
and each block's scores stay in the CPU cache.
"""
from __future__ import annotations

import math

import numpy as np

from minillm.functional import softmax
from minillm.model.linear import joined_still, linear, split_columns
from minillm.model.rope import apply_rope


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


def scaled_dot_product(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
    """softmax(q kᵀ / √D, masked) v for grouped heads.

    q [B, H, T, D], k and v [B, K, S, D] (K divides H), mask [B or 1, T, S] bool
    -> output [B, H, T, D] and weights [B, H, T, S].
    """
    B, H, T, D = q.shape
    K, S = k.shape[1], k.shape[2]
    G = H // K                                                  # query heads per KV head
    # Query head h = kv·G + g uses KV head kv = h // G. Heads kv·G … kv·G + G − 1 are adjacent,
    # so this reshape stacks each group's G heads under its KV head (no copy of k or v):
    qg = q.reshape(B, K, G * T, D)                              # [B, H, T, D] -> [B, K, G·T, D]
    scores = (qg * (1.0 / math.sqrt(D))) @ k.transpose(0, 1, 3, 2)  # [B, K, G·T, D] @ [B, K, D, S] -> [B, K, G·T, S]
    scores = scores.reshape(B, K, G, T, S)                      # [B, K, G, T, S]
    if not mask.all():                                          # (one new token, no padding: nothing to mask)
        np.copyto(scores, -np.inf, where=~mask[:, None, None])  # [B, K, G, T, S] no edges to the future
    weights = softmax(scores)                                   # [B, K, G, T, S]  rows sum to 1
    out = weights.reshape(B, K, G * T, S) @ v                   # [B, K, G·T, S] @ [B, K, S, D] -> [B, K, G·T, D]
    return out.reshape(B, H, T, D), weights.reshape(B, H, T, S)


QUERY_BLOCK = 64   # queries per block in query_blocks: [B, H, 64, S] scores instead of [B, H, T, S]


def query_blocks(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray,
                 block: int = QUERY_BLOCK) -> np.ndarray:
    """``scaled_dot_product(q, k, v, mask)[0]`` computed ``block`` queries at a time.

    Queries t0 … t1 − 1 sit at absolute positions < S − T + t1, so under a causal mask they see
    only the keys before s1 = S − T + t1; the keys after s1 would get weight exactly 0:

        T = S = 4, block 2:   rows 0-1 use keys 0-1     [■ ■ | · ·]
                              rows 2-3 use keys 0-3     [■ ■ | ■ ■]   (· = skipped, always 0)

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
        out[:, :, t0:t1] = scaled_dot_product(q[:, :, t0:t1], k[:, :, :s1], v[:, :, :s1],
                                              mask[:, t0:t1, :s1])[0]   # [B, H, t1 − t0, D]
    return out


def attention(x: np.ndarray, p, config, mask: np.ndarray, rope=None, cache=None, layer: int = 0,
              return_weights: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """One attention sub-layer: x [B, T, C] -> output [B, T, C] and weights [B, H, T, S].

    ``p`` holds wq, wk, wv, wo, optional biases and, in the decode and tiled layouts, ``wqkv`` (wq | wk | wv
    side by side: one product instead of three); ``rope`` is (cos, sin) [B, 1, T, D/2] for
    rotary models (None for learned positions); ``cache`` (a KVCache) supplies the earlier keys and
    values and stores this call's. ``mask`` [B or 1, T, S]: which keys each query may see.
    ``return_weights=False`` returns None for the weights and may use ``query_blocks`` (faster;
    it relies on ``mask`` being causal, which ``GPT.__call__`` checks).
    """
    if not joined_still(p.wqkv, (p.wq, p.wk, p.wv)):
        q = linear(x, p.wq, p.bq)                   # [B, T, C] @ [C, H·D] (+ [H·D]) -> [B, T, H·D]
        k = linear(x, p.wk, p.bk)                   # [B, T, C] @ [C, K·D] (+ [K·D]) -> [B, T, K·D]
        v = linear(x, p.wv, p.bv)                   # [B, T, C] @ [C, K·D] (+ [K·D]) -> [B, T, K·D]
    else:                                           # the same three products as ONE (arena.py)
        q, k, v = split_columns(linear(x, p.wqkv), (p.wq.shape[1], p.wk.shape[1], p.wv.shape[1]),
                                (p.bq, p.bk, p.bv))     # [B, T, H·D + 2·K·D] -> the three above
    q = split_heads(q, config.n_heads)              # [B, H, T, D]
    k = split_heads(k, config.n_kv_heads)           # [B, K, T, D]
    v = split_heads(v, config.n_kv_heads)           # [B, K, T, D]
    if rope is not None:                            # position enters by rotating q and k,
        qk = apply_rope(np.concatenate([q, k], axis=1), *rope)    # [B, H + K, T, D] in one call
        q, k = qk[:, :config.n_heads], qk[:, config.n_heads:]    # [B, H, T, D], [B, K, T, D]
    if cache is not None:                           # earlier positions' k, v plus these
        k, v = cache.store(layer, k, v)             # [B, K, S, D] with S = cached + T
    if return_weights or q.shape[2] <= QUERY_BLOCK:
        out, weights = scaled_dot_product(q, k, v, mask)    # [B, H, T, D], [B, H, T, S]
    else:
        out, weights = query_blocks(q, k, v, mask, QUERY_BLOCK), None   # [B, H, T, D] (±rounding)
    out = linear(merge_heads(out), p.wo, p.bo)      # [B, T, H·D] @ [H·D, C] (+ [C]) -> [B, T, C]
    return out, (weights if return_weights else None)
