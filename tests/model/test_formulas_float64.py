"""What the model's formulas compute, each against the formula written out again in float64:
RoPE's relative position, SwiGLU and GeGLU, the block in each norm placement, and a masked key's
weight, exactly 0 however extreme the visible scores are."""
import functools
import math

import numpy as np
from hypothesis import assume, example, given
from hypothesis import strategies as st

from minillm.config import ModelConfig
from minillm.model.attention import causal_mask, scaled_dot_product
from minillm.model.block import block
from minillm.hooks import Layer
from minillm.model.ffn import geglu, swiglu
from minillm.model.rope import apply_rope, rope_angles

from tests.model.strategies import random_model

SEEDS = st.integers(0, 10_000)


def rotated(x, position: int, theta: float):
    """x [D] rotated by RoPE at one position: [D] -> [1, 1, 1, D] -> [D]."""
    cos, sin = rope_angles(np.array([[position]]), x.shape[-1], theta)      # [1, 1, D/2] each
    return apply_rope(x[None, None, None], cos[:, None], sin[:, None])[0, 0, 0]


@given(seed=SEEDS, m=st.integers(0, 500), n=st.integers(0, 500), shift=st.integers(0, 500),
       theta=st.sampled_from([10_000.0, 100_000.0]))
def test_rope_scores_depend_only_on_the_distance_m_minus_n(seed, m, n, shift, theta):
    """⟨rope(q, m), rope(k, n)⟩ = ⟨rope(q, m + s), rope(k, n + s)⟩: each pair is rotated by mθᵢ and
    nθᵢ, and a dot product of two rotated pairs sees only the difference of the angles."""
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, 8)).astype(np.float32)                   # [D] each
    here = float(rotated(q, m, theta) @ rotated(k, n, theta))
    there = float(rotated(q, m + shift, theta) @ rotated(k, n + shift, theta))
    assert math.isclose(here, there, rel_tol=1e-4, abs_tol=1e-4)


def silu64(x):
    return x / (1.0 + np.exp(-x))


def gelu_tanh64(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


@functools.lru_cache(maxsize=None)
def ffn_params(seed: int):
    config = ModelConfig(vocab_size=8, n_ctx=8, d_model=8, n_heads=2, n_layers=1, arch="llama")
    return random_model(config, seed).params.blocks[0].ffn


@given(seed=st.integers(0, 5), data_seed=SEEDS, scale=st.sampled_from([0.1, 1.0, 10.0]))
def test_swiglu_and_geglu_equal_their_formulas_in_float64(seed, data_seed, scale):
    """SwiGLU(x) = (SiLU(x W_gate) ⊙ x W_up) W_down with SiLU(u) = u / (1 + e⁻ᵘ); GeGLU the same
    with GELU's tanh form in place of SiLU."""
    p = ffn_params(seed)
    x = (scale * np.random.default_rng(data_seed).standard_normal((1, 3, 8))).astype(np.float32)
    x64, g, u, d = (a.astype(np.float64) for a in (x, p.w_gate, p.w_up, p.w_down))
    for ours, act in ((swiglu, silu64), (geglu, gelu_tanh64)):
        want = (act(x64 @ g) * (x64 @ u)) @ d                               # [1, 3, C]
        np.testing.assert_allclose(ours(x, p), want, rtol=1e-4, atol=1e-4 * scale)


# ---- the block, against x + A(N₁x) + F(N₂(x + A(N₁x))) in float64 ---------------------------
BASE = dict(vocab_size=8, n_ctx=8, d_model=8, n_heads=2, n_kv_heads=1, n_layers=1)
PLACEMENTS = {"pre-norm (GPT-2)": dict(arch="gpt2"), "pre-norm (Llama)": dict(arch="llama"),
              "post-norms (OLMo 2)": dict(arch="llama", post_norms=True),
              "sandwich (Gemma)": dict(arch="llama", sandwich_norms=True, ffn="geglu")}


def f64(a):
    return None if a is None else a.astype(np.float64)


def norm64(x, p, kind, eps):
    if kind == "layernorm":
        mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * f64(p.weight) + f64(p.bias)
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * f64(p.weight)


def affine(x, w, b):
    return x @ f64(w) + (0.0 if b is None else f64(b))


def attention64(x, p, c):
    """softmax(q kᵀ / √D, causal) v per head, KV head h // G for query head h; no RoPE."""
    T, D, G = x.shape[0], c.d_model // c.n_heads, c.n_heads // c.n_kv_heads
    q = affine(x, p.wq, p.bq).reshape(T, c.n_heads, D)
    k = affine(x, p.wk, p.bk).reshape(T, c.n_kv_heads, D)
    v = affine(x, p.wv, p.bv).reshape(T, c.n_kv_heads, D)
    heads = []
    for h in range(c.n_heads):
        s = q[:, h] @ k[:, h // G].T / math.sqrt(D)                          # [T, T]
        s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
        w = np.exp(s - s.max(-1, keepdims=True))
        heads.append((w / w.sum(-1, keepdims=True)) @ v[:, h // G])         # [T, D]
    return affine(np.concatenate(heads, axis=-1), p.wo, p.bo)              # [T, C]


def ffn64(x, p, kind):
    if kind == "gelu_mlp":
        return affine(gelu_tanh64(affine(x, p.w_up, p.b_up)), p.w_down, p.b_down)
    act = silu64 if kind == "swiglu" else gelu_tanh64
    return (act(x @ f64(p.w_gate)) * (x @ f64(p.w_up))) @ f64(p.w_down)


def block64(x, p, c):
    """The three placements, as model/block.py's docstring writes them."""
    N = functools.partial(norm64, kind=c.norm, eps=c.norm_eps)
    A, F = (lambda h: attention64(h, p.attn, c)), (lambda h: ffn64(h, p.ffn, c.ffn))
    if c.post_norms:                                   # x + N₁(A(x)), then + N₂(F(·))
        x = x + N(A(x), p.norm1)
        return x + N(F(x), p.norm2)
    if c.sandwich_norms:                               # x + N(A(N₁x)), then + N(F(N₂ ·))
        x = x + N(A(N(x, p.norm1)), p.post_attn_norm)
        return x + N(F(N(x, p.norm2)), p.post_ffn_norm)
    x = x + A(N(x, p.norm1))                           # x + A(N₁x), then + F(N₂ ·)
    return x + F(N(x, p.norm2))


@functools.lru_cache(maxsize=None)
def config_and_block(placement: str, seed: int):
    config = ModelConfig(**BASE, **PLACEMENTS[placement])
    return config, random_model(config, seed).params.blocks[0]


@given(placement=st.sampled_from(sorted(PLACEMENTS)), seed=st.integers(0, 3), data_seed=SEEDS,
       T=st.integers(1, 5))
def test_a_block_equals_its_placements_formula_in_float64(placement, seed, data_seed, T):
    config, p = config_and_block(placement, seed)
    x = np.random.default_rng(data_seed).standard_normal((1, T, 8)).astype(np.float32)
    out = block(x, p, Layer(config, causal_mask(T, T)[None]))               # [1, T, C]
    np.testing.assert_allclose(out[0], block64(x[0].astype(np.float64), p, config),
                               rtol=2e-4, atol=2e-4)


@given(a=st.floats(1.0, 1e15), v0=st.floats(-10, 10), v1=st.floats(-10, 10))
@example(a=1e5, v0=0.0, v1=1.0)                # q=[1e5, 1], k=[-1e5, 1]: score -1e10 < -1e9
def test_a_masked_key_gets_exactly_zero_weight_however_extreme_the_visible_scores(a, v0, v1):
    """q = [a, 1], k = [−a, 1] (D = 1): query 0 sees key 0 alone, with the score −a², far below
    any finite stand-in for −∞ (−1e9 would give the masked key 1 all of query 0's weight)."""
    assume(v0 != v1)
    q = np.array([a, 1.0], np.float32).reshape(1, 1, 2, 1)                 # [B, H, T, D]
    k = np.array([-a, 1.0], np.float32).reshape(1, 1, 2, 1)                # [B, KV, S, D]
    v = np.array([v0, v1], np.float32).reshape(1, 1, 2, 1)
    out, weights = scaled_dot_product(q, k, v, causal_mask(2, 2)[None])
    assert weights[0, 0, 0].tolist() == [1.0, 0.0]                          # exactly
    assert out[0, 0, 0, 0] == np.float32(v0)
