"""With top_n, each Step also reports the draw's distribution: its top ids' probabilities and the
chosen id's, after temperature and the filters (0.0 for an id they removed); without, None."""
import numpy as np
import pytest

from minillm.config import ModelConfig
from minillm.decoding.generate import generate
from minillm.sampling import Sampler
from tests.model.strategies import random_model


def test_steps_report_the_probabilities_the_draw_used_when_top_n_is_asked():
    config = ModelConfig(vocab_size=20, n_ctx=16, d_model=8, n_heads=2, n_layers=1)
    model, prompt = random_model(config, 1), [3, 1, 4]
    sampler = Sampler(temperature=0.7, top_k=4)
    steps = list(generate(model, prompt, 6, sampler=sampler, seed=0, top_n=6, stop_at_eos=False))
    ids = prompt + [s.id for s in steps]
    for n, s in enumerate(steps):
        probs = sampler.probs(model(np.array(ids[:len(prompt) + n]))[-1])          # [V]
        assert s.sampled == pytest.approx(float(probs[s.id]), abs=1e-6) and s.sampled > 0
        assert s.top_sampled == pytest.approx([float(probs[i]) for i, _ in s.top], abs=1e-6)
        assert sum(p == 0.0 for p in s.top_sampled) == 2             # top-4 removed 2 of the 6
    plain = list(generate(model, prompt, 6, sampler=sampler, seed=0, stop_at_eos=False))
    assert [s.id for s in plain] == ids[len(prompt):]
    assert all(s.top_sampled is None and s.sampled is None for s in plain)


def test_the_reported_probabilities_include_the_penalties_of_the_history():
    """With penalties, the draw's distribution depends on the tokens so far (the prompt counted as
    each penalty says): the Step reports that distribution, not the unpenalised one."""
    sampler = Sampler(repetition_penalty=3.0, presence_penalty=2.0)
    model, prompt, steps = generated(sampler, top_n=20)
    ids = prompt + [s.id for s in steps]
    for n, s in enumerate(steps):
        logits = model(np.array(ids[:len(prompt) + n]))[-1]                       # [V]
        probs = sampler.probs(logits, history=ids[:len(prompt) + n], prompt_len=len(prompt))
        assert s.top_sampled == pytest.approx([float(probs[i]) for i, _ in s.top], abs=1e-6)
        assert not np.allclose(probs, sampler.probs(logits), atol=1e-3)  # the penalties count


def generated(sampler: Sampler, top_n: int):
    """Five steps of a small random model after the prompt [3, 1, 4], seed 0, no stop."""
    config = ModelConfig(vocab_size=20, n_ctx=16, d_model=8, n_heads=2, n_layers=1)
    model, prompt = random_model(config, 1), [3, 1, 4]
    return model, prompt, list(generate(model, prompt, 5, sampler=sampler, seed=0, top_n=top_n,
                                        stop_at_eos=False))
