"""init_params: every bias 0, every norm gain 1 (Qwen3's q and k norms too), matrices N(0, std)."""
import numpy as np
import pytest

from minillm import ModelConfig
from minillm.model.init import init_params

GAINS = ("norm1.weight", "norm2.weight", "norm_f.weight", "q_norm", "k_norm")


@pytest.mark.parametrize("extra", [dict(), dict(arch="llama"), dict(arch="llama", qk_norm=True),
                                   dict(arch="llama", n_kv_heads=1, tie_embeddings=False)])
def test_biases_start_at_0_norm_gains_at_1_and_matrices_are_drawn(extra):
    config = ModelConfig(vocab_size=10, n_ctx=8, d_model=8, n_heads=2, n_layers=2, **extra)
    params = init_params(config, np.random.default_rng(0))
    named = params.named()
    if config.qk_norm:
        assert sum(name.endswith(("q_norm", "k_norm")) for name in named) == 2 * config.n_layers
    for name, a in named.items():
        assert a.dtype == np.float32, name
        if name.endswith(GAINS):
            assert (a == 1.0).all(), name
        elif a.ndim == 1:
            assert (a == 0.0).all(), name                          # biases
        else:
            assert (a != 0.0).all() and np.abs(a).max() < 0.02 * 6, name   # N(0, ≤ 0.02)
