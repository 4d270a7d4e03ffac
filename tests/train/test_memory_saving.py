"""The memory-saving step (train/memory/) computes the plain step's numbers: the head and loss in
chunks of rows, and blocks recomputed in the backward, give the loss and gradients of
``loss_and_grads`` — full training and LoRA, GPT-2 and Llama (G ≥ 2), odd lengths, loss masks,
packed segments. Equal within 1e-10 relative in float64 (only the order of the chunks' sums
differs), bit for bit when one chunk holds every row; and against finite differences."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minillm.config import ModelConfig
from minillm.train.grad_model import cross_entropy_with_grad, loss_and_grads
from minillm.train.lora.adapters import frozen_params, lora_loss_and_grads
from minillm.train.memory import chunked_head_loss, loss_and_grads_recompute
from tests.model.strategies import random_model
from tests.train.gradcheck import check
from tests.train.test_llama_gradients import llama_configs
from tests.train.test_loss_mask import GPT2, assert_same
from tests.train.test_lora import random_lora
from tests.train.test_model_gradients import float64_params


@st.composite
def batches(draw, config):
    """ids, targets [B, T] (T odd or even), a loss mask or None, packed segments or None."""
    B, T = draw(st.integers(1, 3)), draw(st.integers(1, min(9, config.n_ctx)))
    rng = np.random.default_rng(draw(st.integers(0, 1000)))
    ids, targets = (rng.integers(0, config.vocab_size, (B, T)) for _ in range(2))
    mask = None
    if draw(st.booleans()):
        mask = (rng.random((B, T)) < 0.6).astype(np.int64)
        mask[0, -1] = 1                                                 # at least one counted
    segments = None
    if draw(st.booleans()):
        segments = np.sort(rng.integers(0, 3, (B, T)), axis=1)          # non-decreasing per row
    return ids, targets, mask, segments


@given(st.one_of(llama_configs(), st.just(GPT2)), st.integers(0, 1000), st.booleans(),
       st.integers(1, 5), st.data())
def test_recompute_equals_the_plain_step(config, seed, use_lora, chunk, data):
    """Float64: the same loss and gradients (every key), full training or LoRA, any chunk size."""
    params = float64_params(config, seed)
    ids, targets, mask, segments = data.draw(batches(config))
    if use_lora:                        # (what lora_loss_and_grads(recompute=True) runs)
        lora = random_lora(params, 2, seed, np.float64)
        got = loss_and_grads_recompute(frozen_params(params, lora), config, ids, targets, mask,
                                       segments, frozen=True, chunk=chunk)
        want = lora_loss_and_grads(params, config, lora, ids, targets, mask, segments)
    else:
        got = loss_and_grads_recompute(params, config, ids, targets, mask, segments, chunk=chunk)
        want = loss_and_grads(params, config, ids, targets, mask, segments)
    assert_same(got, want)


@given(st.one_of(llama_configs(), st.just(GPT2)), st.integers(0, 1000), st.booleans(), st.data())
def test_one_chunk_of_every_row_is_the_plain_step_bit_for_bit(config, seed, frozen, data):
    """Float32, a model's own weights: with the chunk ≥ the counted rows the only difference left
    is recomputation, and a recomputed block is the same arithmetic: identical arrays."""
    model = random_model(config, seed)
    ids, targets, mask, segments = data.draw(batches(config))
    if frozen:
        lora = random_lora(model.params, 2, seed)
        got = lora_loss_and_grads(model.params, config, lora, ids, targets, mask, segments,
                                  recompute=True)
        want = lora_loss_and_grads(model.params, config, lora, ids, targets, mask, segments)
    else:
        got = loss_and_grads_recompute(model.params, config, ids, targets, mask, segments,
                                       chunk=ids.size)
        want = loss_and_grads(model.params, config, ids, targets, mask, segments)
    assert got[0] == want[0]
    assert set(got[1]) == set(want[1])
    for k in want[1]:
        assert got[1][k].dtype == np.float32
        np.testing.assert_array_equal(got[1][k], want[1][k], err_msg=k)


@given(llama_configs(), st.integers(0, 1000), st.integers(1, 4))
def test_recompute_gradients_match_finite_differences(config, seed, chunk):
    """Relative error ≤ 1e-5 (tests/train/gradcheck.py) for every tensor, a masked batch."""
    params = float64_params(config, seed)
    rng = np.random.default_rng(seed)
    ids, targets = (rng.integers(0, config.vocab_size, (2, 5)) for _ in range(2))
    mask = np.array([[1, 0, 1, 1, 0], [0, 1, 1, 0, 1]])
    loss, grads = loss_and_grads_recompute(params, config, ids, targets, mask, chunk=chunk)
    arrays = params.named()
    check(lambda: loss_and_grads_recompute(params, config, ids, targets, mask, chunk=chunk)[0],
          arrays, grads, rng, k=4)


@given(st.integers(1, 12), st.integers(1, 7), st.integers(0, 1000), st.booleans())
def test_chunked_head_loss_equals_one_pass(N, chunk, seed, head_grad):
    """Loss, ∂/∂x and ∂/∂head of the chunked form equal the one-pass cross-entropy's (float64)."""
    rng = np.random.default_rng(seed)
    x, head = rng.normal(size=(N, 5)), rng.normal(size=(5, 11))
    targets = rng.integers(0, 11, N)
    want_loss, dlogits = cross_entropy_with_grad(x @ head, targets)   # [N, V]
    loss, dx, dhead = chunked_head_loss(x, head, targets, chunk, head_grad)
    assert abs(loss - want_loss) <= 1e-12 * max(1.0, want_loss)
    np.testing.assert_allclose(dx, dlogits @ head.T, rtol=0, atol=1e-12)
    if head_grad:
        np.testing.assert_allclose(dhead, x.T @ dlogits, rtol=0, atol=1e-12)
    else:
        assert dhead is None


def test_a_bad_chunk_is_refused():
    x, head = np.zeros((2, 3)), np.zeros((3, 4))
    for chunk in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match="chunk must be a positive integer"):
            chunked_head_loss(x, head, np.zeros(2, np.int64), chunk)


def test_recompute_refuses_what_the_plain_step_refuses():
    config = ModelConfig(vocab_size=10, n_ctx=8, d_model=8, n_heads=2, n_layers=1, arch="llama")
    params = random_model(config, 0).params
    with pytest.raises(ValueError, match="must be in"):
        loss_and_grads_recompute(params, config, np.full((1, 3), 10), np.zeros((1, 3), np.int64))
    with pytest.raises(ValueError, match="loss_mask"):
        loss_and_grads_recompute(params, config, np.zeros((1, 3), np.int64),
                                 np.zeros((1, 3), np.int64), np.zeros((1, 3), np.int64))
