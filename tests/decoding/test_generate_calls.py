"""What generate asks of the model: each call feeds only what the cache lacks, for the last
position's logits only (all a step needs; GPT's ``last_only``)."""
import numpy as np

from minillm.config import ModelConfig
from minillm.decoding.generate import generate
from tests.model.strategies import random_model


class Recording:
    """Wraps a model; records each call's number of fed tokens and its last_only."""

    def __init__(self, model):
        self.model, self.config, self.calls = model, model.config, []

    def __call__(self, ids, *args, last_only=False, **kwargs):
        self.calls.append((np.shape(ids)[-1], last_only))
        return self.model(ids, *args, last_only=last_only, **kwargs)


def test_each_step_feeds_the_new_tokens_and_asks_for_the_last_position_only():
    config = ModelConfig(vocab_size=20, n_ctx=16, d_model=8, n_heads=2, n_layers=1)
    model = Recording(random_model(config, 0))
    steps = list(generate(model, [1, 2, 3, 4], 5, temperature=0.8, seed=0, stop_at_eos=False))
    assert len(steps) == 5
    assert model.calls == [(4, True)] + [(1, True)] * 4             # the last token is never fed
