"""The model's parameters: plain float32 ndarrays, used as given, drawn by init_params."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from minillm import GPT
from minillm.model.init import init_params
from minillm.model.params import param_shapes
from tests.conftest import FIXTURES
from tests.model.strategies import tiny_configs


@given(tiny_configs(), st.integers(0, 100))
def test_editing_params_after_gpt_init_changes_the_model(config, seed):
    """Regression: GPT.__init__ used to copy the caller's arrays into an arena silently, so
    editing them afterwards no longer changed the model. Now GPT(config, params) uses them as
    given."""
    params = init_params(config, np.random.default_rng(seed))
    model = GPT(config, params)
    assert model.params is params
    ids = np.arange(4) % config.vocab_size
    before = model(ids)
    params.norm_f.weight *= 2.0                                  # edit the caller's array
    assert not np.allclose(model(ids), before)


@given(tiny_configs(), st.integers(0, 100))
def test_seeded_models_are_plain_float32_arrays_drawn_by_init_params(config, seed):
    """Every parameter of GPT(config, seed=…) (a model to be trained) is its own C-contiguous
    float32 ndarray, so ``named()[k].reshape(-1)`` is a view (a finite-difference check edits it
    entry by entry, notebook 10); the values are init_params' with the same seed."""
    model = GPT(config, seed=seed)
    want = init_params(config, np.random.default_rng(seed)).named()
    assert list(model.params.named()) == list(param_shapes(config))
    for name, a in model.params.named().items():
        assert type(a) is np.ndarray and a.dtype == np.float32 and a.flags.c_contiguous, name
        assert np.shares_memory(a.reshape(-1), a)
        np.testing.assert_array_equal(a, want[name])


def test_wrong_params_are_clear_errors():
    config = GPT.from_pretrained(FIXTURES / "gpt2_tiny").config
    params = init_params(config, np.random.default_rng(0))
    with pytest.raises(TypeError, match="GPTParams"):
        GPT(config, params.named())
    params.wte = params.wte[:-1]
    with pytest.raises(ValueError, match="wte has shape"):
        GPT(config, params)
