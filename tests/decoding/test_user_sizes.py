"""Sizes given by a user are checked against what the model and the machine allow BEFORE
anything is allocated: a ValueError naming the parameter, its value and the bound, never a
MemoryError. A custom DraftSource may return any sequence of ids; anything else is named."""
import numpy as np
import pytest

from minillm import GPT, ModelConfig
from minillm.decoding.batch import generate_batch
from minillm.decoding.beam import beam_search
from minillm.decoding.generate import generate
from minillm.decoding.serving import ContinuousBatcher
from minillm.decoding.speculative_drafts import DraftSource
from minillm.kv_cache import KVCache

MODEL = GPT(ModelConfig(vocab_size=64, n_ctx=32, d_model=16, n_heads=2, n_layers=1))
HUGE = 10**13          # rows no machine holds


def test_num_draft_tokens_beyond_the_context_is_refused():
    with pytest.raises(ValueError, match=r"num_draft_tokens must be in \[1, n_ctx=32\], got "
                                         r"1,000,000,000,000,000,000"):
        list(generate(MODEL, [1, 2, 3], 5, draft="prompt", num_draft_tokens=10**18))


@pytest.mark.parametrize("make, name", [
    (lambda: ContinuousBatcher(MODEL, batch_size=HUGE), "batch_size"),
    (lambda: KVCache(MODEL.config, batch_size=HUGE), "batch_size"),
    (lambda: beam_search(MODEL, [1, 2], beam_size=HUGE, max_new_tokens=5), "beam_size"),
])
def test_a_batch_no_machine_holds_is_refused_before_allocating(make, name):
    with pytest.raises(ValueError, match=rf"{name}=10,000,000,000,000 needs [\d,.]+ GB .* more "
                                         rf"than this machine's [\d,.]+ GB of memory: allowed "
                                         rf"at most [\d,]+"):
        make()


def test_generate_batch_with_too_many_prompts_is_refused_before_allocating(monkeypatch):
    import minillm.kv_cache_sizes as kv
    monkeypatch.setattr(kv, "memory_bytes", lambda: 10**6)     # a machine of 1 MB
    with pytest.raises(ValueError, match=r"len\(prompts\)=1,000 needs"):
        generate_batch(MODEL, [[1, 2]] * 1000, 5)


class ListDrafts(DraftSource):
    """Proposes the next two ids as a plain list (no ndarray)."""
    def propose(self, seq, m, k, choose):
        return [int(seq[m - 1]) % 64, 7][:k], None


def test_a_draft_source_returning_a_list_works_like_an_array():
    plain = [s.id for s in generate(MODEL, [1, 2, 3], 8, temperature=0)]
    drafted = [s.id for s in generate(MODEL, [1, 2, 3], 8, temperature=0, draft=ListDrafts(),
                                      num_draft_tokens=2)]
    assert drafted == plain                             # greedy: drafts never change the output


class Broken(DraftSource):
    def __init__(self, out):
        self.out = out

    def propose(self, seq, m, k, choose):
        return self.out


@pytest.mark.parametrize("out, error, message", [
    ([1, 2], TypeError, "must return \\(drafts, q\\).*got list"),
    ((["a"], None), TypeError, "dtype <U1"),
    (([1, 2, 3, 4, 5], None), ValueError, "at most k=2 token ids.*got 5 drafts"),
    (([99], None), ValueError, "got 1 drafts \\[99\\]"),
    (([1], np.ones(3)), ValueError, "q of shape \\(3,\\)"),
])
def test_a_draft_source_returning_something_else_is_named(out, error, message):
    with pytest.raises(error, match=message):
        list(generate(MODEL, [1, 2, 3], 8, temperature=0, draft=Broken(out), num_draft_tokens=2))
