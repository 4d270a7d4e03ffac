"""Mixtures of experts (model/moe.py): the router, the loop over experts equal to the gathered
form, and parity with Hugging Face transformers' Qwen3-MoE and Mixtral.

Fixtures: tests/fixtures/qwen3_moe_tiny (8 experts, top-2, norm_topk_prob, q/k norms, head_dim 8,
tied) and mixtral_tiny (4 experts, top-2, untied), made by scripts/make_moe_fixtures.py
(transformers 5.24.0, torch 2.13.0 CPU; random weights, 2 layers, 4 query heads on 2 KV heads,
24-token rows, 18-token prompts; every router decision at least 1e-4 from a tie in router
logits). Tolerance: max |Δlogits| ≤ 1e-4 · max |logit|; greedy ids equal, beam scores ≤ 1e-4.
Measured (max |Δlogits|: the full pass / prefill of 17 then one token at a time through the cache):

    qwen3_moe_tiny (max |logit| 11.88):  model 8.9e-6 / 1.0e-5    engine 6.6e-6 / 6.8e-6
    mixtral_tiny   (max |logit| 10.34):  model 4.4e-6 / 4.4e-6    engine 5.2e-6 / 5.3e-6
"""
import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minillm.config import ModelConfig
from minillm.decoding.batch import generate_batch
from minillm.decoding.generate import generate
from minillm.functional import softmax
from minillm.io.safetensors import load_safetensors
from minillm.loading import model_class
from minillm.model.ffn import swiglu
from minillm.model.moe import expert, moe, moe_loop, route
from minillm.train.grad_model import check_trainable
from tests.conftest import FIXTURES
from tests.model.family_parity import (assert_beam4_matches,
                                     assert_logits_match_with_and_without_the_cache)
from tests.model.strategies import random_model

NAMES = ["qwen3_moe_tiny", "mixtral_tiny"]
# the model of plain arrays (model/ code: moe) and the engine's (its own FFN in moe's gathered form)
MODELS = {(name, fast): model_class(fast).from_pretrained(FIXTURES / name)
          for name, fast in itertools.product(NAMES, (False, True))}
CASES = [pytest.param(case, id=f"{case[0]}-{'engine' if case[1] else 'model'}") for case in MODELS]
EXPECTED = {name: load_safetensors(FIXTURES / name / "expected.safetensors") for name in NAMES}


# ---- parity with transformers -----------------------------------------------------------------
@pytest.mark.parametrize("case", CASES)
def test_logits_match_transformers_with_and_without_the_cache(case):
    model, expected = MODELS[case], EXPECTED[case[0]]
    assert_logits_match_with_and_without_the_cache(model, expected, prefill=17)


@pytest.mark.parametrize("case", CASES)
def test_loss_matches_transformers(case):
    e = EXPECTED[case[0]]
    assert abs(MODELS[case].loss(e["ids"]) - float(e["loss"])) <= 1e-4


@pytest.mark.parametrize("case", CASES)
def test_greedy_and_beam_tokens_match_transformers(case):
    model, e = MODELS[case], EXPECTED[case[0]]
    prompt, want = e["greedy_prompt"][0], e["greedy_ids"][0]
    assert [s.id for s in generate(model, prompt, len(want), temperature=0)] == want.tolist()
    assert_beam4_matches(model, e)


def test_the_fixtures_switch_every_feature_on():
    qwen = MODELS["qwen3_moe_tiny", False].config
    mixtral = MODELS["mixtral_tiny", False].config
    assert (qwen.n_experts, qwen.n_experts_used, qwen.norm_topk_prob, qwen.qk_norm) == (8, 2, True, True)
    assert (mixtral.n_experts, mixtral.n_experts_used, mixtral.norm_topk_prob) == (4, 2, True)
    assert not mixtral.qk_norm and not mixtral.tie_embeddings and qwen.tie_embeddings
    for c in (qwen, mixtral):
        assert c.n_heads == 2 * c.n_kv_heads and not c.attn_bias


@pytest.mark.parametrize("name", NAMES)
def test_every_expert_is_chosen_by_some_token_of_the_fixture(name):
    model, ids = MODELS[name, False], EXPECTED[name]["ids"]
    x = model.params.wte[ids].reshape(-1, model.config.d_model)        # layer 0's input, unnormed
    top, _ = route(x, model.params.blocks[0].ffn.router, model.config.n_experts_used, True)
    assert set(top.ravel()) == set(range(model.config.n_experts))


# ---- the router ------------------------------------------------------------------------------
@given(st.integers(0, 2**32 - 1), st.integers(2, 8), st.data())
def test_route_takes_the_k_largest_probabilities_best_first(seed, E, data):
    k = data.draw(st.integers(1, E))
    rng = np.random.default_rng(seed)
    x, router = rng.standard_normal((5, 6), dtype=np.float32), rng.standard_normal((6, E), dtype=np.float32)
    p = softmax(x @ router)                                             # [5, E]
    top, w = route(x, router, k, renormalise=False)
    np.testing.assert_array_equal(w, np.take_along_axis(p, top, axis=-1))
    assert (np.diff(w, axis=-1) <= 0).all()                             # best first
    chosen = (np.arange(E)[None, :, None] == top[:, None, :]).any(-1)  # [5, E]
    assert chosen.sum(-1).tolist() == [k] * 5                           # k distinct experts
    assert (np.where(chosen, -1.0, p) <= w[:, -1:]).all()               # none left out is larger
    _, renormalised = route(x, router, k, renormalise=True)
    np.testing.assert_allclose(renormalised, w / w.sum(-1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(renormalised.sum(-1), 1.0, rtol=1e-6)


def test_route_breaks_ties_toward_the_lower_expert():
    x, router = np.ones((1, 2), np.float32), np.zeros((2, 4), np.float32)    # p = ¼ each
    top, w = route(x, router, 2, renormalise=False)
    assert top.tolist() == [[0, 1]] and w.tolist() == [[0.25, 0.25]]
    router[:, 3] = 1.0                                                  # expert 3 first, then a tie
    assert route(x, router, 2, renormalise=False)[0].tolist() == [[3, 0]]


# ---- the two forms ---------------------------------------------------------------------------
@st.composite
def moe_configs(draw):
    E = draw(st.integers(1, 6))
    return ModelConfig(vocab_size=16, n_ctx=16, d_model=8, n_heads=2, n_layers=1, d_ff=draw(
        st.sampled_from([4, 12])), arch="llama", n_experts=E, n_experts_used=draw(st.integers(1, E)),
        norm_topk_prob=draw(st.booleans()))


@given(moe_configs(), st.integers(0, 2**32 - 1), st.integers(1, 3), st.integers(1, 7))
def test_the_loop_over_experts_equals_the_gathered_form(config, seed, B, T):
    p = random_model(config, seed).params.blocks[0].ffn
    x = np.random.default_rng(seed).standard_normal((B, T, 8), dtype=np.float32)
    loop, gathered = moe_loop(x, p, config), moe(x, p, config)
    assert gathered.dtype == np.float32 and gathered.shape == (B, T, 8)
    np.testing.assert_allclose(gathered, loop, rtol=1e-5, atol=1e-6)


@given(moe_configs(), st.integers(0, 2**32 - 1))
def test_each_token_is_the_weighted_sum_of_its_experts(config, seed):
    """The definition one token at a time: Σ_{e ∈ top} w_e · FFN_e(x)."""
    p = random_model(config, seed).params.blocks[0].ffn
    x = np.random.default_rng(seed).standard_normal((1, 3, 8), dtype=np.float32)
    got = moe(x, p, config)
    for t in range(3):
        top, w = route(x[0, t:t + 1], p.router, config.n_experts_used, config.norm_topk_prob)
        want = sum(w[0, j] * swiglu(x[0, t], expert(p, e)) for j, e in enumerate(top[0]))
        np.testing.assert_allclose(got[0, t], want, rtol=1e-5, atol=1e-6)


@given(st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_one_expert_chosen_with_weight_one_is_a_plain_ffn(E, seed):
    config = ModelConfig(vocab_size=16, n_ctx=16, d_model=8, n_heads=2, n_layers=1, d_ff=4,
                         arch="llama", n_experts=E, n_experts_used=1, norm_topk_prob=True)
    p = random_model(config, seed).params.blocks[0].ffn
    x = np.random.default_rng(seed).standard_normal((1, 4, 8), dtype=np.float32)
    top, _ = route(x[0], p.router, 1, True)
    want = np.stack([swiglu(x[0, t], expert(p, int(e))) for t, e in enumerate(top[:, 0])])
    np.testing.assert_allclose(moe(x, p, config)[0], want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("change, message", [
    (dict(n_experts=4, n_experts_used=5), "n_experts_used <= n_experts"),
    (dict(n_experts=4, n_experts_used=0), "n_experts_used <= n_experts"),
    (dict(n_experts=0, n_experts_used=2), "n_experts_used <= n_experts"),
    (dict(n_experts=4.0, n_experts_used=2), "ints"),
    (dict(n_experts=4, n_experts_used=2, norm_topk_prob=1), "norm_topk_prob must be True or False"),
])
def test_bad_expert_settings_are_a_value_error(change, message):
    with pytest.raises(ValueError, match=message):
        ModelConfig(vocab_size=8, n_ctx=8, d_model=8, n_heads=2, n_layers=1, arch="llama", **change)


def test_experts_need_swiglu():
    with pytest.raises(ValueError, match="ffn='swiglu'"):
        ModelConfig(vocab_size=8, n_ctx=8, d_model=8, n_heads=2, n_layers=1, n_experts=2,
                    n_experts_used=1)


def test_training_refuses_a_mixture_of_experts():
    """Training has no backward for the router and experts: refused, not trained wrongly."""
    config = ModelConfig(vocab_size=8, n_ctx=8, d_model=8, n_heads=2, n_layers=1, arch="llama",
                         n_experts=2, n_experts_used=1)
    with pytest.raises(ValueError, match="training has no backward for {'n_experts': 2}"):
        check_trainable(config)


@pytest.mark.parametrize("case", CASES)
def test_a_left_padded_batch_equals_each_prompt_alone(case):
    """Each token is routed on its own: padding in the batch changes no other token's experts."""
    model, prompts = MODELS[case], [[4, 5, 6, 7, 8], [9, 10]]
    alone = [[s.id for s in generate(model, p, 6, temperature=0)] for p in prompts]
    assert generate_batch(model, prompts, 6, temperature=0) == alone
