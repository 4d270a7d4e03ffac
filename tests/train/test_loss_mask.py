"""The loss mask, padding and packing: the mean runs over the counted targets only; right-padded
rows and packed rows give the gradients of their pieces taken one by one (float64, full training
and LoRA)."""
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from minillm.config import ModelConfig
from minillm.train.grad_model import forward_with_cache, loss_and_grads, packed_attention
from minillm.train.lora.adapters import lora_loss_and_grads
from tests.train.gradcheck import check
from tests.train.test_llama_gradients import llama_configs
from tests.train.test_lora import random_lora
from tests.train.test_model_gradients import float64_params

GPT2 = ModelConfig(vocab_size=17, n_ctx=12, d_model=8, n_heads=2, n_layers=1)


def step(params, config, lora, *batch):
    """Full training (lora None) or LoRA, with the same arguments."""
    if lora is None:
        return loss_and_grads(params, config, *batch)
    return lora_loss_and_grads(params, config, lora, *batch)


def weighted_sum(pieces):
    """[(count, loss, grads)] -> the count-weighted mean loss and gradients."""
    total = sum(n for n, _, _ in pieces)
    loss = sum(n * l for n, l, _ in pieces) / total
    grads = {k: sum(n * g[k] for n, _, g in pieces) / total for k in pieces[0][2]}
    return loss, grads


def assert_same(got, want):
    (loss, grads), (want_loss, want_grads) = got, want
    assert abs(loss - want_loss) <= 1e-10 * max(1.0, abs(want_loss))
    assert set(grads) == set(want_grads)
    for k in want_grads:
        np.testing.assert_allclose(grads[k], want_grads[k], rtol=0,
                                   atol=1e-10 * max(1e-3, np.abs(want_grads[k]).max()), err_msg=k)


@given(st.one_of(llama_configs(), st.just(GPT2)), st.integers(0, 1000), st.booleans(),
       st.lists(st.integers(1, 6), min_size=1, max_size=3), st.data())
def test_padded_rows_give_the_gradients_of_the_unpadded_rows(config, seed, use_lora, lengths, data):
    """Rows of lengths Lᵢ right-padded to max L with a pad id, mask 0 on the padding (and random
    0/1 inside the rows): the loss and gradients are the token-count-weighted mean of each row's
    own, computed alone and unpadded."""
    assume(not (use_lora and config is GPT2))
    params = float64_params(config, seed)
    lora = random_lora(params, 2, seed, np.float64) if use_lora else None
    rng = np.random.default_rng(seed)
    T, pad = max(lengths), data.draw(st.integers(0, config.vocab_size - 1))
    ids = np.full((len(lengths), T), pad)
    targets = np.full((len(lengths), T), pad)
    mask = np.zeros((len(lengths), T), np.int64)
    pieces = []
    for i, L in enumerate(lengths):
        ids[i, :L], targets[i, :L] = rng.integers(0, config.vocab_size, (2, L))
        mask[i, :L] = rng.integers(0, 2, L) if data.draw(st.booleans()) else 1
        if mask[i].any():
            pieces.append((mask[i].sum(),) + step(params, config, lora, ids[i:i + 1, :L],
                                                  targets[i:i + 1, :L], mask[i:i + 1, :L]))
    assume(pieces)
    assert_same(step(params, config, lora, ids, targets, mask), weighted_sum(pieces))


@given(st.one_of(llama_configs(), st.just(GPT2)), st.integers(0, 1000), st.booleans(),
       st.lists(st.integers(1, 4), min_size=2, max_size=3))
def test_a_packed_row_gives_the_gradients_of_its_pieces(config, seed, use_lora, lengths):
    """Sequences packed one after the other in one row, ``segments`` marking them: attention stays
    inside each piece and positions restart (RoPE or GPT-2's learned ones), so the row computes
    the count-weighted mean of the pieces alone."""
    assume(not (use_lora and config is GPT2))
    params = float64_params(config, seed)
    lora = random_lora(params, 2, seed, np.float64) if use_lora else None
    rng = np.random.default_rng(seed)
    parts = [rng.integers(0, config.vocab_size, (2, L)) for L in lengths]
    ids, targets = (np.concatenate([p[j] for p in parts])[None] for j in (0, 1))
    segments = np.repeat(np.arange(len(lengths)), lengths)[None]
    pieces = [(L,) + step(params, config, lora, p[0][None], p[1][None]) for L, p in zip(lengths, parts)]
    assert_same(step(params, config, lora, ids, targets, None, segments), weighted_sum(pieces))


@given(llama_configs(), st.integers(0, 1000))
def test_masked_gradients_match_finite_differences(config, seed):
    params = float64_params(config, seed)
    rng = np.random.default_rng(seed)
    ids, targets = (rng.integers(0, config.vocab_size, (2, 5)) for _ in range(2))
    mask = np.array([[0, 1, 1, 0, 1], [0, 0, 1, 1, 0]])
    _, grads = loss_and_grads(params, config, ids, targets, mask)
    named = params.named()
    chosen = {k: named[k] for k in ("wte", "blocks.0.attn.wq", "blocks.0.ffn.w_down", "norm_f.weight")}
    check(lambda: loss_and_grads(params, config, ids, targets, mask)[0], chosen, grads, rng, k=4)


def test_a_mask_of_ones_is_no_mask_and_masked_targets_do_not_matter():
    config = ModelConfig(vocab_size=20, n_ctx=16, d_model=16, n_heads=4, n_kv_heads=2,
                         n_layers=1, d_ff=24, arch="llama")
    params = float64_params(config, 0)
    rng = np.random.default_rng(0)
    ids, targets = (rng.integers(0, 20, (2, 6)) for _ in range(2))
    assert_same(loss_and_grads(params, config, ids, targets, np.ones((2, 6), bool)),
                loss_and_grads(params, config, ids, targets))
    mask = np.array([[1, 1, 0, 0, 1, 0], [0, 1, 1, 1, 0, 0]])
    other = np.where(mask == 1, targets, (targets + 7) % 20)
    assert_same(loss_and_grads(params, config, ids, other, mask),
                loss_and_grads(params, config, ids, targets, mask))


@given(llama_configs(), st.integers(0, 1000))
def test_the_masked_loss_is_the_mean_over_counted_targets(config, seed):
    """Only the counted rows go through the head: the loss is still −Σ m log p / Σ m of the full
    logits (the model's own forward)."""
    params = float64_params(config, seed)
    rng = np.random.default_rng(seed)
    ids, targets = (rng.integers(0, config.vocab_size, (2, 6)) for _ in range(2))
    mask = rng.integers(0, 2, (2, 6))
    assume(mask.any())
    logits, _ = forward_with_cache(params, config, ids)                # [B, T, V]
    logp = logits - np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1, keepdims=True)) \
        - logits.max(-1, keepdims=True)
    nll = -np.take_along_axis(logp, targets[..., None], -1)[..., 0]    # [B, T]
    want = (nll * mask).sum() / mask.sum()
    loss, _ = loss_and_grads(params, config, ids, targets, mask)
    assert abs(loss - want) <= 1e-10 * max(1.0, want)


def test_packed_attention_restarts_positions_and_blocks_other_segments():
    mask, positions = packed_attention(np.array([[0, 0, 1, 1, 1, 4]]))
    np.testing.assert_array_equal(positions, [[0, 1, 0, 1, 2, 0]])
    assert mask[0, 3].tolist() == [False, False, True, True, False, False]
    assert mask[0, 5].tolist() == [False] * 5 + [True]


def test_bad_masks_and_segments_are_refused():
    config = ModelConfig(vocab_size=20, n_ctx=16, d_model=16, n_heads=4, n_kv_heads=2,
                         n_layers=1, d_ff=24, arch="llama")
    params = float64_params(config, 0)
    ids = np.zeros((2, 4), np.int64)
    for mask in (np.zeros((2, 4)), np.ones((2, 3)), np.full((2, 4), 2), [[1] * 4] * 2):
        with pytest.raises(ValueError, match="loss_mask"):
            loss_and_grads(params, config, ids, ids, mask)
    for segments in (np.array([[0, 1, 0, 1]] * 2), np.zeros((2, 4)), np.zeros((1, 4), np.int64)):
        with pytest.raises(ValueError, match="segments"):
            loss_and_grads(params, config, ids, ids, None, segments)
