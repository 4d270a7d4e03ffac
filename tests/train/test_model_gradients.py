"""The whole model: loss_and_grads vs finite differences, and the training forward vs the
inference forward."""
from dataclasses import fields

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from minillm.config import ModelConfig
from minillm.functional import cross_entropy
from minillm import GPT
from minillm.model.init import init_params
from minillm.train.grad_model import forward_with_cache, loss_and_grads
from tests.model.strategies import random_model, tiny_configs
from tests.train.gradcheck import check


def float64_params(config: ModelConfig, seed: int):
    """GPTParams holding float64 arrays (arena.to_arena would cast them to float32)."""
    params = init_params(config, np.random.default_rng(seed))
    rng = np.random.default_rng(seed + 1)

    def to64(obj):
        for f in fields(obj):
            value = getattr(obj, f.name)
            if isinstance(value, np.ndarray):
                scale = 0.1 if value.ndim == 1 else 0.5
                setattr(obj, f.name, (1.0 if f.name == "weight" else 0.0) + rng.normal(0, scale, value.shape))
            elif isinstance(value, list):
                for item in value:
                    to64(item)
            elif value is not None:
                to64(value)
    to64(params)
    return params


@given(tiny_configs(arch="gpt2"), st.integers(0, 1000), st.integers(1, 2), st.integers(1, 6))
def test_model_gradients_match_finite_differences(config, seed, B, T):
    """Embeddings (token and position), every block, the final norm, the tied or untied head and
    the cross-entropy over all positions: relative error ≤ 1e-5 in float64."""
    check_model_gradients(config, seed, B, min(T, config.n_ctx), k=6)


def check_model_gradients(config: ModelConfig, seed: int, B: int, T: int, k: int) -> None:
    """loss_and_grads on random float64 parameters and a random [B, T] batch: one float64
    gradient per parameter, each matching finite differences at k sampled entries."""
    params = float64_params(config, seed)
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, config.vocab_size, (B, T))
    targets = rng.integers(0, config.vocab_size, (B, T))
    loss, grads = loss_and_grads(params, config, ids, targets)
    named = params.named()
    assert set(grads) == set(named)
    assert all(grads[k].shape == a.shape and grads[k].dtype == np.float64 for k, a in named.items())
    check(lambda: loss_and_grads(params, config, ids, targets)[0], named, grads, rng, k=k)


def test_repeated_ids_add_up_in_the_embedding_gradient():
    """The same token at several positions: its row of ∂L/∂wte is the sum (a scatter-add, not an
    overwrite)."""
    config = ModelConfig(vocab_size=5, n_ctx=8, d_model=4, n_heads=2, n_layers=1, d_ff=8,
                         tie_embeddings=False)
    params = float64_params(config, 0)
    ids, targets = np.array([[3, 3, 3, 1]]), np.array([[0, 1, 2, 3]])
    _, grads = loss_and_grads(params, config, ids, targets)
    check(lambda: loss_and_grads(params, config, ids, targets)[0], {"wte": params.wte}, grads,
          np.random.default_rng(0), k=20)
    assert np.all(grads["wte"][[0, 2, 4]] == 0)                   # ids absent from the batch


@given(tiny_configs(arch="gpt2"), st.integers(0, 1000), st.integers(1, 3))
def test_training_forward_equals_inference_forward(config, seed, B):
    """forward_with_cache (used by training: the engine's in-place norms and one flattened product
    per matrix) and GPT.__call__ (model/'s formulas) give the same float32 logits up to float32
    rounding: |Δ| ≤ 1e-4 · max(1, max |logits|), the engine-equals-model tolerance (other
    summation orders: usually ≤ 2e-7, but a LayerNorm over C = 2 features divides by a tiny σ,
    which amplifies rounding: 1.7e-5 was seen there on a loaded run's random examples)."""
    model = random_model(config, seed)
    ids = np.random.default_rng(seed).integers(0, config.vocab_size, (B, config.n_ctx))
    logits, _ = forward_with_cache(model.params, config, ids)
    assert logits.dtype == np.float32
    want = model(ids)
    np.testing.assert_allclose(logits, want, rtol=0, atol=1e-4 * max(1.0, float(np.abs(want).max())))


def test_loss_is_the_models_loss():
    config = ModelConfig(vocab_size=11, n_ctx=8, d_model=8, n_heads=2, n_layers=2)
    model = GPT(config, seed=3)
    ids = np.random.default_rng(0).integers(0, 11, (2, 8))
    loss, grads = loss_and_grads(model.params, config, ids[:, :-1], ids[:, 1:])
    assert abs(loss - model.loss(ids)) < 1e-6
    assert all(g.dtype == np.float32 for g in grads.values())
    assert abs(loss - cross_entropy(model(ids[:, :-1]), ids[:, 1:])) < 1e-6
