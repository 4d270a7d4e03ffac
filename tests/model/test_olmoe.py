"""OLMoE (transformers' ``OlmoeForCausalLM``): Llama's pre-norms, q and k RMS-normalised over the
whole projected width (OLMo 2's), and a mixture of experts whose k routing weights are NOT
renormalised (norm_topk_prob false, as OLMoE's releases say) — parity with transformers.

Fixture: tests/fixtures/olmoe_tiny, made by scripts/make_olmoe_fixtures.py (transformers 5.24.0,
torch 2.13.0 CPU; random weights, 2 layers, 4 query heads on 2 KV heads, q_norm [32] and k_norm
[16] with random gains, 4 experts, top-2, untied head; 24-token rows, 18-token prompts; every
router decision at least 1e-4 from a tie in router logits). Tolerance: max |Δlogits| ≤ 1e-4 ·
max |logit|; greedy ids equal, beam scores ≤ 1e-4. Measured (max |Δlogits|: the full pass /
prefill of 17 then one token at a time through the cache):

    olmoe_tiny (max |logit| 9.94):  model 3.3e-6 / 3.4e-6    engine 3.8e-6 / 3.3e-6
"""
import json

import numpy as np
import pytest

from minillm.decoding.generate import generate
from minillm.io.safetensors import load_safetensors
from minillm.loading import model_class
from minillm.model.moe import route
from tests.conftest import FIXTURES
from tests.model.family_parity import (assert_beam4_matches,
                                       assert_logits_match_with_and_without_the_cache)

NAME = "olmoe_tiny"
# the model of plain arrays (model/ code) and the engine's
MODELS = {fast: model_class(fast).from_pretrained(FIXTURES / NAME) for fast in (False, True)}
CASES = [pytest.param(fast, id="engine" if fast else "model") for fast in MODELS]
EXPECTED = load_safetensors(FIXTURES / NAME / "expected.safetensors")


@pytest.mark.parametrize("fast", CASES)
def test_logits_match_transformers_with_and_without_the_cache(fast):
    assert_logits_match_with_and_without_the_cache(MODELS[fast], EXPECTED, prefill=17)


@pytest.mark.parametrize("fast", CASES)
def test_loss_matches_transformers(fast):
    assert abs(MODELS[fast].loss(EXPECTED["ids"]) - float(EXPECTED["loss"])) <= 1e-4


@pytest.mark.parametrize("fast", CASES)
def test_greedy_and_beam_tokens_match_transformers(fast):
    model, e = MODELS[fast], EXPECTED
    prompt, want = e["greedy_prompt"][0], e["greedy_ids"][0]
    assert [s.id for s in generate(model, prompt, len(want), temperature=0)] == want.tolist()
    assert_beam4_matches(model, e)


def test_the_fixture_switches_every_feature_on():
    c = MODELS[False].config
    assert (c.n_experts, c.n_experts_used, c.norm_topk_prob) == (4, 2, False)
    assert c.qk_norm and c.qk_norm_whole and not c.post_norms          # OLMo 2's norms, pre-norm
    assert c.n_heads == 2 * c.n_kv_heads and not c.attn_bias and not c.tie_embeddings
    attn = MODELS[False].params.blocks[0].attn
    assert attn.q_norm.shape == (c.n_heads * c.d_head,) and attn.k_norm.shape == (c.n_kv_heads * c.d_head,)
    assert np.abs(attn.q_norm - 1).max() > 0.1 and np.abs(attn.k_norm - 1).max() > 0.1


def test_every_expert_is_chosen_and_the_weights_are_not_renormalised():
    """Some token of the fixture goes to each expert, and some token's two weights sum to well
    under 1 (0.61 in layer 0): the fixture tells renormalised routing from OLMoE's."""
    model, ids = MODELS[False], EXPECTED["ids"]
    x = model.params.wte[ids].reshape(-1, model.config.d_model)        # layer 0's input, unnormed
    top, w = route(x, model.params.blocks[0].ffn.router, model.config.n_experts_used, False)
    assert set(top.ravel()) == set(range(model.config.n_experts))
    assert w.sum(axis=-1).min() < 0.9


@pytest.mark.parametrize("fast", CASES)
def test_renormalising_would_change_the_logits(fast):
    """The same weights with norm_topk_prob=True are another model (transformers: up to 0.86)."""
    model = MODELS[fast]
    other = model_class(fast).from_pretrained(FIXTURES / NAME)
    other.config.norm_topk_prob = True
    ids = EXPECTED["ids"][:1]
    assert np.abs(other(ids) - model(ids)).max() > 0.1


def test_norm_topk_prob_true_was_checked_against_transformers_too():
    """scripts/make_olmoe_fixtures.py saved the fixture's weights with norm_topk_prob true and
    compared minillm's reading of that folder with transformers' logits (3.3e-6 of 9.95)."""
    run = json.loads((FIXTURES / NAME / "generation.json").read_text())["norm_topk_prob_true"]
    assert run["max_abs_diff_logits"] <= 1e-4 * run["max_abs_logit"]
