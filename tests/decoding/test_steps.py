"""What each Step reports: its log-prob and its top alternatives, of the raw model distribution;
the draw's probabilities only with top_n; when the writer's text has reached a stop string."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minillm import GPT, ModelConfig
from minillm.decoding.generate import generate
from minillm.decoding.steps import Step, StepWriter
from minillm.functional import log_softmax
from tests.decoding.test_generate import gpt2_tok  # noqa: F401  (a fixture)


def uniform_model(vocab_size=7) -> GPT:
    """Every weight 0: every position's logits are all 0, so every token ties with every other."""
    model = GPT(ModelConfig(vocab_size=vocab_size, n_ctx=16, d_model=8, n_heads=2, n_layers=1))
    for a in model.params.named().values():
        a[...] = 0.0
    return model


class Settings:
    tokenizer, stop_strings = None, ()

    def __init__(self, logprobs=False, top_n=0):
        self.logprobs, self.top_n = logprobs, top_n


def test_top_alternatives_that_really_tie_are_listed_lower_id_first():
    steps = list(generate(uniform_model(), [1, 2], 3, temperature=0, logprobs=True, top_n=4))
    for s in steps:
        assert [i for i, _ in s.top] == [0, 1, 2, 3]
        assert all(lp == pytest.approx(-math.log(7), abs=1e-6) for _, lp in s.top)
        assert s.id == 0 and s.logprob == pytest.approx(-math.log(7), abs=1e-6)


@pytest.mark.parametrize("logits, want", [
    ([1.0, 3.0, 3.0, 0.0, 3.0], [1, 2, 4]),
    ([2.0, 2.0, -np.inf, 5.0], [3, 0, 1]),
    ([0.0, 0.0, 0.0], [0, 1, 2]),
])
def test_step_top_is_best_first_ties_by_lower_id(logits, want):
    z = np.array(logits, np.float32)
    step = StepWriter(Settings(logprobs=True, top_n=3)).step(want[0], z, last=False)
    assert [i for i, _ in step.top] == want
    logp = log_softmax(z)
    assert [lp for _, lp in step.top] == [float(logp[i]) for i in want]
    assert step.logprob == float(logp[want[0]]) and step.text is None


def test_a_step_reports_only_what_was_asked():
    z = np.array([0.5, 0.1], np.float32)
    assert StepWriter(Settings()).step(1, z, last=True) == Step(1)
    only = StepWriter(Settings(logprobs=True)).step(1, z, last=True)
    assert only.top is None and only.logprob == float(log_softmax(z)[1])
    top = StepWriter(Settings(top_n=5)).step(1, z, last=True)
    assert top.logprob is None and [i for i, _ in top.top] == [0, 1]     # top_n > V: all of them


@pytest.mark.parametrize("logprobs, top_n", [(False, 0), (True, 0), (False, 2), (True, 2)])
def test_the_draws_probabilities_are_reported_only_with_top_n(logprobs, top_n):
    """Given the distribution the draw used, a step reports it for its top ids and its own id
    only when top_n asks for alternatives; without top_n both stay None."""
    z, probs = np.array([0.5, 2.0, 0.1], np.float32), np.array([0.0, 0.75, 0.25])
    step = StepWriter(Settings(logprobs=logprobs, top_n=top_n)).step(2, z, last=False, probs=probs)
    if top_n:
        assert [i for i, _ in step.top] == [1, 0]
        assert step.top_sampled == (0.75, 0.0) and step.sampled == 0.25
    else:
        assert step.top is None and step.top_sampled is None and step.sampled is None


class TextSettings:
    logprobs, top_n = False, 0

    def __init__(self, tokenizer, stop_strings):
        self.tokenizer, self.stop_strings = tokenizer, stop_strings


@given(st.text(alphabet="ab U:", min_size=1, max_size=12), st.data())
def test_a_writer_is_stopped_from_the_token_that_completes_a_stop_string(gpt2_tok, text, data):
    """``stopped`` turns True at the step whose token completes a stop string in the text so far,
    never before, and stays True: the loop ends there."""
    start = data.draw(st.integers(0, len(text) - 1))
    stop = text[start:data.draw(st.integers(start + 1, min(len(text), start + 3)))]
    ids = gpt2_tok.encode(text)
    writer = StepWriter(TextSettings(gpt2_tok, [stop]))
    for n, token in enumerate(ids, 1):
        writer.step(token, np.zeros(gpt2_tok.vocab_size, np.float32), last=False)
        assert writer.stopped == (stop in gpt2_tok.decode(ids[:n]))
    assert writer.stopped
