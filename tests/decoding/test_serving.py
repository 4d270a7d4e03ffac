"""Continuous batching: every request gets what it would alone, while others join and leave."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minillm.config import ModelConfig
from minillm.decoding.generate import generate
from minillm.sampling import Sampler
from minillm.decoding.serving import ContinuousBatcher, serve
from tests.model.strategies import random_model, tiny_configs


@given(tiny_configs(), st.data())
def test_each_request_gets_what_it_would_alone(config, data):
    """Greedy; uneven prompts and budgets, fewer slots than requests, and a cache small enough
    that slots are shifted (a long prompt joins) and compacted (columns run out)."""
    model = random_model(config, data.draw(st.integers(0, 99)),
                         data.draw(st.sampled_from(["plain", "rows"])))
    n_req = data.draw(st.integers(1, 5))
    prompts, budgets = [], []
    for _ in range(n_req):
        P = data.draw(st.integers(1, config.n_ctx - 2))
        prompts.append(data.draw(st.lists(st.integers(0, config.vocab_size - 1), min_size=P, max_size=P)))
        budgets.append(data.draw(st.integers(0, config.n_ctx - P)))
    stop = data.draw(st.lists(st.integers(0, config.vocab_size - 1), max_size=1))
    got = serve(model, prompts, budgets, batch_size=data.draw(st.integers(1, 3)),
                capacity=config.n_ctx, stop_ids=stop, temperature=0)
    for prompt, n, ids in zip(prompts, budgets, got):
        assert ids == [s.id for s in generate(model, prompt, n, temperature=0, stop_ids=stop)]


def test_a_short_request_does_not_wait_for_a_long_one():
    config = ModelConfig(vocab_size=20, n_ctx=64, d_model=8, n_heads=2, n_layers=1, d_ff=8)
    batcher = ContinuousBatcher(random_model(config, 0), batch_size=2, capacity=64, temperature=0)
    long, short1, short2 = (batcher.submit([1, 2, 3], n) for n in (40, 3, 3))
    for _ in range(8):
        batcher.step()
    assert set(batcher.done) == {short1, short2}              # both served beside the long one
    while batcher.busy():
        batcher.step()
    assert len(batcher.done[long]) == 40


def test_sampling_is_reproducible_and_penalties_see_each_row():
    config = ModelConfig(vocab_size=20, n_ctx=32, d_model=8, n_heads=2, n_layers=1, d_ff=8)
    model = random_model(config, 1)
    prompts = [[1, 2, 3], [4], [5, 6]]
    sampler = Sampler.from_preset("chat", repetition_penalty=1.3)
    runs = [serve(model, prompts, 10, batch_size=2, sampler=sampler, seed=3) for _ in range(2)]
    assert runs[0] == runs[1] and [len(r) for r in runs[0]] == [10, 10, 10]


def test_bad_requests_are_refused():
    config = ModelConfig(vocab_size=20, n_ctx=16, d_model=8, n_heads=2, n_layers=1, d_ff=8)
    model = random_model(config, 0)
    with pytest.raises(ValueError, match="capacity"):
        serve(model, [[1, 2, 3]], 20)
    with pytest.raises(ValueError, match="one per prompt"):
        serve(model, [[1], [2]], [3])
    with pytest.raises(ValueError, match="max_new_tokens"):
        serve(model, [[1]], -1)
