"""One row of ids [T] is a batch of one [1, T] without its batch axis: logits and attention weights."""
import numpy as np
import pytest

from minillm import ModelConfig
from tests.model.strategies import random_model


@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_one_row_of_ids_is_a_batch_of_one_without_its_batch_axis(arch):
    config = ModelConfig(vocab_size=11, n_ctx=8, d_model=8, n_heads=2, n_layers=2, arch=arch)
    model = random_model(config, 3)
    ids = np.array([1, 5, 2, 9, 0])
    logits, weights = model(ids, return_weights=True)                  # [T, V], L × [H, T, T]
    batch_logits, batch_weights = model(ids[None], return_weights=True)    # [1, T, V], L × [1, H, T, T]
    np.testing.assert_array_equal(logits, batch_logits[0])
    assert len(weights) == len(batch_weights) == config.n_layers
    for w, bw in zip(weights, batch_weights):
        assert w.shape == (config.n_heads, len(ids), len(ids))
        np.testing.assert_array_equal(w, bw[0])
    last = model(ids, last_only=True)                                  # [1, V]: one product row,
    np.testing.assert_allclose(last, batch_logits[0, -1:], atol=1e-5)   # rounded on its own
