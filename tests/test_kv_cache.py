"""The KV cache changes the cost, never the result."""
import numpy as np
import pytest
from hypothesis import example, given, strategies as st

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


def test_numpy_integer_sizes_are_integers_and_bools_and_floats_are_not():
    from minillm.config import ModelConfig
    config = ModelConfig(vocab_size=10, n_ctx=8, d_model=8, n_heads=2, n_layers=1)
    cache = KVCache(config, batch_size=np.int64(2), capacity=np.int32(5))
    assert (cache.batch_size, cache.capacity) == (2, 5)
    cache.advance(3)                                     # bad lengths that are in range, as numbers
    for bad in (True, np.bool_(True), 2.0):
        with pytest.raises(ValueError, match="capacity"):
            KVCache(config, capacity=bad)
        with pytest.raises(ValueError, match="roll back"):
            cache.rollback(bad)


def small_config(**kw):
    from minillm.config import ModelConfig
    return ModelConfig(**{"vocab_size": 10, "n_ctx": 8, "d_model": 8, "n_heads": 2,
                          "n_layers": 1, **kw})


@st.composite
def padded_cache(draw):
    """A cache of B rows holding ``length`` positions with random contents and random padding."""
    B, N = draw(st.integers(1, 4)), draw(st.integers(1, 8))
    length = draw(st.integers(0, N))
    cache = KVCache(small_config(), batch_size=B, capacity=N)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    cache.k[...] = rng.standard_normal(cache.k.shape)
    cache.v[...] = rng.standard_normal(cache.v.shape)
    cache.valid[:, :length] = rng.random((B, length)) < 0.6
    cache.length = length
    return cache


@given(padded_cache(), st.data())
def test_reorder_moves_padding_and_entries_with_their_rows(cache, data):
    """Row b takes row rows[b]'s k, v and padding over the filled positions; the free slots are
    left alone."""
    B, n = cache.batch_size, cache.length
    rows = np.array(data.draw(st.lists(st.integers(0, B - 1), min_size=B, max_size=B)))
    k, v, valid = cache.k.copy(), cache.v.copy(), cache.valid.copy()
    cache.reorder(rows)
    np.testing.assert_array_equal(cache.valid[:, :n], valid[rows, :n])
    np.testing.assert_array_equal(cache.k[:, :, :, :n], k[:, rows, :, :n])
    np.testing.assert_array_equal(cache.v[:, :, :, :n], v[:, rows, :, :n])
    np.testing.assert_array_equal(cache.valid[:, n:], valid[:, n:])
    np.testing.assert_array_equal(cache.k[:, :, :, n:], k[:, :, :, n:])
    assert cache.length == n


@given(padded_cache(), st.data())
def test_rollback_keeps_the_padding_it_keeps_and_frees_the_rest(cache, data):
    """Rolling back to ``keep`` leaves the padding of the first ``keep`` positions as it was and
    marks every later slot real again (a new token written there is real)."""
    keep = data.draw(st.integers(0, cache.length))
    valid = cache.valid.copy()
    cache.rollback(np.int64(keep) if data.draw(st.booleans()) else keep)
    assert cache.length == keep and type(cache.length) is int
    np.testing.assert_array_equal(cache.valid[:, :keep], valid[:, :keep])
    assert cache.valid[:, keep:].all()


@pytest.mark.parametrize("rows", [[0, 2], [0], [0, 1, 1, 2], [-1, 0, 1], [0.0, 1.0, 2.0],
                                  [True, False, True], [[0, 1, 2]], [0, 1, 3]])
def test_reorder_refuses_anything_but_batch_size_indices_in_range(rows):
    cache = KVCache(small_config(), batch_size=3, capacity=4)
    cache.length = 2
    before = cache.valid.copy()
    with pytest.raises(ValueError, match=r"rows must be 3 indices in \[0, 3\)"):
        cache.reorder(rows)
    np.testing.assert_array_equal(cache.valid, before)


@given(st.integers(1, 5), st.integers(1, 8), st.sampled_from([1, 2]), st.sampled_from([1, 2]))
def test_cache_bytes_is_what_a_cache_of_b_rows_holds(B, N, layers, kv_heads):
    """``cache_bytes`` (what the memory check counts) equals the arrays a cache of B rows and N
    positions allocates: k and v, and the [B, N] validity mask; ``nbytes`` is k and v."""
    from minillm.kv_cache_sizes import cache_bytes
    config = small_config(n_layers=layers, arch="llama", n_kv_heads=kv_heads)
    cache = KVCache(config, batch_size=B, capacity=N)
    assert cache_bytes(config, B, N) == cache.k.nbytes + cache.v.nbytes + cache.valid.nbytes
    assert cache.nbytes() == cache.k.nbytes + cache.v.nbytes == 2 * layers * B * kv_heads * N * 4 * 4
    assert cache_bytes(config, B, N) == B * cache_bytes(config, 1, N)


@pytest.mark.parametrize("per_row", [None, 0, 123])
def test_the_memory_check_allows_exactly_the_memory_there_is(monkeypatch, per_row):
    """``batch_size`` rows of (a cache row + ``per_row`` bytes, default the [V] float32 logits)
    fit when they need exactly the memory there is, not one byte more; the error names the
    parameter and the largest count that fits."""
    import minillm.kv_cache_sizes as kv
    config = small_config()
    row = kv.cache_bytes(config, 1, 6) + (4 * config.vocab_size if per_row is None else per_row)
    monkeypatch.setattr(kv, "memory_bytes", lambda: 3 * row)
    kv.check_cache_fits(config, 3, 6, "rows", per_row=per_row)          # exactly all of it
    monkeypatch.setattr(kv, "memory_bytes", lambda: 3 * row - 1)
    with pytest.raises(ValueError, match=r"^rows=3 needs .* allowed at most 2$"):
        kv.check_cache_fits(config, 3, 6, "rows", per_row=per_row)
    monkeypatch.setattr(kv, "memory_bytes", lambda: None)               # the system does not say
    kv.check_cache_fits(config, 10**12, 6, "rows", per_row=per_row)


def test_a_cache_is_checked_for_its_own_bytes_only(monkeypatch):
    """KVCache checks k, v and the mask (no logits: ``per_row=0``), and names ``batch_size``."""
    import minillm.kv_cache_sizes as kv
    config = small_config()
    monkeypatch.setattr(kv, "memory_bytes", lambda: kv.cache_bytes(config, 4, 5))
    assert KVCache(config, batch_size=4, capacity=5).batch_size == 4
    with pytest.raises(ValueError, match=r"^batch_size=5 needs .* allowed at most 4$"):
        KVCache(config, batch_size=5, capacity=5)


@pytest.mark.parametrize("size, capacity", [(0, 4), (-1, 4), (1, 0), (1, -1), (1, 9), ("2", 4),
                                            (2.0, 4), (True, 4), (1, "4")])
def test_a_cache_refuses_sizes_that_are_not_positive_integers_in_range(size, capacity):
    config = small_config()
    assert KVCache(config, batch_size=1).capacity == config.n_ctx          # None means n_ctx
    with pytest.raises(ValueError, match="batch_size" if capacity == 4 else "capacity"):
        KVCache(config, batch_size=size, capacity=capacity)


def test_check_room_allows_filling_the_cache_exactly():
    cache = KVCache(small_config(), batch_size=1, capacity=5)
    cache.check_room(5)
    cache.advance(3)
    cache.check_room(2)
    with pytest.raises(ValueError, match="holds 3 of 5 positions: no room for 3 more"):
        cache.check_room(3)


def test_memory_bytes_is_the_machines_physical_memory():
    """Checked against /proc/meminfo's MemTotal (within 10 %: the kernel keeps a little back)."""
    from pathlib import Path
    from minillm.kv_cache_sizes import memory_bytes
    meminfo = Path("/proc/meminfo")
    if not meminfo.exists():
        pytest.skip("no /proc/meminfo on this system to compare with")
    total = int(meminfo.read_text().split("MemTotal:")[1].split()[0]) * 1024
    assert 0.9 * total <= memory_bytes() <= 1.1 * total


@given(tiny_configs(), st.integers(1, 3), st.integers(0, 99), st.data())
def test_a_shared_prefix_is_one_batch_1_pass_for_the_last_logits_copied_to_every_row(
        config, B, seed, data):
    """shared_prefix_cache runs the prompt once, as one row, asking only for the last position's
    logits (the head over the other positions would be thrown away); every row of the B-row
    cache then holds the prompt's keys and values, as if each row had been fed the prompt."""
    from minillm.kv_cache import shared_prefix_cache
    P = data.draw(st.integers(1, config.n_ctx - 1))
    prompt = np.array(data.draw(st.lists(st.integers(0, config.vocab_size - 1), min_size=P,
                                         max_size=P)))
    model, calls = random_model(config, seed), []

    class Recording:
        def __init__(self):
            self.config = model.config

        def __call__(self, ids, *args, last_only=False, **kwargs):
            calls.append((np.shape(ids), last_only))
            return model(ids, *args, last_only=last_only, **kwargs)

    cache, logits = shared_prefix_cache(Recording(), prompt, B, capacity=config.n_ctx)
    assert calls == [((1, P), True)]
    alone = KVCache(config, batch_size=B, capacity=config.n_ctx)
    np.testing.assert_allclose(logits, model(np.tile(prompt, (B, 1)), cache=alone)[0, -1],
                               rtol=1e-5, atol=1e-5)
    assert (cache.length, cache.batch_size) == (alone.length, B)
    np.testing.assert_allclose(cache.k[:, :, :, :P], alone.k[:, :, :, :P], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(cache.v[:, :, :, :P], alone.v[:, :, :, :P], rtol=1e-5, atol=1e-5)
    next_id = np.full((B, 1), prompt[0])
    np.testing.assert_allclose(model(next_id, cache=cache), model(next_id, cache=alone),
                               rtol=1e-5, atol=1e-5)


@given(st.integers(0, 4), st.one_of(st.integers(-3, 8), st.sampled_from([1.0, True, "1", None])))
@example(2, -1)
@example(2, 3)
def test_rollback_refuses_a_length_outside_0_to_the_cached_length(length, bad):
    """rollback(n) takes an integer n in [0, length], both ends included; anything else (below 0,
    past what is cached, a float, a bool) is a ValueError that leaves the cache as it was."""
    cache = KVCache(small_config(), batch_size=2, capacity=4)
    cache.length = length
    allowed = type(bad) is int and 0 <= bad <= length
    if allowed:
        cache.rollback(bad)
        assert cache.length == bad
    else:
        with pytest.raises(ValueError, match=rf"a length in \[0, {length}\], got"):
            cache.rollback(bad)
        assert cache.length == length
