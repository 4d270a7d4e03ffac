"""Mixtures of experts in files: Hugging Face folders (Qwen3-MoE's ``mlp.experts.{e}.*_proj``,
Mixtral's ``block_sparse_moe.experts.{e}.w1/w2/w3``, one tensor per expert) and GGUF (llama.cpp's
stacked ``ffn_{gate,up,down}_exps`` and router ``ffn_gate_inp``; ``qwen3moe``, or ``llama`` with
``expert_count`` for Mixtral), read and written back. llama.cpp's own run of minillm's GGUF export
is checked by scripts/make_moe_fixtures.py (figures in each fixture's generation.json).
"""
import json

import numpy as np
import pytest

from minillm import GPT
from minillm.config import ModelConfig
from minillm.io.hf.config import from_hf_dict, to_hf_dict
from minillm.io.gguf import export
from minillm.io.gguf.model import gguf_config
from minillm.io.gguf.read import read_gguf
from minillm.io.safetensors import load_safetensors
from minillm.loading import load_model
from minillm.tokenizer import Tokenizer
from tests.conftest import FIXTURES

NAMES = ["qwen3_moe_tiny", "mixtral_tiny", "olmoe_tiny"]     # (OLMoE's own: test_olmoe_files.py)
QWEN3_MOE = {"model_type": "qwen3_moe", "vocab_size": 64, "hidden_size": 32,
             "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
             "num_hidden_layers": 2, "intermediate_size": 48, "moe_intermediate_size": 8,
             "num_experts": 8, "num_experts_per_tok": 2, "norm_topk_prob": True}
MIXTRAL = {"model_type": "mixtral", "vocab_size": 64, "hidden_size": 32, "num_attention_heads": 4,
           "num_key_value_heads": 2, "num_hidden_layers": 2, "intermediate_size": 16,
           "num_local_experts": 4, "num_experts_per_tok": 2}


def byte_tokenizer(n: int) -> Tokenizer:
    return Tokenizer({bytes([i]): i for i in range(n)}, {})


def the_same_numbers(a: GPT, b: GPT) -> bool:
    x, y = a.params.named(), b.params.named()
    return x.keys() == y.keys() and all(np.array_equal(x[k], y[k]) for k in x)


# ---- Hugging Face folders ---------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_save_pretrained_writes_the_files_tensors_under_their_names(tmp_path, name):
    model = GPT.from_pretrained(FIXTURES / name)
    model.save_pretrained(tmp_path)
    theirs, ours = (load_safetensors(d / "model.safetensors") for d in (FIXTURES / name, tmp_path))
    assert ours.keys() == theirs.keys()
    assert all(np.array_equal(ours[k], theirs[k]) for k in theirs)
    written = json.loads((tmp_path / "config.json").read_text())
    assert written["model_type"] == name.removesuffix("_tiny")
    del written["minillm"]                                  # read back from the HF keys alone
    assert from_hf_dict(written) == model.config
    assert the_same_numbers(GPT.from_pretrained(tmp_path), model)


def test_both_names_of_the_expert_count_read_alike():
    """Hub files say num_experts (Qwen3-MoE) or num_local_experts (Mixtral); transformers 5
    writes num_local_experts for both."""
    a = from_hf_dict(QWEN3_MOE)
    b = from_hf_dict({**{k: v for k, v in QWEN3_MOE.items() if k != "num_experts"},
                      "num_local_experts": 8})
    assert a == b and (a.n_experts, a.n_experts_used, a.d_ff, a.qk_norm) == (8, 2, 8, True)
    assert from_hf_dict({**QWEN3_MOE, "norm_topk_prob": False}).norm_topk_prob is False
    m = from_hf_dict(MIXTRAL)
    assert (m.n_experts, m.d_ff, m.norm_topk_prob, m.qk_norm) == (4, 16, True, False)


@pytest.mark.parametrize("d, message", [
    ({**QWEN3_MOE, "decoder_sparse_step": 2}, "on every layer only"),
    ({**QWEN3_MOE, "mlp_only_layers": [0]}, "on every layer only"),
    ({**QWEN3_MOE, "num_experts": "8"}, "num_experts must be an integer > 0"),
    ({**QWEN3_MOE, "norm_topk_prob": 1}, "norm_topk_prob must be true or false"),
    ({k: v for k, v in QWEN3_MOE.items() if k != "moe_intermediate_size"}, "moe_intermediate_size"),
    ({**QWEN3_MOE, "num_experts_per_tok": 9}, "n_experts_used <= n_experts"),
    ({**MIXTRAL, "sliding_window": 4096}, "mixtral config.json with a sliding_window"),
])
def test_expert_variants_minillm_does_not_run_are_refused_by_name(d, message):
    with pytest.raises(ValueError, match=message):
        from_hf_dict(d)


@pytest.mark.parametrize("change, message", [
    (dict(norm_topk_prob=False), "mixtral always renormalises"),
    (dict(attn_bias=True), "no Q, K, V biases"),
])
def test_configs_no_hf_family_holds_are_not_saved(tmp_path, change, message):
    config = ModelConfig(vocab_size=16, n_ctx=8, d_model=8, n_heads=2, n_layers=1, arch="llama",
                         n_experts=2, n_experts_used=1, **{"norm_topk_prob": True, **change})
    with pytest.raises(ValueError, match=message):
        GPT(config).save_pretrained(tmp_path / "m")
    assert not (tmp_path / "m" / "model.safetensors").exists()
    assert to_hf_dict(ModelConfig(**{**config.__dict__, "attn_bias": False, "qk_norm": True,
                                     "norm_topk_prob": False}))["model_type"] == "qwen3_moe"


# ---- GGUF ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, arch", [("qwen3_moe_tiny", "qwen3moe"), ("mixtral_tiny", "llama")])
def test_gguf_round_trip_is_exact_in_llama_cpps_names(tmp_path, name, arch):
    model = GPT.from_pretrained(FIXTURES / name)
    c = model.config
    path = model.save_gguf(tmp_path / "m.gguf", byte_tokenizer(c.vocab_size))
    g = read_gguf(str(path))
    assert g.metadata["general.architecture"] == arch
    assert (g.metadata[f"{arch}.expert_count"], g.metadata[f"{arch}.expert_used_count"]) == \
        (c.n_experts, c.n_experts_used)
    E, C, F = c.n_experts, c.d_model, c.d_ff
    shapes = {n: g.tensors[f"blk.1.{n}.weight"].shape for n in
              ("ffn_gate_inp", "ffn_gate_exps", "ffn_up_exps", "ffn_down_exps")}
    assert shapes == {"ffn_gate_inp": (E, C), "ffn_gate_exps": (E, F, C), "ffn_up_exps": (E, F, C),
                      "ffn_down_exps": (E, C, F)}                      # NumPy order: ggml's reversed
    ffn = model.params.blocks[1].ffn
    np.testing.assert_array_equal(g.tensor("blk.1.ffn_up_exps.weight")[2], ffn.w_up[2].T)
    np.testing.assert_array_equal(g.tensor("blk.1.ffn_gate_inp.weight"), ffn.router.T)
    back, _ = load_model(path, fast=False)
    assert back.config.__dict__ | {"norm_eps": c.norm_eps} == c.__dict__
    assert the_same_numbers(back, model)
    ids = load_safetensors(FIXTURES / name / "expected.safetensors")["ids"]
    np.testing.assert_array_equal(load_model(path)[0](ids), load_model(FIXTURES / name)[0](ids))


def test_a_qwen3moe_file_takes_the_experts_width_from_expert_feed_forward_length(tmp_path, monkeypatch):
    """llama.cpp's converter writes the dense intermediate_size as feed_forward_length and the
    experts' as expert_feed_forward_length: the experts' is F."""
    model = GPT.from_pretrained(FIXTURES / "qwen3_moe_tiny")
    plain = export.arch_metadata

    def as_the_converter(config, arch):
        meta = plain(config, arch)
        meta["qwen3moe.feed_forward_length"] = (meta["qwen3moe.feed_forward_length"][0], 48)
        return meta
    monkeypatch.setattr(export, "arch_metadata", as_the_converter)
    path = model.save_gguf(tmp_path / "m.gguf", byte_tokenizer(64))
    assert read_gguf(str(path)).metadata["qwen3moe.feed_forward_length"] == 48
    assert load_model(path)[0].config.d_ff == 8


@pytest.mark.parametrize("change, message", [
    (dict(norm_topk_prob=False), "renormalise the routing weights"),
    (dict(attn_bias=True), "no Q, K, V biases"),
])
def test_experts_llama_cpp_would_run_otherwise_are_not_exported(tmp_path, change, message):
    config = ModelConfig(vocab_size=16, n_ctx=8, d_model=8, n_heads=2, n_layers=1, arch="llama",
                         n_experts=2, n_experts_used=1, **{"norm_topk_prob": True, **change})
    with pytest.raises(ValueError, match=message):
        GPT(config).save_gguf(tmp_path / "x.gguf", byte_tokenizer(16))
    assert not (tmp_path / "x.gguf").exists()


@pytest.mark.parametrize("dtype, bound", [("f16", 1e-3), ("q8_0", 2e-2)])
def test_quantised_experts_stay_close(tmp_path, dtype, bound):
    model = GPT.from_pretrained(FIXTURES / "mixtral_tiny")
    ids = load_safetensors(FIXTURES / "mixtral_tiny" / "expected.safetensors")["ids"][:1, :8]
    path = model.save_gguf(tmp_path / "m.gguf", byte_tokenizer(64), dtype=dtype)
    want = model(ids)
    assert np.abs(load_model(path)[0](ids) - want).max() <= bound * np.abs(want).max()


@pytest.mark.parametrize("arch, extra, message", [
    ("qwen3moe", {"expert_shared_count": 1}, "shared experts are not supported"),
    ("qwen3moe", {"expert_count": 0}, "needs qwen3moe.expert_count > 0"),
    ("qwen3moe", {"expert_used_count": 9}, "0 < expert_used_count <= expert_count"),
    ("qwen2", {}, "experts in a qwen2 file are not supported"),
])
def test_gguf_expert_metadata_minillm_does_not_run_is_refused(arch, extra, message):
    class Info:
        shape = (64, 32)
    meta = {"general.architecture": arch, **{f"{arch}.{k}": v for k, v in {
        "context_length": 128, "embedding_length": 32, "block_count": 2, "feed_forward_length": 8,
        "expert_feed_forward_length": 8, "attention.head_count": 4, "expert_count": 8,
        "expert_used_count": 2, "attention.layer_norm_rms_epsilon": 1e-6, **extra}.items()}}
    with pytest.raises(ValueError, match=message):
        gguf_config(meta, {"token_embd.weight": Info()})
