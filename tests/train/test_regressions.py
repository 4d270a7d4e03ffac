"""Regression tests for train/: bad input at the public boundary raises ValueError
instead of wrapping ids, broadcasting gradients or stepping uphill."""
import numpy as np
import pytest

from minillm.engine import EngineGPT
from minillm.config import ModelConfig
from minillm.model.init import init_params
from minillm.train.data import token_array
from minillm.train.grad_model import loss_and_grads
from minillm.train.loop import TrainSettings
from minillm.train.optim import AdamW


@pytest.mark.parametrize("ids", [[0, 300], [-1, 2], np.array([70_000])])
def test_token_array_rejects_ids_outside_the_vocabulary(ids):
    with pytest.raises(ValueError, match="must be in"):
        token_array(ids, 300)


def test_adamw_rejects_a_gradient_of_another_shape():
    opt = AdamW({"w": np.zeros((2, 3), np.float32)})
    with pytest.raises(ValueError, match="shape"):
        opt.step({"w": np.zeros(3, np.float32)}, 1e-3)  # would broadcast over the rows


@pytest.mark.parametrize("field", [{"grad_clip": -1.0}, {"grad_clip": 0.0},
                                   {"weight_decay": -0.1}, {"lr": float("inf")}])
def test_train_settings_reject_bad_values(field):
    with pytest.raises(ValueError):
        TrainSettings(**field)


def test_loss_and_grads_rejects_negative_or_too_large_ids():
    config = ModelConfig(vocab_size=11, n_ctx=8, d_model=8, n_heads=2, n_layers=1, d_ff=16)
    params = init_params(config, np.random.default_rng(0))
    good = np.zeros((1, 4), np.int64)
    loss_and_grads(params, config, good, good)
    for bad in (good - 1, good + 11):
        with pytest.raises(ValueError, match=r"\[0, 11\)"):
            loss_and_grads(params, config, bad, good)
        with pytest.raises(ValueError, match=r"\[0, 11\)"):
            loss_and_grads(params, config, good, bad)
    with pytest.raises(ValueError, match="n_ctx"):
        loss_and_grads(params, config, np.zeros((1, 9), np.int64), np.zeros((1, 9), np.int64))


def test_adamw_refused_a_loaded_models_tiled_matrices():
    """Regression: a model from a loader (then a tiled layout) handed to the optimiser failed
    deep in the update, and later was refused. Its weights are now ndarray views into the arena,
    so an update reaches the joined matrices the engine reads; a non-array is still refused."""
    import pytest
    from minillm.train.optim import AdamW
    from tests.conftest import FIXTURES
    model = EngineGPT.from_pretrained(FIXTURES / "llama_tiny")
    named = model.params.named()
    grads = {k: np.ones_like(v) for k, v in named.items()}
    before = model.arena.joined[0].qkv.copy()
    AdamW(named, weight_decay=0.0).step(grads, lr=0.1)
    np.testing.assert_allclose(model.arena.joined[0].qkv, before - 0.1, rtol=1e-5, atol=1e-5)
    with pytest.raises(TypeError, match="fast=False"):
        AdamW({"w": [[1.0, 2.0]]})
