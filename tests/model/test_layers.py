"""The layer functions on their own: formulas, blockwise attention, inputs left untouched."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from minillm import GPT, KVCache
from minillm.decoding.batch import padded_inputs
from minillm.model.attention import causal_mask, query_blocks, scaled_dot_product
from minillm.model.ffn import gelu_tanh, gelu_tanh_fast, silu, silu_fast
from minillm.model.linear import linear
from minillm.model.norm import layer_norm, layer_norm_fast, mean_last, rms_norm, rms_norm_fast
from tests.model.strategies import random_model, tiny_configs


@st.composite
def attention_inputs(draw):
    """q [B, H, T, D], k and v [B, K, S, D] with S = cached + T, and a causal mask that may also
    hide left padding (every query still sees itself, as the model guarantees)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    B, K, G, D = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 3)), 4
    T, cached = draw(st.integers(1, 12)), draw(st.integers(0, 6))
    S = cached + T
    q = rng.standard_normal((B, K * G, T, D), dtype=np.float32) * 2
    k, v = (rng.standard_normal((B, K, S, D), dtype=np.float32) * 2 for _ in range(2))
    mask = np.repeat(causal_mask(T, S)[None], B, axis=0)                 # [B, T, S]
    pad = draw(st.integers(0, S - 1))
    mask[:, :, :pad] = False                                            # left padding hidden
    mask[:, np.arange(T), cached + np.arange(T)] = True                  # each query sees itself
    return q, k, v, mask, draw(st.integers(1, T + 1))


@given(attention_inputs())
def test_query_blocks_equal_the_full_formula(case):
    """Equal up to float32 summation order: the softmax sums and the products with v add the
    same terms in other groupings, so the tolerance is relative to the scale of v (the output is
    an average of v's rows, possibly with cancellation)."""
    q, k, v, mask, block = case
    full, _ = scaled_dot_product(q, k, v, mask)
    np.testing.assert_allclose(query_blocks(q, k, v, mask, block), full, rtol=1e-5,
                               atol=1e-6 * np.abs(v).max())


@given(tiny_configs(), st.integers(0, 100), st.data())
def test_model_with_query_blocks_equals_model_with_full_attention(config, seed, data):
    """Asking for the weights forces the full formula; not asking allows blocks: same logits,
    with and without a cache and with a padded batch."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("minillm.model.attention.QUERY_BLOCK", data.draw(st.integers(1, 4)))
        check_blocks_equal_full(config, seed, data)


def check_blocks_equal_full(config, seed, data):
    model = random_model(config, seed)
    B, T = data.draw(st.integers(1, 3)), data.draw(st.integers(2, config.n_ctx))
    ids = np.array(data.draw(st.lists(st.integers(0, config.vocab_size - 1),
                                      min_size=B * T, max_size=B * T))).reshape(B, T)
    valid = np.ones((B, T), dtype=bool)
    valid[0, :data.draw(st.integers(0, T - 1))] = False                  # row 0 left-padded
    positions, mask = padded_inputs(valid, T)
    full, _ = model(ids, positions=positions, mask=mask, return_weights=True)
    np.testing.assert_allclose(model(ids, positions=positions, mask=mask), full, rtol=1e-5, atol=1e-5)
    split = data.draw(st.integers(1, T - 1))
    cache = KVCache(config, batch_size=B, capacity=T)
    cache.valid[:, :T] = valid
    positions, mask = padded_inputs(valid[:, :split], split)            # the first part
    model(ids[:, :split], cache=cache, positions=positions, mask=mask)
    positions, mask = padded_inputs(valid, T - split)                   # the rest, after the cache
    rest = model(ids[:, split:], cache=cache, positions=positions, mask=mask)
    np.testing.assert_allclose(rest, full[:, split:], rtol=1e-5, atol=1e-5)


@given(attention_inputs())
def test_query_head_h_uses_kv_head_h_over_g(case):
    """Grouped-query attention, written head by head with the explicit index kv = h // G."""
    q, k, v, mask, _ = case
    H, K = q.shape[1], k.shape[1]
    G = H // K
    want = np.empty_like(q)                                             # [B, H, T, D]
    for h in range(H):
        scores = q[:, h] @ k[:, h // G].transpose(0, 2, 1) / np.sqrt(np.float32(q.shape[-1]))
        scores = np.where(mask, scores, -np.inf)                        # [B, T, S]
        w = np.exp(scores - scores.max(-1, keepdims=True))
        want[:, h] = (w / w.sum(-1, keepdims=True)) @ v[:, h // G]      # [B, T, D]
    np.testing.assert_allclose(scaled_dot_product(q, k, v, mask)[0], want, rtol=1e-5,
                               atol=1e-6 * np.abs(v).max())


@given(st.integers(0, 2**32 - 1), st.lists(st.integers(1, 4), min_size=1, max_size=3),
       st.booleans())
def test_linear_is_the_product_per_row(seed, lead, bias):
    """One flattened product equals x @ w + b row by row (up to BLAS summation order)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((*lead, 6), dtype=np.float32)
    w = rng.standard_normal((6, 5), dtype=np.float32)
    b = rng.standard_normal(5, dtype=np.float32) if bias else None
    want = x @ w + (0 if b is None else b)
    got = linear(x, w, b)
    assert got.shape == (*lead, 5) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


finite = st.floats(-30, 30, width=32)


@given(st.lists(finite, min_size=1, max_size=50))
def test_gelu_tanh_is_the_textbook_formula(xs):
    """½x(1 + tanh(√(2/π)(x + 0.044715x³))) in float64 vs both float32 forms."""
    x = np.array(xs, dtype=np.float32)
    x64 = x.astype(np.float64)
    want = 0.5 * x64 * (1 + np.tanh(math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64**3)))
    for form in (gelu_tanh, gelu_tanh_fast):
        got = form(x)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@given(st.lists(finite, min_size=2, max_size=50))
def test_fast_forms_equal_the_one_line_formulas(xs):
    """The in-place forms the model uses reorder a few float32 operations (x·(a + b·x²) for
    a·x + b·x³, one reciprocal for a division): equal within rtol 1e-5 (a few float32 ulps,
    ~6e-8 each) plus atol 1e-6 for the values near 0."""
    x = np.array(xs, dtype=np.float32).reshape(1, -1)
    w = np.linspace(0.5, 1.5, x.size, dtype=np.float32)
    b = np.linspace(-1, 1, x.size, dtype=np.float32)
    for fast, formula in [(gelu_tanh_fast(x), gelu_tanh(x)), (silu_fast(x), silu(x)),
                          (rms_norm_fast(x, w, 1e-6), rms_norm(x, w, 1e-6))]:
        assert fast.dtype == formula.dtype == np.float32
        np.testing.assert_allclose(fast, formula, rtol=1e-5, atol=1e-6)
    # LayerNorm: both centre with the same float32 mean; what differs is the variance's rounding,
    # relative to the spread of x (ill-conditioned when all values are nearly equal).
    spread = 2.0**-20 * np.abs(x).max() / np.sqrt(x.astype(np.float64).var() + 1e-5)
    np.testing.assert_allclose(layer_norm_fast(x, w, b, 1e-5), layer_norm(x, w, b, 1e-5),
                               rtol=1e-5, atol=1e-5 + spread)


@given(st.lists(finite, min_size=1, max_size=60), st.integers(1, 3))
def test_mean_last_is_np_mean_exactly(xs, rows):
    """The norms' mean without np.mean's wrapper: the same float32 sum and division, bit for bit."""
    x = np.tile(np.array(xs, dtype=np.float32), (rows, 1))[:, None]       # [rows, 1, C]
    got = mean_last(x)
    assert got.dtype == np.float32 and got.shape == (rows, 1, 1)
    np.testing.assert_array_equal(got, x.mean(axis=-1, keepdims=True))


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
    for ln_form, rms_form in ((layer_norm, rms_norm), (layer_norm_fast, rms_norm_fast)):
        np.testing.assert_allclose(ln_form(x, w, b, 1e-5), ln, rtol=1e-4, atol=1e-4 + mean_rounding)
        np.testing.assert_allclose(rms_form(x, w, 1e-6), rms, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("layer", [
    gelu_tanh, silu, gelu_tanh_fast, silu_fast,
    lambda x: layer_norm(x, np.ones(3, np.float32), np.zeros(3, np.float32), 1e-5),
    lambda x: rms_norm(x, np.ones(3, np.float32), 1e-6),
    lambda x: layer_norm_fast(x, np.ones(3, np.float32), np.zeros(3, np.float32), 1e-5),
    lambda x: rms_norm_fast(x, np.ones(3, np.float32), 1e-6)])
def test_layers_never_modify_their_input(layer):
    """They compute in place on their own temporaries, never on the caller's array (training
    keeps the input for the backward pass)."""
    x = np.arange(-6, 6, dtype=np.float32).reshape(4, 3) / 2
    before = x.copy()
    layer(x)
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize("T", [3, 70])        # below and above attention.QUERY_BLOCK
def test_attention_without_return_weights_returned_them_for_short_inputs(T):
    from minillm.config import ModelConfig
    from minillm.model.attention import attention
    config = ModelConfig(vocab_size=20, n_ctx=80, d_model=8, n_heads=2, n_layers=1)
    p = GPT(config, seed=0).params.blocks[0].attn
    x = np.random.default_rng(0).standard_normal((1, T, 8), dtype=np.float32)   # [1, T, C]
    out, weights = attention(x, p, config, causal_mask(T, T)[None], return_weights=False)
    assert out.shape == (1, T, 8) and weights is None
    assert attention(x, p, config, causal_mask(T, T)[None])[1].shape == (1, 2, T, T)


def test_growing_rope_table_gave_a_wrong_row_for_a_negative_position():
    from minillm.model.rope import rope_tables
    cos, _ = rope_tables(1000, 8, 10000.0, grow=True)
    cos[np.array([3])]                                   # only the first rows exist so far
    with pytest.raises(IndexError, match=">= 0"):
        cos[np.array([0, -1])]
