"""Solutions to the exercises of notebook 14."""
import math
from collections import Counter

import numpy as np


def merge(ids, pair, new_id):
    """Replace every occurrence of ``pair`` in ``ids``, left to right, by ``new_id``."""
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == tuple(pair):
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def train_bpe(words, n_merges):
    """words: lists of byte ids (one per pre-token) -> the merged pairs, in order."""
    words, pairs = [list(w) for w in words], []
    for k in range(n_merges):
        counts = Counter(p for w in words for p in zip(w, w[1:]))
        if not counts:
            break
        pair = min(counts, key=lambda p: (-counts[p], p))   # most frequent; ties: smallest ids
        pairs.append(pair)
        words = [merge(w, pair, 256 + k) for w in words]
    return pairs


def bpe(ids, merges):
    """One pre-token's ids -> its tokens: merge the lowest-ranked pair (smallest new id) until none is left."""
    while len(ids) > 1:
        pair = min(zip(ids, ids[1:]), key=lambda p: merges.get(p, math.inf))
        if pair not in merges:
            break                                            # no pair left to merge
        ids = merge(ids, pair, merges[pair])
    return ids


def embed(wte, ids, wpe, positions):
    x = wte[ids]                                             # [B, T] -> [B, T, C]
    return x if wpe is None else x + wpe[positions]          # + [B, T, C]


def rope(x, positions, theta):
    """Rotate pairs (i, i + D/2) of x [B, h, T, D] by the angle m·θ_i, θ_i = theta^(−2i/D)."""
    D = x.shape[-1]
    inv_freq = theta ** (-np.arange(0, D, 2) / D)            # [D/2]
    angles = positions[:, None, :, None] * inv_freq          # [B, 1, T, D/2]
    cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
    a, b = x[..., :D // 2], x[..., D // 2:]
    return np.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1)


def softmax(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))            # -inf -> exactly 0
    return e / e.sum(axis=-1, keepdims=True)


def attention(q, k, v, mask):
    G = q.shape[1] // k.shape[1]                             # query heads per KV head
    k, v = np.repeat(k, G, axis=1), np.repeat(v, G, axis=1)  # [B, K, S, D] -> [B, H, S, D]
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(q.shape[-1])   # [B, H, T, S]
    scores = np.where(mask[:, None], scores, -np.inf)        # mask [B|1, T, S] -> every head
    return softmax(scores) @ v                               # [B, H, T, D]


def layer_norm(x, weight, bias, eps):
    mean = x.mean(-1, keepdims=True)                         # [..., 1]
    var = ((x - mean) ** 2).mean(-1, keepdims=True)          # divide by C
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def rms_norm(x, weight, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * weight


def norm(x, p, kind, eps):
    return layer_norm(x, p.weight, p.bias, eps) if kind == "layernorm" else rms_norm(x, p.weight, eps)


def linear(x, w, b=None):
    return x @ w if b is None else x @ w + b


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def silu(x):
    return x * (0.5 + 0.5 * np.tanh(0.5 * x))                # x·σ(x), no overflow


def ffn(x, p, kind):
    if kind == "swiglu":
        return linear(silu(linear(x, p.w_gate)) * linear(x, p.w_up), p.w_down)
    return linear(gelu(linear(x, p.w_up, p.b_up)), p.w_down, p.b_down)


def block(x, attn, norm1, ffn, norm2):
    x = x + attn(norm1(x))
    return x + ffn(norm2(x))


def kv_append(K, V, k_new, v_new):
    return np.concatenate([K, k_new], axis=-2), np.concatenate([V, v_new], axis=-2)


def sample(logits):
    return int(np.argmax(logits))


PARTS = {"bpe": bpe, "embed": embed, "norm": norm, "rope": rope, "kv_append": kv_append,
         "attention": attention, "ffn": ffn, "block": block, "sample": sample}
