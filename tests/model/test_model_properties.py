"""Properties of the forward pass that hold for any weights: the model's specification."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from minillm.io.hf.config import read_config, write_config
from minillm.config import ModelConfig
from minillm.functional import log_softmax
from minillm import GPT
from minillm.model.attention import causal_mask
from tests.model.strategies import random_model, tiny_configs


@st.composite
def model_and_ids(draw, batch=False):
    config = draw(tiny_configs())
    T = draw(st.integers(2, config.n_ctx))
    B = draw(st.integers(1, 3)) if batch else 1
    ids = np.array(draw(st.lists(st.integers(0, config.vocab_size - 1), min_size=B * T, max_size=B * T)))
    return random_model(config, draw(st.integers(0, 1000))), ids.reshape(B, T)


@given(model_and_ids(batch=True))
def test_one_pass_loss_equals_prefix_by_prefix_cross_entropy(case):
    """Training is parallel: one forward over the sequence gives the same loss as running every
    prefix separately and scoring its last position (what generation would do)."""
    model, ids = case
    B, T = ids.shape
    per_position = []
    for t in range(1, T):
        logits = model(ids[:, :t])[:, -1]                        # [B, V] prediction after t tokens
        per_position.append(-log_softmax(logits)[np.arange(B), ids[:, t]])
    expected = float(np.mean(np.stack(per_position).astype(np.float64)))
    assert model.loss(ids) == pytest.approx(expected, rel=1e-5, abs=1e-6)


@given(model_and_ids(), st.data())
def test_changing_future_tokens_never_changes_past_logits(case, data):
    model, ids = case
    T = ids.shape[1]
    i = data.draw(st.integers(0, T - 2))
    changed = ids.copy()
    changed[0, i + 1:] = data.draw(st.lists(st.integers(0, model.config.vocab_size - 1),
                                            min_size=T - i - 1, max_size=T - i - 1))
    np.testing.assert_array_equal(model(ids)[:, :i + 1], model(changed)[:, :i + 1])


@given(model_and_ids(batch=True))
def test_attention_rows_sum_to_one_and_future_weights_are_exactly_zero(case):
    model, ids = case
    _, weights = model(ids, return_weights=True)
    T = ids.shape[1]
    above_diagonal = ~causal_mask(T, T)
    for w in weights:                                             # [B, H, T, T] per layer
        assert w.shape == (ids.shape[0], model.config.n_heads, T, T)
        np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=1e-5)
        assert np.all(w[..., above_diagonal] == 0.0)              # exactly, not approximately


@given(model_and_ids(batch=True))
def test_outputs_are_float32_with_the_documented_shapes(case):
    model, ids = case
    logits = model(ids)
    assert logits.dtype == np.float32 and logits.shape == ids.shape + (model.config.vocab_size,)
    assert model(ids[0]).shape == (ids.shape[1], model.config.vocab_size)    # [T] -> [T, V]
    # equal up to BLAS blocking order (a [B,1,C] and a [B,T,C] matmul may sum in another order)
    np.testing.assert_allclose(model(ids, last_only=True)[:, 0], logits[:, -1], rtol=1e-5, atol=1e-6)


def test_causal_mask_is_lower_triangular_with_cache_offset():
    np.testing.assert_array_equal(causal_mask(3, 3), np.tril(np.ones((3, 3), bool)))
    np.testing.assert_array_equal(causal_mask(1, 4), [[True, True, True, True]])
    np.testing.assert_array_equal(causal_mask(2, 4), [[1, 1, 1, 0], [1, 1, 1, 1]])


@pytest.fixture(scope="module")
def small_model():
    return GPT(ModelConfig(vocab_size=20, n_ctx=8, d_model=8, n_heads=2, n_layers=1))


@pytest.mark.parametrize("ids, error, message", [
    (np.array([0, 20]), ValueError, r"\[0, 20\)"),
    (np.array([-1, 2]), ValueError, r"\[0, 20\)"),
    (np.arange(9), ValueError, "context window"),
    (np.array([0.0, 1.0]), TypeError, "integers"),
    (np.zeros((1, 2, 3), int), ValueError, "shape"),
    (np.zeros((1, 0), int), ValueError, "shape"),
])
def test_bad_token_ids_raise_clear_errors(small_model, ids, error, message):
    with pytest.raises(error, match=message):
        small_model(ids)


def test_loss_takes_a_full_window_plus_its_last_target(small_model):
    """Regression: loss rejected n_ctx + 1 tokens, though only n_ctx of them are inputs."""
    ids = np.arange(9)[None] % 20                               # n_ctx = 8 inputs, 8 targets
    assert np.isfinite(small_model.loss(ids))
    with pytest.raises(ValueError, match="context window"):
        small_model.loss(np.arange(10)[None])


def test_loss_needs_two_tokens(small_model):
    with pytest.raises(ValueError, match="at least 2 tokens"):
        small_model.loss(np.array([[3]]))


@pytest.mark.parametrize("kwargs, message", [
    (dict(d_model=10, n_heads=4), "divisible"),
    (dict(n_heads=4, n_kv_heads=3), "multiple"),
    (dict(n_layers=0), "positive"),
    (dict(arch="bert"), "arch"),
    (dict(norm="batchnorm"), "norm"),
])
def test_bad_configs_raise_clear_errors(kwargs, message):
    base = dict(vocab_size=10, n_ctx=8, d_model=8, n_heads=2, n_layers=1)
    with pytest.raises(ValueError, match=message):
        ModelConfig(**{**base, **kwargs})


@given(tiny_configs())
def test_config_round_trips_through_hf_config_json(tmp_path_factory, config):
    path = tmp_path_factory.mktemp("cfg") / "config.json"
    write_config(config, path)
    assert read_config(path) == config
