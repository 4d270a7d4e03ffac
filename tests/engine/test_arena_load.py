"""Loading straight into the parameter arena (or plain arrays), a slice at a time, changes no value."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from minillm.loading import model_class
from minillm import GPT
from minillm.io import checkpoints
from minillm.io.gguf import dequant
from minillm.io.gguf.dequant import BF16, F16, F32, Q4_0, Q4_1, Q8_0, dequantize, dequantize_into
from minillm.loading import load_gguf_model
from minillm.engine import in_arena
from tests.conftest import FIXTURES
from tests.io import gguf_writer as w
from tests.io.test_gguf_model import write_gguf

TYPES = (F32, F16, BF16, Q8_0, Q4_0, Q4_1)


def encode(x, ggml_type):
    """float32 values -> the raw bytes of a GGML tensor of that type."""
    if ggml_type in (Q8_0, Q4_0, Q4_1):
        return w.quantize(x, ggml_type)
    if ggml_type == BF16:
        return (x.view(np.uint32) >> 16).astype("<u2").view(np.uint8).reshape(-1)
    return x.astype("<f4" if ggml_type == F32 else "<f2").view(np.uint8).reshape(-1)


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("name", ["gpt2_tiny", "gpt2_untied", "llama_untied", "qwen2_tiny"])
def test_reading_in_small_slices_gives_the_same_weights(name, fast, monkeypatch):
    """A few rows per read (so every tensor spans several reads, and the transposed and split
    ones are written column block by column block) loads exactly what one read per tensor does,
    into the engine's arena or into plain arrays."""
    whole = GPT.from_pretrained(FIXTURES / name).params.named()
    monkeypatch.setattr(checkpoints, "ROWS_AT_ONCE", 5)
    sliced = model_class(fast).from_pretrained(FIXTURES / name).params
    assert in_arena(sliced) == fast
    for key, value in whole.items():
        np.testing.assert_array_equal(np.asarray(sliced.named()[key]), value, err_msg=key)


@given(st.sampled_from(TYPES), st.integers(1, 6), st.integers(1, 3), st.integers(0, 2**32 - 1))
def test_dequantize_into_equals_dequantize(ggml_type, rows, blocks, seed):
    """Decoded 32 values per slice (so a tensor spans several slices) = the one-shot decoder."""
    shape = (rows, 32 * blocks)
    raw = encode(np.random.default_rng(seed).standard_normal(shape, dtype=np.float32), ggml_type)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dequant, "VALUES_AT_ONCE", 32)
        out = dequantize_into(raw, ggml_type, np.empty(shape, np.float32))
    np.testing.assert_array_equal(out, dequantize(raw, ggml_type, shape))


def test_dequantize_into_checks_its_output_and_the_byte_count():
    raw = np.zeros(34 * 2, np.uint8)
    with pytest.raises(ValueError, match="writable float32"):
        dequantize_into(raw, Q8_0, np.empty((2, 32), np.float64))
    with pytest.raises(ValueError, match="bytes"):
        dequantize_into(raw[:-1], Q8_0, np.empty((2, 32), np.float32))


@pytest.mark.parametrize("ggml_type", [F32, Q8_0, Q4_1])
def test_dequantize_into_a_strided_view_writes_whole_rows(ggml_type):
    """Outputs that are not one C-contiguous array (the "decode" layout's tied wte [C, V]ᵀ) are
    written through themselves, a slice of rows at a time: the same values."""
    shape = (5, 64)
    raw = encode(np.random.default_rng(0).standard_normal(shape, dtype=np.float32), ggml_type)
    want = dequantize(raw, ggml_type, shape)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dequant, "VALUES_AT_ONCE", 64)                    # one row per slice
        view = dequantize_into(raw, ggml_type, np.empty(shape[::-1], np.float32).T)
    np.testing.assert_array_equal(view, want)


@pytest.mark.parametrize("ggml_type", [F32, Q8_0, Q4_1])
def test_gguf_loads_the_same_in_small_slices(ggml_type, tmp_path, monkeypatch):
    path = write_gguf(tmp_path / "m.gguf", GPT.from_pretrained(FIXTURES / "llama_tiny"),
                      ggml_type=ggml_type)
    whole = load_gguf_model(path, fast=False)[0].params.named()
    monkeypatch.setattr(dequant, "VALUES_AT_ONCE", 32)
    for fast in (True, False):
        sliced = load_gguf_model(path, fast)[0].params
        assert in_arena(sliced) == fast
        for key, value in whole.items():
            np.testing.assert_array_equal(np.asarray(sliced.named()[key]), value, err_msg=key)


def test_a_gguf_tensor_of_the_wrong_shape_is_named(tmp_path):
    tiny = GPT.from_pretrained(FIXTURES / "llama_tiny")
    wrong = np.ones((2, tiny.config.d_model // 2), np.float32)   # the right count, the wrong shape
    path = write_gguf(tmp_path / "m.gguf", tiny, drop=("blk.0.attn_norm.weight",),
                      add={"blk.0.attn_norm.weight": (F32, wrong.shape, wrong.view(np.uint8))})
    with pytest.raises(ValueError, match="'blk.0.attn_norm.weight' has shape"):
        load_gguf_model(path)


def test_a_gguf_tensor_of_an_undecodable_type_is_named(tmp_path, monkeypatch):
    """(Simulated: the tiny fixtures are too narrow for the 256-value K-quant blocks.)"""
    path = write_gguf(tmp_path / "m.gguf", GPT.from_pretrained(FIXTURES / "llama_tiny"))
    monkeypatch.setattr("minillm.io.gguf.model.DEQUANTIZERS", {})
    with pytest.raises(ValueError, match="'token_embd.weight' is F32, which minillm cannot"):
        load_gguf_model(path)


@pytest.mark.parametrize("kw, name", [(dict(arch="llama", norm="layernorm"), "norm1.bias"),
                                      (dict(arch="llama", position="learned"), "wpe"),
                                      (dict(arch="gpt2", attn_bias=False), "c_attn.bias"),
                                      (dict(arch="llama", ffn="gelu_mlp"), "rmsnorm/swiglu/rope"),
                                      (dict(arch="gpt2", position="rope"), "gelu_mlp/learned")])
def test_save_pretrained_refuses_a_config_hf_cannot_name_and_writes_nothing(
        tmp_path, kw, name):
    from minillm.config import ModelConfig
    config = ModelConfig(vocab_size=20, n_ctx=8, d_model=8, n_heads=2, n_layers=1, d_ff=16, **kw)
    with pytest.raises(ValueError, match=name):
        GPT(config, seed=0).save_pretrained(tmp_path / "out")
    assert not (tmp_path / "out").exists()              # nothing half-written
