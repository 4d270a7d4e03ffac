"""generate's keywords, checked once into one frozen GenerationSettings that the loops receive."""
import dataclasses
import inspect

import numpy as np
import pytest

import minillm.decoding.speculative as speculative
from minillm.config import ModelConfig
from minillm.decoding.generate import generate, generate_with
from minillm.decoding.generate_args import GenerationSettings
from tests.model.strategies import random_model

CONFIG = ModelConfig(vocab_size=40, n_ctx=32, d_model=16, n_heads=4, n_layers=2, d_ff=32)
PROMPT = [1, 2, 3, 1, 2, 3, 1]


@pytest.fixture(scope="module")
def model():
    return random_model(CONFIG, 0)


def test_generation_settings_are_frozen(model):
    settings = GenerationSettings.build(model, sampling={"temperature": 0}, top_n=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.top_n = 3
    assert settings.sampler.temperature == 0 and settings.stop_ids == frozenset(CONFIG.eos_ids)


def test_build_has_generates_defaults():
    """The defaults live twice (generate's public signature, build's): they must agree."""
    ours = inspect.signature(GenerationSettings.build).parameters
    public = inspect.signature(generate).parameters
    shared = set(ours) & set(public) - {"model"}
    assert shared == {"seed", "rng", "stop_ids", "stop_at_eos", "stop_strings", "tokenizer",
                      "logprobs", "top_n", "sliding_window", "draft", "num_draft_tokens",
                      "constraint"}
    assert {n: ours[n].default for n in shared} == {n: public[n].default for n in shared}
    sampling = ("temperature", "top_k", "top_p", "min_p", "preset", "sampler")
    assert all(public[n].default is None for n in sampling)      # None: not given to make_sampler


def test_settings_built_once_give_generates_tokens(model):
    """generate(keywords) == generate_with(the settings those keywords build), seeded sampling."""
    kw = dict(temperature=0.9, top_k=10)
    want = [s.id for s in generate(model, PROMPT, 20, seed=3, **kw)]
    settings = GenerationSettings.build(model, sampling=kw, seed=3)
    assert [s.id for s in generate_with(model, PROMPT, 20, settings)] == want


def test_the_speculative_loop_receives_generates_settings(model, monkeypatch):
    """The draft path gets the one settings object (not a list of its parts) and gives plain
    greedy's tokens."""
    received = []
    real = speculative.speculative_steps

    def spy(model, prompt, n_new, settings, *, cache):
        received.append(settings)
        return real(model, prompt, n_new, settings, cache=cache)

    monkeypatch.setattr(speculative, "speculative_steps", spy)
    plain = [s.id for s in generate(model, PROMPT, 20, temperature=0, top_n=2)]
    fast = [s.id for s in generate(model, PROMPT, 20, temperature=0, top_n=2, draft="prompt",
                                   num_draft_tokens=3)]
    assert fast == plain
    [settings] = received
    assert isinstance(settings, GenerationSettings)
    assert (settings.draft, settings.num_draft_tokens, settings.top_n) == ("prompt", 3, 2)


def test_settings_errors_are_generates(model):
    """Bad keywords fail when the settings are built, with generate's messages."""
    for bad, match in ((dict(top_n=-1), "top_n"), (dict(stop_strings=["x"]), "tokenizer"),
                       (dict(sliding_window=0), "sliding_window"),
                       (dict(draft="prompt", num_draft_tokens=0), "num_draft_tokens")):
        with pytest.raises(ValueError, match=match):
            GenerationSettings.build(model, **bad)
        with pytest.raises(ValueError, match=match):
            generate(model, PROMPT, 5, **bad)
    with pytest.raises(TypeError):
        GenerationSettings.build(model, sampling={"temprature": 0.5})     # a misspelt setting
    with pytest.raises(TypeError):
        GenerationSettings.build(model, seed=0, rng=np.random.default_rng(0))
