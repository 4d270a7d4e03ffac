"""generate's arguments, checked once into one frozen GenerationSettings that the loops receive:
one Sampler and one Stops object flow down; the keyword shortcuts (temperature=, stop_ids=, …)
build those two objects in one place (generate_args.sampler_and_stops) and give the same tokens."""
import dataclasses
import inspect

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minillm.decoding.speculative as speculative
from minillm.config import ModelConfig
from minillm.decoding.generate import generate, generate_with
from minillm import Sampler, Stops, beam_search, generate_batch
from minillm.decoding.generate_args import GenerationSettings, sampler_and_stops
from minillm.decoding.serving import ContinuousBatcher
from minillm.sampling import PRESETS
from tests.model.strategies import random_model

CONFIG = ModelConfig(vocab_size=40, n_ctx=32, d_model=16, n_heads=4, n_layers=2, d_ff=32)
PROMPT = [1, 2, 3, 1, 2, 3, 1]


@pytest.fixture(scope="module")
def model():
    return random_model(CONFIG, 0)


def test_generation_settings_are_frozen(model):
    settings = GenerationSettings.build(model, sampler=Sampler(temperature=0), top_n=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.top_n = 3
    assert settings.sampler.temperature == 0 and settings.stop_ids == frozenset(CONFIG.eos_ids)


def test_build_has_generates_defaults():
    """The defaults live twice (generate's public signature, build's): they must agree."""
    ours = inspect.signature(GenerationSettings.build).parameters
    public = inspect.signature(generate).parameters
    shared = set(ours) & set(public) - {"model"}
    assert shared == {"sampler", "stops", "seed", "rng", "tokenizer", "logprobs", "top_n",
                      "sliding_window", "draft", "num_draft_tokens", "constraint"}
    assert {n: ours[n].default for n in shared} == {n: public[n].default for n in shared}
    assert public["shortcuts"].kind is inspect.Parameter.VAR_KEYWORD     # the documented shortcuts


def test_settings_built_once_give_generates_tokens(model):
    """generate(keywords) == generate_with(the settings those keywords build), seeded sampling."""
    kw = dict(temperature=0.9, top_k=10)
    want = [s.id for s in generate(model, PROMPT, 20, seed=3, **kw)]
    settings = GenerationSettings.build(model, sampler=Sampler(**kw), seed=3)
    assert [s.id for s in generate_with(model, PROMPT, 20, settings)] == want


@st.composite
def shortcut_forms(draw):
    """(shortcut keywords, the Sampler and Stops they stand for): a preset maybe overridden, or
    single settings; stop ids, maybe the EOS ids off."""
    sampling = {}
    if draw(st.booleans()):
        sampling["preset"] = draw(st.sampled_from(sorted(PRESETS)))
    for name, values in (("temperature", [0, 0.5, 1.0, 1.6]), ("top_k", [0, 1, 5]),
                         ("top_p", [0.3, 0.9, 1.0]), ("min_p", [0.0, 0.1])):
        if draw(st.booleans()):
            sampling[name] = draw(st.sampled_from(values))
    given_settings = {n: v for n, v in sampling.items() if n != "preset"}
    sampler = (Sampler.from_preset(sampling["preset"], **given_settings) if "preset" in sampling
               else Sampler(**given_settings))
    stopping = {}
    if draw(st.booleans()):
        stopping["stop_ids"] = draw(st.lists(st.integers(0, CONFIG.vocab_size - 1), max_size=3))
    if draw(st.booleans()):
        stopping["stop_at_eos"] = draw(st.booleans())
    stops = Stops(ids=stopping.get("stop_ids", ()), eos=stopping.get("stop_at_eos", True))
    return sampling | stopping, sampler, stops


@given(shortcut_forms(), st.integers(0, 2**32 - 1))
def test_the_shortcut_form_equals_the_object_form(model, form, seed):
    """generate(temperature=…, stop_ids=…) gives the tokens, text-free Steps and stops of
    generate(sampler=Sampler(…), stops=Stops(…)), for any seed; so do generate_batch, serve's
    ContinuousBatcher and beam_search (its stop shortcuts)."""
    shortcuts, sampler, stops = form
    assert sampler_and_stops("generate", None, None, shortcuts) == (sampler, stops)
    short = list(generate(model, PROMPT, 12, seed=seed, **shortcuts))
    objects = list(generate(model, PROMPT, 12, seed=seed, sampler=sampler, stops=stops))
    assert short == objects
    rows = [PROMPT, PROMPT[:3]]
    assert (generate_batch(model, rows, 6, seed=seed, **shortcuts)
            == generate_batch(model, rows, 6, seed=seed, sampler=sampler, stops=stops))
    stop_part = {n: v for n, v in shortcuts.items() if n.startswith("stop")}
    assert (beam_search(model, PROMPT, beam_size=2, max_new_tokens=4, **stop_part)
            == beam_search(model, PROMPT, beam_size=2, max_new_tokens=4, stops=stops))


def test_the_stop_strings_shortcut_equals_stops_strings(model):
    tok = FakeTokenizer()
    for seed in range(5):
        short = list(generate(model, PROMPT, 15, seed=seed, tokenizer=tok, stop_strings=["cb"]))
        objects = list(generate(model, PROMPT, 15, seed=seed, tokenizer=tok,
                                stops=Stops(strings=("cb",))))
        assert short == objects and "cb" not in "".join(s.text for s in short)


class FakeTokenizer:
    """Token i spells one of four letters: enough text for stop strings."""
    vocab_size = CONFIG.vocab_size

    def token_bytes(self, i):
        return bytes([97 + i % 4])


@pytest.mark.parametrize("run, error, match", [
    (lambda m: generate(m, PROMPT, 2, sampler=Sampler(), temperature=0.5), ValueError, "either sampler="),
    (lambda m: generate(m, PROMPT, 2, sampler=Sampler(), preset="chat"), ValueError, "either sampler="),
    (lambda m: generate(m, PROMPT, 2, stops=Stops(), stop_ids=3), ValueError, "either stops="),
    (lambda m: generate(m, PROMPT, 2, stops=Stops(), stop_at_eos=False), ValueError, "either stops="),
    (lambda m: generate(m, PROMPT, 2, sampler={"temperature": 0}), TypeError, "Sampler"),
    (lambda m: generate(m, PROMPT, 2, stops=[3]), TypeError, "Stops"),
    (lambda m: generate(m, PROMPT, 2, temprature=0.5), TypeError, "unexpected keyword argument 'temprature'"),
    (lambda m: generate_batch(m, [PROMPT], 2, stop_strings=["x"]), TypeError, "stop_strings"),
    (lambda m: generate_batch(m, [PROMPT], 2, stops=Stops(strings=("x",))), ValueError, "stop strings"),
    (lambda m: ContinuousBatcher(m, stops=Stops(strings=("x",))), ValueError, "stop strings"),
    (lambda m: beam_search(m, PROMPT, 2, 2, stops=Stops(), stop_ids=3), ValueError, "either stops="),
    (lambda m: beam_search(m, PROMPT, 2, 2, stops=Stops(strings=("x",))), ValueError, "stop strings"),
    (lambda m: Stops(ids="3"), TypeError, "stop ids"),
    (lambda m: Stops(ids=[1.5]), TypeError, "stop ids"),
    (lambda m: Stops(strings=[""]), ValueError, "non-empty"),
])
def test_bad_combinations_are_refused_clearly(model, run, error, match):
    """An object and its own shortcut together, a dict for an object, a misspelt shortcut, stop
    strings where no text is made: each an error naming what is allowed."""
    with pytest.raises(error, match=match):
        run(model)


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
    for bad, match in ((dict(top_n=-1), "top_n"), (dict(stops=Stops(strings=("x",))), "tokenizer"),
                       (dict(sliding_window=0), "sliding_window"),
                       (dict(draft="prompt", num_draft_tokens=0), "num_draft_tokens")):
        with pytest.raises(ValueError, match=match):
            GenerationSettings.build(model, **bad)
        with pytest.raises(ValueError, match=match):
            generate(model, PROMPT, 5, **bad)
    with pytest.raises(ValueError, match="tokenizer"):
        generate(model, PROMPT, 5, stop_strings=["x"])
    with pytest.raises(TypeError):
        GenerationSettings.build(model, sampler=Sampler(), temprature=0.5)   # a misspelt setting
    with pytest.raises(TypeError):
        GenerationSettings.build(model, seed=0, rng=np.random.default_rng(0))
