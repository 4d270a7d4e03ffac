"""The Llama family's backward vs central finite differences (float64, tiny random shapes): RMSNorm,
RoPE, SiLU and SwiGLU, grouped-query attention with RoPE (G ≥ 2, odd lengths, left padding) and
the whole model (untied head, Qwen2's Q, K, V biases).

Every layer test builds L = Σ y ⊙ R for a random R, so ∂L/∂y = R is what the backward receives.
Tolerance: relative error ≤ 1e-5 (see gradcheck.py).
"""
import copy

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from minillm import GPT
from minillm.config import ModelConfig
from minillm.model.attention import causal_mask
from minillm.model.ffn import silu, swiglu
from minillm.model.norm import rms_norm
from minillm.model.params import AttentionParams, FFNParams
from minillm.model.rope import apply_rope, rope_angles
from minillm.train.grad_attention import attention_backward, attention_forward
from minillm.train.grad_ffn import silu_backward, swiglu_backward, swiglu_forward
from minillm.train.grad_model import check_trainable, forward_with_cache, loss_and_grads
from minillm.train.grad_norm import rms_norm_backward
from minillm.train.grad_rope import rope_backward
from tests.model.strategies import random_model
from tests.train.gradcheck import check
from tests.train.test_model_gradients import check_model_gradients

seeds = st.integers(0, 2**31 - 1)
odd_lengths = st.sampled_from([1, 3, 5, 7])


@given(seeds, st.integers(1, 3), odd_lengths, st.integers(1, 8))
def test_rms_norm_backward_matches_finite_differences(seed, B, T, C):
    rng = np.random.default_rng(seed)
    x, w, R = rng.normal(size=(B, T, C)), rng.normal(size=C), rng.normal(size=(B, T, C))
    dx, dw = rms_norm_backward(R, x, w, 1e-6)
    check(lambda: float((rms_norm(x, w, 1e-6) * R).sum()), {"x": x, "w": w}, {"x": dx, "w": dw}, rng)


@given(seeds, st.integers(1, 2), st.integers(1, 3), odd_lengths, st.sampled_from([2, 4, 8]),
       st.sampled_from([10.0, 1e4, 1e6]))
def test_rope_backward_is_the_rotation_by_minus_theta(seed, B, heads, T, D, theta):
    rng = np.random.default_rng(seed)
    cos, sin = rope_angles(rng.integers(0, 50, (B, T)), D, theta)        # [B, T, D/2], float32
    cos, sin = cos[:, None].astype(np.float64), sin[:, None].astype(np.float64)
    x, R = rng.normal(size=(B, heads, T, D)), rng.normal(size=(B, heads, T, D))
    dx = rope_backward(R, cos, sin)
    check(lambda: float((apply_rope(x, cos, sin) * R).sum()), {"x": x}, {"x": dx}, rng)
    np.testing.assert_allclose(apply_rope(dx, cos, sin), R, atol=1e-12)   # R(θ) R(−θ) = I


@given(seeds, st.integers(1, 20))
def test_silu_backward_matches_finite_differences(seed, n):
    rng = np.random.default_rng(seed)
    a, R = rng.uniform(-8, 8, size=n), rng.normal(size=n)
    check(lambda: float((silu(a) * R).sum()), {"a": a}, {"a": silu_backward(R, a)}, rng)


@given(seeds, st.integers(1, 3), odd_lengths, st.sampled_from([2, 4]), st.sampled_from([3, 8]))
def test_swiglu_backward_matches_finite_differences(seed, B, T, C, F):
    rng = np.random.default_rng(seed)
    p = FFNParams(w_up=rng.normal(size=(C, F)), w_down=rng.normal(size=(F, C)),
                  w_gate=rng.normal(size=(C, F)))
    x, R = rng.normal(size=(B, T, C)), rng.normal(size=(B, T, C))
    y, cache = swiglu_forward(x, p)
    np.testing.assert_allclose(y, swiglu(x, p), rtol=1e-12, atol=1e-12)   # the model's forward
    dx, grads = swiglu_backward(R, cache, p)
    arrays = {"x": x, **{k: getattr(p, k) for k in grads}}
    check(lambda: float((swiglu_forward(x, p)[0] * R).sum()), arrays, {"x": dx, **grads}, rng)


def padded_causal_mask(B: int, T: int, pads) -> np.ndarray:
    """[B, T, T] bool: causal, and row b's first pads[b] keys hidden (left padding); a padding
    query still sees itself, as the model's padded batches do (its row of weights stays finite)."""
    mask = np.repeat(causal_mask(T, T)[None], B, axis=0)                 # [B, T, T]
    for b, pad in enumerate(pads):
        mask[b, :, :pad] = False
    mask[:, np.arange(T), np.arange(T)] = True
    return mask


def gqa_layer(rng: np.random.Generator, KV: int, G: int, D: int, biases: bool):
    """A config with KV · G query heads on KV KV heads of width D, and random float64 weights
    (Q, K, V biases when ``biases``) -> (config, AttentionParams, {name: shape})."""
    H = KV * G
    C = H * D
    config = ModelConfig(vocab_size=5, n_ctx=8, d_model=C, n_heads=H, n_kv_heads=KV, n_layers=1,
                         arch="llama", attn_bias=biases)
    shapes = {"wq": (C, C), "wk": (C, KV * D), "wv": (C, KV * D), "wo": (C, C)}
    if biases:
        shapes |= {"bq": (C,), "bk": (KV * D,), "bv": (KV * D,)}
    return config, AttentionParams(**{k: rng.normal(size=s) for k, s in shapes.items()}), shapes


def rope_for(B: int, T: int, D: int) -> tuple[np.ndarray, np.ndarray]:
    """(cos, sin) [B, 1, T, D/2] float64 for positions 0 … T − 1 (theta 100: large angles)."""
    cos, sin = rope_angles(np.broadcast_to(np.arange(T), (B, T)), D, 100.0)
    return cos[:, None].astype(np.float64), sin[:, None].astype(np.float64)


@given(seeds, st.integers(1, 2), st.integers(1, 7), st.sampled_from([1, 2]), st.sampled_from([2, 3]),
       st.sampled_from([2, 4]), st.booleans(), st.booleans(), st.data())
def test_grouped_query_attention_backward_matches_finite_differences(seed, B, T, KV, G, D, biases,
                                                                     rope, data):
    """G ≥ 2 query heads per KV head (the KV gradients summed over them), RoPE on or off, Q, K, V
    biases (Qwen2) or none (Llama), and left padding: masked keys get exactly zero weight."""
    rng = np.random.default_rng(seed)
    config, p, shapes = gqa_layer(rng, KV, G, D, biases)
    pads = [data.draw(st.integers(0, T - 1)) for _ in range(B)]
    mask = padded_causal_mask(B, T, pads)
    angles = rope_for(B, T, D) if rope else None
    x, R = rng.normal(size=(B, T, config.d_model)), rng.normal(size=(B, T, config.d_model))
    _, cache = attention_forward(x, p, config, mask, angles)
    dx, grads = attention_backward(R, cache, p, config)
    assert set(grads) == set(shapes)
    arrays = {"x": x, **{k: getattr(p, k) for k in grads}}
    check(lambda: float((attention_forward(x, p, config, mask, angles)[0] * R).sum()), arrays,
          {"x": dx, **grads}, rng)


@given(seeds, st.integers(1, 3), st.integers(2, 7), st.sampled_from([1, 2]), st.sampled_from([2, 3]),
       st.booleans(), st.data())
def test_left_padding_gets_no_gradient_from_the_real_tokens(seed, B, T, KV, G, biases, data):
    """With the loss on the real (unpadded) queries only, the padded positions' inputs get exactly
    zero gradient: no real token attends to them, through any head or its KV head."""
    pads = [data.draw(st.integers(0, T - 1)) for _ in range(B)]
    assume(max(pads) > 0)                             # at least one row is padded
    rng = np.random.default_rng(seed)
    config, p, _ = gqa_layer(rng, KV, G, 4, biases)
    x, R = rng.normal(size=(B, T, config.d_model)), rng.normal(size=(B, T, config.d_model))
    for b, pad in enumerate(pads):
        R[b, :pad] = 0                                # padded queries carry no loss
    _, cache = attention_forward(x, p, config, padded_causal_mask(B, T, pads), rope_for(B, T, 4))
    dx, _ = attention_backward(R, cache, p, config)
    for b, pad in enumerate(pads):
        assert np.all(dx[b, :pad] == 0)
        assert np.any(dx[b, pad:] != 0)                # the real tokens still do


@st.composite
def llama_configs(draw):
    """Tiny Llama / Qwen2 configs with G = n_heads / n_kv_heads ≥ 2."""
    KV, G, D = draw(st.sampled_from([1, 2])), draw(st.sampled_from([2, 3])), draw(st.sampled_from([2, 4]))
    return ModelConfig(vocab_size=draw(st.integers(5, 30)), n_ctx=16, d_model=KV * G * D,
                       n_heads=KV * G, n_kv_heads=KV, n_layers=draw(st.integers(1, 2)),
                       d_ff=draw(st.sampled_from([6, 8])), arch="llama",
                       attn_bias=draw(st.booleans()), tie_embeddings=draw(st.booleans()),
                       rope_theta=draw(st.sampled_from([100.0, 1e4])), norm_eps=1e-6)


@given(llama_configs(), seeds, st.integers(1, 2), odd_lengths)
def test_llama_model_gradients_match_finite_differences(config, seed, B, T):
    """Embedding, every block (RMSNorm, grouped-query attention with RoPE, SwiGLU), the final
    norm, the tied or untied head and the cross-entropy: relative error ≤ 1e-5 in float64."""
    check_model_gradients(config, seed % 1000, B, T, k=5)


@given(llama_configs(), st.integers(0, 1000), st.integers(1, 3))
def test_llama_training_forward_equals_inference_forward(config, seed, B):
    """forward_with_cache and GPT.__call__ give the same float32 logits up to float32 rounding
    (|Δ| ≤ 1e-4 · max(1, max |logits|), as for GPT-2), and the gradients stay float32."""
    model = random_model(config, seed)
    ids = np.random.default_rng(seed).integers(0, config.vocab_size, (B, 7))
    logits, _ = forward_with_cache(model.params, config, ids)
    want = model(ids)
    np.testing.assert_allclose(logits, want, rtol=0, atol=1e-4 * max(1.0, float(np.abs(want).max())))
    loss, grads = loss_and_grads(model.params, config, ids[:, :-1], ids[:, 1:])
    assert abs(loss - model.loss(ids)) < 1e-5 * max(1.0, loss)
    assert all(g.dtype == np.float32 for g in grads.values())


def test_a_switch_without_a_backward_is_refused():
    config = copy.copy(ModelConfig(vocab_size=11, n_ctx=8, d_model=8, n_heads=2, n_layers=1,
                                   arch="llama"))
    config.norm = "qk_rmsnorm"                      # a setting no backward is written for
    with pytest.raises(ValueError, match="no backward for"):
        check_trainable(config)
    with pytest.raises(ValueError, match="no backward for"):
        loss_and_grads(GPT(ModelConfig(vocab_size=11, n_ctx=8, d_model=8, n_heads=2, n_layers=1,
                                       arch="llama")).params, config, np.zeros((1, 4), np.int64),
                       np.zeros((1, 4), np.int64))


def test_training_sees_llama3_rope_scaling():
    """Llama 3.x's scaled RoPE frequencies are the training forward's too: its logits equal the
    model's (a training forward with plain RoPE would differ at every position > 0)."""
    config = ModelConfig(vocab_size=13, n_ctx=64, d_model=8, n_heads=2, n_kv_heads=1, n_layers=1,
                         d_ff=8, arch="llama", rope_theta=1e4,
                         rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                       "high_freq_factor": 4.0,
                                       "original_max_position_embeddings": 8})
    model = random_model(config, 0)
    ids = np.random.default_rng(0).integers(0, config.vocab_size, (1, 40))
    logits, _ = forward_with_cache(model.params, config, ids)
    want = model(ids)
    np.testing.assert_allclose(logits, want, rtol=0, atol=1e-4 * max(1.0, float(np.abs(want).max())))


def test_training_refuses_qwen3_qk_norm():
    """Qwen3's per-head q/k norms have no backward yet: refused, never trained as if absent."""
    config = ModelConfig(vocab_size=11, n_ctx=8, d_model=8, n_heads=2, n_layers=1, arch="llama",
                         qk_norm=True)
    with pytest.raises(ValueError, match="no backward for.*qk_norm"):
        check_trainable(config)
