"""The KV cache's memory check counts in Python integers, whatever integer type the sizes come in."""
import numpy as np
import pytest

import minillm.kv_cache_sizes as kv
from minillm.kv_cache import KVCache
from minillm.config import ModelConfig


@pytest.mark.parametrize("kind", [np.int8, np.uint8, np.int16, np.int32, np.int64, int])
def test_sizes_of_every_integer_type_are_checked_without_overflow(monkeypatch, kind):
    """100 rows of 8 positions need 100 · (2·L·KV·N·D·4 + N) = 52,000 bytes here: one byte less
    memory refuses them, however the two sizes are typed (int8 arithmetic would wrap)."""
    config = ModelConfig(vocab_size=10, n_ctx=8, d_model=8, n_heads=2, n_layers=1)   # KV 2, D 4
    need = 100 * (2 * 1 * 2 * 8 * 4 * 4 + 8)
    assert kv.cache_bytes(config, 100, 8) == need
    monkeypatch.setattr(kv, "memory_bytes", lambda: need - 1)
    with pytest.raises(ValueError, match="batch_size=100 needs"):
        KVCache(config, batch_size=kind(100), capacity=kind(8))
    monkeypatch.setattr(kv, "memory_bytes", lambda: need)
    cache = KVCache(config, batch_size=kind(100), capacity=kind(8))
    assert type(cache.batch_size) is int and (cache.batch_size, cache.capacity) == (100, 8)
