"""Hypothesis strategies for tiny random models: both variants, GQA, tied and untied heads."""
import numpy as np
from hypothesis import strategies as st

from minillm.config import ModelConfig
from minillm.model import GPT, to_arena


@st.composite
def tiny_configs(draw, arch=None):
    arch = arch or draw(st.sampled_from(["gpt2", "llama"]))
    n_kv = draw(st.sampled_from([1, 2]))
    n_heads = n_kv * draw(st.sampled_from([1, 2])) if arch == "llama" else draw(st.sampled_from([1, 2, 4]))
    d_head = draw(st.sampled_from([2, 4, 8]))
    return ModelConfig(vocab_size=draw(st.integers(5, 40)), n_ctx=draw(st.integers(8, 24)),
                       d_model=n_heads * d_head, n_heads=n_heads, n_layers=draw(st.integers(1, 2)),
                       d_ff=draw(st.sampled_from([8, 16])), arch=arch,
                       n_kv_heads=n_kv if arch == "llama" else None,
                       tie_embeddings=draw(st.booleans()))


def random_model(config: ModelConfig, seed: int, layout: str = "plain") -> GPT:
    """A model whose every parameter (biases and norm gains too) is random, so all are exercised;
    ``layout`` "tiled" (the loaders') or "decode" gives the same numbers in that arena layout."""
    model = GPT(config, seed=seed)
    rng = np.random.default_rng(seed + 1)
    for name, a in model.params.named().items():
        if name.endswith(("bias", "b_up", "b_down", "bq", "bk", "bv", "bo")):
            a[...] = rng.normal(0, 0.1, a.shape)
        elif a.ndim == 1:                       # norm gains around 1
            a[...] = 1 + rng.normal(0, 0.1, a.shape)
        else:
            a[...] = rng.normal(0, 0.3, a.shape)
    return model if layout == "plain" else GPT(config, to_arena(model.params, config, layout))
