"""Gemma 2 and Gemma 3 (text) and Mistral's sliding window against Hugging Face transformers:
logits, greedy and beam tokens, config.json and the weights' names both ways, GGUF both ways.

Fixtures: tests/fixtures/gemma2_tiny, gemma3_tiny, mistral_window_tiny
(scripts/make_gemma_fixtures.py; transformers 5.24.0, torch 2.13.0 CPU, eager attention; random
weights, every feature on, 4 query heads on 2 KV heads, 24-token rows, 18-token prompts, windows
4, 6 and 5). Tolerance: max |Δlogits| ≤ 1e-4 · max |logit|. Measured (max |Δlogits| / max |logit|;
the full pass, then a prefill of 7 and one token at a time through the KV cache, past every window):

    gemma2_tiny          (max |logit| 8.99)   model 4.1e-7 / 5.2e-7   engine 3.7e-7 / 5.4e-7
    gemma3_tiny          (max |logit| 13.69)  model 2.9e-7 / 5.0e-7   engine 3.0e-7 / 3.8e-7
    mistral_window_tiny  (max |logit| 10.15)  model 5.8e-7 / 6.6e-7   engine 5.9e-7 / 6.3e-7

llama.cpp (cyllama 0.2.18) on minillm's GGUF export of each: the fixture script, figures in each
fixture's llama_cpp.json.
"""
import dataclasses
import json

import numpy as np
import pytest

from minillm import GPT
from minillm.decoding.generate import generate
from minillm.engine import EngineGPT
from minillm.io.hf.config import from_hf_dict, to_hf_dict
from minillm.io.gguf.read import read_gguf
from minillm.io.safetensors import load_safetensors, read_safetensors_shapes
from minillm.loading import load_model, model_class
from minillm.model.variants import softcap
from minillm.tokenizer import Tokenizer
from tests.conftest import FIXTURES
from tests.model.family_parity import (assert_beam4_matches,
                                     assert_logits_match_with_and_without_the_cache)

NAMES = ["gemma2_tiny", "gemma3_tiny", "mistral_window_tiny"]
CASES = [pytest.param((name, fast), id=f"{name}-{'engine' if fast else 'model'}")
         for name in NAMES for fast in (False, True)]
MODELS = {(name, fast): model_class(fast).from_pretrained(FIXTURES / name)
          for name in NAMES for fast in (False, True)}
EXPECTED = {name: load_safetensors(FIXTURES / name / "expected.safetensors") for name in NAMES}


def byte_tokenizer(n: int) -> Tokenizer:
    return Tokenizer({bytes([i]): i for i in range(n)}, {})


@pytest.mark.parametrize("case", CASES)
def test_logits_match_transformers_with_and_without_the_cache(case):
    model, expected = MODELS[case], EXPECTED[case[0]]
    assert_logits_match_with_and_without_the_cache(model, expected, prefill=7)   # then 17 steps past W


@pytest.mark.parametrize("case", CASES)
def test_greedy_tokens_equal_transformers(case):
    e = EXPECTED[case[0]]
    prompt, want = e["greedy_prompt"][0], e["greedy_ids"][0]
    got = [s.id for s in generate(MODELS[case], prompt, len(want), temperature=0)]
    assert got == want.tolist() and len(prompt) + len(want) > 3 * MODELS[case].config.sliding_window


@pytest.mark.parametrize("case", CASES)
def test_beam_search_equals_transformers_beam4(case):
    assert_beam4_matches(MODELS[case], EXPECTED[case[0]])


def test_the_fixtures_switch_every_feature_on():
    g2, g3, mistral = (MODELS[(n, False)].config for n in NAMES)
    for c in (g2, g3):
        assert c.sandwich_norms and c.embed_scale and c.ffn == "geglu" and c.tie_embeddings
        assert c.query_pre_attn_scalar not in (None, c.d_head) and c.n_heads == 2 * c.n_kv_heads
    assert g2.layer_types == ("sliding", "full", "sliding") and g2.attn_softcap and g2.final_softcap
    assert g3.layer_types == ("sliding", "sliding", "full", "sliding") and g3.qk_norm
    assert g3.rope_local_theta != g3.rope_theta and g3.attn_softcap is g3.final_softcap is None
    assert mistral.layer_types == ("sliding",) * 2 and mistral.n_ctx > 24 > mistral.sliding_window
    for name in NAMES:                       # the prompts are longer than the windows
        assert EXPECTED[name]["greedy_prompt"].shape[1] > MODELS[(name, False)].config.sliding_window


@pytest.mark.parametrize("name", NAMES)
def test_save_pretrained_writes_transformers_names_and_gains(name, tmp_path):
    model = MODELS[(name, False)]
    model.save_pretrained(tmp_path)
    assert read_safetensors_shapes(tmp_path / "model.safetensors") == \
        read_safetensors_shapes(FIXTURES / name / "model.safetensors")
    ours = load_safetensors(tmp_path / "model.safetensors")
    theirs = load_safetensors(FIXTURES / name / "model.safetensors")
    for key, value in theirs.items():        # Gemma's gains: 1 + w kept, w written back
        np.testing.assert_allclose(ours[key], value, atol=1e-7, err_msg=key)
    assert GPT.from_pretrained(tmp_path).config == model.config
    np.testing.assert_array_equal(GPT.from_pretrained(tmp_path)(np.arange(30) % 64),
                                  model(np.arange(30) % 64))


@pytest.mark.parametrize("name", NAMES)
def test_config_json_reads_back_from_the_transformers_keys_alone(name, tmp_path):
    config = MODELS[(name, False)].config
    d = to_hf_dict(config)
    del d["minillm"]
    assert from_hf_dict(d) == config
    hf = json.loads((FIXTURES / name / "config.json").read_text())
    assert from_hf_dict(hf) == config
    assert d["model_type"] == hf["model_type"]


def test_gemma_config_json_defaults_and_spellings():
    base = {"vocab_size": 64, "hidden_size": 32, "num_attention_heads": 4, "num_hidden_layers": 7,
            "intermediate_size": 32, "head_dim": 8}
    g2 = from_hf_dict({**base, "model_type": "gemma2"})
    assert g2.layer_types == ("sliding", "full", "sliding", "full", "sliding", "full", "sliding")
    assert (g2.attn_softcap, g2.final_softcap, g2.query_pre_attn_scalar) == (50.0, 30.0, 256.0)
    assert (g2.sliding_window, g2.rope_theta, g2.rope_local_theta) == (4096, 10000.0, None)
    old = from_hf_dict({**base, "model_type": "gemma3_text", "sliding_window_pattern": 3,
                        "rope_theta": 1e6, "rope_local_base_freq": 1e4})
    new = from_hf_dict({**base, "model_type": "gemma3_text", "layer_types": [
        "sliding_attention", "sliding_attention", "full_attention"] * 2 + ["sliding_attention"],
        "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 1e6},
                            "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}})
    assert old == new and old.layer_types[2::3] == ("full", "full") and old.qk_norm
    assert (old.attn_softcap, old.final_softcap, old.rope_local_theta) == (None, None, 1e4)


@pytest.mark.parametrize("change, message", [
    ({"hidden_activation": "gelu"}, "hidden_activation"),
    ({"layer_types": ["chunked_attention"] * 2}, "layer_types"),
    ({"rope_scaling": {"rope_type": "linear", "factor": 8.0}}, "RoPE scaling 'linear'"),
    ({"use_bidirectional_attention": True}, "use_bidirectional_attention")])
def test_gemma_variants_minillm_does_not_run_are_refused_by_name(change, message):
    d = {"model_type": "gemma3_text", "vocab_size": 64, "hidden_size": 32,
         "num_attention_heads": 4, "num_hidden_layers": 2, "intermediate_size": 32, **change}
    with pytest.raises(ValueError, match=message):
        from_hf_dict(d)


@pytest.mark.parametrize("name, arch", [("gemma2_tiny", "gemma2"), ("gemma3_tiny", "gemma3"),
                                        ("mistral_window_tiny", "llama")])
def test_gguf_round_trip_is_exact(name, arch, tmp_path):
    model = EngineGPT.from_pretrained(FIXTURES / name)
    path = model.save_gguf(tmp_path / "m.gguf", byte_tokenizer(64))
    back, _ = load_model(path)
    assert back.config == dataclasses.replace(model.config,
                                               norm_eps=float(np.float32(model.config.norm_eps)))
    ids = np.arange(40) % 64
    np.testing.assert_array_equal(back(ids), model(ids))
    assert read_gguf(str(path)).metadata["general.architecture"] == arch


def test_gemma_gguf_names_and_gains_are_llama_cpps(tmp_path):
    """llama.cpp's converter: four norms a block (post_attention_norm, ffn_norm, post_ffw_norm),
    gains stored 1 + w, Q and K not permuted, no output.weight, its gemma2 keys."""
    model = GPT.from_pretrained(FIXTURES / "gemma2_tiny")
    g = read_gguf(str(model.save_gguf(tmp_path / "g.gguf", byte_tokenizer(64))))
    hf = load_safetensors(FIXTURES / "gemma2_tiny" / "model.safetensors")
    pairs = {"attn_norm": "input_layernorm", "post_attention_norm": "post_attention_layernorm",
             "ffn_norm": "pre_feedforward_layernorm", "post_ffw_norm": "post_feedforward_layernorm"}
    for ours, theirs in pairs.items():
        np.testing.assert_allclose(g.tensor(f"blk.1.{ours}.weight"),
                                   1 + hf[f"model.layers.1.{theirs}.weight"], rtol=1e-7)
    np.testing.assert_array_equal(g.tensor("blk.1.attn_q.weight"),
                                  hf["model.layers.1.self_attn.q_proj.weight"])
    assert "output.weight" not in g.tensors
    m = g.metadata
    assert (m["gemma2.attention.sliding_window"], m["gemma2.attn_logit_softcapping"],
            m["gemma2.final_logit_softcapping"], m["gemma2.attention.key_length"]) == (4, 2.0, 10.0, 8)


def test_a_converted_gemma3_file_reads_with_llama_cpps_fixed_numbers(tmp_path):
    """Without minillm's keys (a file llama.cpp's converter wrote): pattern 6, local RoPE base
    10,000, queries scaled by 1/√head_dim, as llama.cpp runs it."""
    from minillm.io.gguf.model import gguf_config
    model = GPT.from_pretrained(FIXTURES / "gemma3_tiny")
    g = read_gguf(str(model.save_gguf(tmp_path / "g.gguf", byte_tokenizer(64))))
    meta = {k: v for k, v in g.metadata.items() if not k.endswith(
        ("sliding_window_pattern", "freq_base_swa", "query_pre_attn_scalar"))}
    config = gguf_config(meta, g.tensors)
    assert config.layer_types == ("sliding",) * 4 and config.rope_local_theta == 10000.0
    assert config.query_pre_attn_scalar is None and config.sliding_window == 6


def test_softcap_stays_within_the_cap_and_is_the_identity_near_zero():
    x = np.array([-1e4, -30.0, -1e-3, 0.0, 1e-3, 30.0, 1e4], np.float32)
    y = softcap(x, 30.0)
    assert np.all(np.abs(y) <= 30.0) and y.dtype == np.float32
    np.testing.assert_allclose(y[2:5], x[2:5], rtol=1e-6)
    np.testing.assert_allclose(y[5], 30.0 * np.tanh(1.0), rtol=1e-6)


@pytest.mark.parametrize("change, match", [
    (dict(final_softcap=None), "gemma2 soft-caps"), (dict(tie_embeddings=False), "tied"),
    (dict(sliding_window=None, layer_types=None), "sliding window")])
def test_gemma_configs_llama_cpp_cannot_run_are_refused(change, match, tmp_path):
    config = dataclasses.replace(MODELS[("gemma2_tiny", False)].config, **change)
    with pytest.raises(ValueError, match=match):
        GPT(config).save_gguf(tmp_path / "x.gguf", byte_tokenizer(64))
    assert not (tmp_path / "x.gguf").exists()
