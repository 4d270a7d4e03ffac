"""Every norm placement of the block (pre-norm GPT-2/Llama, OLMo 2's norms after each sub-layer,
Gemma's sandwich) hands its attention the same rotary angles, cache, layer and ``return_weights``
it was given (in its context, ``Layer``): the block's weights are its attention's, and its keys
and values land in its own layer of the cache (layer 0 unless told)."""
import functools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minillm import KVCache
from minillm.config import ModelConfig
from minillm.model.attention import attention, causal_mask
from minillm.model.block import block
from minillm.hooks import Layer
from minillm.model.norm import norm
from minillm.model.rope import rope_angles

from tests.model.strategies import random_model

BASE = dict(vocab_size=8, n_ctx=8, d_model=8, n_heads=2, n_kv_heads=1, n_layers=3, arch="llama")
PLACEMENTS = {"pre-norm": {}, "post-norms (OLMo 2)": dict(post_norms=True),
              "sandwich (Gemma)": dict(sandwich_norms=True, ffn="geglu")}


@functools.lru_cache(maxsize=None)
def config_and_block(placement: str):
    """The config of one norm placement and the random parameters of one of its blocks."""
    config = ModelConfig(**BASE, **PLACEMENTS[placement])
    return config, random_model(config, 0).params.blocks[0]


def first_sub_layer_input(x, p, config):
    """What the block hands its attention: x itself after OLMo 2's placement, Norm₁(x) otherwise."""
    return x if config.post_norms else norm(x, p.norm1, config.norm, config.norm_eps)


@given(placement=st.sampled_from(sorted(PLACEMENTS)), seed=st.integers(0, 50), T=st.integers(1, 4),
       start=st.integers(0, 4), layer=st.integers(0, 2))
def test_a_block_gives_its_attention_the_angles_cache_layer_and_weights_it_gets(placement, seed, T,
                                                                                start, layer):
    config, p = config_and_block(placement)
    x = np.random.default_rng(seed).standard_normal((1, T, 8), dtype=np.float32)     # [1, T, C]
    cos, sin = rope_angles(np.arange(start, start + T)[None], config.d_head, config.rope_theta)
    rope = (cos[:, None], sin[:, None])                                              # [1, 1, T, D/2]
    mask = causal_mask(T, T)[None]
    mine, theirs = KVCache(config, batch_size=1, capacity=8), KVCache(config, batch_size=1, capacity=8)
    seen, seen_alone = {}, {}
    out = block(x, p, Layer(config, mask, rope, mine, layer, hook=seen.setdefault))
    attention(first_sub_layer_input(x, p, config), p.attn,
              Layer(config, mask, rope, theirs, layer, hook=seen_alone.setdefault))
    weights = seen[f"blocks.{layer}.attn.hook_pattern"]
    want = seen_alone[f"blocks.{layer}.attn.hook_pattern"]
    assert out.shape == (1, T, 8)
    np.testing.assert_allclose(weights, want, atol=1e-6)                   # [1, H, T, T]
    for l in range(3):
        np.testing.assert_array_equal(mine.k[l], theirs.k[l])
        np.testing.assert_array_equal(mine.v[l], theirs.v[l])
    assert [l for l in range(3) if mine.k[l].any()] == [layer]


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_a_block_returns_no_weights_and_fills_layer_0_unless_told(placement):
    config, p = config_and_block(placement)
    x = np.random.default_rng(1).standard_normal((1, 3, 8), dtype=np.float32)
    cache = KVCache(config, batch_size=1, capacity=8)
    out = block(x, p, Layer(config, causal_mask(3, 3)[None], cache=cache))
    assert isinstance(out, np.ndarray) and out.shape == (1, 3, 8)
    assert [l for l in range(3) if cache.k[l].any() or cache.v[l].any()] == [0]
