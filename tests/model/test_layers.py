"""The model's layer functions on their own: formulas, per-head attention, inputs left untouched."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from minillm import GPT
from minillm.model.attention import attend_per_head, attention, causal_mask, scaled_dot_product
from minillm.model.ffn import gelu_tanh, silu
from minillm.hooks import Layer
from minillm.model.linear import linear
from minillm.model.norm import layer_norm, rms_norm
from minillm.model.rope import rope_angles
from tests.model.strategies import attention_inputs

finite = st.floats(-30, 30, width=32)


@given(attention_inputs())
def test_query_head_h_uses_kv_head_h_over_g(case):
    """Grouped-query attention, written head by head with the explicit index kv = h // G, against
    float64; the per-head definition and the reshape form agree with it and with each other up to
    float32 rounding (relative to the scale of v: the output averages v's rows)."""
    q, k, v, mask, _ = case
    H, K = q.shape[1], k.shape[1]
    G = H // K
    want = np.empty(q.shape)                                            # [B, H, T, D]
    for h in range(H):
        scores = q[:, h].astype(np.float64) @ k[:, h // G].transpose(0, 2, 1) / math.sqrt(q.shape[-1])
        scores = np.where(mask, scores, -np.inf)                        # [B, T, S]
        w = np.exp(scores - scores.max(-1, keepdims=True))
        want[:, h] = (w / w.sum(-1, keepdims=True)) @ v[:, h // G]      # [B, T, D]
    per_head, w_head = attend_per_head(q, k, v, mask)
    reshaped, w_reshaped = scaled_dot_product(q, k, v, mask)
    assert per_head.dtype == reshaped.dtype == np.float32
    for got in (per_head, reshaped):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * np.abs(v).max())
    np.testing.assert_allclose(w_reshaped, w_head, rtol=1e-5, atol=1e-7)
    assert not w_head[np.broadcast_to(~mask[:, None], w_head.shape)].any()   # exactly 0


@given(st.integers(0, 2**32 - 1), st.lists(st.integers(1, 4), min_size=1, max_size=3),
       st.booleans())
def test_linear_is_x_times_w_plus_b(seed, lead, bias):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((*lead, 6), dtype=np.float32)
    w = rng.standard_normal((6, 5), dtype=np.float32)
    b = rng.standard_normal(5, dtype=np.float32) if bias else None
    got = linear(x, w, b)
    assert got.shape == (*lead, 5) and got.dtype == np.float32
    want = x.astype(np.float64) @ w + (0 if b is None else b)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@given(st.lists(finite, min_size=1, max_size=50))
def test_gelu_tanh_is_the_textbook_formula(xs):
    """½x(1 + tanh(√(2/π)(x + 0.044715x³))) in float64 vs the float32 form."""
    x = np.array(xs, dtype=np.float32)
    x64 = x.astype(np.float64)
    want = 0.5 * x64 * (1 + np.tanh(math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64**3)))
    got = gelu_tanh(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@given(st.lists(finite, min_size=2, max_size=50))
def test_norms_are_their_formulas(xs):
    """Against float64. subtle: LayerNorm of nearly equal values is ill-conditioned: the float32
    mean's rounding (≤ 2⁻²⁴·max|x| per step) is divided by √(var + eps), as in any float32
    implementation (torch's too), so the tolerance grows by that amount."""
    x = np.array(xs, dtype=np.float32)
    w = np.linspace(0.5, 1.5, x.size, dtype=np.float32)
    b = np.linspace(-1, 1, x.size, dtype=np.float32)
    x64 = x.astype(np.float64)
    ln = (x64 - x64.mean()) / np.sqrt(x64.var() + 1e-5) * w + b
    rms = x64 / np.sqrt((x64**2).mean() + 1e-6) * w
    mean_rounding = 8 * 2.0**-24 * np.abs(x64).max() * 1.5 / np.sqrt(x64.var() + 1e-5)
    np.testing.assert_allclose(layer_norm(x, w, b, 1e-5), ln, rtol=1e-4, atol=1e-4 + mean_rounding)
    np.testing.assert_allclose(rms_norm(x, w, 1e-6), rms, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("layer", [
    gelu_tanh, silu,
    lambda x: layer_norm(x, np.ones(3, np.float32), np.zeros(3, np.float32), 1e-5),
    lambda x: rms_norm(x, np.ones(3, np.float32), 1e-6)])
def test_layers_never_modify_their_input(layer):
    x = np.arange(-6, 6, dtype=np.float32).reshape(4, 3) / 2
    before = x.copy()
    layer(x)
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize("T", [3, 70])
def test_attention_and_block_return_their_output_and_the_model_its_weights_when_asked(T):
    """Regression: attention() returned its weights unless told not to, while GPT.__call__ (and
    block) returned them only when asked. Now attention and block return their output only
    (the weights pass the hook point ``attn.hook_pattern``), and the model returns the weights
    when asked, the very arrays that hook point sees."""
    from minillm.config import ModelConfig
    from minillm.model.block import block
    config = ModelConfig(vocab_size=20, n_ctx=80, d_model=8, n_heads=2, n_layers=1)
    params = GPT(config, seed=0).params
    x = np.random.default_rng(0).standard_normal((1, T, 8), dtype=np.float32)   # [1, T, C]
    ctx = Layer(config, causal_mask(T, T)[None])
    out = attention(x, params.blocks[0].attn, ctx)
    assert isinstance(out, np.ndarray) and out.shape == (1, T, 8)
    assert isinstance(block(x, params.blocks[0], ctx), np.ndarray)
    assert isinstance(GPT(config, params)(np.arange(T) % 20), np.ndarray)
    ids = np.arange(T)[None] % 20                                               # [1, T]
    logits, weights = GPT(config, params)(ids, return_weights=True)
    _, acts = GPT(config, params).run_with_cache(ids, names=["blocks.0.attn.hook_pattern"])
    assert weights[0].shape == (1, 2, T, T)
    np.testing.assert_array_equal(weights[0], acts["blocks.0.attn.hook_pattern"])


@given(st.lists(st.integers(0, 5000), min_size=1, max_size=20), st.sampled_from([2, 8, 64]),
       st.sampled_from([10000.0, 100000.0]))
def test_rope_angles_are_the_rows_of_the_table(positions, D, theta):
    """The model computes cos/sin for the positions it is given; they are the table's rows, bit
    for bit (the same float64 products m·θ_i)."""
    cos, sin = rope_angles(np.arange(5001), D, theta)
    got_cos, got_sin = rope_angles(np.array(positions), D, theta)
    assert got_cos.dtype == np.float32 and got_cos.shape == (len(positions), D // 2)
    np.testing.assert_array_equal(got_cos, cos[positions])
    np.testing.assert_array_equal(got_sin, sin[positions])


@given(st.integers(1, 3), st.integers(1, 5), st.integers(2, 9), st.booleans(), st.integers(0, 2**32 - 1))
def test_embedding_is_a_row_lookup_plus_the_position_rows(B, T, V, learned, seed):
    """h[b, t] = wte[ids[b, t]] (+ wpe[positions[b, t]]): the one-hot product, without the
    product; ``wte`` and ``wpe`` are left untouched."""
    from minillm.model.embedding import embed
    rng = np.random.default_rng(seed)
    wte = rng.standard_normal((V, 4), dtype=np.float32)                    # [V, C]
    wpe = rng.standard_normal((8, 4), dtype=np.float32) if learned else None   # [n_ctx, C]
    ids, positions = rng.integers(0, V, (B, T)), rng.integers(0, 8, (B, T))   # [B, T]
    copies = wte.copy(), None if wpe is None else wpe.copy()
    h = embed(wte, ids, wpe, positions if learned else None)               # [B, T, C]
    want = np.eye(V, dtype=np.float32)[ids] @ wte                          # [B, T, C] one-hot form
    if learned:
        want = want + np.eye(8, dtype=np.float32)[positions] @ wpe
    assert h.shape == (B, T, 4) and h.dtype == np.float32
    np.testing.assert_allclose(h, want, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(wte, copies[0])
    if learned:
        np.testing.assert_array_equal(wpe, copies[1])


def test_attention_stores_its_keys_and_values_in_its_own_layer_of_the_cache():
    """attention(x, p, Layer(..., cache=cache, index=l)) writes this call's k, v into layer l of the cache
    (layer 0 by default) and leaves every other layer alone."""
    from minillm import KVCache
    from minillm.config import ModelConfig
    config = ModelConfig(vocab_size=10, n_ctx=8, d_model=8, n_heads=2, n_layers=3)
    attn = GPT(config, seed=0).params.blocks[0].attn
    x = np.random.default_rng(0).standard_normal((1, 4, 8), dtype=np.float32)   # [B, T, C]
    for layer in (None, 0, 2):
        cache = KVCache(config, batch_size=1, capacity=8)
        kw = {} if layer is None else {"index": layer}
        attention(x, attn, Layer(config, causal_mask(4, 4)[None], cache=cache, **kw))   # mask [1, T, S]
        written = [l for l in range(3) if cache.k[l].any() or cache.v[l].any()]
        assert written == [layer or 0]


def test_rope_angles_of_far_positions_are_computed_in_float64():
    """m·θ_i is formed in float64 and rounded once: at position 10⁶ a float32 product would be off
    by up to 0.03 rad (float32's spacing there is 0.0625), and a position past 2²⁴ is not even a
    float32; cos and sin stay within float32 rounding."""
    positions = np.array([[10**6, 2**25 + 1, 2**28 - 3]])
    cos, sin = rope_angles(positions, 8, 10000.0)
    inv = 10000.0 ** (-2.0 * np.arange(4) / 8)
    angles = positions[..., None].astype(np.float64) * inv
    np.testing.assert_allclose(cos, np.cos(angles), atol=2e-7)
    np.testing.assert_allclose(sin, np.sin(angles), atol=2e-7)
