"""What ``generate`` promises beyond the tokens: a step carries only what was asked for, the
KV cache it makes holds prompt + max_new_tokens positions (not n_ctx), and ids reach the model as
given, up to the largest vocabulary a ModelConfig allows (2**32 - 1 ids: past int32's range)."""
import numpy as np
import pytest

from minillm import kv_cache_sizes as kv
from minillm.config import ModelConfig
from minillm.decoding.generate import Step, generate
from tests.model.strategies import random_model

TINY = ModelConfig(vocab_size=20, n_ctx=32, d_model=8, n_heads=2, n_layers=1)


def test_by_default_a_step_carries_its_id_and_nothing_else():
    """Without logprobs=, top_n= or a tokenizer, every Step is ``Step(id)``: no log-prob, no
    alternatives, no text (each is computed only when asked for)."""
    steps = list(generate(random_model(TINY, 0), [1, 2, 3], 4, temperature=0.8, seed=0))
    assert len(steps) == 4
    assert steps == [Step(s.id) for s in steps]


def test_a_generation_needs_only_the_memory_of_its_own_tokens(monkeypatch):
    """The cache is made for prompt + max_new_tokens positions: on a machine with just that much
    memory, 3 + 4 tokens of a model whose n_ctx is 32 are generated; one byte less is refused."""
    want = kv.cache_bytes(TINY, 1, 3 + 4)
    assert want < kv.cache_bytes(TINY, 1, TINY.n_ctx)
    model = random_model(TINY, 1)
    monkeypatch.setattr(kv, "memory_bytes", lambda: want)
    assert len(list(generate(model, [1, 2, 3], 4, temperature=0, stop_at_eos=False))) == 4
    monkeypatch.setattr(kv, "memory_bytes", lambda: want - 1)
    with pytest.raises(ValueError, match="more than this machine's"):
        list(generate(model, [1, 2, 3], 4, temperature=0, stop_at_eos=False))


class Recorder:
    """Looks like a GPT to generate, with a vocabulary of 2**32 - 1 ids: records the ids each call
    feeds and always prefers token 1 (its logits are 3 wide: no step may choose a larger id)."""

    def __init__(self):
        self.config = ModelConfig(vocab_size=2**32 - 1, n_ctx=4, d_model=2, n_heads=1, n_layers=1)
        self.fed = []

    def __call__(self, ids, cache=None, last_only=False, **_):
        self.fed.append(np.asarray(ids)[0].tolist())
        cache.advance(ids.shape[1])
        return np.array([[[0.0, 1.0, 0.0]]], np.float32)               # [1, 1, 3]


def test_a_sliding_window_rereads_prompt_ids_past_the_int32_range_as_given():
    """Prompt [5, 6, 2**32 - 2], n_ctx 4, keep 3: the window is full after one new token, so the
    third call re-reads the last 3 ids — the prompt's largest id among them, unchanged."""
    big = 2**32 - 2
    model = Recorder()
    steps = list(generate(model, [5, 6, big], 3, temperature=0, sliding_window=3))
    assert [s.id for s in steps] == [1, 1, 1]
    assert model.fed == [[5, 6, big], [1], [big, 1, 1]]
