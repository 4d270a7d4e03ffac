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


@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_init_draws_each_matrix_as_one_whole_matrix_call_in_the_documented_order(arch):
    """The draws are made in chunks of rows (~1 MB at a time); a matrix larger than one chunk (wte
    here: 5000 × 64 float32 = 1.3 MB) still gets exactly what one ``standard_normal`` call for the
    whole matrix gives, in the order the docstring fixes: per block wq, wk, wv, wo, w_up, w_down
    (w_gate), then wte, wpe, lm_head; std 0.02, 0.02/√(2L) for wo and w_down, 0.01 for wpe."""
    from minillm.config import ModelConfig
    config = ModelConfig(vocab_size=5000, n_ctx=16, d_model=64, n_heads=4, n_layers=2, d_ff=32,
                         arch=arch, tie_embeddings=False, **({"n_kv_heads": 2} if arch == "llama" else {}))
    params = init_params(config, np.random.default_rng(3))
    rng, resid = np.random.default_rng(3), 0.02 / np.sqrt(2 * config.n_layers)
    order = []
    for b in params.blocks:
        order += [(b.attn.wq, 0.02), (b.attn.wk, 0.02), (b.attn.wv, 0.02), (b.attn.wo, resid),
                  (b.ffn.w_up, 0.02), (b.ffn.w_down, resid)]
        order += [(b.ffn.w_gate, 0.02)] if b.ffn.w_gate is not None else []
    order += [(params.wte, 0.02)] + ([(params.wpe, 0.01)] if params.wpe is not None else [])
    order += [(params.lm_head, 0.02)]
    assert params.wte.nbytes > 2**20
    for w, std in order:
        want = rng.standard_normal(w.shape, dtype=np.float32) * np.float32(std)
        np.testing.assert_array_equal(w, want)
    for name, a in params.named().items():
        if a.ndim == 1:                                          # biases 0, norm gains 1
            assert (a == (1.0 if "norm" in name and name.endswith("weight") else 0.0)).all(), name


def test_gpt_without_a_seed_is_seed_0():
    from minillm.config import ModelConfig
    config = ModelConfig(vocab_size=10, n_ctx=8, d_model=8, n_heads=2, n_layers=1)
    ids = np.arange(5)
    np.testing.assert_array_equal(GPT(config)(ids), GPT(config, seed=0)(ids))
    assert not np.array_equal(GPT(config)(ids), GPT(config, seed=1)(ids))


def test_forward_gives_every_position_unless_asked_for_the_last():
    """forward (the seam the engine overrides): ids [B, T] -> logits [B, T, V] by default."""
    from minillm.config import ModelConfig
    from minillm.model.attention import causal_mask
    config = ModelConfig(vocab_size=10, n_ctx=8, d_model=8, n_heads=2, n_layers=1)
    model, ids = GPT(config, seed=3), np.arange(10).reshape(2, 5) % 10
    logits, _ = model.forward(ids, np.tile(np.arange(5), (2, 1)), causal_mask(5, 5)[None])
    np.testing.assert_array_equal(logits, model(ids))


def test_names_missing_or_unexpected_are_each_refused():
    from minillm.model.params import check_names_and_shapes
    config = GPT.from_pretrained(FIXTURES / "gpt2_tiny").config
    named = init_params(config, np.random.default_rng(0)).named()
    check_names_and_shapes(named, config)
    missing = dict(named)
    missing.pop("wte")
    with pytest.raises(ValueError, match=r"missing \['wte'\], unexpected \[\]"):
        check_names_and_shapes(missing, config)
    with pytest.raises(ValueError, match=r"missing \[\], unexpected \['extra'\]"):
        check_names_and_shapes({**named, "extra": named["wte"]}, config)
