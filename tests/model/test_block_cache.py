"""A block writes its attention's keys and values into its own layer of the cache (layer 0 by
default), as attention does (tests/model/test_layers.py)."""
import numpy as np

from minillm import GPT, KVCache
from minillm.config import ModelConfig
from minillm.model.attention import causal_mask
from minillm.model.block import block
from minillm.hooks import Layer


def test_a_block_stores_its_keys_and_values_in_its_own_layer_of_the_cache():
    config = ModelConfig(vocab_size=10, n_ctx=8, d_model=8, n_heads=2, n_layers=3)
    params = GPT(config, seed=0).params.blocks[1]
    x = np.random.default_rng(0).standard_normal((1, 4, 8), dtype=np.float32)   # [B, T, C]
    for layer in (None, 0, 2):
        cache = KVCache(config, batch_size=1, capacity=8)
        kw = {} if layer is None else {"index": layer}
        out = block(x, params, Layer(config, causal_mask(4, 4)[None], cache=cache, **kw))
        assert out.shape == (1, 4, 8)
        written = [l for l in range(3) if cache.k[l].any() or cache.v[l].any()]
        assert written == [layer or 0]
