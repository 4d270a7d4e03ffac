"""Gemma's embedding scale: the token rows times √C, with √C rounded to float32 first (as
transformers does: its normalizer is a tensor of the activations' dtype), so the whole product
is float32 arithmetic."""
import math

import numpy as np
from hypothesis import given, strategies as st

from minillm import GPT
from minillm.config import ModelConfig
from minillm.model.linear import linear
from minillm.model.norm import norm


@given(n_heads=st.integers(1, 3), d_head=st.sampled_from([2, 4, 6]), seed=st.integers(0, 100),
       ids=st.lists(st.integers(0, 15), min_size=1, max_size=6))
def test_embeddings_are_scaled_by_the_float32_root_of_c(n_heads, d_head, seed, ids):
    """With every block's output projections at zero each block passes its input on unchanged,
    so the logits are exactly norm_f(wte[ids] · float32(√C)) @ wteᵀ, bit for bit."""
    config = ModelConfig(vocab_size=16, n_ctx=8, d_model=n_heads * d_head, n_heads=n_heads,
                         n_layers=1, arch="llama", embed_scale=True)
    model = GPT(config, seed=seed)
    p = model.params
    p.wte[...] = np.random.default_rng(seed).standard_normal(p.wte.shape, dtype=np.float32)
    for b in p.blocks:
        b.attn.wo[...] = 0
        b.ffn.w_down[...] = 0
    x = p.wte[ids] * np.float32(math.sqrt(config.d_model))                  # [T, C] float32
    want = linear(norm(x, p.norm_f, config.norm, config.norm_eps), p.wte.T)  # [T, V]
    got = model(np.array(ids))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)
