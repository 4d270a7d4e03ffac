"""Phi-3 (fused files), OLMo 2 (norms after the sub-layers, q/k norms over the whole width) and
SmolLM3 (layers without RoPE): parity with Hugging Face transformers, their config.json, and
their definitions.

Fixtures: tests/fixtures/{phi3,olmo2,smollm3}_tiny (scripts/make_family_fixtures.py;
transformers 5.24.0, torch 2.13.0 CPU; random weights and norm gains, 4 query heads on 2 KV
heads, 24-token rows, 18-token prompts; SmolLM3 4 layers, layer 3 without RoPE). Tolerance: max
|Δlogits| ≤ 1e-4 · max |logit|; greedy ids identical, beam scores ≤ 1e-4. Measured (max |Δlogits|
against transformers; the full pass / prefill of 17 then one token at a time through the cache):

    phi3_tiny    (max |logit| 11.22):  model 7.6e-6 / 8.1e-6    engine 5.2e-6 / 6.4e-6
    olmo2_tiny   (max |logit| 10.24):  model 7.8e-6 / 6.9e-6    engine 5.2e-6 / 6.1e-6
    smollm3_tiny (max |logit|  8.00):  model 8.0e-6 / 7.8e-6    engine 9.3e-6 / 9.8e-6
"""
import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from minillm import GPT, KVCache
from minillm.config import ModelConfig
from minillm.decoding.generate import generate
from minillm.engine.gpt import to_engine
from minillm.io.hf.config import from_hf_dict, to_hf_dict
from minillm.io.safetensors import load_safetensors
from minillm.loading import model_class
from minillm.model.attention import attention, causal_mask
from minillm.model.block import block
from minillm.hooks import Layer
from minillm.model.norm import rms_norm
from tests.conftest import FIXTURES
from tests.model.family_parity import (assert_beam4_matches,
                                     assert_logits_match_with_and_without_the_cache)
from tests.model.strategies import random_model

FAMILIES = ["phi3_tiny", "olmo2_tiny", "smollm3_tiny"]
CASES = [pytest.param((name, fast), id=f"{name}-{'engine' if fast else 'model'}")
         for name in FAMILIES for fast in (False, True)]
MODELS = {(name, fast): model_class(fast).from_pretrained(FIXTURES / name)
          for name in FAMILIES for fast in (False, True)}
EXPECTED = {name: load_safetensors(FIXTURES / name / "expected.safetensors") for name in FAMILIES}
SHAPE = {"vocab_size": 64, "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2,
         "num_hidden_layers": 4, "intermediate_size": 32}


@pytest.mark.parametrize("case", CASES)
def test_logits_match_transformers_with_and_without_the_cache(case):
    model, expected = MODELS[case], EXPECTED[case[0]]
    assert_logits_match_with_and_without_the_cache(model, expected, prefill=17)


@pytest.mark.parametrize("case", CASES)
def test_loss_matches_transformers(case):
    model, expected = MODELS[case], EXPECTED[case[0]]
    assert abs(model.loss(expected["ids"]) - float(expected["loss"])) <= 1e-5


@pytest.mark.parametrize("case", CASES)
def test_greedy_tokens_equal_transformers(case):
    prompt, want = EXPECTED[case[0]]["greedy_prompt"][0], EXPECTED[case[0]]["greedy_ids"][0]
    got = [s.id for s in generate(MODELS[case], prompt, len(want), temperature=0)]
    assert got == want.tolist()


@pytest.mark.parametrize("case", CASES)
def test_beam_search_equals_transformers_beam4(case):
    assert_beam4_matches(MODELS[case], EXPECTED[case[0]])


@pytest.mark.parametrize("name", FAMILIES)
def test_save_pretrained_writes_transformers_names_and_reads_back(name, tmp_path):
    model = MODELS[(name, False)]
    model.save_pretrained(tmp_path)
    ours = {k: v.shape for k, v in load_safetensors(tmp_path / "model.safetensors").items()}
    theirs = {k: v.shape for k, v in load_safetensors(FIXTURES / name / "model.safetensors").items()}
    assert ours == theirs                                               # (Phi-3: fused again)
    again = type(model).from_pretrained(tmp_path)
    assert again.config == model.config
    ids = EXPECTED[name]["ids"][:1]
    np.testing.assert_array_equal(again(ids), model(ids))


def test_the_fixtures_switch_every_feature_on():
    phi3, olmo2, smollm3 = (MODELS[(name, False)].config for name in FAMILIES)
    assert phi3.fused_projections and olmo2.post_norms and olmo2.qk_norm_whole
    assert smollm3.nope_layers == (3,) and smollm3.n_layers == 4
    assert all(c.n_heads == 2 * c.n_kv_heads for c in (phi3, olmo2, smollm3))
    q_norm = MODELS[("olmo2_tiny", False)].params.blocks[0].attn.q_norm
    assert q_norm.shape == (32,) and np.std(q_norm) > 0.1               # random gains, H·D wide


# ---- config.json --------------------------------------------------------------------------------
def test_phi3_config_json_reads_fused_and_writes_phi3():
    config = from_hf_dict({**SHAPE, "model_type": "phi3", "original_max_position_embeddings": 64,
                           "rope_parameters": {"rope_type": "default", "rope_theta": 1e4,
                                               "partial_rotary_factor": 1.0}})
    assert config.fused_projections and not config.tie_embeddings
    written = to_hf_dict(config)
    assert written["model_type"] == "phi3" and written["architectures"] == ["Phi3ForCausalLM"]
    del written["minillm"]
    assert from_hf_dict(written) == config


@pytest.mark.parametrize("change, message", [
    ({"rope_scaling": {"type": "longrope", "long_factor": [1.0] * 4, "short_factor": [1.0] * 4}},
     "RoPE scaling 'longrope' is not supported"),
    ({"rope_scaling": {"type": "su", "long_factor": [1.0] * 4, "short_factor": [1.0] * 4}},
     "RoPE scaling 'su' is not supported"),
    ({"rope_parameters": {"rope_type": "default", "partial_rotary_factor": 0.75}},
     "partial rotary embeddings .partial_rotary_factor 0.75. are not supported"),
    ({"partial_rotary_factor": 0.5}, "partial rotary"),
    ({"head_dim": 4}, "head_dim · num_attention_heads != hidden_size"),
    ({"attention_bias": True}, "attention_bias=true is not supported"),
])
def test_phi3_variants_minillm_does_not_run_are_refused_by_name(change, message):
    with pytest.raises(ValueError, match=message):
        from_hf_dict({**SHAPE, "model_type": "phi3", **change})


def test_a_phi3_sliding_window_caps_the_context_as_mistrals_does():
    config = from_hf_dict({**SHAPE, "model_type": "phi3", "max_position_embeddings": 4096,
                           "sliding_window": 2047})
    assert config.n_ctx == 2047


def test_olmo2_config_json_reads_the_norms_after_and_writes_olmo2():
    config = from_hf_dict({**SHAPE, "model_type": "olmo2", "attention_bias": False})
    assert config.post_norms and config.qk_norm and config.qk_norm_whole
    written = to_hf_dict(config)
    assert written["model_type"] == "olmo2" and written["architectures"] == ["Olmo2ForCausalLM"]
    del written["minillm"]
    assert from_hf_dict(written) == config


@pytest.mark.parametrize("hf, nope", [
    ({}, (3,)),                                           # transformers' default: interval 4
    ({"no_rope_layer_interval": 2}, (1, 3)),
    ({"no_rope_layers": [0, 1, 1, 0]}, (0, 3)),           # 0: the layer does NOT use RoPE
    ({"no_rope_layers": [1, 1, 1, 1, 0]}, ()),            # (longer than the layers: HF allows it)
])
def test_smollm3_no_rope_layers_read_as_transformers_means_them(hf, nope):
    config = from_hf_dict({**SHAPE, "model_type": "smollm3", **hf})
    assert config.nope_layers == nope and config.tie_embeddings     # SmolLM3 ties by default
    written = to_hf_dict(config)
    del written["minillm"]
    assert from_hf_dict(written) == config
    assert written["model_type"] == ("smollm3" if nope else "llama")


@pytest.mark.parametrize("hf", [{"no_rope_layers": [1, 1, 0]}, {"no_rope_layers": [1, 2, 1, 0]},
                                {"no_rope_layer_interval": 0}, {"use_sliding_window": True}])
def test_bad_smollm3_layer_lists_are_refused(hf):
    with pytest.raises(ValueError, match="no_rope_layer|use_sliding_window"):
        from_hf_dict({**SHAPE, "model_type": "smollm3", **hf})


@pytest.mark.parametrize("change, message", [
    (dict(nope_layers=(4,)), "distinct layer indices in .0, 4."),
    (dict(nope_layers=(1, 1)), "distinct"),
    (dict(qk_norm_whole=True), "needs qk_norm"),
    (dict(post_norms=1), "post_norms must be True or False"),
    (dict(arch="gpt2", fused_projections=True), "Llama-family"),
])
def test_bad_later_switches_are_a_value_error(change, message):
    with pytest.raises(ValueError, match=message):
        ModelConfig(**{"vocab_size": 8, "n_ctx": 8, "d_model": 8, "n_heads": 2, "n_layers": 4,
                       "arch": "llama", **change})


# ---- the definitions -----------------------------------------------------------------------------
@given(st.integers(0, 100), st.integers(1, 5))
def test_olmo2_block_normalises_each_sub_layers_output_before_the_residual_add(seed, T):
    """block(x) = h + Norm₂(FFN(h)) with h = x + Norm₁(Attention(x)): no norm before either."""
    config = ModelConfig(vocab_size=8, n_ctx=8, d_model=8, n_heads=2, n_kv_heads=1, n_layers=1,
                         arch="llama", post_norms=True, qk_norm=True, qk_norm_whole=True)
    p = random_model(config, seed).params.blocks[0]
    x = np.random.default_rng(seed).standard_normal((1, T, 8), dtype=np.float32)
    mask = causal_mask(T, T)[None]
    a = attention(x, p.attn, Layer(config, mask))
    h = x + rms_norm(a, p.norm1.weight, config.norm_eps)
    gate, up = h @ p.ffn.w_gate, h @ p.ffn.w_up                         # SwiGLU, by hand
    want = h + rms_norm((gate / (1 + np.exp(-gate)) * up) @ p.ffn.w_down, p.norm2.weight,
                        config.norm_eps)
    np.testing.assert_allclose(block(x, p, Layer(config, mask)), want, atol=1e-5)


@given(st.integers(0, 100), st.integers(1, 6))
def test_olmo2_qk_norm_spans_every_head_at_once(seed, T):
    """q̂ = RMSNorm over q's H·D values (one mean of squares for all heads), k̂ over KV·D."""
    config = ModelConfig(vocab_size=8, n_ctx=8, d_model=16, n_heads=4, n_kv_heads=2, n_layers=1,
                         arch="llama", qk_norm=True, qk_norm_whole=True, post_norms=True)
    p = random_model(config, seed).params.blocks[0].attn
    x = np.random.default_rng(seed).standard_normal((1, T, 16), dtype=np.float32)
    identity = (np.ones((1, 1, T, 2), np.float32), np.zeros((1, 1, T, 2), np.float32))
    seen = {}
    attention(x, p, Layer(config, causal_mask(T, T)[None], identity, hook=seen.setdefault))
    w = seen["blocks.0.attn.hook_pattern"]                                    # [1, H, T, T]
    q = rms_norm(x @ p.wq, p.q_norm, config.norm_eps)[0].reshape(T, 4, 4)     # [T, H, D]
    k = rms_norm(x @ p.wk, p.k_norm, config.norm_eps)[0].reshape(T, 2, 4)     # [T, KV, D]
    scores = np.einsum("thd,shd->hts", q, np.repeat(k, 2, axis=1)) / math.sqrt(4)
    scores = np.where(causal_mask(T, T), scores, -np.inf)
    want = np.exp(scores - scores.max(-1, keepdims=True))
    np.testing.assert_allclose(w[0], want / want.sum(-1, keepdims=True), atol=1e-5)


@pytest.mark.parametrize("fast", [False, True], ids=["model", "engine"])
def test_a_layer_without_rope_sees_no_positions(fast):
    """A one-layer model whose layer skips RoPE is blind to order: its last position's logits are
    the same whatever order the earlier tokens came in (its attention is a weighted sum over
    the set of keys); with RoPE they differ."""
    config = ModelConfig(vocab_size=16, n_ctx=8, d_model=8, n_heads=2, n_kv_heads=1, n_layers=1,
                         arch="llama", nope_layers=(0,))
    def built(c):
        model = GPT(c, random_model(config, 3).params)
        return to_engine(model) if fast else model

    model = built(config)
    a, b = model(np.array([1, 2, 3, 4, 5])), model(np.array([3, 1, 4, 2, 5]))
    np.testing.assert_allclose(a[-1], b[-1], atol=1e-5)
    with_rope = built(dataclasses.replace(config, nope_layers=()))
    c, d = with_rope(np.array([1, 2, 3, 4, 5])), with_rope(np.array([3, 1, 4, 2, 5]))
    assert np.abs(c[-1] - d[-1]).max() > 1e-3


@given(st.integers(0, 1000), st.booleans(), st.booleans(), st.sets(st.integers(0, 2)),
       st.integers(1, 70))
def test_the_engine_equals_the_model_with_every_later_switch(seed, olmo2, fused, nope, T):
    """Random configs with OLMo 2's norms, Phi-3's layout and layers without RoPE: the engine's
    logits equal the model's (T up to 70: past one query block of 64), with and without cache."""
    config = ModelConfig(vocab_size=32, n_ctx=80, d_model=16, n_heads=4, n_kv_heads=2,
                         n_layers=3, arch="llama", post_norms=olmo2, qk_norm=olmo2,
                         qk_norm_whole=olmo2, fused_projections=fused, nope_layers=tuple(nope))
    model = random_model(config, seed)
    engine = to_engine(model)
    ids = np.random.default_rng(seed).integers(0, 32, T)
    want = model(ids)
    np.testing.assert_allclose(engine(ids), want, atol=1e-4)
    cache = KVCache(config, capacity=T)
    steps = [engine(ids[:1], cache=cache)] + [engine(ids[t:t + 1], cache=cache) for t in range(1, T)]
    np.testing.assert_allclose(np.concatenate(steps), want, atol=1e-4)


@pytest.mark.parametrize("name, refused", [("olmo2_tiny", "post_norms"),
                                           ("smollm3_tiny", "nope_layers")])
def test_training_refuses_the_switches_it_has_no_backward_for(name, refused):
    from minillm.train.grad_model import check_trainable
    with pytest.raises(ValueError, match=f"no backward for .*{refused}"):
        check_trainable(MODELS[(name, False)].config)
    check_trainable(MODELS[("phi3_tiny", False)].config)          # a layout only: trains as Llama
