"""The layer functions on their own: formulas, blockwise attention, inputs left untouched."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from minillm import GPT, KVCache
from minillm.model.attention import causal_mask, query_blocks, scaled_dot_product
from minillm.model.ffn import gelu_tanh, silu
from minillm.model.norm import layer_norm, rms_norm
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
    mask = np.ones((B, T), dtype=bool)
    mask[0, :data.draw(st.integers(0, T - 1))] = False                   # row 0 left-padded
    full, _ = model(ids, attention_mask=mask, return_attention=True)
    np.testing.assert_allclose(model(ids, attention_mask=mask), full, rtol=1e-5, atol=1e-5)
    split = data.draw(st.integers(1, T - 1))
    cache = KVCache(config, batch_size=B, capacity=T)
    model(ids[:, :split], cache=cache, attention_mask=mask[:, :split])
    rest = model(ids[:, split:], cache=cache, attention_mask=mask[:, split:])
    np.testing.assert_allclose(rest, full[:, split:], rtol=1e-5, atol=1e-5)


finite = st.floats(-30, 30, width=32)


@given(st.lists(finite, min_size=1, max_size=50))
def test_gelu_tanh_is_the_textbook_formula(xs):
    """½x(1 + tanh(√(2/π)(x + 0.044715x³))) in float64 vs the in-place float32 computation."""
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
    """They compute in place on their own temporaries, never on the caller's array (training
    keeps the input for the backward pass)."""
    x = np.arange(-6, 6, dtype=np.float32).reshape(4, 3) / 2
    before = x.copy()
    layer(x)
    np.testing.assert_array_equal(x, before)
