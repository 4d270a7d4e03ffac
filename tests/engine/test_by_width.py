"""The "by_width" arena layout (engine/arena.py), the loaders' and ``to_engine``'s: a matrix
narrower than its input (N < C) stored by output row, every other one as [C, N]; the engine's
logits and greedy tokens in it equal the model's (tolerance as in test_engine_equals_model.py:
1e-4 · max(1, max |logit|), the same float32 terms summed in another order).
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from minillm import KVCache, load_model
from minillm.engine import empty_arena, to_engine
from minillm.engine.arena import stored_by_rows
from tests.conftest import FIXTURES
from tests.engine.test_engine_equals_model import (CONFIGS, assert_close_logits, greedy,
                                                   models)


def stored_order(w: np.ndarray) -> str:
    """"rows" when the [C, N] view's numbers lie by output row (Wᵀ [N, C] contiguous rows),
    "cols" when they lie as [C, N] rows (a column slice of such a matrix counts)."""
    if w.strides[0] == w.itemsize and w.strides[1] >= w.shape[0] * w.itemsize:
        return "rows"
    assert w.strides[1] == w.itemsize, w.strides
    return "cols"


def test_the_rule_stores_by_rows_only_what_is_narrower_than_its_input():
    assert stored_by_rows("by_width", (2048, 640))            # Gemma 3's w_down [F, C]
    assert not stored_by_rows("by_width", (640, 4096))        # its gate|up [C, 2F]
    assert not stored_by_rows("by_width", (576, 576))         # square: [C, N]
    assert stored_by_rows("rows", (640, 4096)) and not stored_by_rows("decode", (2048, 640))


@given(CONFIGS)
def test_by_width_lays_out_each_product_matrix_by_its_width(config):
    arena = empty_arena(config, "by_width")
    for b, joined in zip(arena.params.blocks, arena.joined):
        mats = [joined.qkv, b.attn.wo, joined.gate_up, b.ffn.w_down,
                *((b.ffn.w_up,) if joined.gate_up is None else ())]
        for w in (m for m in mats if m is not None):
            assert stored_order(w) == ("rows" if w.shape[1] < w.shape[0] else "cols"), w.shape
        for part in (b.attn.wq, b.attn.wk, b.attn.wv):        # each a column block of qkv
            assert np.shares_memory(part, joined.qkv)
    p = arena.params
    head = p.wte.T if p.lm_head is None else p.lm_head       # [C, V]
    assert stored_order(head) == ("rows" if head.shape[1] < head.shape[0] else "cols")


@given(CONFIGS, st.integers(0, 100), st.data())
def test_the_engine_in_by_width_gives_the_models_logits_and_greedy_tokens(config, seed, data):
    fast, plain = models(config, seed, "by_width")
    T = data.draw(st.integers(1, config.n_ctx // 2))
    prompt = np.array(data.draw(st.lists(st.integers(0, config.vocab_size - 1), min_size=T,
                                         max_size=T)))
    assert_close_logits(fast(prompt), plain(prompt))
    n = config.n_ctx - T
    for cached in (True, False):
        assert greedy(fast, prompt, n, cached) == greedy(plain, prompt, n, cached)


@given(CONFIGS, st.integers(0, 100), st.integers(2, 40))
def test_by_width_gives_the_models_logits_for_a_batch_of_rows_through_a_cache(config, seed, B):
    """2-32 rows take the tiles for the matrices stored by row and the general product for the
    [C, N] ones; more than 32, the general product for all."""
    fast, plain = models(config, seed, "by_width")
    ids = np.random.default_rng(seed).integers(0, config.vocab_size, (B, 3))
    caches = [KVCache(config, batch_size=B, capacity=3) for _ in range(2)]
    assert_close_logits(fast(ids[:, :2], cache=caches[0]), plain(ids[:, :2], cache=caches[1]))
    assert_close_logits(fast(ids[:, 2:], cache=caches[0]), plain(ids[:, 2:], cache=caches[1]))


@pytest.mark.parametrize("name", ["gpt2_tiny", "llama_untied", "qwen2_tiny"])
def test_the_loaders_load_into_by_width_and_give_the_plain_models_logits(name):
    fast, _ = load_model(FIXTURES / name)
    plain, _ = load_model(FIXTURES / name, fast=False)
    assert stored_order(fast.arena.joined[0].qkv) == "cols"
    assert stored_order(to_engine(plain).arena.joined[0].qkv) == "cols"
    ids = np.arange(7) % plain.config.vocab_size
    assert_close_logits(fast(ids), plain(ids))
