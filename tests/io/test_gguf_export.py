"""GGUF out: ``model.save_gguf`` written, read back by minillm, and checked against transformers.

References: transformers 5.24 loading the exported files with ``from_pretrained(dir, gguf_file=)``
(logits in tests/fixtures/gguf_export/expected.safetensors, made by
scripts/check_gguf/export.py, which also reads every file with the ``gguf`` package). Bound: 1e-4.
"""
import dataclasses
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minillm.engine import EngineGPT
from minillm.tokenizer.pattern_names import LLAMA_CPP_PRE
from minillm import GPT, ModelConfig
from minillm.io.gguf.read import read_gguf
from minillm.io.gguf.dequant import Q8_0, dequantize
from minillm.io.gguf.export import arch_metadata
from minillm.io.gguf.qk_rows import permute_qk
from minillm.io.gguf.vocab import tokenizer_metadata
from minillm.io.gguf.write import (ARRAY, STRING, UINT32, encode_tensor, gguf_bytes, quantize_q8_0,
                                   write_gguf)
from minillm.io.safetensors import load_safetensors
from minillm.loading import load_model
from minillm.tokenizer import Tokenizer
from tests.conftest import FIXTURES, shared_file

ROOT = FIXTURES.parents[1]
EXPECTED = FIXTURES / "gguf_export" / "expected.safetensors"
TEXT = "ROMEO: But soft, what light through yonder window breaks? 海水 123 café!\n\n"


def byte_tokenizer(n):
    """The random fixtures' tokenizer (as in the script): ids 0..n-1 are the bytes 0..n-1."""
    return Tokenizer({bytes([i]): i for i in range(n)}, {})


@pytest.fixture(scope="module")
def shakespeare():
    return load_model(ROOT / "weights" / "shakespeare")


def test_gpt2_round_trip_is_exact(shakespeare, tmp_path):
    model, tok = shakespeare
    path = model.save_gguf(tmp_path / "s.gguf", tok)
    back, tok2 = load_model(path)
    ids = np.array(tok.encode(TEXT))
    np.testing.assert_array_equal(back(ids), model(ids))
    assert back.config.tie_embeddings and back.config.arch == "gpt2"
    assert back.config.norm_eps == float(np.float32(model.config.norm_eps))   # stored as float32
    assert tok2.encode(TEXT) == tok.encode(TEXT)     # read back as llama.cpp's spelling of the regex
    assert tok2.pattern == LLAMA_CPP_PRE["gpt-2"]
    meta = read_gguf(str(path)).metadata
    assert meta["general.architecture"] == "gpt2" and meta["tokenizer.ggml.pre"] == "gpt-2"
    assert meta["tokenizer.ggml.tokens"][ord("a")] == "a" and len(meta["tokenizer.ggml.merges"]) \
        == len(tok.merges)


@pytest.mark.parametrize("dtype", ["f32", "f16", "q8_0"])
def test_shakespeare_logits_equal_transformers_gguf_loading(shakespeare, tmp_path, dtype):
    model, tok = shakespeare
    ref = load_safetensors(EXPECTED)
    back, _ = load_model(model.save_gguf(tmp_path / "s.gguf", tok, dtype=dtype))
    ours = back(ref["shakespeare_ids"])
    assert np.abs(ours - ref[f"shakespeare_{dtype}_logits"]).max() <= 1e-4


@pytest.mark.parametrize("name,dtype", [("llama_tiny", "f32"), ("llama_tiny", "f16"),
                                        ("qwen2_tiny", "f32"), ("qwen2_tiny", "f16")])
def test_llama_logits_equal_transformers_gguf_loading(tmp_path, name, dtype):
    model = EngineGPT.from_pretrained(FIXTURES / name)
    ref = load_safetensors(EXPECTED)
    path = model.save_gguf(tmp_path / "m.gguf", byte_tokenizer(model.config.vocab_size), dtype)
    back, _ = load_model(path)
    ids = ref[f"{name}_ids"]
    assert np.abs(back(ids) - ref[f"{name}_{dtype}_logits"]).max() <= 1e-4
    if dtype == "f32":
        np.testing.assert_array_equal(back(ids), model(ids))
        want = dataclasses.replace(model.config, norm_eps=float(np.float32(model.config.norm_eps)))
        assert back.config == want


def test_llama_qk_rows_are_permuted_in_the_file_and_qwen2_are_not(tmp_path):
    for name, arch, permuted in (("llama_tiny", "llama", True), ("qwen2_tiny", "qwen2", False)):
        model = GPT.from_pretrained(FIXTURES / name)
        c = model.config
        g = read_gguf(str(model.save_gguf(tmp_path / f"{name}.gguf", byte_tokenizer(c.vocab_size))))
        assert g.metadata["general.architecture"] == arch
        attn = model.params.blocks[1].attn
        wq, wk = np.asarray(attn.wq).T, np.asarray(attn.wk).T                        # [out, in]
        want_q = permute_qk(wq, c.n_heads) if permuted else wq
        want_k = permute_qk(wk, c.n_kv_heads) if permuted else wk
        np.testing.assert_array_equal(g.tensor("blk.1.attn_q.weight"), want_q)
        np.testing.assert_array_equal(g.tensor("blk.1.attn_k.weight"), want_k)


def test_f16_keeps_vectors_f32_and_q8_0_falls_back_to_f16_for_short_rows(tmp_path):
    config = ModelConfig(vocab_size=300, n_ctx=16, d_model=48, n_heads=2, n_layers=1, d_ff=64,
                         arch="llama")
    tok = byte_tokenizer(256)
    for dtype, rows_of_48, rows_of_64, file_type in (("f16", "F16", "F16", 1),
                                                     ("q8_0", "F16", "Q8_0", 7)):
        g = read_gguf(str(GPT(config).save_gguf(tmp_path / f"{dtype}.gguf", tok, dtype=dtype)))
        types = {n: t.type_name for n, t in g.tensors.items()}
        assert types["blk.0.attn_norm.weight"] == "F32" and types["output_norm.weight"] == "F32"
        assert types["blk.0.ffn_up.weight"] == rows_of_48             # [F, C]: rows of C = 48
        assert types["blk.0.ffn_down.weight"] == rows_of_64           # [C, F]: rows of F = 64
        assert g.metadata["general.file_type"] == file_type


@pytest.mark.parametrize("dtype,matrices", [("f16", "F16"), ("q8_0", "Q8_0")])
def test_position_embedding_stays_f32_as_llama_cpp_writes_it(shakespeare, tmp_path, dtype, matrices):
    """llama.cpp's converter and quantiser never convert position_embd; minillm did (F16 / Q8_0)."""
    model, tok = shakespeare
    g = read_gguf(str(model.save_gguf(tmp_path / "s.gguf", tok, dtype=dtype)))
    assert g.tensors["position_embd.weight"].type_name == "F32"
    np.testing.assert_array_equal(g.tensor("position_embd.weight"), model.params.wpe)  # exact
    assert g.tensors["token_embd.weight"].type_name == matrices
    assert g.tensors["blk.0.attn_qkv.weight"].type_name == matrices
    assert g.tensors["blk.0.attn_qkv.bias"].type_name == "F32"


def test_untied_gpt2_stays_untied_and_tied_head_is_written_as_a_copy(shakespeare, tmp_path):
    model = GPT.from_pretrained(FIXTURES / "gpt2_untied")
    tok = byte_tokenizer(model.config.vocab_size)
    back, _ = load_model(model.save_gguf(tmp_path / "u.gguf", tok))
    assert not back.config.tie_embeddings
    np.testing.assert_array_equal(np.asarray(back.params.lm_head), np.asarray(model.params.lm_head))
    tied, stok = shakespeare
    g = read_gguf(str(tied.save_gguf(tmp_path / "t.gguf", stok)))
    np.testing.assert_array_equal(g.raw("output.weight"), g.raw("token_embd.weight"))


def test_special_tokens_are_control_tokens_and_padding_rows_unused(tmp_path):
    tok = Tokenizer.train("hello world, hello there. " * 20, 270, special_tokens=["<|endoftext|>"])
    config = ModelConfig(vocab_size=tok.vocab_size + 3, n_ctx=16, d_model=32, n_heads=2,
                         n_layers=1)
    path = GPT(config).save_gguf(tmp_path / "s.gguf", tok)
    meta = read_gguf(str(path)).metadata
    eot = tok.special_tokens["<|endoftext|>"]
    assert meta["tokenizer.ggml.tokens"][eot] == "<|endoftext|>"
    assert meta["tokenizer.ggml.token_type"][eot] == 3
    assert meta["tokenizer.ggml.token_type"][-3:] == [5, 5, 5]
    assert meta["tokenizer.ggml.tokens"][-1] == f"[PAD{config.vocab_size - 1}]"
    _, back = load_model(path)
    text = "hello<|endoftext|> there"
    assert back.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")


def test_tokenizer_without_a_llama_cpp_pre_tokenizer_name_is_refused(tmp_path):
    model, tok = load_model(ROOT / "weights" / "songci")        # \p{Han} stage, then GPT-2's
    refused = r"no pre-tokenizer name.*Exportable patterns: GPT-2's \(as 'gpt-2'\)"
    with pytest.raises(ValueError, match=refused):
        model.save_gguf(tmp_path / "s.gguf", tok)
    assert not (tmp_path / "s.gguf").exists()


@pytest.mark.parametrize("change,match", [
    (dict(arch="gpt2", position="rope"), "no llama.cpp architecture"),
    (dict(arch="llama", mlp_bias=None, norm="layernorm"), "no llama.cpp architecture")])
def test_configs_llama_cpp_cannot_run_are_refused(tmp_path, change, match):
    config = ModelConfig(vocab_size=256, n_ctx=16, d_model=32, n_heads=2, n_layers=1, **change)
    with pytest.raises(ValueError, match=match):
        GPT(config).save_gguf(tmp_path / "x.gguf", byte_tokenizer(256))


def test_bad_dtype_vocabulary_and_missing_tokenizer_are_refused(shakespeare, tmp_path):
    model, tok = shakespeare
    with pytest.raises(ValueError, match="dtype must be one of"):
        model.save_gguf(tmp_path / "x.gguf", tok, dtype="q4_0")
    with pytest.raises(ValueError, match="carries its tokenizer"):
        model.save_gguf(tmp_path / "x.gguf", None)
    small = GPT(ModelConfig(vocab_size=100, n_ctx=8, d_model=32, n_heads=2, n_layers=1))
    with pytest.raises(ValueError, match="2048 ids, the model only 100"):
        small.save_gguf(tmp_path / "x.gguf", tok)


def test_q8_0_rounds_halves_away_from_zero_like_llama_cpp():
    """d = 127 / 127 = 1: 2.5 -> 3 and -2.5 -> -3 (C's roundf; np.rint would give 2 and -2)."""
    x = np.zeros(32, np.float32)
    x[:4] = [127, 2.5, -2.5, 0.49]
    raw = quantize_q8_0(x)
    assert raw[:2].view(np.float16)[0] == 1.0
    assert raw[2:6].view(np.int8).tolist() == [127, 3, -3, 0]
    np.testing.assert_array_equal(quantize_q8_0(np.zeros(64, np.float32)).reshape(2, 34), 0)
    y = np.random.default_rng(0).standard_normal((4, 64)).astype(np.float32)
    err = np.abs(dequantize(quantize_q8_0(y), Q8_0, y.shape) - y)              # [4, 64]
    d = np.abs(y).reshape(-1, 32).max(1).repeat(32).reshape(4, 64) / 127       # [4, 64]
    # half a step, plus |q| <= 127 times float16's rounding of d (relative error <= 2^-11)
    assert (err <= d * (0.5 + 127 * 2.0**-11)).all()


@given(st.sampled_from(["gpt2", "llama", "qwen2"]), st.integers(1, 3), st.integers(1, 2),
       st.booleans(), st.integers(0, 2**16))
def test_export_then_load_is_the_identity(arch, heads, kv_div, tied, seed):
    """Any exportable config: written as F32 and read back, the same config and the same weights,
    bit for bit (so the Q/K permutation and the QKV fusion are undone exactly)."""
    kv = heads if arch == "gpt2" or heads % kv_div else heads // kv_div
    config = ModelConfig(vocab_size=260, n_ctx=8, d_model=8 * heads, n_heads=heads, n_kv_heads=kv,
                         n_layers=2, d_ff=24, arch="gpt2" if arch == "gpt2" else "llama",
                         attn_bias=True if arch != "llama" else None, tie_embeddings=tied,
                         norm_eps=2.0**-17)                    # a float32 number: stored exactly
    model = GPT(config, seed=seed)
    for p in model.params.named().values():                       # no zero biases or unit gains
        p[...] = np.random.default_rng(seed).standard_normal(p.shape, dtype=np.float32)
    with tempfile.TemporaryDirectory() as d:
        back, _ = load_model(model.save_gguf(Path(d) / "m.gguf", byte_tokenizer(256)))
    assert back.config == config
    for name, a in model.params.named().items():
        np.testing.assert_array_equal(np.asarray(back.params.named()[name]), a, err_msg=name)


@given(st.lists(st.tuples(st.sampled_from([0, 1, 8]), st.integers(1, 3)), min_size=1, max_size=4),
       st.sampled_from([8, 32, 64]))
def test_streamed_file_equals_the_in_memory_bytes(specs, alignment):
    rng = np.random.default_rng(len(specs))
    tensors = {f"t{i}": (t, (rows, 32), encode_tensor(rng.standard_normal((rows, 32)), t))
               for i, (t, rows) in enumerate(specs)}
    meta = {"general.alignment": (UINT32, alignment), "n": (STRING, "x")}
    with tempfile.TemporaryDirectory() as d:
        write_gguf(Path(d) / "t.gguf", meta, tensors, alignment=alignment)
        assert (Path(d) / "t.gguf").read_bytes() == gguf_bytes(meta, tensors, alignment=alignment)


def test_smollm2_vocabulary_is_written_back_as_llama_cpp_converted_it():
    """Reference: the SmolLM2 GGUF made by llama.cpp's converter. Its tokenizer, read by minillm
    and written again, gives the same tokens, types, merges, pre-tokenizer and special ids."""
    meta = read_gguf(str(shared_file("models/SmolLM2-135M-Instruct.Q4_1.gguf"))).metadata
    tok = Tokenizer.from_gguf_metadata(meta)
    written = tokenizer_metadata(tok, len(meta["tokenizer.ggml.tokens"]))
    ours = {k: v[1] if vtype == ARRAY else v for k, (vtype, v) in written.items()}   # arrays: items
    for key in ("tokens", "token_type", "merges", "pre", "model", "bos_token_id", "eos_token_id",
                "unknown_token_id", "add_bos_token"):
        assert ours[f"tokenizer.ggml.{key}"] == meta[f"tokenizer.ggml.{key}"], key


def test_a_gpt2_file_without_a_shape_key_is_a_clear_error(shakespeare, tmp_path):
    model, tok = shakespeare
    g = read_gguf(str(model.save_gguf(tmp_path / "s.gguf", tok)))
    meta = arch_metadata(model.config, "gpt2")
    del meta["gpt2.context_length"]
    tensors = {n: (t.ggml_type, t.shape, g.raw(n)) for n, t in g.tensors.items()}
    write_gguf(tmp_path / "broken.gguf", meta, tensors)
    with pytest.raises(ValueError, match="lacks gpt2.context_length"):
        load_model(tmp_path / "broken.gguf")


def test_q8_0_of_a_block_near_the_float32_minimum_is_zeros_without_overflow():
    """Regression (found by hypothesis): a block of values around 1e-38 made d subnormal, 1 / d
    overflowed float32 (a RuntimeWarning, an error in the suite) and q came from inf."""
    x = np.full(32, 1e-38, np.float32)
    np.testing.assert_array_equal(dequantize(quantize_q8_0(x), Q8_0, x.shape), 0)
