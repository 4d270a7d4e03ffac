"""The engine's forms (engine/ops.py, engine/layers.py) equal model/'s definitions."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from minillm import KVCache
from minillm.decoding.batch import padded_inputs
from minillm.engine.layers import query_blocks
from minillm.engine.ops import (gelu_tanh_fast, layer_norm_fast, linear, mean_last, rms_norm_fast,
                                silu_fast, split_columns)
from minillm.model.attention import scaled_dot_product
from minillm.model.linear import linear as model_linear
from minillm.model.ffn import gelu_tanh, silu
from minillm.model.norm import layer_norm, rms_norm
from tests.model.strategies import attention_inputs, random_model, tiny_configs


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
        mp.setattr("minillm.engine.layers.QUERY_BLOCK", data.draw(st.integers(1, 4)))
        check_blocks_equal_full(config, seed, data)


def check_blocks_equal_full(config, seed, data):
    model = random_model(config, seed, "rows")
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


@given(st.integers(0, 2**32 - 1), st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_the_flattened_product_is_the_models_linear(seed, shape, data):
    """One [M, C] product (by an array stored [C, N] or by rows) equals model.linear's x @ w + b up to
    BLAS summation order (rtol 1e-5)."""
    rng = np.random.default_rng(seed)
    C, N = data.draw(st.integers(1, 40)), data.draw(st.integers(1, 70))
    x = rng.standard_normal((*shape, C), dtype=np.float32)
    w = rng.standard_normal((C, N), dtype=np.float32)
    b = rng.standard_normal(N, dtype=np.float32) if data.draw(st.booleans()) else None
    want = model_linear(x, w, b)
    for weight in (w, np.ascontiguousarray(w.T).T):
        got = linear(x, weight, b)
        assert got.shape == want.shape and got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * C)


finite = st.floats(-30, 30, width=32)


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




def test_split_columns_gives_each_product_with_its_bias():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    ws = [rng.standard_normal((4, n)).astype(np.float32) for n in (5, 2, 2)]
    bs = [rng.standard_normal(5).astype(np.float32), None, rng.standard_normal(2).astype(np.float32)]
    parts = split_columns(linear(x, np.concatenate(ws, axis=1)), (5, 2, 2), bs)
    for part, w, b in zip(parts, ws, bs):
        np.testing.assert_allclose(part, linear(x, w, b), rtol=1e-6, atol=1e-6)
