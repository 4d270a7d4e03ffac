"""The KV cache changes the cost, never the result."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from minillm.decoding.batch import padded_inputs
from minillm.kv_cache import KVCache
from tests.model.strategies import random_model, tiny_configs


@st.composite
def cached_case(draw, min_length=1):
    config = draw(tiny_configs())
    B = draw(st.integers(1, 3))
    T = draw(st.integers(min_length, config.n_ctx))
    ids = np.array(draw(st.lists(st.integers(0, config.vocab_size - 1), min_size=B * T,
                                 max_size=B * T))).reshape(B, T)
    cuts = sorted(set(draw(st.lists(st.integers(1, T - 1), max_size=4)))) if T > 1 else []
    return random_model(config, draw(st.integers(0, 99))), ids, cuts


@given(cached_case())
def test_cache_equals_recompute(case):
    """Any split of the sequence into chunks (chunked prefill, then one token at a time) gives
    the logits of one uncached forward, to 1e-5."""
    model, ids, cuts = case
    cache = KVCache(model.config, batch_size=ids.shape[0], capacity=ids.shape[1])
    pieces = [model(chunk, cache=cache) for chunk in np.split(ids, cuts, axis=1)]
    np.testing.assert_allclose(np.concatenate(pieces, axis=1), model(ids), rtol=1e-5, atol=1e-5)
    assert cache.length == ids.shape[1]


@given(cached_case(), st.data())
def test_rollback_then_refeed_equals_never_having_fed(case, data):
    model, ids, _ = case
    T = ids.shape[1]
    keep = data.draw(st.integers(0, T - 1))
    cache = KVCache(model.config, batch_size=ids.shape[0], capacity=T)
    model(ids, cache=cache)
    cache.rollback(keep)
    tail = model(ids[:, keep:], cache=cache)
    np.testing.assert_allclose(tail, model(ids)[:, keep:], rtol=1e-5, atol=1e-5)


@given(cached_case(min_length=2), st.data())       # a history before the reordered step
def test_reorder_moves_whole_rows_histories(case, data):
    model, ids, _ = case
    B, T = ids.shape
    rows = np.array(data.draw(st.lists(st.integers(0, B - 1), min_size=B, max_size=B)))
    cache = KVCache(model.config, batch_size=B, capacity=T)
    model(ids[:, :-1], cache=cache)
    cache.reorder(rows)
    last = model(ids[rows, -1:], cache=cache)[:, 0]
    np.testing.assert_allclose(last, model(ids[rows])[:, -1], rtol=1e-5, atol=1e-5)


@given(tiny_configs(), st.data())
def test_left_padded_batch_equals_each_row_alone(config, data):
    """Prompts of different lengths in one batch: padding is invisible to the real tokens."""
    model = random_model(config, data.draw(st.integers(0, 99)))
    lengths = data.draw(st.lists(st.integers(1, config.n_ctx - 2), min_size=2, max_size=3))
    rows = [np.array(data.draw(st.lists(st.integers(0, config.vocab_size - 1), min_size=n, max_size=n)))
            for n in lengths]
    T = max(lengths)
    ids = np.zeros((len(rows), T), dtype=np.int64)
    mask = np.zeros((len(rows), T), dtype=bool)
    for b, r in enumerate(rows):
        ids[b, T - len(r):], mask[b, T - len(r):] = r, True
    cache = KVCache(config, batch_size=len(rows), capacity=T + 2)
    cache.valid[:, :T] = mask                                     # the cache keeps which slots are real
    positions, attend = padded_inputs(cache.valid[:, :T], T)
    batched = model(ids, cache=cache, positions=positions, mask=attend)
    nxt = np.array([[1], [2], [3]])[:len(rows)] % config.vocab_size
    if not mask.all():
        with pytest.raises(ValueError, match="holds padding"):   # a plain call would attend to it
            model(nxt, cache=cache)
    positions, attend = padded_inputs(cache.valid[:, :T + 1], 1)  # one more token, from the cache's validity
    step = model(nxt, cache=cache, positions=positions, mask=attend)[:, 0]
    for b, r in enumerate(rows):
        np.testing.assert_allclose(batched[b, T - len(r):], model(r), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(step[b], model(np.append(r, nxt[b]))[-1], rtol=1e-5, atol=1e-5)


def test_cache_errors_are_clear():
    from minillm.config import ModelConfig
    from minillm import GPT
    config = ModelConfig(vocab_size=10, n_ctx=8, d_model=8, n_heads=2, n_layers=1)
    model = GPT(config)
    cache = KVCache(config, batch_size=1, capacity=4)
    model(np.arange(3), cache=cache)
    with pytest.raises(ValueError, match="no room"):
        model(np.arange(2), cache=cache)
    with pytest.raises(ValueError, match="rows"):
        model(np.zeros((2, 1), int), cache=cache)
    with pytest.raises(ValueError, match="roll back"):
        cache.rollback(5)
    with pytest.raises(ValueError, match="capacity"):
        KVCache(config, capacity=9)


def test_numpy_integer_sizes_were_refused_as_not_integers():
    from minillm.config import ModelConfig
    config = ModelConfig(vocab_size=10, n_ctx=8, d_model=8, n_heads=2, n_layers=1)
    cache = KVCache(config, batch_size=np.int64(2), capacity=np.int32(5))
    assert (cache.batch_size, cache.capacity) == (2, 5)
    for bad in (True, np.bool_(True), 2.0):
        with pytest.raises(ValueError, match="capacity"):
            KVCache(config, capacity=bad)
        with pytest.raises(ValueError, match="roll back"):
            cache.rollback(bad)
