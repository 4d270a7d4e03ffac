"""GGUF in and out for Llama 3.x (RoPE scaling as llama.cpp's ``rope_freqs.weight``) and Qwen3
(architecture "qwen3": ``attn_q_norm`` / ``attn_k_norm``, ``attention.key_length``).

Round trip minillm -> GGUF -> minillm: the same config (eps stored as float32) and bit-identical
logits. The divisors are compared with llama.cpp's converter's formula (``convert_hf_to_gguf.py``,
Llama 3 branch: stated below, one pair at a time, in float32 as the converter computes them).
"""
import dataclasses
import math

import numpy as np
import pytest

from minillm import GPT, ModelConfig
from minillm.engine import EngineGPT
from minillm.io.gguf.read import read_gguf
from minillm.io.gguf.rope_freqs import llama3_scaling
from minillm.loading import load_model
from minillm.tokenizer import Tokenizer
from tests.conftest import FIXTURES

LLAMA32_1B = {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
              "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}


def byte_tokenizer(n):
    return Tokenizer({bytes([i]): i for i in range(n)}, {})


def converter_divisors(d_head, theta, factor, low_freq_factor, high_freq_factor,
                       original_max_position_embeddings, **_):
    """llama.cpp's converter: float32 θ_i, then 1, factor or 1 / ((1 − s) / factor + s) per pair."""
    freqs = 1.0 / (np.float32(theta) ** (np.arange(0, d_head, 2, dtype=np.float32) / d_head))
    L = original_max_position_embeddings
    out = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < L / high_freq_factor:
            out.append(1.0)
        elif wavelen > L / low_freq_factor:
            out.append(factor)
        else:
            s = (L / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
            out.append(1 / ((1 - s) / factor + s))
    return np.array(out, np.float32)


@pytest.mark.parametrize("name, arch", [("llama3_tiny", "llama"), ("qwen3_tiny", "qwen3")])
def test_llama3_and_qwen3_round_trip_through_gguf_exactly(tmp_path, name, arch):
    model = EngineGPT.from_pretrained(FIXTURES / name)
    path = model.save_gguf(tmp_path / "m.gguf", byte_tokenizer(model.config.vocab_size))
    back, _ = load_model(path)
    want = dataclasses.replace(model.config, norm_eps=float(np.float32(model.config.norm_eps)))
    assert back.config == want
    ids = np.arange(40) % model.config.vocab_size
    np.testing.assert_array_equal(back(ids), model(ids))
    assert read_gguf(str(path)).metadata["general.architecture"] == arch


def test_qwen3_files_carry_the_q_k_norms_and_the_head_width(tmp_path):
    model = GPT.from_pretrained(FIXTURES / "qwen3_tiny")
    g = read_gguf(str(model.save_gguf(tmp_path / "q.gguf", byte_tokenizer(64))))
    assert g.metadata["qwen3.attention.key_length"] == g.metadata["qwen3.attention.value_length"] == 8
    assert g.metadata["qwen3.embedding_length"] == 24
    attn = model.params.blocks[1].attn
    np.testing.assert_array_equal(g.tensor("blk.1.attn_q_norm.weight"), attn.q_norm)
    np.testing.assert_array_equal(g.tensor("blk.1.attn_k_norm.weight"), attn.k_norm)
    np.testing.assert_array_equal(g.tensor("blk.1.attn_q.weight"), np.asarray(attn.wq).T)  # not permuted


def test_llama3_rope_freqs_are_the_converters_divisors(tmp_path):
    model = GPT.from_pretrained(FIXTURES / "llama3_tiny")
    c = model.config
    g = read_gguf(str(model.save_gguf(tmp_path / "l.gguf", byte_tokenizer(64))))
    want = converter_divisors(c.d_head, c.rope_theta, **c.rope_scaling)
    np.testing.assert_allclose(g.tensor("rope_freqs.weight"), want, rtol=1e-6)
    assert g.tensors["rope_freqs.weight"].type_name == "F32"
    assert "llama.rope.scaling.type" not in g.metadata          # (llama.cpp would scale again)


def test_a_converted_llama_3_2_file_reads_as_llama3_scaling():
    """A converter's file has no original_context_length: Llama 3's 8192 (and low 1, high 4)."""
    divisors = converter_divisors(64, 500000.0, **LLAMA32_1B)
    assert llama3_scaling(divisors, 64, 500000.0, None) == LLAMA32_1B
    assert divisors[0] == 1 and 1 < divisors[16] < 32 and divisors[-1] == 32   # every region


@pytest.mark.parametrize("divisors", [np.full(32, 2.0), np.ones(32), np.full(31, 32.0)])
def test_rope_freqs_that_are_not_llama3s_are_refused(divisors):
    with pytest.raises(ValueError, match="rope_freqs.weight"):
        llama3_scaling(divisors, 64, 500000.0, None)


@pytest.mark.parametrize("change, match", [
    (dict(qk_norm=True, attn_bias=True), "qwen3 has no Q, K, V biases"),
    (dict(qk_norm=True, rope_scaling=LLAMA32_1B), "not qwen3"),
    (dict(attn_bias=True, rope_scaling=LLAMA32_1B), "not qwen2"),
    (dict(rope_scaling={**LLAMA32_1B, "high_freq_factor": 2.0}), "read back for low_freq_factor 1")])
def test_configs_llama_cpp_cannot_run_are_refused(tmp_path, change, match):
    config = ModelConfig(vocab_size=256, n_ctx=16, d_model=32, n_heads=2, n_layers=1, arch="llama",
                         **change)
    with pytest.raises(ValueError, match=match):
        GPT(config).save_gguf(tmp_path / "x.gguf", byte_tokenizer(256))
    assert not (tmp_path / "x.gguf").exists()
