"""OLMoE in files: Hugging Face folders (``OlmoeForCausalLM``: Llama's names, q_norm / k_norm over
the whole width, the experts as ``mlp.experts.{e}.{gate,up,down}_proj`` and the router
``mlp.gate``; written back under the file's names: tests/io/test_moe_files.py) and GGUF
(llama.cpp's ``olmoe``: ``attn_q_norm`` / ``attn_k_norm``, stacked ``ffn_{gate,up,down}_exps``,
``ffn_gate_inp``, ``olmoe.expert_count``), read and written back.

llama.cpp's olmoe never renormalises the routing weights and loads ``attn_k_norm`` as C wide (no
grouped-query attention): minillm writes only what it runs. Its run of minillm's export is
checked by scripts/make_olmoe_fixtures.py on the fixture's 4-kv-head sibling; the figures are in
tests/fixtures/olmoe_tiny/generation.json ("llama_cpp").
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

NAME = "olmoe_tiny"
OLMOE = {"model_type": "olmoe", "vocab_size": 64, "hidden_size": 32, "num_attention_heads": 4,
         "num_key_value_heads": 2, "num_hidden_layers": 2, "intermediate_size": 16,
         "num_experts": 4, "num_experts_per_tok": 2}
EXPECTED = load_safetensors(FIXTURES / NAME / "expected.safetensors")


def byte_tokenizer(n: int) -> Tokenizer:
    return Tokenizer({bytes([i]): i for i in range(n)}, {})


def the_same_numbers(a: GPT, b: GPT) -> bool:
    x, y = a.params.named(), b.params.named()
    return x.keys() == y.keys() and all(np.array_equal(x[k], y[k]) for k in x)


def mha(**change) -> GPT:
    """A random OLMoE that llama.cpp runs: one KV head per query head, untied, not renormalised."""
    return GPT(ModelConfig(**{**from_hf_dict({**OLMOE, "num_key_value_heads": 4}).__dict__,
                              **change}), seed=3)


# ---- Hugging Face folders ---------------------------------------------------------------------
def test_an_olmoe_config_reads_as_pre_norms_whole_width_q_k_norms_and_unrenormalised_experts():
    c = from_hf_dict(OLMOE)
    assert (c.n_experts, c.n_experts_used, c.d_ff, c.norm_topk_prob) == (4, 2, 16, False)
    assert c.qk_norm and c.qk_norm_whole and not c.post_norms and not c.tie_embeddings
    assert (c.norm_eps, c.n_ctx, c.rope_theta) == (1e-5, 4096, 1e4)      # OlmoeConfig's defaults
    assert from_hf_dict({**OLMOE, "norm_topk_prob": True}).norm_topk_prob is True


def test_norm_topk_prob_is_written_as_the_config_says():
    config = from_hf_dict({**OLMOE, "norm_topk_prob": True})
    d = to_hf_dict(config)
    assert (d["model_type"], d["norm_topk_prob"], d["clip_qkv"]) == ("olmoe", True, None)
    del d["minillm"]
    assert from_hf_dict(d) == config


@pytest.mark.parametrize("d, message", [
    ({**OLMOE, "clip_qkv": 8.0}, "clip_qkv 8.0 .* is not supported"),
    ({**OLMOE, "head_dim": 16}, "head_dim · num_attention_heads != hidden_size"),
    ({**OLMOE, "attention_bias": True}, "olmoe config.json with attention_bias=true"),
    ({k: v for k, v in OLMOE.items() if k != "num_experts"}, "needs \\['num_experts'\\]"),
    ({**OLMOE, "norm_topk_prob": "no"}, "norm_topk_prob must be true or false"),
])
def test_olmoe_variants_minillm_does_not_run_are_refused_by_name(d, message):
    with pytest.raises(ValueError, match=message):
        from_hf_dict(d)


# ---- GGUF ------------------------------------------------------------------------------------
def test_gguf_round_trip_is_exact_in_llama_cpps_names(tmp_path):
    model = mha()
    c = model.config
    path = model.save_gguf(tmp_path / "m.gguf", byte_tokenizer(c.vocab_size))
    g = read_gguf(str(path))
    meta = g.metadata
    assert meta["general.architecture"] == "olmoe"
    assert (meta["olmoe.expert_count"], meta["olmoe.expert_used_count"],
            meta["olmoe.feed_forward_length"]) == (4, 2, 16)
    E, C, F = c.n_experts, c.d_model, c.d_ff
    shapes = {n: g.tensors[f"blk.1.{n}.weight"].shape for n in
              ("attn_q_norm", "attn_k_norm", "attn_norm", "ffn_norm", "ffn_gate_inp",
               "ffn_gate_exps", "ffn_up_exps", "ffn_down_exps")}
    assert shapes == {"attn_q_norm": (C,), "attn_k_norm": (C,), "attn_norm": (C,),
                      "ffn_norm": (C,), "ffn_gate_inp": (E, C), "ffn_gate_exps": (E, F, C),
                      "ffn_up_exps": (E, F, C), "ffn_down_exps": (E, C, F)}
    assert "output.weight" in g.tensors
    attn = model.params.blocks[1].attn                      # rotate-half RoPE: rows not permuted
    np.testing.assert_array_equal(g.tensor("blk.1.attn_q.weight"), attn.wq.T)
    np.testing.assert_array_equal(g.tensor("blk.1.attn_k_norm.weight"), attn.k_norm)
    back, _ = load_model(path, fast=False)
    assert back.config.__dict__ | {"norm_eps": c.norm_eps} == c.__dict__
    assert back.config.norm_topk_prob is False
    assert the_same_numbers(back, model)


def test_a_grouped_query_file_as_the_converter_writes_it_reads_to_transformers_logits(tmp_path,
                                                                                     monkeypatch):
    """llama.cpp's converter writes the fixture's KV·D-wide attn_k_norm as it is (llama.cpp then
    cannot load it); minillm reads such a file to transformers' logits."""
    monkeypatch.setattr(export, "family_arch", lambda config: "olmoe")
    path = GPT.from_pretrained(FIXTURES / NAME).save_gguf(tmp_path / "m.gguf", byte_tokenizer(64))
    assert read_gguf(str(path)).tensors["blk.0.attn_k_norm.weight"].shape == (16,)
    want = EXPECTED["logits"]
    for fast in (False, True):
        got = load_model(path, fast=fast)[0](EXPECTED["ids"])
        assert np.abs(got - want).max() <= 1e-4 * np.abs(want).max()


@pytest.mark.parametrize("model, message", [
    (lambda: GPT.from_pretrained(FIXTURES / NAME), "olmoe does not run grouped-query attention"),
    (lambda: mha(norm_topk_prob=True), "olmoe does not run renormalised routing weights"),
    (lambda: mha(tie_embeddings=True), "olmoe does not run tied embeddings"),
])
def test_olmoe_configs_llama_cpp_would_run_otherwise_are_not_exported(tmp_path, model, message):
    with pytest.raises(ValueError, match=message):
        model().save_gguf(tmp_path / "x.gguf", byte_tokenizer(64))
    assert not (tmp_path / "x.gguf").exists()


def test_an_olmoe_file_without_experts_is_refused():
    class Info:
        shape = (64, 32)
    meta = {"general.architecture": "olmoe", **{f"olmoe.{k}": v for k, v in {
        "context_length": 128, "embedding_length": 32, "block_count": 2, "feed_forward_length": 8,
        "attention.head_count": 4, "attention.layer_norm_rms_epsilon": 1e-5}.items()}}
    with pytest.raises(ValueError, match="needs olmoe.expert_count > 0"):
        gguf_config(meta, {"token_embd.weight": Info()})


def test_llama_cpp_ran_minillms_export_to_the_same_greedy_tokens_and_logits():
    run = json.loads((FIXTURES / NAME / "generation.json").read_text())["llama_cpp"]
    assert run["dtype"] == "f32" and run["build"].startswith("cyllama 0.2.18")
    assert run["greedy_16_equal"] and len(run["greedy_16"]) == 16
    assert run["max_abs_diff_logits"] <= run["bound"] == 1e-3 * run["max_abs_logit"]
    assert run["minillm_vs_transformers_max_abs_diff"] <= 1e-4 * run["transformers_max_abs_logit"]
