"""``minillm train`` end to end on a small generated text: every promised file, and a model that
``load_model`` can load and whose recorded loss can be recomputed."""
import json

import numpy as np

from minillm.cli import main
from minillm.loading import load_model
from minillm.train.evaluate import evaluate_text
from minillm.train.loop import LOG_NAME

LINES = ["To be, or not to be, that is the question:", "Whether 'tis nobler in the mind to suffer",
         "The slings and arrows of outrageous fortune,", "Or to take arms against a sea of troubles"]


def test_train_command_writes_a_loadable_model(tmp_path, capsys):
    rng = np.random.default_rng(0)
    text = "\n".join(LINES[i] for i in rng.integers(0, 4, 400)) + "\n"
    data, out = tmp_path / "corpus.txt", tmp_path / "model"
    data.write_text(text, encoding="utf-8")
    code = main(["train", "--data", str(data), "--out", str(out), "--vocab-size", "300",
                 "--layers", "1", "--d-model", "16", "--heads", "2", "--context", "16",
                 "--steps", "20", "--batch", "4", "--warmup", "5", "--eval-every", "10"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "tok/s" in printed and "ETA" in printed and "val" in printed
    for name in ("config.json", "model.safetensors", "tokenizer.json", LOG_NAME, "val_sample.txt",
                 "eval.json"):
        assert (out / name).is_file(), name
    assert not (out / "checkpoint").exists()
    model, tok = load_model(out, fast=False)             # the arrays and code that trained
    assert tok is not None and model.config.vocab_size == tok.vocab_size == 300
    hf = json.loads((out / "tokenizer_config.json").read_text())   # Hugging Face's layout
    assert hf["model_max_length"] == model.config.n_ctx == 16
    report = json.loads((out / "eval.json").read_text())
    sample = (out / "val_sample.txt").read_text(encoding="utf-8")
    assert text.endswith(sample)                          # the held-out tail of the corpus
    assert evaluate_text(model, tok, sample)["loss"] == report["val_sample"]["loss"]
    log = [json.loads(line) for line in (out / LOG_NAME).read_text().splitlines()]
    assert [r["step"] for r in log if not r.get("final")] == list(range(10, 21, 10))
    assert log[-1]["final"] and log[-1]["val_sample_loss"] == report["val_sample"]["loss"]


def test_train_command_rejects_a_missing_file(tmp_path, capsys):
    assert main(["train", "--data", str(tmp_path / "nope.txt"), "--out", str(tmp_path / "m")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_train_command_rejects_bad_shapes_before_any_work(tmp_path, capsys):
    data = tmp_path / "corpus.txt"
    data.write_text("a b c\n" * 100, encoding="utf-8")
    assert main(["train", "--data", str(data), "--out", str(tmp_path / "m"), "--d-model", "30",
                 "--heads", "4"]) == 2
    assert "divisible" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


def test_train_command_trains_a_llama_model(tmp_path, capsys):
    """--arch llama --kv-heads 1: RMSNorm, RoPE, SwiGLU and 2 query heads on one KV head, saved
    as a Hugging Face Llama checkpoint that load_model reads back."""
    data, out = tmp_path / "corpus.txt", tmp_path / "model"
    data.write_text("\n".join(LINES * 100) + "\n", encoding="utf-8")
    code = main(["train", "--data", str(data), "--out", str(out), "--vocab-size", "300",
                 "--layers", "1", "--d-model", "16", "--heads", "2", "--context", "16",
                 "--steps", "20", "--batch", "4", "--warmup", "5", "--eval-every", "10",
                 "--arch", "llama", "--kv-heads", "1"])
    assert code == 0
    assert "(1 KV heads)" in capsys.readouterr().out
    assert json.loads((out / "config.json").read_text())["architectures"] == ["LlamaForCausalLM"]
    model, tok = load_model(out, fast=False)
    assert (model.config.arch, model.config.n_heads, model.config.n_kv_heads) == ("llama", 2, 1)
    log = [json.loads(line) for line in (out / LOG_NAME).read_text().splitlines()]
    assert log[-1]["val_loss"] < log[0]["loss"]


def test_train_command_refuses_kv_heads_without_llama(tmp_path, capsys):
    data = tmp_path / "corpus.txt"
    data.write_text("a b c\n" * 100, encoding="utf-8")
    assert main(["train", "--data", str(data), "--out", str(tmp_path / "m"), "--kv-heads", "2"]) == 2
    assert "--arch llama" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()
