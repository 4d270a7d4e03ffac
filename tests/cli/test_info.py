"""`minillm info` as a subprocess: a model's facts from its headers, for folders and GGUF files."""
import json

import pytest

from tests.cli.run_module import SHAKESPEARE, TINY_LLAMA, assert_clear_refusal, run_module
from tests.conftest import shared_file


def info(*argv):
    code, out, err = run_module("info", *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def test_a_gpt2_folder_names_its_config_parameters_and_tensors():
    facts = info(SHAKESPEARE, "--tensors")
    assert facts["family"] == "gpt2 (GPT2LMHeadModel)" and facts["config"]["n_layer"] == 4
    assert facts["context"] == 128 and facts["vocabulary"]["size"] == 2048
    assert facts["dtypes"] == {"F32": len(facts["tensors"])}
    assert facts["parameters"] == sum(_count(t["shape"]) for t in facts["tensors"])
    assert all(t["bytes"] == 4 * _count(t["shape"]) for t in facts["tensors"])
    assert "minillm" not in facts["config"]                    # as the family names it


def test_a_llama_folder_and_the_text_form():
    facts = info(TINY_LLAMA)
    assert facts["config"]["num_key_value_heads"] == 2 and "tensors" not in facts
    code, out, _ = run_module("info", TINY_LLAMA, "--tensors")
    assert code == 0 and "family: llama (LlamaForCausalLM)" in out
    assert f"parameters: {facts['parameters']:,}" in out
    assert "model.embed_tokens.weight\t2048x32\tF32\t262,144" in out


def test_the_smollm2_gguf_file_from_its_header():
    path = shared_file("models/SmolLM2-135M-Instruct.Q4_1.gguf")
    facts = info(path, "--tensors")
    assert facts["family"] == "llama" and facts["config"]["block_count"] == 30
    assert facts["context"] == 8192 and facts["vocabulary"]["size"] == 49152
    assert facts["vocabulary"]["special_tokens"]["<|im_start|>"] == 1
    assert facts["chat_format"] == "smollm2"
    assert facts["metadata"]["tokenizer.ggml.tokens"] == "[49,152 items]"
    assert facts["parameters"] == pytest.approx(134.5e6, rel=1e-3)
    assert facts["dtypes"]["Q4_1"] > 100
    assert facts["bytes"] == sum(t["bytes"] for t in facts["tensors"])


def test_bad_models_are_refused_naming_them(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "x.gguf").write_bytes(b"GGUF" + b"\0" * 40)
    for argv, names in [((tmp_path / "missing",), ["MODEL", "missing"]),
                        ((tmp_path,), ["MODEL", "config.json"]),
                        ((tmp_path / "notes.txt",), ["MODEL", "notes.txt"]),
                        ((tmp_path / "x.gguf",), ["x.gguf"]),
                        ((), ["MODEL"])]:
        code, out, err = run_module("info", *argv)
        assert_clear_refusal(code, err, *names)


def _count(shape):
    n = 1
    for d in shape:
        n *= d
    return n
