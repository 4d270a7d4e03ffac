"""A re-export keeps what minillm read: every metadata key of the source GGUF (chat template,
``general.*``, padding id, add_space_prefix, ...) comes back with the same value and GGUF type,
unless the user drops it; a Hugging Face checkpoint's chat template is written too.

The source file is built here with the tests' GGUF writer (tests/io/gguf_writer.py), typed by
hand; the real SmolLM2 conversion's round trip is in tests/test_smollm2.py.
"""
import json
import shutil

import numpy as np
import pytest

from minillm import GPT, ModelConfig
from minillm.cli import main
from minillm.io.gguf.read import read_gguf
from minillm.io.gguf.export import arch_metadata, gguf_tensors
from minillm.io.gguf.vocab import tokenizer_metadata
from minillm.io.gguf.write import encode_tensor
from minillm.loading import load_model
from minillm.tokenizer import Tokenizer
from tests.conftest import REPO
from tests.io.gguf_writer import (ARRAY, BOOL, FLOAT64, INT32, INT64, STRING, UINT32,
                                  gguf_bytes)

TEMPLATE = "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n" \
           "{% endfor %}"
EXTRA = {  # what llama.cpp's converter writes beyond the shape and the vocabulary, oddly typed too
    "general.name": (STRING, "Tiny Chat"), "general.license": (STRING, "apache-2.0"),
    "general.languages": (ARRAY, (STRING, ["en", "zh"])), "general.size_label": (STRING, "40K"),
    "general.source.score": (FLOAT64, 0.25), "general.base_model.count": (UINT32, 1),
    "tokenizer.chat_template": (STRING, TEMPLATE),
    "tokenizer.ggml.padding_token_id": (UINT32, 2), "tokenizer.ggml.add_space_prefix": (BOOL, False),
    "tokenizer.ggml.add_bos_token": (BOOL, True), "tokenizer.ggml.add_eos_token": (BOOL, False),
    "tokenizer.ggml.eot_token_id": (INT32, 2), "tokenizer.ggml.some_list": (ARRAY, (INT64, [-1, 7])),
}


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A tiny Llama GGUF with a ChatML tokenizer and EXTRA, F32 (file_type 0)."""
    tok = Tokenizer.train("hello world, hello chat. " * 20, 270,
                          special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
    config = ModelConfig(arch="llama", vocab_size=tok.vocab_size, n_ctx=16, d_model=32,
                         n_heads=2, n_layers=1, d_ff=64)
    model = GPT(config, seed=1)
    meta = {**arch_metadata(config, "llama"), "general.file_type": (UINT32, 0),
            **tokenizer_metadata(tok, config.vocab_size), **EXTRA}
    tensors = {n: (0, a.shape, encode_tensor(a, 0))
               for n, a in gguf_tensors(config, model.params.named(), "llama").items()}
    path = tmp_path_factory.mktemp("carry") / "tiny-chat.gguf"
    path.write_bytes(gguf_bytes(meta, tensors))
    return path


def reexport(path, out, **kw):
    model, tok = load_model(path)
    return read_gguf(str(model.save_gguf(out, tok, **kw))).metadata


def test_every_key_read_is_written_back_with_its_value_and_type(source, tmp_path):
    before = read_gguf(str(source)).metadata
    after = reexport(source, tmp_path / "again.gguf")
    assert set(before) == set(after)
    for key in before:
        assert after[key] == before[key], key
        assert after.types[key] == before.types[key], key   # e.g. INT32 stays INT32, FLOAT64 stays


def test_carried_keys_sit_on_the_model_and_the_tokenizer_they_describe(source):
    model, tok = load_model(source)
    assert set(model.gguf_metadata) == {k for k in EXTRA if k.startswith("general.")}
    assert tok.gguf_metadata["tokenizer.chat_template"] == (STRING, TEMPLATE)
    assert tok.gguf_metadata["tokenizer.ggml.some_list"] == (ARRAY, (INT64, [-1, 7]))
    assert Tokenizer.load(source).gguf_metadata == tok.gguf_metadata   # the tokenizer alone too
    assert "tokenizer.ggml.tokens" not in tok.gguf_metadata             # computed, not carried


def test_a_dtype_change_rewrites_only_the_encoding_keys(source, tmp_path):
    before = read_gguf(str(source)).metadata
    after = reexport(source, tmp_path / "q8.gguf", dtype="q8_0")
    assert {k for k in before if before[k] != after.get(k)} == {"general.file_type"}
    assert after["general.file_type"] == 7 and after["general.quantization_version"] == 2


def test_export_drop_metadata_removes_keys_and_prefixes(source, tmp_path, capsys):
    out = tmp_path / "dropped.gguf"
    assert main(["export", str(source), "--gguf", str(out), "--drop-metadata",
                 "tokenizer.chat_template", "--drop-metadata", "general.*"]) == 0
    meta = read_gguf(str(out)).metadata
    assert "tokenizer.chat_template" not in meta and meta["tokenizer.ggml.padding_token_id"] == 2
    assert [k for k in meta if k.startswith("general.")] == ["general.architecture",
                                                              "general.file_type"]
    assert main(["export", str(source), "--gguf", str(tmp_path / "x.gguf"),
                 "--drop-metadata", "general.nothing"]) != 0
    assert "matches no carried key; carried: general.base_model.count" in capsys.readouterr().err


def test_a_computed_key_put_in_gguf_metadata_is_refused(source, tmp_path):
    model, tok = load_model(source)
    tok.gguf_metadata["tokenizer.ggml.bos_token_id"] = (UINT32, 5)
    with pytest.raises(ValueError, match="computes from the model and tokenizer"):
        model.save_gguf(tmp_path / "x.gguf", tok)


@pytest.mark.parametrize("where", ["tokenizer_config", "jinja", "named"])
def test_a_hugging_face_chat_template_is_exported(tmp_path, where):
    """As llama.cpp's converter: tokenizer_config.json's chat_template (a string, or named
    templates: default -> tokenizer.chat_template, others -> .NAME), else chat_template.jinja."""
    folder = tmp_path / "ckpt"
    shutil.copytree(REPO / "weights" / "shakespeare", folder)
    config_path = folder / "tokenizer_config.json"
    config = json.loads(config_path.read_text())
    if where == "tokenizer_config":
        config["chat_template"] = TEMPLATE
    elif where == "named":
        config["chat_template"] = [{"name": "default", "template": TEMPLATE},
                                   {"name": "tool_use", "template": "{{ tools }}"}]
    else:
        (folder / "chat_template.jinja").write_text(TEMPLATE, encoding="utf-8")
    config_path.write_text(json.dumps(config))
    meta = reexport(folder, tmp_path / "s.gguf")
    assert meta["tokenizer.chat_template"] == TEMPLATE
    assert ("tokenizer.chat_template.tool_use" in meta) == (where == "named")


def test_a_model_made_here_exports_without_carried_keys(tmp_path):
    model = GPT(ModelConfig(vocab_size=256, n_ctx=8, d_model=32, n_heads=2, n_layers=1))
    tok = Tokenizer({bytes([i]): i for i in range(256)}, {})
    meta = read_gguf(str(model.save_gguf(tmp_path / "m.gguf", tok))).metadata
    assert "tokenizer.chat_template" not in meta and meta["tokenizer.ggml.add_bos_token"] is False
    np.testing.assert_array_equal(load_model(tmp_path / "m.gguf", fast=False)[0].params.wte,
                                  model.params.wte)


def test_a_gguf_vocabulary_loaded_by_path_is_checked_once_not_twice(source, monkeypatch):
    """Tokenizer.load ran check_vocabulary (O(V + merges)) in gguf_meta, then again in formats."""
    from minillm.tokenizer import formats, gguf_meta
    calls = []
    for module in (formats, gguf_meta):
        real = module.check_vocabulary
        monkeypatch.setattr(module, "check_vocabulary",
                            lambda *a, real=real, **kw: calls.append(a[-1]) or real(*a, **kw))
    assert Tokenizer.load(source).gguf_metadata["tokenizer.chat_template"] == (STRING, TEMPLATE)
    assert calls == ["GGUF metadata"]
