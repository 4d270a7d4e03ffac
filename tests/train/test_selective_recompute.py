"""Selective recomputation (train/memory/recompute.py's ``keep``) and the memory-saving step's
lean forms (lean_ffn.py, chunked_head.py's in-place cross-entropy) compute the plain step's
numbers bit for bit: whichever blocks keep their FFN pre-activations, SwiGLU's backward from
(x, a, u) with one σ(a), the cross-entropy written over its logits."""
import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minillm.config import ModelConfig
from minillm.model.params import param_shapes
from minillm.train.frozen import Frozen
from minillm.train.grad_ffn import ffn_backward, ffn_forward
from minillm.train.grad_model import cross_entropy_with_grad, loss_and_grads
from minillm.train.lora.adapters import frozen_params, lora_loss_and_grads
from minillm.train.memory.chunked_head import cross_entropy_in_place
from minillm.train.memory.lean_ffn import ffn_backward_lean, ffn_cache_lean
from minillm.train.memory.recompute import blocks_keeping, loss_and_grads_recompute
from tests.model.strategies import random_model
from tests.train.test_loss_mask import GPT2
from tests.train.test_lora import random_lora

LLAMA = ModelConfig(vocab_size=19, n_ctx=16, d_model=12, n_heads=6, n_kv_heads=2, n_layers=3,
                    d_ff=10, arch="llama", norm_eps=1e-6)


def keep_for(config, rows: int, blocks: int) -> float:
    """The ``keep`` fraction that fits exactly ``blocks`` blocks' pre-activations (and a half)."""
    weights = 4 * sum(math.prod(s) for s in param_shapes(config).values())
    per_block = 4 * (2 if config.ffn == "swiglu" else 1) * rows * config.d_ff
    return (blocks + 0.5) * per_block / weights


@pytest.mark.parametrize("config", [LLAMA, replace(GPT2, n_layers=3)], ids=["llama", "gpt2"])
@pytest.mark.parametrize("kept", [0, 1, 3])
@pytest.mark.parametrize("lora", [False, True])
def test_every_keep_is_the_plain_step_bit_for_bit(config, kept, lora):
    """No block, some or every block keeping its pre-activations: identical float32 arrays."""
    model = random_model(config, 3)
    rng = np.random.default_rng(kept)
    ids, targets = (rng.integers(0, config.vocab_size, (2, 7)) for _ in range(2))
    keep = keep_for(config, ids.size, kept)
    assert blocks_keeping(model.params, config, ids.size, keep) == kept
    if lora:
        adapters = random_lora(model.params, 2, 5)
        got = loss_and_grads_recompute(frozen_params(model.params, adapters), config, ids,
                                       targets, frozen=True, keep=keep)
        want = lora_loss_and_grads(model.params, config, adapters, ids, targets)
    else:
        got = loss_and_grads_recompute(model.params, config, ids, targets, chunk=ids.size,
                                       keep=keep)
        want = loss_and_grads(model.params, config, ids, targets)
    assert got[0] == want[0]
    assert set(got[1]) == set(want[1])
    for k in want[1]:
        np.testing.assert_array_equal(got[1][k], want[1][k], err_msg=k)


@given(st.integers(1, 9), st.sampled_from([3, 8]), st.integers(0, 1000), st.booleans())
def test_lean_swiglu_backward_is_grad_ffns_bit_for_bit(N, F, seed, adapted):
    """From (x, a, u) with one σ(a): grad_ffn.py's dx and gradients (plain or adapter), exactly."""
    rng = np.random.default_rng(seed)
    C = 4
    x, dy = (rng.normal(size=(1, N, C)).astype(np.float32) for _ in range(2))

    def weight(n_in, n_out):
        w = rng.normal(size=(n_in, n_out)).astype(np.float32)
        if not adapted:
            return w
        return Frozen(w, rng.normal(size=(n_in, 2)).astype(np.float32),
                      rng.normal(size=(2, n_out)).astype(np.float32), 3.0)

    class P:
        w_gate, w_up, w_down = weight(C, F), weight(C, F), weight(F, C)
    dx, grads = ffn_backward_lean(dy, ffn_cache_lean(x, P, "swiglu"), P, "swiglu")
    want_dx, want = ffn_backward(dy, ffn_forward(x, P, "swiglu")[1], P, "swiglu")
    np.testing.assert_array_equal(dx, want_dx)
    assert list(grads) == list(want)
    for k in want:
        np.testing.assert_array_equal(grads[k], want[k], err_msg=k)


@given(st.integers(1, 6), st.integers(2, 40), st.integers(0, 1000))
def test_cross_entropy_in_place_is_cross_entropy_with_grad_bit_for_bit(c, V, seed):
    rng = np.random.default_rng(seed)
    logits = (rng.normal(size=(c, V)) * 5).astype(np.float32)
    targets = rng.integers(0, V, c)
    want_loss, want = cross_entropy_with_grad(logits, targets, total=c + 3)
    loss, got = cross_entropy_in_place(logits.copy(), targets, c + 3)
    assert loss == want_loss
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)


def test_blocks_keeping_counts_what_fits_and_refuses_a_bad_keep():
    params = random_model(LLAMA, 0).params
    assert blocks_keeping(params, LLAMA, 14, 0) == 0
    for keep in (1e9, float("inf")):
        assert blocks_keeping(params, LLAMA, 14, keep) == LLAMA.n_layers       # never more than L
    assert blocks_keeping(params, LLAMA, 14, keep_for(LLAMA, 14, 2)) == 2
    for keep in (-0.1, float("nan"), True, "0.3", None):
        with pytest.raises(ValueError, match="keep must be a number >= 0"):
            blocks_keeping(params, LLAMA, 14, keep)
