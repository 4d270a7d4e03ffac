"""The build-it variants table (notebook 13's parts): wrong attempts a learner writes, each with
the words the grader must say about it, and correct attempts written another way, which it must
accept. tests/test_build_it.py runs every row on the shipped Shakespeare model, the tiny
Llama-style model and SmolLM2 (when present)."""
from __future__ import annotations

import importlib.util
import math
from collections import Counter
from typing import Callable, NamedTuple

import numpy as np

from tests.conftest import REPO


def _load(path):
    spec = importlib.util.spec_from_file_location(path.stem.replace(".", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


S = _load(REPO / "notebooks" / "solutions" / "14_build_it.py")     # the solutions


class Variant(NamedTuple):
    part: str
    fn: Callable
    says: str = ""          # what the ✗ message must contain (wrong ones)

    @property
    def why(self):
        return f"{self.part}-{self.fn.__name__}"


def variant(part, says=""):
    def register(fn):
        (WRONG if says else RIGHT).append(Variant(part, fn, says))
        return fn
    return register


def _named(fn, name):
    fn.__name__ = name
    return fn


WRONG: list[Variant] = []
RIGHT: list[Variant] = []


# ---- merge and train_bpe (the trainer, graded on their own by check_part) ----------------------

TRAINER_WRONG: list[Variant] = []
TRAINER_RIGHT: list[Variant] = []


def trainer_variant(part, says=""):
    def register(fn):
        (TRAINER_WRONG if says else TRAINER_RIGHT).append(Variant(part, fn, says))
        return fn
    return register


@trainer_variant("merge", "it replaces only the first occurrence of the pair")
def merge_first_occurrence_only(ids, pair, new_id):
    for i in range(len(ids) - 1):
        if (ids[i], ids[i + 1]) == tuple(pair):
            return ids[:i] + [new_id] + ids[i + 2:]
    return ids


@trainer_variant("merge", "changed its input ids in place")
def merge_in_place(ids, pair, new_id):
    i = 0
    while i < len(ids) - 1:
        if (ids[i], ids[i + 1]) == tuple(pair):
            ids[i:i + 2] = [new_id]
        i += 1
    return ids


@trainer_variant("merge", "it merges from the right")
def merge_from_the_right(ids, pair, new_id):
    out, i = [], len(ids) - 1
    while i >= 0:
        if i > 0 and (ids[i - 1], ids[i]) == tuple(pair):
            out.insert(0, new_id)
            i -= 2
        else:
            out.insert(0, ids[i])
            i -= 1
    return out


@trainer_variant("merge")
def merge_by_string_replace(ids, pair, new_id):
    out, skip = [], False
    for a, b in zip(ids, ids[1:] + [None]):
        if skip:
            skip = False
        elif (a, b) == tuple(pair):
            out.append(new_id)
            skip = True
        else:
            out.append(a)
    return out


@trainer_variant("train_bpe", "it counts each pair once per word")
def train_bpe_counting_once_per_word(words, n_merges):
    words, pairs = [list(w) for w in words], []
    for k in range(n_merges):
        counts = Counter(p for w in words for p in set(zip(w, w[1:])))     # the pairs of each word
        if not counts:
            break
        pair = min(counts, key=lambda p: (-counts[p], p))
        pairs.append(pair)
        words = [S.merge(w, pair, 256 + k) for w in words]
    return pairs


@trainer_variant("train_bpe", "ties go to the largest pair")
def train_bpe_ties_to_the_largest(words, n_merges):
    words, pairs = [list(w) for w in words], []
    for k in range(n_merges):
        counts = Counter(p for w in words for p in zip(w, w[1:]))
        if not counts:
            break
        pair = max(counts, key=lambda p: (counts[p], p))
        pairs.append(pair)
        words = [S.merge(w, pair, 256 + k) for w in words]
    return pairs


@trainer_variant("train_bpe", "it merges only the first occurrence of each pair in a word")
def train_bpe_with_a_first_occurrence_merge(words, n_merges):
    words, pairs = [list(w) for w in words], []
    for k in range(n_merges):
        counts = Counter(p for w in words for p in zip(w, w[1:]))
        if not counts:
            break
        pair = min(counts, key=lambda p: (-counts[p], p))
        pairs.append(pair)
        words = [merge_first_occurrence_only(w, pair, 256 + k) for w in words]
    return pairs


@trainer_variant("train_bpe")
def train_bpe_by_counter_most_common(words, n_merges):
    words, pairs = [tuple(w) for w in words], []
    for k in range(n_merges):
        counts = Counter()
        for w in words:
            counts.update(zip(w, w[1:]))
        if not counts:
            break
        top = counts.most_common(1)[0][1]
        pair = sorted(p for p, c in counts.items() if c == top)[0]
        pairs.append(pair)
        words = [tuple(S.merge(list(w), pair, 256 + k)) for w in words]
    return pairs


# ---- bpe --------------------------------------------------------------------------------------

def _bpe(choose, merge=S.merge):
    """A BPE whose next pair is ``choose(present pairs with their ranks)``."""
    def bpe(ids, merges):
        ranked = [(merges[p], p) for p in zip(ids, ids[1:]) if p in merges]
        while ranked:
            _, pair = choose(ranked)
            ids = merge(ids, pair, merges[pair])
            ranked = [(merges[p], p) for p in zip(ids, ids[1:]) if p in merges]
        return ids
    return bpe


def _merge_from_the_right(ids, pair, new_id):
    return S.merge(ids[::-1], pair[::-1], new_id)[::-1]


bpe_highest_rank_first = _named(_bpe(max), "bpe_highest_rank_first")
bpe_first_pair_found = _named(_bpe(lambda ranked: ranked[0]), "bpe_first_pair_found")
bpe_right_to_left = _named(_bpe(min, _merge_from_the_right), "bpe_right_to_left")
variant("bpe", "it merges the highest-ranked pair first")(bpe_highest_rank_first)
variant("bpe", "it merges the first pair found")(bpe_first_pair_found)
variant("bpe", "it merges from right to left")(bpe_right_to_left)


@variant("bpe", "your bpe encodes")
def bpe_one_merge_only(ids, merges):
    pairs = [p for p in zip(ids, ids[1:]) if p in merges]
    return S.merge(ids, min(pairs, key=merges.get), merges[min(pairs, key=merges.get)]) if pairs else ids


@variant("bpe", "a pair missing from merges is ranked as len(merges)")
def bpe_missing_pair_ranked_as_len(ids, merges):
    while len(ids) > 1:
        pair = min(zip(ids, ids[1:]), key=lambda p: merges.get(p, len(merges)))   # "past the last rank"
        if pair not in merges:
            break
        ids = S.merge(ids, pair, merges[pair])
    return ids


@variant("bpe", "did you forget `return`")
def bpe_without_return(ids, merges):
    S.bpe(ids, merges)


@variant("bpe")
def bpe_by_sorting_the_present_pairs(ids, merges):
    while True:
        present = sorted((merges[p], p) for p in zip(ids, ids[1:]) if p in merges)
        if not present:
            return ids
        ids = S.merge(ids, present[0][1], merges[present[0][1]])


@variant("bpe")
def bpe_recursive(ids, merges):
    ranked = [(merges[p], i) for i, p in enumerate(zip(ids, ids[1:])) if p in merges]
    if not ranked:
        return list(ids)
    pair = (ids[min(ranked)[1]], ids[min(ranked)[1] + 1])
    return bpe_recursive(S.merge(ids, pair, merges[pair]), merges)


# ---- embed ------------------------------------------------------------------------------------

@variant("embed", "no position embedding added")
def embed_without_positions(wte, ids, wpe, positions):
    return wte[ids]


@variant("embed", "wpe[:T] (positions 0 … T − 1) instead of wpe[positions]")
def embed_positions_from_zero(wte, ids, wpe, positions):
    return wte[ids] if wpe is None else wte[ids] + wpe[:ids.shape[-1]]


@variant("embed", "wpe[ids]: the position table is indexed by the token ids")
def embed_positions_by_id(wte, ids, wpe, positions):
    return wte[ids] if wpe is None else wte[ids] + wpe[ids]


@variant("embed", "wte[positions]: the token table is indexed by the positions")
def embed_tokens_by_position(wte, ids, wpe, positions):
    return wte[positions] if wpe is None else wte[positions] + wpe[positions]


@variant("embed", "it should be [B, T, C]")
def embed_one_row(wte, ids, wpe, positions):
    return S.embed(wte, ids, wpe, positions)[0]


@variant("embed")
def embed_with_take(wte, ids, wpe, positions):
    x = np.take(wte, ids, axis=0)
    return x if wpe is None else x + np.take(wpe, positions, axis=0)


@variant("embed")
def embed_by_one_hot_product(wte, ids, wpe, positions):
    x = (np.eye(len(wte), dtype=np.float32)[ids] @ wte).astype(np.float32)
    return x if wpe is None else x + wpe[positions]


# ---- norm -------------------------------------------------------------------------------------

def _norm(layer, rms):
    def norm(x, p, kind, eps):
        return layer(x, p.weight, p.bias, eps) if kind == "layernorm" else rms(x, p.weight, eps)
    return norm


for _name, _says, _layer, _rms in [
    ("rms_norm_about_the_mean", "RMSNorm divides by the standard deviation about the mean",
     S.layer_norm, lambda x, w, eps: x / np.sqrt(x.var(-1, keepdims=True) + eps) * w),
    ("rms_norm_eps_outside_the_root", "eps is added outside the square root (√mean(x²) + eps)",
     S.layer_norm, lambda x, w, eps: x / (np.sqrt((x * x).mean(-1, keepdims=True)) + eps) * w),
    ("rms_norm_without_eps", "no eps: √mean(x²) alone",
     S.layer_norm, lambda x, w, eps: x / np.sqrt((x * x).mean(-1, keepdims=True)) * w),
    ("rms_norm_without_gain", "the gain p.weight is not applied",
     S.layer_norm, lambda x, w, eps: x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)),
    ("layer_norm_over_c_minus_1", "the variance divides by C − 1 (ddof=1)",
     lambda x, w, b, eps: (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True, ddof=1) + eps) * w + b,
     S.rms_norm),
    ("layer_norm_eps_outside_the_root", "eps is added outside the square root (√var + eps)",
     lambda x, w, b, eps: (x - x.mean(-1, keepdims=True)) / (x.std(-1, keepdims=True) + eps) * w + b, S.rms_norm),
    ("layer_norm_without_eps", "no eps: √var alone",
     lambda x, w, b, eps: (x - x.mean(-1, keepdims=True)) / x.std(-1, keepdims=True) * w + b, S.rms_norm),
    ("layer_norm_without_bias", "the bias p.bias is not added",
     lambda x, w, b, eps: S.layer_norm(x, w, 0, eps), S.rms_norm),
    ("layer_norm_as_rms_norm", "you computed RMSNorm (no centring, no bias) where kind is 'layernorm'",
     lambda x, w, b, eps: S.rms_norm(x, w, eps), S.rms_norm),
    ("rms_norm_as_layer_norm", "you centred x (x − mean, LayerNorm's step)",
     S.layer_norm, lambda x, w, eps: S.layer_norm(x, w, 0, eps)),
]:
    variant("norm", _says)(_named(_norm(_layer, _rms), _name))


@variant("norm", "changed its input x in place")
def norm_in_place(x, p, kind, eps):
    if kind == "layernorm":
        x -= x.mean(-1, keepdims=True)
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * p.weight + p.bias
    return S.rms_norm(x, p.weight, eps)


@variant("norm")
def norm_in_float64(x, p, kind, eps):
    x64 = x.astype(np.float64)
    if kind == "layernorm":
        d = x64 - x64.mean(-1, keepdims=True)
        return (d / np.sqrt((d ** 2).mean(-1, keepdims=True) + eps) * p.weight + p.bias).astype(np.float32)
    return (x64 * (1 / np.sqrt(np.mean(x64 ** 2, -1, keepdims=True) + eps)) * p.weight).astype(np.float32)


@variant("norm")
def norm_by_vector_length(x, p, kind, eps):
    C = x.shape[-1]
    if kind == "layernorm":
        d = x - x.mean(-1, keepdims=True)
        return d / np.sqrt(np.linalg.norm(d, axis=-1, keepdims=True) ** 2 / C + eps) * p.weight + p.bias
    return x / np.sqrt(np.linalg.norm(x, axis=-1, keepdims=True) ** 2 / C + eps) * p.weight


# ---- rope -------------------------------------------------------------------------------------

def _angles(positions, D, theta):
    return positions[:, None, :, None] * theta ** (-np.arange(0, D, 2) / D)        # [B, 1, T, D/2]


@variant("rope", "you rotated adjacent pairs (2i, 2i + 1)")
def rope_adjacent_pairs(x, positions, theta):
    a, b, t = x[..., 0::2], x[..., 1::2], _angles(positions, x.shape[-1], theta)
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = a * np.cos(t) - b * np.sin(t), b * np.cos(t) + a * np.sin(t)
    return out


@variant("rope", "you rotated the other way")
def rope_backwards(x, positions, theta):
    return S.rope(x, -positions, theta)


@variant("rope", "θ_i = theta^(−i/D)")
def rope_half_frequencies(x, positions, theta):
    D = x.shape[-1]
    t = positions[:, None, :, None] * theta ** (-np.arange(D // 2) / D)
    a, b = x[..., :D // 2], x[..., D // 2:]
    return np.concatenate([a * np.cos(t) - b * np.sin(t), b * np.cos(t) + a * np.sin(t)], -1).astype(np.float32)


@variant("rope", "instead of the given positions")
def rope_positions_from_zero(x, positions, theta):
    return S.rope(x, np.broadcast_to(np.arange(x.shape[2]), positions.shape), theta)


@variant("rope", "it should be x's shape [B, h, T, D]")
def rope_first_half_only(x, positions, theta):
    return S.rope(x, positions, theta)[..., :x.shape[-1] // 2]


@variant("rope")
def rope_as_complex_numbers(x, positions, theta):
    D = x.shape[-1]
    z = (x[..., :D // 2] + 1j * x[..., D // 2:]) * np.exp(1j * _angles(positions, D, theta))
    return np.concatenate([z.real, z.imag], -1).astype(np.float32)


# ---- kv_append ---------------------------------------------------------------------------------

@variant("kv_append", "the new rows come first")
def kv_append_new_rows_first(K, V, k, v):
    return np.concatenate([k, K], 2), np.concatenate([v, V], 2)


@variant("kv_append", "it should be [B, KV, S + T, D]")
def kv_append_forgetting_the_cache(K, V, k, v):
    return k, v


@variant("kv_append", "K' and V' are swapped")
def kv_append_swapped(K, V, k, v):
    return np.concatenate([V, v], 2), np.concatenate([K, k], 2)


@variant("kv_append", "concatenate along the time axis")
def kv_append_along_the_heads(K, V, k, v):
    return np.concatenate([K, k], 1), np.concatenate([V, v], 1)


@variant("kv_append", "not a pair (K', V')")
def kv_append_keys_only(K, V, k, v):
    return np.concatenate([K, k], 2)


@variant("kv_append")
def kv_append_with_np_append(K, V, k, v):
    return [np.append(K, k, axis=2), np.append(V, v, axis=2)]


@variant("kv_append")
def kv_append_into_a_new_array(K, V, k, v):
    S = K.shape[2]
    shape = K.shape[:2] + (S + k.shape[2], K.shape[3])
    out = np.empty(shape, K.dtype), np.empty(shape, V.dtype)
    out[0][:, :, :S], out[0][:, :, S:], out[1][:, :, :S], out[1][:, :, S:] = K, k, V, v
    return out


# ---- attention ---------------------------------------------------------------------------------

def _attention(scores_of=None, fill=-np.inf, axis=-1, after=False, repeat=np.repeat, first_mask=False,
               subtract_max=True):
    def attention(q, k, v, mask):
        G = q.shape[1] // k.shape[1]
        k, v = (repeat(k, G, axis=1), repeat(v, G, axis=1)) if repeat is np.repeat else \
            (np.tile(k, (1, G, 1, 1)), np.tile(v, (1, G, 1, 1)))
        m = mask[:1] if first_mask else mask
        s = (scores_of or (lambda q, k: q @ k.transpose(0, 1, 3, 2) / math.sqrt(q.shape[-1])))(q, k)
        if not after:
            s = np.where(m[:, None], s, fill)
        e = np.exp(s - s.max(axis, keepdims=True)) if subtract_max else np.exp(s)
        w = e / e.sum(axis, keepdims=True)
        return (w * m[:, None] if after else w) @ v
    return attention


for _name, _says, _fn in [
    ("attention_without_mask", "the mask is not applied", _attention(fill=None)),
    ("attention_without_scale", "the scores are not divided by √D",
     _attention(lambda q, k: q @ k.transpose(0, 1, 3, 2))),
    ("attention_divided_by_d", "the scores are divided by D, not √D",
     _attention(lambda q, k: q @ k.transpose(0, 1, 3, 2) / q.shape[-1])),
    ("attention_mask_after_softmax", "the mask is applied after the softmax", _attention(after=True)),
    ("attention_heads_tiled", "query head h uses KV head h % KV", _attention(repeat=np.tile)),
    ("attention_first_row_mask", "every batch row uses mask[0]", _attention(first_mask=True)),
    ("attention_softmax_over_queries", "sum to", _attention(axis=-2)),
    ("attention_without_max", "exp overflowed", _attention(subtract_max=False)),
]:
    if _name == "attention_without_mask":
        _fn = _named(lambda q, k, v, mask: S.attention(q, k, v, np.ones_like(mask)), _name)
    variant("attention", _says)(_named(_fn, _name))


@variant("attention", "it works for a batch of one row only")
def attention_for_one_row(q, k, v, mask):
    G = q.shape[1] // k.shape[1]
    k0, v0 = np.repeat(k[0], G, axis=0), np.repeat(v[0], G, axis=0)            # [H, S, D]: row 0's
    s = np.where(mask[:, None], q @ k0.transpose(0, 2, 1) / math.sqrt(q.shape[-1]), -np.inf)
    w = np.exp(s - s.max(-1, keepdims=True))
    return (w / w.sum(-1, keepdims=True)) @ v0


@variant("attention", "query head h uses KV head h // KV")
def attention_grouped_by_the_kv_count(q, k, v, mask):
    B, H, T, D = q.shape
    KV = k.shape[1]
    out = np.empty_like(q)
    for h in range(H):
        g = h // KV if KV < H else h                 # the group of head h (right for G = 1 and G = KV)
        s = np.where(mask, q[:, h] @ k[:, g].transpose(0, 2, 1) / math.sqrt(D), -np.inf)
        w = np.exp(s - s.max(-1, keepdims=True))
        out[:, h] = (w / w.sum(-1, keepdims=True)) @ v[:, g]
    return out


@variant("attention", "the mask is skipped when there is one new query (T = 1")
def attention_without_mask_for_one_token(q, k, v, mask):
    if q.shape[2] == 1:                              # one new token: nothing in the future to hide
        mask = np.ones_like(mask)
    return S.attention(q, k, v, mask)


@variant("attention", "raised NotImplementedError: a branch not written yet")
def attention_short_contexts_only(q, k, v, mask):
    if k.shape[2] > 5:                               # the toys have at most 5 keys: never raised there
        raise NotImplementedError("more than 5 keys")
    return S.attention(q, k, v, mask)


@variant("attention", "returned a tuple of 2")
def attention_with_weights(q, k, v, mask):
    return S.attention(q, k, v, mask), None


@variant("attention")
def attention_with_a_large_negative(q, k, v, mask):
    return _attention(fill=-1e9)(q, k, v, mask)


@variant("attention")
def attention_with_an_additive_mask(q, k, v, mask):
    G = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, G, 1), np.repeat(v, G, 1)
    s = np.einsum("bhtd,bhsd->bhts", q, k) / np.sqrt(q.shape[-1]) + np.where(mask, 0.0, -np.inf)[:, None]
    w = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("bhts,bhsd->bhtd", w / w.sum(-1, keepdims=True), v).astype(np.float32)


@variant("attention")
def attention_head_by_head(q, k, v, mask):
    B, H, T, D = q.shape
    G, out = H // k.shape[1], np.empty_like(q)
    for b in range(B):
        for h in range(H):
            s = q[b, h] @ k[b, h // G].T / math.sqrt(D)
            s[~mask[min(b, len(mask) - 1)]] = -np.inf
            w = np.exp(s - s.max(-1, keepdims=True))
            out[b, h] = w / w.sum(-1, keepdims=True) @ v[b, h // G]
    return out


# ---- ffn ---------------------------------------------------------------------------------------

_erf = np.vectorize(math.erf, otypes=[np.float32])


def _ffn(act=S.gelu, gated=lambda g, u: S.silu(g) * u, biases=True):
    def ffn(x, p, kind):
        if kind == "swiglu":
            return S.linear(gated(S.linear(x, p.w_gate), S.linear(x, p.w_up)), p.w_down)
        if not biases:
            return S.linear(act(S.linear(x, p.w_up)), p.w_down)
        return S.linear(act(S.linear(x, p.w_up, p.b_up)), p.w_down, p.b_down)
    return ffn


for _name, _says, _fn in [
    ("ffn_erf_gelu", "your GELU is the exact erf form", _ffn(act=lambda h: 0.5 * h * (1 + _erf(h / math.sqrt(2))))),
    ("ffn_sigmoid_gelu", "the sigmoid form x·σ(1.702x)", _ffn(act=lambda h: h / (1 + np.exp(-1.702 * h)))),
    ("ffn_relu", "ReLU where the model uses the tanh GELU", _ffn(act=lambda h: np.maximum(h, 0))),
    ("ffn_without_biases", "the biases b_up and b_down are not added", _ffn(biases=False)),
    ("swiglu_silu_on_up", "SiLU is applied to x W_up", _ffn(gated=lambda g, u: S.silu(u) * g)),
    ("swiglu_with_sigmoid", "σ(x W_gate) where SwiGLU uses SiLU", _ffn(gated=lambda g, u: u / (1 + np.exp(-g)))),
    ("swiglu_without_gate", "the gate is missing", _ffn(gated=lambda g, u: S.silu(u))),
]:
    variant("ffn", _says)(_named(_fn, _name))


@variant("ffn")
def ffn_with_float64_constants(x, p, kind):
    def gelu(h):
        return 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3)))     # float64 inside
    if kind == "swiglu":
        g = x @ p.w_gate
        return ((g / (1 + np.exp(-g))) * (x @ p.w_up)) @ p.w_down
    return gelu(x @ p.w_up + p.b_up) @ p.w_down + p.b_down


# ---- block -------------------------------------------------------------------------------------

@variant("block", "the first residual is missing")
def block_without_first_residual(x, attn, norm1, ffn, norm2):
    h = attn(norm1(x))
    return h + ffn(norm2(h))


@variant("block", "the second residual is missing")
def block_without_second_residual(x, attn, norm1, ffn, norm2):
    return ffn(norm2(x + attn(norm1(x))))


@variant("block", "post-norm")
def block_post_norm(x, attn, norm1, ffn, norm2):
    h = norm1(x + attn(x))
    return norm2(h + ffn(h))


@variant("block", "parallel residuals")
def block_parallel(x, attn, norm1, ffn, norm2):
    return x + attn(norm1(x)) + ffn(norm2(x))


@variant("block", "norm1 is used before the FFN too")
def block_norm1_twice(x, attn, norm1, ffn, norm2):
    h = x + attn(norm1(x))
    return h + ffn(norm1(h))


@variant("block")
def block_adding_into_a_copy(x, attn, norm1, ffn, norm2):
    h = x.copy()
    h += attn(norm1(h))
    h += ffn(norm2(h))
    return h


# ---- sample ------------------------------------------------------------------------------------

@variant("sample", "the least likely token (argmin)")
def sample_argmin(logits):
    return int(np.argmin(logits))


@variant("sample", "the last of equal maxima")
def sample_last_maximum(logits):
    return int(len(logits) - 1 - np.argmax(logits[::-1]))


@variant("sample", "id 0 is never chosen")
def sample_never_id_0(logits):
    best = None
    for i, z in enumerate(logits):
        if not best or z > logits[best]:             # `not best` is also True for id 0
            best = i
    return best


@variant("sample", "return one token id, an int")
def sample_as_float(logits):
    return float(np.argmax(logits))


@variant("sample", "is below the maximum")
def sample_from_the_softmax(logits):
    p = np.exp(logits - logits.max())
    return int(np.random.default_rng(0).choice(len(logits), p=p / p.sum()))


@variant("sample")
def sample_by_python_max(logits):
    return max(range(len(logits)), key=lambda i: logits[i])


@variant("sample")
def sample_by_stable_sort(logits):
    return int(np.argsort(-logits, kind="stable")[0])
