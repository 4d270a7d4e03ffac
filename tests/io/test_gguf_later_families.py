"""GGUF in and out for Phi-3, OLMo 2 and SmolLM3, with llama.cpp's names (gguf/families.py):
``phi3`` (fused ``attn_qkv`` and ``ffn_up`` [2F, C]), ``olmo2`` (``post_attention_norm``,
``post_ffw_norm``, whole-width ``attn_q_norm`` / ``attn_k_norm``), ``smollm3`` (Llama's names, Q/K
permuted; every 4th layer without RoPE, as llama.cpp fixes it).

Round trip minillm -> GGUF -> minillm: the same config (eps stored as float32) and bit-identical
logits. llama.cpp itself (cyllama 0.2.18, build b9190) reads these exports in the fixture script
(scripts/make_family_fixtures.py: each fixture's generation.json, "llama_cpp").
"""
import dataclasses
import json

import numpy as np
import pytest

from minillm import GPT, ModelConfig
from minillm.io.gguf.qk_rows import permute_qk
from minillm.io.gguf.read import read_gguf
from minillm.loading import load_model, model_class
from minillm.tokenizer import Tokenizer
from tests.conftest import FIXTURES

ARCHS = {"phi3_tiny": "phi3", "olmo2_tiny": "olmo2", "smollm3_tiny": "smollm3"}


def byte_tokenizer(n):
    return Tokenizer({bytes([i]): i for i in range(n)}, {})


def exported(tmp_path, name):
    model = GPT.from_pretrained(FIXTURES / name)
    path = model.save_gguf(tmp_path / f"{name}.gguf", byte_tokenizer(model.config.vocab_size))
    return model, read_gguf(str(path)), path


@pytest.mark.parametrize("fast", [False, True], ids=["model", "engine"])
@pytest.mark.parametrize("name", ARCHS)
def test_each_family_round_trips_through_gguf_exactly(tmp_path, name, fast):
    model = model_class(fast).from_pretrained(FIXTURES / name)
    path = model.save_gguf(tmp_path / "m.gguf", byte_tokenizer(model.config.vocab_size))
    back, _ = load_model(path, fast=fast)
    assert back.config == dataclasses.replace(model.config,
                                              norm_eps=float(np.float32(model.config.norm_eps)))
    ids = np.arange(40) % model.config.vocab_size
    np.testing.assert_array_equal(back(ids), model(ids))
    assert read_gguf(str(path)).metadata["general.architecture"] == ARCHS[name]


def test_phi3_files_fuse_qkv_and_gate_up_as_the_converter_does(tmp_path):
    model, g, _ = exported(tmp_path, "phi3_tiny")
    b = model.params.blocks[1]
    want_qkv = np.concatenate([b.attn.wq.T, b.attn.wk.T, b.attn.wv.T])      # [H·D + 2·KV·D, C]
    np.testing.assert_array_equal(g.tensor("blk.1.attn_qkv.weight"), want_qkv)   # not permuted
    want_up = np.concatenate([b.ffn.w_gate.T, b.ffn.w_up.T])                # [2F, C]: gate first
    np.testing.assert_array_equal(g.tensor("blk.1.ffn_up.weight"), want_up)
    assert not any(".attn_q." in n or "ffn_gate" in n for n in g.tensors)
    assert g.metadata["phi3.rope.scaling.original_context_length"] == model.config.n_ctx
    assert g.metadata["phi3.attention.sliding_window"] == 0
    assert "output.weight" not in g.tensors                               # tied: llama.cpp reuses


def test_olmo2_files_name_the_norms_after_and_the_whole_width_q_k_norms(tmp_path):
    model, g, _ = exported(tmp_path, "olmo2_tiny")
    b = model.params.blocks[0]
    np.testing.assert_array_equal(g.tensor("blk.0.post_attention_norm.weight"), b.norm1.weight)
    np.testing.assert_array_equal(g.tensor("blk.0.post_ffw_norm.weight"), b.norm2.weight)
    assert g.tensors["blk.0.attn_q_norm.weight"].shape == (32,)
    assert g.tensors["blk.0.attn_k_norm.weight"].shape == (16,)
    assert "blk.0.attn_norm.weight" not in g.tensors and "blk.0.ffn_norm.weight" not in g.tensors
    np.testing.assert_array_equal(g.tensor("blk.0.attn_q.weight"), b.attn.wq.T)  # not permuted
    assert "output.weight" in g.tensors


def test_smollm3_files_permute_q_k_and_read_back_every_fourth_layer_without_rope(tmp_path):
    model, g, path = exported(tmp_path, "smollm3_tiny")
    wq = model.params.blocks[2].attn.wq
    np.testing.assert_array_equal(g.tensor("blk.2.attn_q.weight"), permute_qk(wq.T, 4))
    assert not any(k.startswith("smollm3.") and "rope" in k and "layer" in k for k in g.metadata)
    assert load_model(path)[0].config.nope_layers == (3,)


def test_the_llama_cpp_figures_are_recorded_for_every_family():
    for name in ARCHS:
        run = json.loads((FIXTURES / name / "generation.json").read_text())["llama_cpp"]
        assert run["greedy_16_equal"] and run["max_abs_diff_logits"] <= run["bound"]


BASE = dict(vocab_size=64, n_ctx=16, d_model=32, n_heads=4, n_kv_heads=2, n_layers=4, arch="llama")


@pytest.mark.parametrize("change, match", [
    (dict(post_norms=True, qk_norm=True, qk_norm_whole=True), "olmo2 does not run tied embeddings"),
    (dict(post_norms=True, tie_embeddings=False), "olmo2 does not run per-head q/k norms"),
    (dict(nope_layers=(1,)), "smollm3 does not run layers without RoPE other than every 4th"),
    (dict(fused_projections=True, head_dim=16), "phi3 does not run a head width other than C / H"),
    (dict(fused_projections=True, qk_norm=True), "phi3 does not run q/k norms"),
    (dict(fused_projections=True, nope_layers=(3,)), "phi3 does not run layers without RoPE"),
    (dict(nope_layers=(3,), attn_bias=True), "smollm3 does not run Q, K, V biases"),
])
def test_configs_llama_cpp_cannot_run_are_refused(tmp_path, change, match):
    with pytest.raises(ValueError, match=match):
        GPT(ModelConfig(**{**BASE, **change})).save_gguf(tmp_path / "x.gguf", byte_tokenizer(64))
    assert not (tmp_path / "x.gguf").exists()


def test_a_phi3_files_sliding_window_caps_the_context(tmp_path, monkeypatch):
    """Phi-3-mini's converted files say sliding_window 2047: read as a context of 2047 (exact for
    transformers, which applies the window, and llama.cpp, which ignores it, up to there)."""
    monkeypatch.setattr("minillm.io.gguf.export.family_metadata",
                        lambda c, a: {"phi3.attention.sliding_window": 20})
    model, _, path = exported(tmp_path, "phi3_tiny")
    back, _ = load_model(path)
    assert back.config.n_ctx == 20 and model.config.n_ctx == 128


def test_a_phi3_file_whose_fused_tensor_has_other_rows_is_refused(tmp_path, monkeypatch):
    from minillm.io.gguf import families
    real = families.fuse_phi3

    def short(tensors, config):                           # one row of attn_qkv too few
        out = real(tensors, config)
        out["blk.0.attn_qkv.weight"] = out["blk.0.attn_qkv.weight"][:-1]
        return out
    monkeypatch.setattr("minillm.io.gguf.families.fuse_phi3", short)   # (families/phi3.py calls it)
    _, _, path = exported(tmp_path, "phi3_tiny")
    with pytest.raises(ValueError, match="attn_qkv.weight"):
        load_model(path)
