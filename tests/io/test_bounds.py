"""Small files that claim huge sizes fail fast, before any allocation of that size (the peak
traced by tracemalloc stays far below what the claim would need)."""
import json
import tracemalloc

import numpy as np
import pytest

from minillm.io.hf.config import read_config
from minillm import GPT
from minillm.config import ModelConfig
from minillm.io.checkpoints import load_hf_checkpoint
from minillm.loading import load_gguf_model
from minillm.io.sizes import parameter_count
from minillm.engine import to_engine
from tests.io import gguf_writer as w
from tests.io.test_gguf_model import write_gguf

LIMIT = 50 << 20            # bytes of peak allocation allowed while failing


def peak_while_raising(fn, match):
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=match):
            fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def tiny_llama(**kw):
    return GPT(ModelConfig(vocab_size=64, n_ctx=32, d_model=16, n_heads=2, n_layers=2,
                           arch="llama", **kw))


def test_parameter_count_equals_the_initialised_model():
    for kw in ({"arch": "gpt2"}, {"arch": "llama", "n_kv_heads": 1},
               {"arch": "llama", "attn_bias": True, "tie_embeddings": False}):
        c = ModelConfig(vocab_size=50, n_ctx=16, d_model=32, n_heads=4, n_layers=2, **kw)
        assert parameter_count(c) == GPT(c).num_parameters()


def test_config_json_with_a_billion_layers_fails_before_allocating(tmp_path):
    GPT(ModelConfig(vocab_size=64, n_ctx=16, d_model=16, n_heads=2, n_layers=1)).save_pretrained(tmp_path)
    d = json.loads((tmp_path / "config.json").read_text())
    del d["minillm"]
    d["n_layer"] = 10**9
    (tmp_path / "config.json").write_text(json.dumps(d))
    assert peak_while_raising(lambda: load_hf_checkpoint(tmp_path), "1,000,000,000 layers") < LIMIT


def test_config_json_wider_than_the_weights_fails_before_allocating(tmp_path):
    GPT(ModelConfig(vocab_size=64, n_ctx=16, d_model=16, n_heads=2, n_layers=1)).save_pretrained(tmp_path)
    d = json.loads((tmp_path / "config.json").read_text())
    del d["minillm"]
    d["n_embd"], d["n_inner"] = 2**20, 2**22
    (tmp_path / "config.json").write_text(json.dumps(d))
    assert peak_while_raising(lambda: load_hf_checkpoint(tmp_path), "do not belong") < LIMIT


def test_gguf_block_count_2_32_fails_fast(tmp_path):
    path = write_gguf(tmp_path / "m.gguf", tiny_llama(),
                      extra_meta={"llama.block_count": (w.UINT32, 2**32 - 1)})
    assert path.stat().st_size < 100_000
    assert peak_while_raising(lambda: load_gguf_model(path), "4,294,967,295 layers") < LIMIT


def test_gguf_huge_string_length_names_the_limit(tmp_path):
    data = w.header(0, 1) + w.string("k") + (8).to_bytes(4, "little") + (2**40).to_bytes(8, "little")
    (tmp_path / "s.gguf").write_bytes(data + b"\0" * 64)
    from minillm.io.gguf.read import read_gguf
    with pytest.raises(ValueError, match="limit of 4,194,304"):
        read_gguf(tmp_path / "s.gguf")


@pytest.mark.parametrize("fast", [False, True])
def test_rope_angles_are_computed_for_the_positions_used_only(fast):
    """A context of 2**28 would be a 4-8 GiB table; only the positions used are computed."""
    model = tiny_llama()
    model.config.n_ctx = 2**28
    model = to_engine(model) if fast else GPT(model.config, model.params)
    tracemalloc.start()
    try:
        model(np.arange(10))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < LIMIT


@pytest.mark.parametrize("field, value, match", [
    ("num_attention_heads", 0, "num_attention_heads must be an integer > 0"),
    ("eos_token_id", "10", "eos_token_id must be an integer id"),
    ("eos_token_id", 10.7, "eos_token_id must be an integer id"),
    ("bos_token_id", True, "bos_token_id must be an integer id"),
    ("hidden_size", 64.0, "hidden_size must be an integer > 0"),
    ("rms_norm_eps", True, "rms_norm_eps must be a number"),
    ("tie_word_embeddings", "yes", "tie_word_embeddings must be true or false"),
    ("rope_parameters", [1], "rope_parameters must be an object"),
])
def test_config_json_wrong_types_name_the_field(tmp_path, field, value, match):
    d = {"model_type": "llama", "vocab_size": 64, "hidden_size": 16, "num_attention_heads": 2,
         "num_hidden_layers": 1, "intermediate_size": 32, field: value}
    (tmp_path / "config.json").write_text(json.dumps(d))
    with pytest.raises(ValueError, match=match):
        read_config(tmp_path)


def test_config_json_deep_nesting_is_a_clear_error(tmp_path):
    (tmp_path / "config.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match="nested too deeply"):
        read_config(tmp_path)


def test_gpt2_checkpoint_missing_fused_qkv_bias_is_named(tmp_path):
    """Found by the fuzz runner: a renamed c_attn.bias gave a KeyError (same parameter count)."""
    from minillm.io.safetensors import load_safetensors, save_safetensors
    GPT(ModelConfig(vocab_size=64, n_ctx=16, d_model=16, n_heads=2, n_layers=1)).save_pretrained(tmp_path)
    tensors = dict(load_safetensors(tmp_path / "model.safetensors", mmap=False))
    tensors["transformer.h.0.attn.c_attn.biaz"] = tensors.pop("transformer.h.0.attn.c_attn.bias")
    save_safetensors(tmp_path / "model.safetensors", tensors)
    with pytest.raises(ValueError, match="missing tensor 'h.0.attn.c_attn.bias'"):
        load_hf_checkpoint(tmp_path)
