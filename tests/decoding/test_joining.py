"""Requests joining a running batch (decoding/joining.py): prompts of similar length prefilled in
one padded forward, each row what it would be alone.

Tolerance: |together − alone| ≤ 1e-4 · max(1, max |alone|) for logits and cached keys/values (the
padded forward sums the same float32 terms in another order), as tests/engine/.
"""
import numpy as np
from hypothesis import given, strategies as st

from minillm import KVCache
from minillm.config import ModelConfig
from minillm.decoding.joining import prefill_together, prompt_groups
from minillm.decoding.serving import ContinuousBatcher, Request
from tests.model.strategies import random_model, tiny_configs


def close(a, b):
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-4 * max(1.0, float(np.abs(b).max())))


def requests(lengths):
    return [(slot, Request(slot, np.zeros(n, np.int64), 1)) for slot, n in enumerate(lengths)]


def test_prompt_groups_keep_padding_under_half_of_each_forward():
    groups = prompt_groups(requests([16, 500, 18]))
    assert [[len(r.prompt) for _, r in g] for g in groups] == [[16, 18], [500]]
    assert [[len(r.prompt) for _, r in g] for g in prompt_groups(requests([14, 18, 15, 16] * 2))] \
        == [[14, 14, 15, 15, 16, 16, 18, 18]]                        # eight prompts, one forward
    assert prompt_groups([]) == []


@given(st.lists(st.integers(1, 2000), max_size=12), st.floats(0.0, 0.9))
def test_every_request_is_in_one_group_and_no_group_pads_past_its_share(lengths, waste):
    groups = prompt_groups(requests(lengths), waste)
    assert sorted(slot for g in groups for slot, _ in g) == list(range(len(lengths)))
    for g in groups:
        n = [len(r.prompt) for _, r in g]
        assert len(g) == 1 or max(n) * len(n) - sum(n) <= waste * max(n) * len(n)


@given(tiny_configs(), st.integers(0, 50), st.lists(st.integers(1, 7), min_size=1, max_size=4))
def test_prompts_prefilled_together_are_what_each_is_alone(config, seed, lengths):
    model = random_model(config, seed, "by_width")
    rng = np.random.default_rng(seed)
    prompts = [rng.integers(0, config.vocab_size, n) for n in lengths]
    cache, logits = prefill_together(model, prompts)                  # [k, V]
    P = max(lengths)
    for i, prompt in enumerate(prompts):
        alone = KVCache(config, 1, len(prompt))
        close(logits[i], model(prompt[None], cache=alone, last_only=True)[0, -1])
        close(cache.k[:, i, :, P - len(prompt):], alone.k[:, 0])     # right-aligned, as the slots
        close(cache.v[:, i, :, P - len(prompt):], alone.v[:, 0])
        assert cache.valid[i].tolist() == [False] * (P - len(prompt)) + [True] * len(prompt)


def test_requests_arriving_together_are_prefilled_in_one_forward():
    """Four requests submitted at once: one [4, P] prompt forward (counted by the model's calls
    with more than one row of more than one token), then the greedy tokens each gets alone."""
    config = ModelConfig(arch="llama", vocab_size=40, n_ctx=32, d_model=16, n_heads=4,
                         n_kv_heads=2, n_layers=2, d_ff=32)
    model = random_model(config, 4, "by_width")
    calls = []

    class Counting:                                                   # the model, its calls seen
        def __init__(self, inner):
            self.inner, self.config = inner, inner.config

        def __call__(self, ids, **kwargs):
            calls.append(np.shape(ids))
            return self.inner(ids, **kwargs)
    prompts = [np.arange(n) % 40 for n in (5, 6, 6, 7)]
    batcher = ContinuousBatcher(Counting(model), batch_size=4, capacity=24, temperature=0)
    ids = [batcher.submit(p, 6) for p in prompts]
    while batcher.busy():
        batcher.step()
    assert calls[0] == (4, 7) and all(shape[1] == 1 for shape in calls[1:])
    for i, p in zip(ids, prompts):
        alone = ContinuousBatcher(model, batch_size=1, capacity=24, temperature=0)
        j = alone.submit(p, 6)
        while alone.busy():
            alone.step()
        assert batcher.done[i] == alone.done[j]
