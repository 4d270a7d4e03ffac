"""The reading loop ``generate_simple`` (no cache) yields exactly what ``generate`` yields.

Same model, prompt, sampler settings and seed -> the same ids, whatever the sampler: greedy, the
presets, single settings, penalties. The two differ only in how the logits are computed (the whole
context every step vs the KV cache), which changes them by float32 rounding; the random draws and
the filters then agree token for token.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minillm import generate, generate_simple
from minillm.config import ModelConfig
from minillm import GPT
from minillm.sampling import PRESETS, Sampler
from tests.conftest import FIXTURES
from tests.model.strategies import random_model, tiny_configs

FIXTURE_MODELS = sorted(p.parent.name for p in FIXTURES.glob("*/generation.json"))


@st.composite
def sampling_settings(draw):
    """Keyword arguments for both loops: greedy, a preset (maybe overridden), single settings, or
    a full Sampler with penalties."""
    kind = draw(st.sampled_from(["greedy", "preset", "settings", "sampler"]))
    if kind == "greedy":
        return {"temperature": 0}
    if kind == "preset":
        extra = draw(st.sampled_from([{}, {"temperature": 0.5}, {"top_k": 3}, {"min_p": 0.1}]))
        return {"preset": draw(st.sampled_from(sorted(PRESETS))), **extra}
    if kind == "settings":
        return {"temperature": draw(st.sampled_from([0.3, 1.0, 1.7])),
                "top_k": draw(st.integers(0, 6)), "top_p": draw(st.sampled_from([0.5, 0.9, 1.0])),
                "min_p": draw(st.sampled_from([0.0, 0.05, 0.3]))}
    return {"sampler": Sampler(temperature=draw(st.sampled_from([0.0, 0.8])),
                               repetition_penalty=draw(st.sampled_from([1.0, 1.5])),
                               frequency_penalty=draw(st.sampled_from([0.0, 0.5])),
                               presence_penalty=draw(st.sampled_from([0.0, 1.0])))}


@given(tiny_configs(), sampling_settings(), st.data())
def test_generate_simple_equals_generate(config, sampling, data):
    model = random_model(config, data.draw(st.integers(0, 99)))
    P = data.draw(st.integers(1, config.n_ctx - 1))
    prompt = data.draw(st.lists(st.integers(0, config.vocab_size - 1), min_size=P, max_size=P))
    n_new = data.draw(st.integers(0, config.n_ctx - P))
    seed = data.draw(st.integers(0, 2**32 - 1))
    simple = list(generate_simple(model, prompt, n_new, seed=seed, **sampling))
    cached = [s.id for s in generate(model, prompt, n_new, seed=seed, stop_at_eos=False, **sampling)]
    assert simple == cached and len(simple) == n_new


@pytest.mark.parametrize("name", FIXTURE_MODELS)
@pytest.mark.parametrize("sampling", [{"temperature": 0}, *({"preset": p} for p in sorted(PRESETS))],
                         ids=lambda s: str(next(iter(s.values()))))
def test_generate_simple_equals_generate_on_the_reference_models(name, sampling):
    """The models whose logits equal transformers' (tests/fixtures), 20 tokens, seed 0."""
    model = GPT.from_pretrained(FIXTURES / name)
    prompt = [1, 2, 3, 4]
    simple = list(generate_simple(model, prompt, 20, seed=0, **sampling))
    cached = [s.id for s in generate(model, prompt, 20, seed=0, stop_at_eos=False, **sampling)]
    assert simple == cached


def test_generate_simple_takes_an_rng_and_checks_its_arguments():
    model = random_model(ModelConfig(vocab_size=12, n_ctx=16, d_model=8, n_heads=2, n_layers=1), 0)
    a = list(generate_simple(model, [1, 2], 6, preset="creative", rng=np.random.default_rng(3)))
    assert a == list(generate_simple(model, [1, 2], 6, preset="creative", seed=3))
    with pytest.raises(ValueError, match="max_new_tokens"):
        list(generate_simple(model, [1, 2], -1))
    with pytest.raises(ValueError, match=r"\[0, 12\)"):
        list(generate_simple(model, [12], 1))
    with pytest.raises(ValueError, match="preset"):
        list(generate_simple(model, [1], 1, preset="nope"))
