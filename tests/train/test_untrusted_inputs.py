"""Files a user did not write, read without trust: adapter_config.json and its tensors, a JSONL of
conversations, and config.json / GGUF values of the families with per-layer lists. Each case is
refused by name, fast, and without a memory blow-up (FIFOs and /dev/zero under a time limit)."""
import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from minillm import GPT
from minillm.config import ModelConfig
from minillm.io.hf.config import from_hf_dict
from minillm.io.hf.shard_write import shard_limit
from minillm.io.safetensors import write_safetensors
from minillm.loading import load_gguf_model
from minillm.train.lora.adapters import init_lora, merged_params
from minillm.train.lora.files import adapter_base, load_adapter, save_adapter
from minillm.train.sft.data import MAX_LINE_BYTES, read_conversations
from minillm.train.sft.loop import render_all
from tests.io import gguf_writer as w
from tests.io.test_gguf_model import write_gguf
from tests.train.test_sft import chat_tokenizer

CONFIG = ModelConfig(vocab_size=20, n_ctx=16, d_model=16, n_heads=4, n_kv_heads=2, n_layers=2,
                     d_ff=24, arch="llama")
SMALL = {"vocab_size": 10, "hidden_size": 8, "num_attention_heads": 2, "num_hidden_layers": 4,
         "intermediate_size": 8, "head_dim": 4}


def in_subprocess(code: str, timeout: float = 20.0) -> str:
    """Run ``code`` in a fresh interpreter, killed after ``timeout`` s (a hang fails the test)."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": os.getcwd()})
    return done.stdout + done.stderr


def adapter(tmp_path, **settings):
    model = GPT(CONFIG, seed=0)
    lora = init_lora(model.params, 2, np.random.default_rng(0))
    save_adapter(tmp_path, lora, CONFIG)
    d = json.loads((tmp_path / "adapter_config.json").read_text())
    (tmp_path / "adapter_config.json").write_text(json.dumps({**d, **settings}))
    return model


# defect 2 and 13: sizes and scales checked before anything is built from them

@pytest.mark.parametrize("model_type", ["gemma2", "gemma3_text", "smollm3"])
def test_a_billion_layers_is_refused_before_any_per_layer_list(model_type):
    start = time.perf_counter()
    with pytest.raises(ValueError, match="num_hidden_layers: 1,000,000,000 layers is out of range"):
        from_hf_dict({"model_type": model_type, **SMALL, "num_hidden_layers": 10**9})
    assert time.perf_counter() - start < 1.0


def test_gguf_block_count_huge_or_a_string_is_refused_naming_the_key(tmp_path):
    for value, match in (((w.UINT32, 2**32 - 1), "block_count: 4,294,967,295 layers"),
                         ((w.STRING, "12"), "block_count must be an integer")):
        path = write_gguf(tmp_path / "m.gguf", GPT(CONFIG), extra_meta={"llama.block_count": value})
        with pytest.raises(ValueError, match=match):
            load_gguf_model(path)


@pytest.mark.parametrize("extra, match", [
    ({"sliding_window": 2**63}, "sliding_window must be an integer >= 1"),
    ({"sliding_window_pattern": 0}, "sliding_window_pattern must be an integer >= 1"),
    ({"query_pre_attn_scalar": 1e-300}, r"query_pre_attn_scalar = 1e-300 is out of range"),
    ({"final_logit_softcapping": 1e308}, r"final_softcap = 1e\+308 is out of range"),
    ({"rope_local_base_freq": 1e-310}, "rope_local_theta"),
])
def test_extreme_gemma3_values_are_refused_with_the_allowed_range(extra, match):
    with pytest.raises(ValueError, match=match):
        from_hf_dict({"model_type": "gemma3_text", **SMALL, **extra})


def test_a_rope_factor_of_1e_310_is_refused_and_in_range_ones_give_finite_logits():
    scaling = {"rope_type": "llama3", "factor": 1e-310, "low_freq_factor": 1.0,
               "high_freq_factor": 4.0, "original_max_position_embeddings": 8}
    with pytest.raises(ValueError, match="rope_scaling factor = 1e-310 is out of range"):
        ModelConfig(**{**CONFIG.__dict__, "rope_scaling": scaling})
    config = from_hf_dict({"model_type": "gemma3_text", **SMALL, "query_pre_attn_scalar": 1e-4,
                           "final_logit_softcapping": 1e8, "sliding_window": 2**32 - 1})
    assert np.all(np.isfinite(GPT(config, seed=0)(np.array([[1, 2, 3]]))))


def test_max_shard_size_of_400_nines_is_refused_with_the_range():
    for value in ("9" * 400 + "GB", int("9" * 400)):
        with pytest.raises(ValueError, match="out of range: allowed 1 byte to"):
            shard_limit(value)


# defect 4: adapter_config.json read bounded

def test_adapter_config_that_is_sparse_huge_a_list_or_deep_is_refused(tmp_path):
    model = adapter(tmp_path)
    cases = (("truncate", "is 2,147,483,648 bytes; a config file is limited to 1,048,576"),
             ("[1, 2]", "must hold a JSON object"), ("null", "must hold a JSON object"),
             ("[" * 100_000 + "]" * 100_000, "nested too deeply"))
    for text, match in cases:
        path = tmp_path / "adapter_config.json"
        path.unlink()
        if text == "truncate":
            with open(path, "wb") as f:
                f.truncate(2**31)
        else:
            path.write_text(text)
        with pytest.raises(ValueError, match=match):
            load_adapter(tmp_path, model.config)


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero"])
def test_an_adapter_config_that_is_a_fifo_or_dev_zero_is_refused_at_once(tmp_path, kind):
    adapter(tmp_path)
    (tmp_path / "adapter_config.json").unlink()
    if kind == "fifo":
        os.mkfifo(tmp_path / "adapter_config.json")
    else:
        os.symlink("/dev/zero", tmp_path / "adapter_config.json")
    out = in_subprocess(f"""
from minillm.train.lora.files import load_adapter
from tests.train.test_untrusted_inputs import CONFIG
try:
    load_adapter({str(tmp_path)!r}, CONFIG)
except ValueError as exc:
    print("refused:", exc)""")
    assert "refused:" in out and "not a regular file" in out


# defect 5: NaN and overflow refused where read, and merges checked

@pytest.mark.parametrize("alpha", ["NaN", "Infinity", "1e308"])
def test_lora_alpha_nan_infinite_or_huge_is_refused(tmp_path, alpha):
    model = adapter(tmp_path)
    path = tmp_path / "adapter_config.json"
    path.write_text(path.read_text().replace('"lora_alpha": 4.0', f'"lora_alpha": {alpha}'))
    assert alpha in path.read_text()
    with pytest.raises(ValueError, match="lora_alpha a finite number"):
        load_adapter(tmp_path, model.config)


@pytest.mark.parametrize("bad", [np.nan, np.inf, 1e30])
def test_adapter_tensors_with_nan_inf_or_huge_values_are_refused(tmp_path, bad):
    model = adapter(tmp_path)
    from minillm.io.safetensors import load_safetensors
    tensors = dict(load_safetensors(tmp_path / "adapter_model.safetensors", mmap=False))
    key = sorted(tensors)[0]
    tensors[key] = tensors[key].copy()
    tensors[key][0, 0] = bad
    (tmp_path / "adapter_model.safetensors").unlink()
    write_safetensors(tmp_path / "adapter_model.safetensors", tensors)
    with pytest.raises(ValueError, match="not finite or beyond"):
        load_adapter(tmp_path, model.config)


def test_a_merge_that_overflows_is_refused_not_written():
    model = GPT(CONFIG, seed=0)
    lora = init_lora(model.params, 2, np.random.default_rng(0), alpha=1e6)
    lora.adapters = {k: (A * 0 + 1e20, B * 0 + 1e20) for k, (A, B) in lora.adapters.items()}
    with pytest.raises(ValueError, match="not finite"):
        merged_params(model.params, lora)


# defects 6 and 15: chains, experts, settings PEFT honours

def test_an_adapter_whose_base_is_itself_or_another_adapter_is_refused(tmp_path):
    adapter(tmp_path / "a", base_model_name_or_path=".")
    with pytest.raises(ValueError, match="this adapter itself"):
        adapter_base(tmp_path / "a")
    adapter(tmp_path / "b", base_model_name_or_path="../c")
    adapter(tmp_path / "c", base_model_name_or_path="../b")
    with pytest.raises(ValueError, match="another adapter"):
        adapter_base(tmp_path / "b")


@pytest.mark.parametrize("settings, match", [
    ({"target_modules": ["k_proj"]}, "outside the adapter's own target_modules"),
    ({"layers_to_transform": [0]}, "layers_to_transform"),
    ({"target_modules": r".*\.0\.self_attn\.q_proj"}, "outside the adapter's own target_modules"),
    ({"alora_invocation_tokens": [1, 2]}, "alora_invocation_tokens"),
])
def test_adapter_settings_that_leave_tensors_out_are_refused_by_name(tmp_path, settings, match):
    model = adapter(tmp_path, **settings)
    with pytest.raises(ValueError, match=match):
        load_adapter(tmp_path, model.config)


def test_settings_that_cover_every_tensor_are_honoured_and_no_tensors_is_refused(tmp_path):
    model = adapter(tmp_path, target_modules="all-linear", layers_to_transform=[0, 1])
    assert len(load_adapter(tmp_path, model.config).adapters) == 2 * 7
    (tmp_path / "adapter_model.safetensors").unlink()
    write_safetensors(tmp_path / "adapter_model.safetensors", {})
    with pytest.raises(ValueError, match="holds no tensors"):
        load_adapter(tmp_path, model.config)


# defects 3 and 12: JSONL bounded and rendered in linear time

def test_a_conversation_of_8000_turns_is_refused_as_too_long_in_bounded_time():
    turns = [{"role": r, "content": "hi"} for _ in range(4_000) for r in ("user", "assistant")]
    start = time.perf_counter()
    with pytest.raises(ValueError, match="more than the limit of 160"):
        render_all(chat_tokenizer(), [turns], "chatml", 160, "conversation")
    with pytest.raises(ValueError, match="20,000 messages, more than the 10,000"):
        render_all(chat_tokenizer(), [turns * 2 + turns[:4_000]], "chatml", 160, "conversation")
    assert time.perf_counter() - start < 10.0      # (quadratic rendering: hours)


def test_a_line_longer_than_the_limit_is_refused_unread_and_blank_lines_are_cheap(tmp_path):
    path = tmp_path / "big.jsonl"
    with open(path, "wb") as f:
        f.write(b'{"messages": "' + b"x" * (MAX_LINE_BYTES + 10))
    with pytest.raises(ValueError, match="line 1: longer than 4,194,304 bytes"):
        read_conversations(path)
    line = b'{"messages": [{"role": "user", "content": "a\xe2\x80\xa8b"}, ' \
           b'{"role": "assistant", "content": "c"}]}\n'
    path.write_bytes(b"\n" * (64 << 20) + line)                       # 64 MB of blank lines
    start = time.perf_counter()
    assert read_conversations(path)[0][0]["content"] == "a\u2028b"     # (U+2028 is text)
    assert time.perf_counter() - start < 10.0


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero"])
def test_a_jsonl_that_is_a_fifo_or_dev_zero_is_refused_at_once(tmp_path, kind):
    path = tmp_path / "chat.jsonl"
    os.mkfifo(path) if kind == "fifo" else os.symlink("/dev/zero", path)
    out = in_subprocess(f"""
from minillm.train.sft.data import read_conversations
try:
    read_conversations({str(path)!r})
except ValueError as exc:
    print("refused:", exc)""")
    assert "refused:" in out and "not a regular file" in out


def test_a_peft_adapter_on_a_qwen3_moe_expert_is_refused_by_name(tmp_path):
    config = ModelConfig(vocab_size=16, n_ctx=8, d_model=8, n_heads=2, n_layers=1, d_ff=8,
                         arch="llama", qk_norm=True, n_experts=2, n_experts_used=1)
    adapter(tmp_path)
    stem = "base_model.model.model.layers.0.mlp.experts.0.gate_proj"
    (tmp_path / "adapter_model.safetensors").unlink()
    write_safetensors(tmp_path / "adapter_model.safetensors",
                      {stem + ".lora_A.weight": np.zeros((2, 8), np.float32),
                       stem + ".lora_B.weight": np.zeros((8, 2), np.float32)})
    with pytest.raises(ValueError, match="adapts an expert of a mixture of experts"):
        load_adapter(tmp_path, config)
