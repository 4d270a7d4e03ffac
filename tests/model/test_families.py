"""Llama 3.x (RoPE scaling "llama3") and Qwen3 (q/k norms, head_dim apart from C / H): their
definitions, their config.json, and parity with Hugging Face transformers.

Fixtures: tests/fixtures/llama3_tiny and qwen3_tiny (scripts/make_family_fixtures.py; transformers
5.24.0, torch 2.13.0 CPU; random weights, every feature on, 2 layers, 4 query heads on 2 KV heads,
24-token rows, 18-token prompts). Tolerance: max |Δlogits| ≤ 1e-4 · max |logit|. Measured
(max |Δlogits| against transformers; the full pass / prefill of 17 then one token at a time
through the KV cache):

    llama3_tiny (max |logit| 10.93):  model 4.8e-6 / 4.9e-6    engine 3.8e-6 / 4.7e-6
    qwen3_tiny  (max |logit| 13.04):  model 6.6e-6 / 5.8e-6    engine 5.0e-6 / 5.8e-6

Greedy and beam tokens, the loss and save_pretrained's names: tests/model/test_parity_hf.py and
tests/test_llama_parity.py (both list these fixtures).
"""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from minillm import KVCache
from minillm.config import ModelConfig
from minillm.io.hf.config import from_hf_dict, to_hf_dict
from minillm.io.safetensors import load_safetensors
from minillm.loading import model_class
from minillm.model.attention import attention, causal_mask
from minillm.hooks import Layer
from minillm.model.norm import rms_norm
from minillm.model.rope import llama3_frequencies, rope_frequencies
from tests.conftest import FIXTURES
from tests.model.strategies import llama3_scalings, random_model

FAMILIES = ["llama3_tiny", "qwen3_tiny"]
LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 8192}


@pytest.mark.parametrize("fast", [False, True], ids=["model", "engine"])
@pytest.mark.parametrize("name", FAMILIES)
def test_logits_match_transformers_with_and_without_the_cache(name, fast):
    model = model_class(fast).from_pretrained(FIXTURES / name)
    expected = load_safetensors(FIXTURES / name / "expected.safetensors")
    ids, want = expected["ids"], expected["logits"]                     # [2, 24], [2, 24, V]
    bound = 1e-4 * float(np.abs(want).max())
    assert np.abs(model(ids) - want).max() <= bound
    cache = KVCache(model.config, batch_size=2, capacity=ids.shape[1])
    steps = [model(ids[:, :17], cache=cache)]                           # a prefill longer than 16
    steps += [model(ids[:, t:t + 1], cache=cache) for t in range(17, ids.shape[1])]
    assert np.abs(np.concatenate(steps, axis=1) - want).max() <= bound


def test_the_fixtures_switch_every_feature_on():
    llama3 = model_class(False).from_pretrained(FIXTURES / "llama3_tiny").config
    qwen3 = model_class(False).from_pretrained(FIXTURES / "qwen3_tiny").config
    assert llama3.rope_scaling["rope_type"] == "llama3" and llama3.n_heads == 2 * llama3.n_kv_heads
    theta = rope_frequencies(llama3.d_head, llama3.rope_theta)
    scaled = rope_frequencies(llama3.d_head, llama3.rope_theta, llama3.rope_scaling)
    ratio = theta / scaled                                              # 1 kept, factor stretched
    assert ratio[0] == 1 and 1 < ratio[1] < 8 and np.allclose(ratio[2:], 8)
    assert qwen3.qk_norm and qwen3.n_heads * qwen3.d_head != qwen3.d_model
    assert qwen3.n_heads == 2 * qwen3.n_kv_heads and not qwen3.attn_bias


# ---- Llama 3's RoPE scaling, the definition --------------------------------------------------
def llama3_one_pair(theta_i, factor, low_freq_factor, high_freq_factor,
                    original_max_position_embeddings):
    """One pair at a time, as Meta's Llama 3.1 reference code states it."""
    L, wavelength = original_max_position_embeddings, 2 * math.pi / theta_i
    if wavelength < L / high_freq_factor:
        return theta_i
    if wavelength > L / low_freq_factor:
        return theta_i / factor
    s = (L / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)
    return (1 - s) * theta_i / factor + s * theta_i


@given(llama3_scalings(), st.sampled_from([2, 4, 8, 64, 128]), st.floats(10.0, 1e6))
def test_llama3_frequencies_equal_the_per_pair_definition(scaling, D, theta):
    params = {k: v for k, v in scaling.items() if k != "rope_type"}
    plain = rope_frequencies(D, theta)
    got = llama3_frequencies(plain, **params)
    want = [llama3_one_pair(t, **params) for t in plain]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.all(got <= plain) and np.all(got >= plain / params["factor"] * (1 - 1e-12))


@given(llama3_scalings())
def test_llama3_frequencies_are_continuous_at_the_two_bounds(scaling):
    p = {k: v for k, v in scaling.items() if k != "rope_type"}
    L, lo, hi = p["original_max_position_embeddings"], p["low_freq_factor"], p["high_freq_factor"]
    for wavelength, ratio in ((L / hi, 1.0), (L / lo, 1 / p["factor"])):   # the smoothed ends
        for side in (1 - 1e-9, 1 + 1e-9):
            theta_i = np.array([2 * math.pi / (wavelength * side)])
            assert llama3_frequencies(theta_i, **p)[0] / theta_i[0] == pytest.approx(ratio, rel=1e-6)


def test_llama3_scaling_reads_both_spellings_and_writes_one_transformers_reads():
    shape = {"model_type": "llama", "vocab_size": 64, "hidden_size": 32, "num_attention_heads": 4,
             "num_hidden_layers": 2, "intermediate_size": 32}
    new = from_hf_dict({**shape, "rope_parameters": {**LLAMA3, "rope_theta": 500000.0}})
    old = from_hf_dict({**shape, "rope_theta": 500000.0,
                        "rope_scaling": {**{k: v for k, v in LLAMA3.items() if k != "rope_type"},
                                         "type": "llama3"}})
    assert new == old and new.rope_scaling == LLAMA3 and new.rope_theta == 500000.0
    d = to_hf_dict(new)
    assert d["rope_scaling"] == LLAMA3 and d["rope_theta"] == 500000.0
    del d["minillm"]                                   # read back from the HF keys alone
    assert from_hf_dict(d) == new


@pytest.mark.parametrize("kind", ["linear", "dynamic", "yarn", "longrope"])
def test_other_rope_scaling_kinds_are_refused_by_name(kind):
    d = {"model_type": "llama", "vocab_size": 64, "hidden_size": 32, "num_attention_heads": 4,
         "num_hidden_layers": 2, "intermediate_size": 32,
         "rope_scaling": {"rope_type": kind, "factor": 2.0}}
    with pytest.raises(ValueError, match=f"RoPE scaling '{kind}' is not supported"):
        from_hf_dict(d)


@pytest.mark.parametrize("change, message", [
    ({"factor": 0.0}, "factor must be a finite number > 0"),
    ({"high_freq_factor": 1.0}, "low_freq_factor < high_freq_factor"),
    ({"original_max_position_embeddings": 8192.5}, "must be an integer"),
    ({"beta_fast": 32}, "takes exactly"),
    ({"rope_type": "mystery"}, "unknown RoPE scaling rope_type 'mystery'"),
])
def test_bad_llama3_scaling_is_a_value_error(change, message):
    with pytest.raises(ValueError, match=message):
        ModelConfig(vocab_size=8, n_ctx=8, d_model=8, n_heads=2, n_layers=1, arch="llama",
                    rope_scaling={**LLAMA3, **change})


# ---- Qwen3: q and k norms, head_dim ------------------------------------------------------------
@given(st.integers(0, 100), st.integers(1, 6))
def test_qk_norm_normalises_each_heads_q_and_k_before_rope(seed, T):
    """The attention weights with qk_norm are softmax(q̂ k̂ᵀ / √D) with q̂, k̂ each head's q and k
    RMS-normalised over its D values (RoPE given as the identity rotation: cos 1, sin 0)."""
    config = ModelConfig(vocab_size=8, n_ctx=8, d_model=12, n_heads=4, n_kv_heads=2, head_dim=6,
                         n_layers=1, arch="llama", qk_norm=True)
    p = random_model(config, seed).params.blocks[0].attn
    x = np.random.default_rng(seed).standard_normal((1, T, 12), dtype=np.float32)
    zeros = (np.ones((1, 1, T, 3), np.float32), np.zeros((1, 1, T, 3), np.float32))
    seen = {}
    attention(x, p, Layer(config, causal_mask(T, T)[None], zeros, hook=seen.setdefault))
    w = seen["blocks.0.attn.hook_pattern"]                                    # [1, H, T, T]
    q = rms_norm((x @ p.wq).reshape(1, T, 4, 6), p.q_norm, config.norm_eps)     # [1, T, H, D]
    k = rms_norm((x @ p.wk).reshape(1, T, 2, 6), p.k_norm, config.norm_eps)     # [1, T, KV, D]
    scores = np.einsum("thd,shd->hts", q[0], np.repeat(k[0], 2, axis=1)) / math.sqrt(6)
    scores = np.where(causal_mask(T, T), scores, -np.inf)
    want = np.exp(scores - scores.max(-1, keepdims=True))
    np.testing.assert_allclose(w[0], want / want.sum(-1, keepdims=True), atol=1e-5)


def test_qwen3_config_json_reads_and_writes_model_type_qwen3():
    d = {"model_type": "qwen3", "vocab_size": 64, "hidden_size": 24, "num_attention_heads": 4,
         "num_key_value_heads": 2, "head_dim": 8, "num_hidden_layers": 2, "intermediate_size": 32,
         "attention_bias": False, "use_sliding_window": False, "sliding_window": None,
         "layer_types": ["full_attention"] * 2,
         "rope_parameters": {"rope_type": "default", "rope_theta": 1e6}}
    config = from_hf_dict(d)
    assert config.qk_norm and config.d_head == 8 and config.d_model == 24 and not config.attn_bias
    written = to_hf_dict(config)
    assert written["model_type"] == "qwen3" and written["architectures"] == ["Qwen3ForCausalLM"]
    del written["minillm"]
    assert from_hf_dict(written) == config


@pytest.mark.parametrize("change, message", [
    ({"attention_bias": True}, "attention_bias=true is not supported"),
    ({"use_sliding_window": True}, "use_sliding_window"),
    ({"layer_types": ["full_attention", "sliding_attention"]}, "full attention on every layer"),
])
def test_qwen3_variants_minillm_does_not_run_are_refused(change, message):
    d = {"model_type": "qwen3", "vocab_size": 64, "hidden_size": 24, "num_attention_heads": 4,
         "num_hidden_layers": 2, "intermediate_size": 32, "head_dim": 8, **change}
    with pytest.raises(ValueError, match=message):
        from_hf_dict(d)


def test_head_dim_equal_to_c_over_h_is_the_same_config():
    base = dict(vocab_size=8, n_ctx=8, d_model=8, n_heads=2, n_layers=1, arch="llama")
    assert ModelConfig(**base, head_dim=4) == ModelConfig(**base)
    assert ModelConfig(**base, head_dim=6).d_head == 6
    with pytest.raises(ValueError, match="head_dim"):
        ModelConfig(**base, head_dim=0)
