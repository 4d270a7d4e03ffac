"""Option scoring: a distribution over the options only, equal to brute force, and its cost."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minillm.config import ModelConfig
from minillm.functional import log_softmax
from minillm.decoding.options import score_options
from tests.model.strategies import random_model, tiny_configs


class Counting:
    """Wraps a model and counts its calls (what ``forward_passes`` must report)."""

    def __init__(self, model):
        self.model, self.config, self.calls = model, model.config, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.model(*args, **kwargs)


def brute_force_logprob(model, prompt, option):
    """Σ log p of the option's tokens from one uncached forward over prompt + option."""
    logits = model(np.array(list(prompt) + list(option)))                  # [P + n, V]
    logp = log_softmax(logits)[len(prompt) - 1:-1]                         # [n, V]
    return float(logp[np.arange(len(option)), option].astype(np.float64).sum())


@given(tiny_configs(), st.data())
def test_probs_are_normalised_exp_of_brute_force_logprobs(config, data):
    model = Counting(random_model(config, data.draw(st.integers(0, 99))))
    ids = st.integers(0, config.vocab_size - 1)
    prompt = data.draw(st.lists(ids, min_size=1, max_size=config.n_ctx // 2))
    options = data.draw(st.lists(st.lists(ids, min_size=1, max_size=config.n_ctx // 2 - 1),
                                 min_size=1, max_size=5, unique_by=tuple))
    result = score_options(model, None, prompt, options)
    brute = np.array([brute_force_logprob(model.model, prompt, o) for o in options])
    np.testing.assert_allclose(result.logprobs, brute, atol=1e-4)
    np.testing.assert_allclose(result.probs, np.exp(brute) / np.exp(brute).sum(), atol=1e-5)
    assert result.probs.sum() == pytest.approx(1.0)
    assert result.best in result.options                  # never anything outside the options
    assert model.calls == result.forward_passes == (1 if max(map(len, options)) == 1 else 2)
    assert result.generation_passes == max(map(len, options))


def test_single_token_options_cost_exactly_one_forward_pass():
    model = Counting(random_model(ModelConfig(vocab_size=30, n_ctx=16, d_model=8, n_heads=2,
                                              n_layers=2), 4))
    result = score_options(model, None, [1, 2, 3, 4], [[10], [11], [12], [13]])
    assert model.calls == result.forward_passes == 1


@pytest.fixture(scope="module")
def gpt2_tok():
    from minillm.tokenizer.tokenizer import Tokenizer
    return Tokenizer.load("gpt2")


def test_string_options_with_the_gpt2_tokenizer(gpt2_tok):
    config = ModelConfig(vocab_size=gpt2_tok.vocab_size, n_ctx=64, d_model=8, n_heads=2, n_layers=1)
    model = random_model(config, 0)
    prompt = "为什么大海看起来是蓝色的？ Answer A, B, C or D. The answer is"
    options = [" A", " B", " C", " D"]
    result = score_options(model, gpt2_tok, prompt, options)
    assert result.forward_passes == 1 and result.best in options      # " A" … " D" are single tokens
    p_ids = gpt2_tok.encode(prompt)
    brute = [brute_force_logprob(model, p_ids, gpt2_tok.encode(o)) for o in options]
    np.testing.assert_allclose(result.logprobs, brute, atol=1e-4)
    long = score_options(model, gpt2_tok, prompt, [" 海水会吸收红光", " 蓝光更容易被散射"])
    assert long.forward_passes == 2 and long.generation_passes > 2


@pytest.mark.parametrize("options, match", [
    ([], "non-empty"), ("A", "non-empty"), ([[1], [1]], "distinct"), ([[1], []], "non-empty"),
    ([[1], [99]], r"\[0, 30\)"), ([list(range(20))], "n_ctx"),
])
def test_bad_options_raise_clear_errors(options, match):
    model = random_model(ModelConfig(vocab_size=30, n_ctx=16, d_model=4, n_heads=1, n_layers=1), 0)
    with pytest.raises(ValueError, match=match):
        score_options(model, None, [1, 2], options)


def test_str_without_tokenizer_is_a_type_error():
    model = random_model(ModelConfig(vocab_size=30, n_ctx=16, d_model=4, n_heads=1, n_layers=1), 0)
    with pytest.raises(TypeError, match="tokenizer"):
        score_options(model, None, "prompt", ["a", "b"])
