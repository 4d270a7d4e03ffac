"""GGUF -> minillm model: the name table, llama.cpp's Q/K row permutation, config from metadata.

The reference is Hugging Face: tiny HF checkpoints (tests/fixtures/llama_*, qwen2_tiny, made by
scripts/make_llama_fixtures.py) are written as GGUF files the way llama.cpp's converter writes
them (Q/K rows permuted for the ``llama`` architecture, not for ``qwen2``) with the test writer
tests/io/gguf_writer.py, loaded back with ``load_gguf_model`` and compared with HF's logits
(≤ 1e-4) and with the same model loaded from safetensors (exactly equal: no value may change).
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from minillm.engine import EngineGPT
from minillm import GPT
from minillm.io.gguf.model import gguf_names
from minillm.loading import load_gguf_model
from minillm.io.gguf.qk_rows import permute_qk, unpermute_qk
from minillm.io.safetensors import load_safetensors
from minillm.model.rope import apply_rope, rope_angles
from tests.conftest import FIXTURES
from tests.io import gguf_writer as w

F32, Q4_1, Q8_0 = 0, 3, 8


def write_gguf(path, model, arch="llama", ggml_type=F32, extra_meta=None, drop=(), add=None):
    """Write ``model`` as llama.cpp would: GGUF names, [out, in] rows, Q/K permuted for llama."""
    c = model.config
    meta = {"general.architecture": (w.STRING, arch),
            f"{arch}.block_count": (w.UINT32, c.n_layers),
            f"{arch}.context_length": (w.UINT32, c.n_ctx),
            f"{arch}.embedding_length": (w.UINT32, c.d_model),
            f"{arch}.feed_forward_length": (w.UINT32, c.d_ff),
            f"{arch}.attention.head_count": (w.UINT32, c.n_heads),
            f"{arch}.attention.head_count_kv": (w.UINT32, c.n_kv_heads),
            f"{arch}.rope.freq_base": (w.FLOAT32, c.rope_theta),
            f"{arch}.rope.dimension_count": (w.UINT32, c.d_head),
            f"{arch}.attention.layer_norm_rms_epsilon": (w.FLOAT32, c.norm_eps)}
    meta.update(extra_meta or {})
    named = model.params.named()
    tensors = {}
    for name, (gguf, transpose) in gguf_names(c).items():
        if gguf in drop:
            continue
        a = np.asarray(named[name])                                          # (an arena view)
        a = a.T if transpose else a                                        # -> [out, in]
        kind = name.rsplit(".", 1)[-1]
        if arch == "llama" and kind in ("wq", "bq", "wk", "bk"):
            a = permute_qk(a, c.n_heads if kind[-1] == "q" else c.n_kv_heads)
        a = np.ascontiguousarray(a, dtype=np.float32)
        quantised = ggml_type != F32 and a.ndim == 2
        raw = w.quantize(a, ggml_type) if quantised else a.view(np.uint8).reshape(-1)
        tensors[gguf] = (ggml_type if quantised else F32, a.shape, raw)
    tensors.update(add or {})
    path.write_bytes(w.gguf_bytes(meta, tensors))
    return path


# ---- the permutation -------------------------------------------------------------------------
@given(heads=st.integers(1, 4), half=st.integers(1, 4), cols=st.integers(0, 3))
def test_unpermute_inverts_permute(heads, half, cols):
    shape = (heads * 2 * half,) + ((cols,) if cols else ())
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    np.testing.assert_array_equal(unpermute_qk(permute_qk(x, heads), heads), x)
    np.testing.assert_array_equal(permute_qk(unpermute_qk(x, heads), heads), x)


def test_permute_interleaves_the_two_halves_of_each_head():
    """The docstring's drawing: one head of D = 8 -> rows 0 4 1 5 2 6 3 7; heads stay apart."""
    rows = np.arange(16)
    assert permute_qk(rows, 2).tolist() == [0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15]


def rope_adjacent_pairs(x, cos, sin):
    """llama.cpp's (non-NEOX) RoPE, written independently: rotate pairs (2j, 2j + 1)."""
    a, b = x[..., 0::2], x[..., 1::2]                              # [..., D/2] each
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = a * cos - b * sin, b * cos + a * sin
    return out


@given(heads=st.integers(1, 3), half=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_adjacent_pair_rope_on_permuted_rows_equals_rotate_half(heads, half, seed):
    """Why the converter permutes: rotating adjacent pairs of the permuted projection gives the
    permuted rotate-half result, so the scores q·k are the same in both layouts."""
    D, T = 2 * half, 5
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(heads * D, T)).astype(np.float32)        # [h·D, T] rows as in a weight
    cos, sin = rope_angles(np.arange(T), D, 10000.0)                # [T, D/2]
    hf = apply_rope(q.reshape(heads, D, T).transpose(0, 2, 1), cos, sin)          # [h, T, D]
    cpp = rope_adjacent_pairs(permute_qk(q, heads).reshape(heads, D, T).transpose(0, 2, 1), cos, sin)
    np.testing.assert_allclose(cpp, permute_qk(hf.transpose(0, 2, 1).reshape(heads * D, T), heads)
                               .reshape(heads, D, T).transpose(0, 2, 1), atol=1e-6)


# ---- whole models ------------------------------------------------------------------------------
@pytest.mark.parametrize("name, arch", [("llama_tiny", "llama"), ("llama_untied", "llama"),
                                        ("qwen2_tiny", "qwen2")])
def test_gguf_model_equals_safetensors_model_exactly(name, arch, tmp_path):
    hf = EngineGPT.from_pretrained(FIXTURES / name)
    model, tokenizer = load_gguf_model(write_gguf(tmp_path / "m.gguf", hf, arch))
    assert tokenizer is None                                        # no tokenizer.ggml.* metadata
    assert model.config.tie_embeddings == hf.config.tie_embeddings
    assert model.config.attn_bias == hf.config.attn_bias
    for key, value in hf.params.named().items():
        np.testing.assert_array_equal(np.asarray(model.params.named()[key]), np.asarray(value), err_msg=key)
    ids = np.arange(20) % hf.config.vocab_size
    np.testing.assert_array_equal(model(ids), hf(ids))


@pytest.mark.parametrize("name", ["llama_untied", "qwen2_tiny"])
def test_gguf_logits_match_hf_within_1e_4(name, tmp_path):
    """Reference: transformers' LlamaForCausalLM / Qwen2ForCausalLM logits in the fixture."""
    arch = "qwen2" if name.startswith("qwen2") else "llama"
    model, _ = load_gguf_model(write_gguf(tmp_path / "m.gguf", GPT.from_pretrained(FIXTURES / name), arch))
    expected = load_safetensors(FIXTURES / name / "expected.safetensors")
    ids, want = expected["ids"], expected["logits"]
    assert np.abs(model(ids[:want.shape[0]]) - want).max() <= 1e-4


@pytest.mark.parametrize("ggml_type", [Q8_0, Q4_1])
def test_quantised_gguf_loads_as_its_dequantised_weights(ggml_type, tmp_path):
    """A quantised file is its dequantised float32 values (rows unpermuted after decoding)."""
    from minillm.io.gguf.dequant import dequantize
    hf = GPT.from_pretrained(FIXTURES / "llama_tiny")
    model, _ = load_gguf_model(write_gguf(tmp_path / "q.gguf", hf, ggml_type=ggml_type))
    wq = np.asarray(hf.params.blocks[1].attn.wq).T                  # [H·D, C] HF order
    raw = w.quantize(np.ascontiguousarray(permute_qk(wq, hf.config.n_heads)), ggml_type)
    want = unpermute_qk(dequantize(raw, ggml_type, wq.shape), hf.config.n_heads).T
    np.testing.assert_array_equal(np.asarray(model.params.blocks[1].attn.wq), want)
    assert np.abs(want - wq.T).max() < (0.2 if ggml_type == Q4_1 else 0.02)   # close, not equal


# ---- errors ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny():
    return GPT.from_pretrained(FIXTURES / "llama_tiny")


def test_unknown_architecture_is_a_value_error(tiny, tmp_path):
    with pytest.raises(ValueError, match="general.architecture"):
        load_gguf_model(write_gguf(tmp_path / "m.gguf", tiny, arch="falcon"))


def test_missing_tensor_is_named(tiny, tmp_path):
    with pytest.raises(ValueError, match="blk.1.ffn_up.weight"):
        load_gguf_model(write_gguf(tmp_path / "m.gguf", tiny, drop=("blk.1.ffn_up.weight",)))


def test_unexpected_tensor_is_named(tiny, tmp_path):
    extra = {"blk.0.attn_sinks.weight": (F32, (4,), np.zeros(4, np.float32).view(np.uint8))}
    with pytest.raises(ValueError, match="attn_sinks"):
        load_gguf_model(write_gguf(tmp_path / "m.gguf", tiny, add=extra))


def test_rope_scaling_is_refused(tiny, tmp_path):
    meta = {"llama.rope.scaling.type": (w.STRING, "yarn")}
    with pytest.raises(ValueError, match="RoPE scaling"):
        load_gguf_model(write_gguf(tmp_path / "m.gguf", tiny, extra_meta=meta))


def test_head_width_mismatch_is_refused(tiny, tmp_path):
    meta = {"llama.attention.key_length": (w.UINT32, 2 * tiny.config.d_head)}
    with pytest.raises(ValueError, match="key_length"):
        load_gguf_model(write_gguf(tmp_path / "m.gguf", tiny, extra_meta=meta))
