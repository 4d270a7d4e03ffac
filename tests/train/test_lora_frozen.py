"""LoRA without rebuilding the base: x W + s · (x A) B with frozen W equals the merged form
W' = W + s · A B (loss and the adapters' gradients), matches finite differences, computes no
gradient of a frozen weight and never writes or copies the base."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from minillm.config import ModelConfig
from minillm.train.frozen import Frozen, input_grad, project, weight_grads
from minillm.train.lora.adapters import (frozen_params, init_lora, lora_loss_and_grads,
                                         lora_loss_and_grads_merged)
from tests.model.strategies import random_model
from tests.train.gradcheck import check
from tests.train.test_llama_gradients import llama_configs
from tests.train.test_lora import random_lora
from tests.train.test_model_gradients import float64_params


@given(llama_configs(), st.integers(0, 1000), st.sampled_from([1, 2, 4]), st.integers(1, 3),
       st.integers(1, 7))
def test_unmerged_step_equals_merged_step(config, seed, rank, B, T):
    """Same loss and adapter gradients in float64 (relative 1e-10: only the summation order
    differs), with G = n_heads / n_kv_heads ≥ 2, tied or untied heads, Qwen2 biases."""
    params = float64_params(config, seed)
    lora = random_lora(params, rank, seed, np.float64)
    rng = np.random.default_rng(seed)
    ids, targets = (rng.integers(0, config.vocab_size, (B, T)) for _ in range(2))
    loss, grads = lora_loss_and_grads(params, config, lora, ids, targets)
    want_loss, want = lora_loss_and_grads_merged(params, config, lora, ids, targets)
    assert abs(loss - want_loss) <= 1e-10 * max(1.0, abs(want_loss))
    assert set(grads) == set(want) == set(lora.named())
    for k in want:
        np.testing.assert_allclose(grads[k], want[k], rtol=0,
                                   atol=1e-10 * max(1e-3, np.abs(want[k]).max()), err_msg=k)


@given(st.integers(0, 1000), st.sampled_from([1, 3]))
def test_unmerged_step_equals_merged_step_in_float32(seed, rank):
    """A float32 random Llama (G = 2): |Δ| ≤ 1e-4 relative to each gradient's scale."""
    config = ModelConfig(vocab_size=30, n_ctx=16, d_model=16, n_heads=4, n_kv_heads=2,
                         n_layers=2, d_ff=24, arch="llama")
    model = random_model(config, seed)
    lora = random_lora(model.params, rank, seed)
    ids = np.random.default_rng(seed).integers(0, 30, (2, 9))
    loss, grads = lora_loss_and_grads(model.params, config, lora, ids[:, :-1], ids[:, 1:])
    want_loss, want = lora_loss_and_grads_merged(model.params, config, lora, ids[:, :-1], ids[:, 1:])
    assert abs(loss - want_loss) <= 1e-5 * max(1.0, abs(want_loss))
    for k in want:
        assert grads[k].dtype == np.float32
        np.testing.assert_allclose(grads[k], want[k], rtol=0,
                                   atol=1e-4 * max(1e-3, np.abs(want[k]).max()), err_msg=k)


@given(st.integers(0, 1000), st.sampled_from([3, 4]))
def test_gpt2_adapters_match_finite_differences(seed, T):
    """GPT-2 (biases beside frozen weights, a GELU MLP): adapters on q, v and the MLP's up."""
    config = ModelConfig(vocab_size=17, n_ctx=8, d_model=8, n_heads=2, n_layers=1)
    params = float64_params(config, seed)
    lora = random_lora(params, 2, seed, np.float64)
    lora.adapters = {k: v for k, v in lora.adapters.items() if k.split(".")[-1] in ("wq", "wv", "w_up")}
    rng = np.random.default_rng(seed)
    ids, targets = (rng.integers(0, 17, (2, T)) for _ in range(2))
    _, grads = lora_loss_and_grads(params, config, lora, ids, targets)
    assert set(grads) == set(lora.named())
    check(lambda: lora_loss_and_grads(params, config, lora, ids, targets)[0], lora.named(), grads,
          rng, k=4)


@given(st.integers(0, 1000), st.integers(1, 5))
def test_a_frozen_projection_is_the_merged_one(seed, N):
    """project / weight_grads / input_grad with Frozen(W, A, B, s) against W' = W + s·A B."""
    rng = np.random.default_rng(seed)
    x, W, A, B, dy = (rng.normal(size=s) for s in ((N, 5), (5, 6), (5, 2), (2, 6), (N, 6)))
    w = Frozen(W, A, B, 1.5)
    merged = W + 1.5 * A @ B
    np.testing.assert_allclose(project(x, w), x @ merged, atol=1e-12)
    np.testing.assert_allclose(input_grad(dy, w), dy @ merged.T, atol=1e-12)
    G = x.T @ dy
    g = weight_grads("w", x, dy, w)
    np.testing.assert_allclose(g["w.lora_A"], 1.5 * G @ B.T, atol=1e-12)
    np.testing.assert_allclose(g["w.lora_B"], 1.5 * A.T @ G, atol=1e-12)
    assert weight_grads("w", x, dy, Frozen(W)) == {}
    np.testing.assert_array_equal(input_grad(dy, Frozen(W)), dy @ W.T)


def test_the_base_is_read_only_and_shared_during_a_step():
    """Every base array made read-only: a whole step runs (nothing writes it), the marked tree
    holds the very base arrays (nothing copies it), and only adapter gradients come back."""
    config = ModelConfig(vocab_size=20, n_ctx=16, d_model=16, n_heads=4, n_kv_heads=2,
                         n_layers=2, d_ff=24, arch="llama", attn_bias=True, tie_embeddings=False)
    model = random_model(config, 0)
    for w in model.params.named().values():
        w.flags.writeable = False
    lora = init_lora(model.params, 2, np.random.default_rng(0), targets=("wq", "w_down"))
    marked = frozen_params(model.params, lora)
    assert marked.blocks[1].attn.wq.w is model.params.blocks[1].attn.wq
    assert marked.blocks[1].attn.wk.w is model.params.blocks[1].attn.wk and marked.blocks[1].attn.wk.A is None
    assert marked.wte is model.params.wte and marked.lm_head is model.params.lm_head
    ids = np.random.default_rng(1).integers(0, 20, (2, 9))
    _, grads = lora_loss_and_grads(model.params, config, lora, ids[:, :-1], ids[:, 1:])
    assert sorted(grads) == sorted(lora.named())
