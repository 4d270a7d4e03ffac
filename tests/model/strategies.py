"""Hypothesis strategies for tiny random models: both variants, GQA, tied and untied heads; the
Llama variant also with Llama 3's RoPE scaling, Qwen3's q/k norms and a head_dim apart from C / H."""
import numpy as np
from hypothesis import strategies as st

from minillm import GPT
from minillm.config import ModelConfig
from minillm.engine import to_engine
from minillm.model.attention import causal_mask


@st.composite
def tiny_configs(draw, arch=None):
    arch = arch or draw(st.sampled_from(["gpt2", "llama"]))
    n_kv = draw(st.sampled_from([1, 2]))
    n_heads = n_kv * draw(st.sampled_from([1, 2])) if arch == "llama" else draw(st.sampled_from([1, 2, 4]))
    d_head = draw(st.sampled_from([2, 4, 8]))
    llama = {}
    if arch == "llama":
        llama = dict(n_kv_heads=n_kv, qk_norm=draw(st.booleans()),
                     head_dim=draw(st.sampled_from([None, 2 * d_head])),    # None: C / H
                     rope_scaling=draw(st.none() | llama3_scalings()))
    return ModelConfig(vocab_size=draw(st.integers(5, 40)), n_ctx=draw(st.integers(8, 24)),
                       d_model=n_heads * d_head, n_heads=n_heads, n_layers=draw(st.integers(1, 2)),
                       d_ff=draw(st.sampled_from([8, 16])), arch=arch,
                       tie_embeddings=draw(st.booleans()), **llama)


@st.composite
def llama3_scalings(draw):
    """Llama 3 RoPE scaling parameters small enough that tiny heads' pairs fall in every region."""
    low = draw(st.floats(0.5, 2.0))
    return {"rope_type": "llama3", "factor": draw(st.floats(1.5, 32.0)), "low_freq_factor": low,
            "high_freq_factor": low + draw(st.floats(0.5, 4.0)),
            "original_max_position_embeddings": draw(st.integers(4, 64))}


def random_model(config: ModelConfig, seed: int, layout: str = "plain") -> GPT:
    """A model whose every parameter (biases and norm gains too) is random, so all are exercised;
    ``layout`` "rows" (the loaders') or "decode" gives the same numbers in the engine (its arena
    in that layout); "plain" a ``GPT`` of plain ndarrays."""
    model = GPT(config, seed=seed)
    rng = np.random.default_rng(seed + 1)
    for name, a in model.params.named().items():
        if name.endswith(("bias", "b_up", "b_down", "bq", "bk", "bv", "bo")):
            a[...] = rng.normal(0, 0.1, a.shape)
        elif a.ndim == 1:                       # norm gains around 1
            a[...] = 1 + rng.normal(0, 0.1, a.shape)
        else:
            a[...] = rng.normal(0, 0.3, a.shape)
    return model if layout == "plain" else to_engine(model, layout)


@st.composite
def attention_inputs(draw):
    """q [B, H, T, D], k and v [B, K, S, D] with S = cached + T, and a causal mask that may also
    hide left padding (every query still sees itself, as the model guarantees)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    B, K, G, D = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 3)), 4
    T, cached = draw(st.integers(1, 12)), draw(st.integers(0, 6))
    S = cached + T
    q = rng.standard_normal((B, K * G, T, D), dtype=np.float32) * 2
    k, v = (rng.standard_normal((B, K, S, D), dtype=np.float32) * 2 for _ in range(2))
    mask = np.repeat(causal_mask(T, S)[None], B, axis=0)                 # [B, T, S]
    pad = draw(st.integers(0, S - 1))
    mask[:, :, :pad] = False                                            # left padding hidden
    mask[:, np.arange(T), cached + np.arange(T)] = True                  # each query sees itself
    return q, k, v, mask, draw(st.integers(1, T + 1))
