"""Toy inputs for each build-it part (notebook 14): small, seeded, and chosen to expose bugs.

- norm: a random row, a CONSTANT row (LayerNorm's variance is 0 there; RMSNorm's is not), an
  all-zero row (0/0 without eps), a tiny row (eps matters: mean(x²) ≈ 1e-4), a row far from 0
  (centring matters); gains and biases drawn, not 1 and 0 (a forgotten gain would hide).
- attention: a batch of TWO rows, row 0 left-padded (its mask differs), S = 5 keys for T = 3
  queries (a cache: the causal mask is offset by S − T), H = 4 query heads on KV = 2 KV heads
  (h // 2), and v = one-hot positions, so that the output rows ARE the weights
  (``build_it_symptoms.attention_weights``); then scores of ~±100 (exp overflows without the max);
  then H = 6 on KV = 3 (G = 2 < KV: with G = 1 or G = KV, h // KV and h // G agree); then one
  query (T = 1, a decode step) where row 0's padding is still hidden.
- kv_append: S = 3 cached rows and T = 2 new ones (and S = 0).
- rope, embed: positions that do not start at 0 (a cache) and a left-padded row.
- ffn: pre-activations over [−6, 6] (where the erf and tanh GELUs differ most, near ±2.7).
- block: four distinct sub-layers, so that swapping or dropping one shows.
- sample: a tie (greedy takes the first maximum), all-negative logits, the maximum at id 0.

Every value is O(1) and each sum has at most 8 terms: float32 rounding of any correct order stays
below ~1e-6, which is what lets the grader compare toys at 1e-5 (``build_it.TOY_RTOL``).
"""
from __future__ import annotations

import numpy as np

from minillm.model.params import FFNParams, NormParams


def _rng(k):
    return np.random.default_rng(1300 + k)


def f32(a):
    return np.asarray(a, np.float32)


def norm_cases():
    r = _rng(0)
    x = f32(r.standard_normal((2, 5, 8)) * 1.5)
    x[0, 1] = 3.0                                        # constant row
    x[0, 2] = 0.0                                        # all-zero row
    x[0, 3] *= 1e-2 / 1.5                                # tiny row: mean(x²) ~ 1e-4, eps 1e-5 matters
    x[0, 4] += 5.0                                       # a row far from 0
    w, b = f32(1 + 0.3 * r.standard_normal(8)), f32(0.2 * r.standard_normal(8))
    return [(x, NormParams(w, b), "layernorm", 1e-5), (x, NormParams(w), "rmsnorm", 1e-5)]


def padded_causal_mask(B, T, S, pad):
    """[B, T, S]: query t (at key slot S − T + t) sees keys s <= S − T + t; row 0 hides its first
    ``pad`` keys (left padding)."""
    mask = np.arange(S)[None, :] <= (S - T + np.arange(T))[:, None]   # [T, S]
    mask = np.repeat(mask[None], B, axis=0)
    mask[0, :, :pad] = False
    return mask


def attention_cases():
    r = _rng(1)
    B, H, KV, T, S, D = 2, 4, 2, 3, 5, 8
    q = f32(r.standard_normal((B, H, T, D)) * 1.2)
    k = f32(r.standard_normal((B, KV, S, D)))
    v = f32(np.broadcast_to(np.eye(S, D), (B, KV, S, D)))           # one-hot: out = weights
    mask = padded_causal_mask(B, T, S, pad=1)
    big = f32(q * 40)                                                # scores ~ ±100: exp overflows
    q6, k3 = f32(r.standard_normal((B, 6, T, D))), f32(r.standard_normal((B, 3, S, D)))
    v3 = f32(np.broadcast_to(np.eye(S, D), (B, 3, S, D)))
    q1 = f32(r.standard_normal((B, H, 1, D)) * 1.2)
    return [(q, k, v, mask), (big, k, v, mask[1:]),                   # then one mask for every row
            (q6, k3, v3, mask),                                      # G = 2 < KV = 3: h // G, not h // KV
            (q1, k, v, padded_causal_mask(B, 1, S, pad=2))]          # a decode step: T = 1, row 0 padded


def kv_append_cases():
    r = _rng(2)
    K, V = f32(r.standard_normal((2, 2, 3, 4))), f32(r.standard_normal((2, 2, 3, 4)))
    k, v = f32(r.standard_normal((2, 2, 2, 4))), f32(r.standard_normal((2, 2, 2, 4)))
    return [(K, V, k, v), (K[:, :, :0], V[:, :, :0], k, v)]


def rope_cases():
    r = _rng(3)
    x = f32(r.standard_normal((2, 3, 4, 8)))
    positions = np.array([[0, 0, 0, 1], [5, 6, 7, 8]])              # row 0 left-padded, row 1 after a cache
    return [(x, positions, 10000.0), (x, positions, 100.0)]


def embed_cases():
    r = _rng(4)
    wte, wpe = f32(r.standard_normal((10, 4))), f32(r.standard_normal((12, 4)))   # wpe[ids] fits: its bug shows
    ids, positions = np.array([[3, 1, 3], [0, 9, 2]]), np.array([[2, 3, 4], [0, 0, 1]])
    return [(wte, ids, wpe, positions), (wte, ids, None, positions)]


def ffn_cases():
    r = _rng(5)
    x = f32(r.standard_normal((2, 3, 4)))
    up, down = f32(r.standard_normal((4, 8)) * 1.5), f32(r.standard_normal((8, 4)) * 0.5)
    gelu = FFNParams(w_up=up, w_down=down, b_up=f32(r.standard_normal(8) * 0.5), b_down=f32(r.standard_normal(4) * 0.5))
    swiglu = FFNParams(w_up=f32(r.standard_normal((4, 8))), w_down=down, w_gate=up)
    return [(x, gelu, "gelu_mlp"), (x, swiglu, "swiglu")]


def block_cases():
    x = f32(_rng(6).standard_normal((2, 3, 4)))

    def attn(h):
        return np.roll(h, 1, axis=-1) * 0.5

    def norm1(h):
        return h * 1.5 + 0.1

    def ffn(h):
        return np.tanh(h) * 0.7

    def norm2(h):
        return h - h.mean(-1, keepdims=True)

    return [(x, attn, norm1, ffn, norm2)]


def sample_cases():
    return [(f32(_rng(7).standard_normal(50) * 3),), (f32([-5.0, -3.0, -4.0]),), (f32([0.1, 2.0, -1.0, 2.0]),),
            (f32([2.5, -1.0, 0.5, 2.0]),)]                           # the maximum at id 0


def bpe_texts():
    """Texts for the BPE: repeats and runs where the merge order shows ("aaa": [aa, a] or [a, aa])."""
    return ["aaa", "aaaa", "eee", "    ", "       x", "llll ffff", "mississippi", "the theatre, thee",
            "Hark---who goes there?\n\n\n", "ROMEO.\nBut soft, what light"]


CASES = {"embed": embed_cases, "norm": norm_cases, "rope": rope_cases, "kv_append": kv_append_cases,
         "attention": attention_cases, "ffn": ffn_cases, "block": block_cases, "sample": sample_cases}
