"""The model takes positions and a mask explicitly; the defaults are the plain causal ones."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from minillm import GPT, KVCache
from minillm.decoding.batch import padded_inputs
from minillm.config import ModelConfig
from minillm.model.attention import causal_mask
from tests.model.strategies import random_model, tiny_configs


@given(tiny_configs(), st.integers(0, 100), st.integers(0, 3))
def test_default_positions_and_mask_are_the_causal_ones(config, seed, cached):
    """model(ids, cache=cache) == the same call with positions cached … cached + T − 1 and
    causal_mask(T, cached + T) given explicitly."""
    model = random_model(config, seed)
    T = config.n_ctx - cached
    ids = np.arange(cached + T)[None] % config.vocab_size            # [1, cached + T]
    outs = []
    for explicit in (False, True):
        cache = KVCache(config, capacity=config.n_ctx)
        if cached:
            model(ids[:, :cached], cache=cache)
        extra = dict(positions=np.arange(cached, cached + T)[None],
                     mask=causal_mask(T, cached + T)[None]) if explicit else {}
        outs.append(model(ids[:, cached:], cache=cache, **extra))
    np.testing.assert_array_equal(outs[0], outs[1])


@given(tiny_configs(), st.integers(0, 100), st.integers(1, 4))
def test_a_left_padded_row_equals_the_row_alone(config, seed, pad):
    """padded_inputs: positions count real tokens, padded keys are never seen."""
    model = random_model(config, seed)
    T = config.n_ctx
    ids = (np.arange(T) * 3 % config.vocab_size)[None]                 # [1, T]
    valid = np.arange(T)[None] >= pad                                # [1, T] `pad` slots of padding
    positions, mask = padded_inputs(valid, T)
    np.testing.assert_array_equal(positions[0, pad:], np.arange(T - pad))
    padded = model(ids, positions=positions, mask=mask)[0, pad:]
    np.testing.assert_allclose(padded, model(ids[0, pad:]), rtol=1e-5, atol=1e-5)


@pytest.fixture(scope="module")
def small():
    return GPT(ModelConfig(vocab_size=20, n_ctx=8, d_model=8, n_heads=2, n_layers=1))


@pytest.mark.parametrize("kwargs, message", [
    (dict(mask=np.ones((1, 3, 3), bool)), "later key"),
    (dict(mask=np.tril(np.ones((1, 3, 3), bool), k=-1)), "every key"),
    (dict(mask=np.ones((1, 3, 4), bool)), "mask must be bool of shape"),
    (dict(mask=causal_mask(3, 3).astype(int)), "mask must be bool"),
    (dict(positions=np.array([[0, 1, 8]])), r"\[0, n_ctx=8\)"),
    (dict(positions=np.array([[0, 1]])), "positions must be integers of shape"),
    (dict(positions=np.array([[0.0, 1.0, 2.0]])), "positions must be integers"),
])
def test_bad_positions_or_mask_are_clear_errors(small, kwargs, message):
    with pytest.raises(ValueError, match=message):
        small(np.array([[1, 2, 3]]), **kwargs)


@pytest.mark.parametrize("ids", [np.zeros((0, 3), int), np.zeros((2, 0), int), np.zeros(0, int)])
def test_an_empty_batch_is_a_clear_value_error(small, ids):
    for call in (small, small.loss):
        with pytest.raises(ValueError, match="token ids must have shape"):
            call(ids)


def test_a_padded_cache_needs_both_positions_and_mask(small):
    cache = KVCache(small.config, batch_size=2, capacity=6)
    cache.valid[0, :2] = False                                  # row 0: two padding slots
    positions, mask = padded_inputs(cache.valid[:, :4], 4)
    small(np.array([[0, 0, 1, 2], [3, 4, 5, 6]]), cache=cache, positions=positions, mask=mask)
    positions, mask = padded_inputs(cache.valid[:, :5], 1)
    for kwargs in (dict(mask=mask), dict(positions=positions), {}):
        with pytest.raises(ValueError, match="holds padding"):
            small(np.array([[7], [8]]), cache=cache, **kwargs)
    assert small(np.array([[7], [8]]), cache=cache, positions=positions, mask=mask).shape == (2, 1, 20)


@given(st.integers(1, 5), st.data())
def test_padding_anywhere_in_the_cache_needs_explicit_positions_and_mask(filled, data):
    """One padded slot among the cached positions, wherever it is (the first, the last, any row),
    and the default positions and mask — which would count it — are refused."""
    config = ModelConfig(vocab_size=10, n_ctx=8, d_model=8, n_heads=2, n_layers=1)
    model = GPT(config)
    cache = KVCache(config, batch_size=2, capacity=8)
    model(np.zeros((2, filled), np.int64), cache=cache)
    cache.valid[data.draw(st.integers(0, 1)), data.draw(st.integers(0, filled - 1))] = False
    with pytest.raises(ValueError, match="holds padding"):
        model(np.zeros((2, 1), np.int64), cache=cache)
    cache.valid[:, :filled] = True                                   # no padding: the defaults
    assert model(np.zeros((2, 1), np.int64), cache=cache).shape == (2, 1, 10)


@given(tiny_configs(), st.integers(0, 50), st.integers(2, 3))
def test_positions_t_and_mask_t_s_are_the_same_for_every_row(config, seed, B):
    """positions [T] means those positions in every row: the same logits as the [B, T] tile; a
    mask [T, S] is the [1, T, S] one, for every row too."""
    model = random_model(config, seed)
    T = config.n_ctx // 2
    ids = np.arange(B * T).reshape(B, T) % config.vocab_size                     # [B, T]
    positions = np.arange(1, T + 1)[::-1].copy() % config.n_ctx                  # [T] not 0..T-1
    mask = causal_mask(T, T)[None]
    np.testing.assert_array_equal(model(ids, positions=positions, mask=mask),
                                  model(ids, positions=np.tile(positions, (B, 1)), mask=mask))
    np.testing.assert_array_equal(model(ids, positions=positions, mask=mask[0]),   # mask [T, S]
                                  model(ids, positions=positions, mask=mask))
