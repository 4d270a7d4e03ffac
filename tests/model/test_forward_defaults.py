"""GPT.forward, the seam the engine overrides: on checked inputs, (logits [B, T, V], weights),
the weights an empty list unless asked for (each layer's [B, H, T, S] when they are)."""
import numpy as np
from hypothesis import given, strategies as st

from minillm.model.attention import causal_mask
from tests.model.strategies import random_model, tiny_configs


@given(tiny_configs(), st.integers(1, 2), st.integers(1, 5), st.integers(0, 50))
def test_forward_returns_attention_weights_only_when_asked(config, B, T, seed):
    model = random_model(config, seed)
    ids = np.random.default_rng(seed).integers(0, config.vocab_size, (B, T))
    positions, mask = np.tile(np.arange(T), (B, 1)), causal_mask(T, T)[None]
    logits, weights = model.forward(ids, positions, mask)
    assert weights == []
    np.testing.assert_array_equal(logits, model(ids))
    logits, weights = model.forward(ids, positions, mask, return_weights=True)
    _, want = model(ids, return_weights=True)
    assert len(weights) == config.n_layers
    for w, expected in zip(weights, want):
        assert w.shape == (B, config.n_heads, T, T)
        np.testing.assert_array_equal(w, expected)
