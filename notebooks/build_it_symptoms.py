"""What a wrong part computed, in words: the known bugs of each build-it part (notebook 14).

Each bug is a function with the part's signature that computes what the mistake computes. When a
learner's output differs from the library's, the grader computes every bug of that part on the
same input; the one the learner's output equals (within the same tolerance) names the mistake:

    your norm … — RMSNorm divides by the standard deviation about the mean (x.var()): …

``attention_weights`` reads a learner's attention weights off their output: with v = one-hot
positions (v[s] = e_s, D >= S) the output row t is the weights row t itself, so the symptoms
(rows not summing to 1, weight on a hidden position, the scale) are measured, not guessed.
"""
from __future__ import annotations

import math

import numpy as np

from minillm.model.attention import scaled_dot_product
from minillm.model.embedding import embed as lib_embed
from minillm.model.ffn import ffn as lib_ffn, gelu_tanh, silu
from minillm.model.linear import linear
from minillm.model.norm import layer_norm, rms_norm
from minillm.model.rope import apply_rope, rope_angles

_erf = np.vectorize(math.erf, otypes=[np.float64])


def gelu_erf(x):
    return (0.5 * x * (1.0 + _erf(np.asarray(x, np.float64) / math.sqrt(2.0)))).astype(np.float32)


def _norm_bug(formula):
    return lambda x, p, kind, eps: formula(x, p.weight, p.bias, eps)


NORM = {
    "rmsnorm": [
        ("RMSNorm divides by the standard deviation about the mean (x.var()); RMSNorm's "
         "denominator is √(mean(x²) + eps), no centring",
         _norm_bug(lambda x, w, b, eps: x / np.sqrt(x.var(-1, keepdims=True) + eps) * w)),
        ("you centred x (x − mean, LayerNorm's step); kind 'rmsnorm' is x / √(mean(x²) + eps) · weight",
         _norm_bug(lambda x, w, b, eps: layer_norm(x, w, np.zeros_like(w), eps))),
        ("eps is added outside the square root (√mean(x²) + eps); it goes inside: √(mean(x²) + eps)",
         _norm_bug(lambda x, w, b, eps: x / (np.sqrt(np.mean(x * x, -1, keepdims=True)) + eps) * w)),
        ("no eps: √mean(x²) alone (an all-zero row gives 0/0 = NaN)",
         _norm_bug(lambda x, w, b, eps: rms_norm(x, w, 0.0))),
        ("the gain p.weight is not applied", _norm_bug(lambda x, w, b, eps: rms_norm(x, np.ones_like(w), eps))),
        ("normalised over the positions (axis −2), not the C features of each position (the last axis)",
         _norm_bug(lambda x, w, b, eps: x / np.sqrt(np.mean(x * x, -2, keepdims=True) + eps) * w)),
    ],
    "layernorm": [
        ("the variance divides by C − 1 (ddof=1); LayerNorm's divides by C",
         _norm_bug(lambda x, w, b, eps: (x - x.mean(-1, keepdims=True))
                   / np.sqrt(x.var(-1, keepdims=True, ddof=1) + eps) * w + b)),
        ("eps is added outside the square root (√var + eps); it goes inside: √(var + eps)",
         _norm_bug(lambda x, w, b, eps: (x - x.mean(-1, keepdims=True))
                   / (x.std(-1, keepdims=True) + eps) * w + b)),
        ("no eps: √var alone (a constant row gives 0/0 = NaN)",
         _norm_bug(lambda x, w, b, eps: layer_norm(x, w, b, 0.0))),
        ("you computed RMSNorm (no centring, no bias) where kind is 'layernorm'",
         _norm_bug(lambda x, w, b, eps: rms_norm(x, w, eps))),
        ("the gain p.weight is not applied", _norm_bug(lambda x, w, b, eps: layer_norm(x, np.ones_like(w), b, eps))),
        ("the bias p.bias is not added", _norm_bug(lambda x, w, b, eps: layer_norm(x, w, np.zeros_like(b), eps))),
        ("normalised over the positions (axis −2), not the C features of each position (the last axis)",
         _norm_bug(lambda x, w, b, eps: (x - x.mean(-2, keepdims=True))
                   / np.sqrt(x.var(-2, keepdims=True) + eps) * w + b)),
    ],
}


def _gelu_mlp_with(act):
    return lambda x, p, kind: linear(act(linear(x, p.w_up, p.b_up)), p.w_down, p.b_down)


def _swiglu_with(f):
    return lambda x, p, kind: linear(f(linear(x, p.w_gate), linear(x, p.w_up)), p.w_down)


FFN = {
    "gelu_mlp": [
        ("your GELU is the exact erf form ½x(1 + erf(x/√2)); this model was trained with the tanh "
         "form ½x(1 + tanh(√(2/π)(x + 0.044715x³))) — {gelu_gap}", _gelu_mlp_with(gelu_erf)),
        ("your GELU is the sigmoid form x·σ(1.702x); this model uses the tanh form "
         "½x(1 + tanh(√(2/π)(x + 0.044715x³)))", _gelu_mlp_with(lambda h: h / (1 + np.exp(-1.702 * h)))),
        ("ReLU where the model uses the tanh GELU", _gelu_mlp_with(lambda h: np.maximum(h, 0))),
        ("the biases b_up and b_down are not added",
         lambda x, p, kind: linear(gelu_tanh(linear(x, p.w_up)), p.w_down)),
        ("no activation between W_up and W_down", _gelu_mlp_with(lambda h: h)),
    ],
    "swiglu": [
        ("SiLU is applied to x W_up; it belongs on the gate: SiLU(x W_gate) ⊙ (x W_up)",
         _swiglu_with(lambda g, u: silu(u) * g)),
        ("σ(x W_gate) where SwiGLU uses SiLU(x W_gate) = (x W_gate)·σ(x W_gate)",
         _swiglu_with(lambda g, u: 1 / (1 + np.exp(-g)) * u)),
        ("GELU where SwiGLU uses SiLU", _swiglu_with(lambda g, u: gelu_tanh(g) * u)),
        ("the gate is missing: SiLU(x W_up) alone", _swiglu_with(lambda g, u: silu(u))),
        ("you computed the GELU MLP where kind is 'swiglu'", _gelu_mlp_with(gelu_tanh)),
    ],
}


def _attend(scores_of, weights_of=None):
    """An attention computed with ``scores_of(q, k)``; ``weights_of`` (optional) replaces the mask
    before the softmax by a change to the weights after it."""
    def attention(q, k, v, mask):
        G = q.shape[1] // k.shape[1]
        k, v = np.repeat(k, G, axis=1), np.repeat(v, G, axis=1)
        s = scores_of(q, k) if weights_of else np.where(mask[:, None], scores_of(q, k), -np.inf)
        w = np.exp(s - s.max(-1, keepdims=True))
        w = w / w.sum(-1, keepdims=True)
        return (w if weights_of is None else weights_of(w, q, k, mask)) @ v
    return attention


def _qk(q, k):
    return q @ np.swapaxes(k, -1, -2)


def _one_query(attention):
    """``attention``, but only for one query (T = 1): on other inputs it is not this bug."""
    def at_one(q, k, v, m):
        if q.shape[2] != 1:
            raise ValueError("not one query")
        return attention(q, k, v, m)
    return at_one


def _kv_head_of(index):
    """Attention with query head h reading KV head ``index(h, H, KV)``."""
    def attention(q, k, v, m):
        kv = index(np.arange(q.shape[1]), q.shape[1], k.shape[1])
        return scaled_dot_product(q, k[:, kv], v[:, kv], m)[0]
    return attention


ATTENTION = [
    ("the mask is skipped when there is one new query (T = 1, a decode step): nothing is in the "
     "future then, but a left-padded row's padding still is hidden by the mask — apply it at every T",
     _one_query(lambda q, k, v, m: scaled_dot_product(q, k, v, np.ones_like(m))[0])),
    ("query head h uses KV head h // KV (divided by the number of KV heads, {kv}); it is h // G, "
     "G = H / KV = {g} query heads per KV head: the two agree only when G = KV or G = 1",
     _kv_head_of(lambda h, H, KV: h // KV)),
    ("the mask is not applied: weight on future positions (and padding)",
     lambda q, k, v, m: scaled_dot_product(q, k, v, np.ones_like(m))[0]),
    ("the scores are not divided by √D: a scale off by a factor of √D = {sqrt_d}",
     _attend(lambda q, k: _qk(q, k))),
    ("the scores are divided by D, not √D: a scale off by a factor of √D = {sqrt_d}",
     _attend(lambda q, k: _qk(q, k) / q.shape[-1])),
    ("the scores are multiplied by √D, not divided: a scale off by a factor of D = {d}",
     _attend(lambda q, k: _qk(q, k) * math.sqrt(q.shape[-1]))),
    ("query head h uses KV head h % KV (np.tile, or concatenating the KV heads); it uses h // G "
     "(np.repeat): query heads 0…G−1 share KV head 0",
     lambda q, k, v, m: scaled_dot_product(q, np.tile(k, (1, q.shape[1] // k.shape[1], 1, 1)),
                                           np.tile(v, (1, q.shape[1] // k.shape[1], 1, 1)), m)[0]),
    ("every batch row attends with row 0's keys and values (k[0], v[0]): it works for a batch of "
     "one row only; keep the batch axis",
     lambda q, k, v, m: scaled_dot_product(q, np.broadcast_to(k[:1], k.shape),
                                           np.broadcast_to(v[:1], v.shape), m)[0]),
    ("every batch row uses mask[0]: the mask has one [T, S] per batch row (left padding differs)",
     lambda q, k, v, m: scaled_dot_product(q, k, v, m[:1])[0]),
    ("the mask is applied after the softmax (weights zeroed, rows no longer sum to 1): set the "
     "hidden scores to −∞ before it",
     _attend(lambda q, k: _qk(q, k) / math.sqrt(q.shape[-1]), lambda w, q, k, m: w * m[:, None])),
]


def _positions_from_zero(x, positions, theta):
    return lib_rope(x, np.broadcast_to(np.arange(x.shape[-2]), positions.shape), theta)


def lib_rope(x, positions, theta):
    cos, sin = rope_angles(positions, x.shape[-1], theta)          # [B, T, D/2]
    return apply_rope(x, cos[:, None], sin[:, None])                # [B, h, T, D]


def _adjacent_pairs(x, positions, theta):
    cos, sin = rope_angles(positions, x.shape[-1], theta)
    a, b = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = a * cos[:, None] - b * sin[:, None], b * cos[:, None] + a * sin[:, None]
    return out


ROPE = [
    ("you rotated adjacent pairs (2i, 2i + 1); this model's layout pairs i with i + D/2 "
     "(“rotate half”: the first half of the head against the second)", _adjacent_pairs),
    ("you rotated the other way (by −mθ_i): [a, b] -> [a cos + b sin, b cos − a sin]",
     lambda x, positions, theta: lib_rope(x, -positions, theta)),
    ("θ_i = theta^(−i/D); RoPE's is theta^(−2i/D) (i counts pairs, 2i dimensions)",
     lambda x, positions, theta: lib_rope(x, positions, theta ** 0.5)),
    ("you rotated by 0, 1, …, T − 1 instead of the given positions (after a cache of S tokens the "
     "new ones sit at S, S + 1, …; left padding shifts a row)", _positions_from_zero),
]

KV_APPEND = [
    ("the new rows come first (concatenate([k_new, K])): the cache must keep time order, old rows then new",
     lambda K, V, k, v: (np.concatenate([k, K], -2), np.concatenate([v, V], -2))),
    ("K' and V' are swapped: return (keys, values)",
     lambda K, V, k, v: (np.concatenate([V, v], -2), np.concatenate([K, k], -2))),
]

EMBED = [
    ("no position embedding added (x = wte[ids] only; GPT-2 adds wpe[positions])",
     lambda wte, ids, wpe, positions: wte[ids]),
    ("wpe[:T] (positions 0 … T − 1) instead of wpe[positions]: after a cache the positions start "
     "at S, and left padding shifts a row",
     lambda wte, ids, wpe, positions: lib_embed(wte, ids, wpe, np.broadcast_to(np.arange(ids.shape[-1]), ids.shape))),
    ("wpe[ids]: the position table is indexed by the token ids, not the positions",
     lambda wte, ids, wpe, positions: lib_embed(wte, ids, wpe, ids)),
    ("wte[positions]: the token table is indexed by the positions, not the ids",
     lambda wte, ids, wpe, positions: lib_embed(wte, positions, wpe, positions)),
]

BLOCK = [
    ("the first residual is missing: x = attn(norm1(x)) drops x", lambda x, a, n1, f, n2: (h := a(n1(x))) + f(n2(h))),
    ("the second residual is missing: the FFN's output replaces x", lambda x, a, n1, f, n2: f(n2(x + a(n1(x))))),
    ("post-norm (norm after the residual add, the original Transformer); these models are pre-norm: "
     "x + attn(norm1(x))", lambda x, a, n1, f, n2: n2((h := n1(x + a(x))) + f(h))),
    ("parallel residuals (attn and ffn both read the block's input); these models are sequential",
     lambda x, a, n1, f, n2: x + a(n1(x)) + f(n2(x))),
    ("norm1 is used before the FFN too (norm2 is the FFN's)", lambda x, a, n1, f, n2: (h := x + a(n1(x))) + f(n1(h))),
]

SAMPLE = [
    ("the least likely token (argmin)", lambda z: int(np.argmin(z))),
    ("id 0 is never chosen (a range starting at 1, or `if not best` / `best or …`, which read id 0 "
     "as “none yet”: test `best is None`)", lambda z: 1 + int(np.argmax(z[1:]))),
    ("the last of equal maxima; greedy (np.argmax) takes the first",
     lambda z: int(len(z) - 1 - np.argmax(z[::-1]))),
]


def bugs(name, args):
    """The known bugs of part ``name`` for these inputs: [(message, function)]."""
    if name == "norm":
        return NORM[args[2]]
    if name == "ffn":
        return FFN[args[2]]
    return {"attention": ATTENTION, "rope": ROPE, "kv_append": KV_APPEND, "embed": EMBED,
            "block": BLOCK, "sample": SAMPLE}.get(name, [])


def fill(message, name, args):
    """The numbers a symptom message quotes, computed from the inputs."""
    if "{gelu_gap}" in message:
        x, p, _ = args
        h = np.asarray(linear(x, p.w_up, p.b_up), np.float64)
        gap = np.abs(gelu_erf(h) - gelu_tanh(h))
        i = np.unravel_index(np.argmax(gap), gap.shape)
        message = message.replace("{gelu_gap}", f"at these inputs the two differ by up to "
                                                f"{gap[i]:.2g} (at x W_up + b_up = {h[i]:.3f})")
    if name == "attention":
        d, H, KV = args[0].shape[-1], args[0].shape[1], args[1].shape[1]
        message = message.replace("{sqrt_d}", f"{math.sqrt(d):.3g}").replace("{d}", str(d))
        message = message.replace("{kv}", str(KV)).replace("{g}", str(H // KV))
    return message


def raised_hint(name, error) -> str:
    """What an exception raised by a part usually means, for the errors a learner meets."""
    if name == "kv_append" and "concatenation axis" in str(error):
        return (" — concatenate along the time axis (axis 2, or −2): [B, KV, S, D] and [B, KV, T, D] "
                "-> [B, KV, S + T, D]")
    if name == "attention" and "broadcast" in str(error):
        return (" — k and v have KV heads, q has H: repeat each KV head G = H / KV times "
                "(np.repeat(k, G, axis=1)); the mask [B or 1, T, S] needs a heads axis (mask[:, None])")
    return ""


def attention_weights(out, S):
    """A learner's attention weights [B, H, T, S], read off their output for v = one-hot positions."""
    return np.asarray(out, np.float64)[..., :S]


def weight_symptoms(w, mask, tol):
    """Rows of ``w`` [B, H, T, S] that do not sum to 1, or weight on a hidden key, in words."""
    sums = w.sum(-1)                                                  # [B, H, T]
    bad = np.argwhere(~(np.abs(sums - 1) <= tol))
    if len(bad):
        b, h, t = bad[0]
        return (f"the attention weights of batch row {b}, head {h}, query {t} sum to {sums[b, h, t]:.4g}, "
                f"not 1: the softmax normalises over the last axis (the keys), after the mask")
    hidden = np.argwhere((np.abs(w) > tol) & ~np.broadcast_to(mask[:, None], w.shape))
    if len(hidden):
        b, h, t, s = hidden[0]
        return (f"weight {w[b, h, t, s]:.3g} on key {s}, which the mask hides from query {t} of batch "
                f"row {b} (a future position or padding): hidden scores must be −∞ before the softmax")
    return None


__all__ = ["bugs", "fill", "attention_weights", "weight_symptoms", "gelu_erf", "lib_rope", "lib_ffn"]
