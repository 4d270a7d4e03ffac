"""``minillm finetune`` end to end on a tiny ChatML model: the adapter in PEFT's layout, the log
and eval.json; ``chat --model OUT`` loading the base with the adapter merged (or the merged
model of ``--merge``, or the ``--full`` one); a resumed run equal to an uninterrupted one; clear
refusals before any work."""
import io
import json
import re

import numpy as np
import pytest

from minillm import GPT
from minillm.cli import main
from minillm.loading import load_model
from minillm.train.lora.adapters import merged_params
from minillm.train.lora.files import load_adapter
from tests.train.test_sft import CONVERSATIONS, chat_model, chat_tokenizer, write_jsonl


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """A tiny Llama with a ChatML tokenizer, as a model folder, and the conversation files."""
    root = tmp_path_factory.mktemp("finetune")
    chat_model().save_pretrained(root / "base")
    chat_tokenizer().save(root / "base" / "tokenizer.json")
    write_jsonl(root / "chat.jsonl", CONVERSATIONS * 2)
    write_jsonl(root / "held_out.jsonl", CONVERSATIONS[:2])
    return root


def finetune_argv(base, out, *extra):
    return ["finetune", "--model", str(base / "base"), "--data", str(base / "chat.jsonl"),
            "--out", str(out), "--lora", "4", "--steps", "12", "--lr", "1e-2", "--batch", "2",
            "--checkpoint-every", "4", *extra]


def logits_of(model):
    ids = np.array([[1, 5, 9, 30, 2, 7]])
    return model(ids)


def test_finetune_writes_a_peft_adapter_that_chat_loads(base, tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    assert main(finetune_argv(base, out, "--eval", str(base / "held_out.jsonl"))) == 0
    printed = capsys.readouterr().out
    assert "tok/s" in printed and "left" in printed and "step 12/12" in printed
    assert sorted(p.name for p in out.iterdir()) == ["adapter_config.json",
                                                     "adapter_model.safetensors", "eval.json",
                                                     "tokenizer.json", "tokenizer.json.vocab",
                                                     "tokenizer_config.json", "train_log.jsonl"]
    settings = json.loads((out / "adapter_config.json").read_text())
    assert settings["r"] == 4 and settings["base_model_name_or_path"] == str((base / "base").resolve())
    report = json.loads((out / "eval.json").read_text())
    assert report["after"]["loss"] < report["before"]["loss"]
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log] == list(range(1, 13))
    # chat --model OUT: the base model with the adapter merged, engine or reference
    plain = GPT.from_pretrained(base / "base")
    want = logits_of(GPT(plain.config, merged_params(plain.params, load_adapter(out, plain.config))))
    for fast in (False, True):
        model, tok = load_model(out, fast=fast)
        assert tok.special_tokens == chat_tokenizer().special_tokens
        np.testing.assert_allclose(logits_of(model), want, atol=1e-4 * np.abs(want).max())
    assert main(["count", "--model", str(out), str(base / "chat.jsonl")]) == 0
    assert "% of" in capsys.readouterr().out
    monkeypatch.setattr("sys.stdin", io.StringIO("What colour is the sky on Zorb?\n"))
    assert main(["chat", "--model", str(out), "--max-new-tokens", "5", "--seed", "0"]) == 0


def test_merge_and_full_write_a_model_folder(base, tmp_path):
    merged, full = tmp_path / "merged", tmp_path / "full"
    assert main(finetune_argv(base, merged, "--merge")) == 0
    assert (merged / "adapter_model.safetensors").is_file()
    model, _ = load_model(merged, fast=False)            # config.json: the merged model itself
    plain = GPT.from_pretrained(base / "base")
    want = GPT(plain.config, merged_params(plain.params, load_adapter(merged, plain.config)))
    np.testing.assert_array_equal(logits_of(model), logits_of(want))
    argv = finetune_argv(base, full, "--pack")
    argv[argv.index("--lora"):argv.index("--lora") + 2] = ["--full"]
    assert main(argv) == 0
    assert not (full / "adapter_config.json").exists()
    tuned, tok = load_model(full, fast=False)
    assert tok is not None and np.abs(logits_of(tuned) - logits_of(plain)).max() > 1e-3
    # --overwrite of the merged run with an adapter-only one: its stale model files go
    assert main(finetune_argv(base, merged, "--overwrite")) == 0
    assert not (merged / "config.json").exists() and not (merged / "model.safetensors").exists()
    model, _ = load_model(merged, fast=False)            # the base with the new adapter
    want = GPT(plain.config, merged_params(plain.params, load_adapter(merged, plain.config)))
    np.testing.assert_allclose(logits_of(model), logits_of(want), atol=1e-5)


def run_stopped_after(step: int, argv) -> None:
    """``main(argv)`` interrupted (an exception) right after the given step's record."""
    from minillm.train.sft import loop
    import minillm.train.sft as sft

    class Stop(Exception):
        pass

    def stopping(model, tokenizer, conversations, on_step=None, **kw):
        def on(r):
            on_step(r)
            if r["step"] == step:
                raise Stop
        return original(model, tokenizer, conversations, on_step=on, **kw)
    original, sft.finetune = loop.finetune, stopping
    try:
        with pytest.raises(Stop):
            main(argv)
    finally:
        sft.finetune = original


def test_a_resumed_finetune_ends_with_the_uninterrupted_adapter(base, tmp_path):
    full, cut = tmp_path / "full", tmp_path / "cut"
    assert main(finetune_argv(base, full)) == 0
    run_stopped_after(6, finetune_argv(base, cut))
    assert (cut / "checkpoint" / "manifest.json").is_file()
    assert main(finetune_argv(base, cut, "--resume")) == 0
    for name in ("adapter_model.safetensors", "adapter_config.json"):
        assert (cut / name).read_bytes() == (full / name).read_bytes(), name
    assert (cut / "train_log.jsonl").read_text().count("\n") == 12
    assert not (cut / "checkpoint").exists()


@pytest.mark.parametrize("extra, message", [
    (["--targets", "q,zz"], "--targets 'q,zz'"),
    (["--resume"], "nothing to resume"),
    (["--full", "--merge"], "not allowed with argument|--merge and --alpha are for LoRA"),
    (["--max-tokens", "20"], "conversation 1 has"),
])
def test_bad_arguments_are_refused_before_any_work(base, tmp_path, capsys, extra, message):
    argv = finetune_argv(base, tmp_path / "out", *extra)
    if "--full" in extra:
        del argv[argv.index("--lora"):argv.index("--lora") + 2]
    try:
        code = main(argv)
    except SystemExit as exc:                       # argparse's own refusals
        code = exc.code
    assert code == 2
    assert re.search(message, capsys.readouterr().err)
    assert not (tmp_path / "out" / "adapter_config.json").exists()


def test_a_bad_conversation_line_is_named(base, tmp_path, capsys):
    data = tmp_path / "bad.jsonl"
    data.write_text(json.dumps({"messages": CONVERSATIONS[0]}) + "\n{broken\n")
    argv = finetune_argv(base, tmp_path / "out")
    argv[argv.index("--data") + 1] = str(data)
    assert main(argv) == 2
    assert "bad.jsonl, line 2: not valid JSON" in capsys.readouterr().err
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine")
    assert main(finetune_argv(base, tmp_path / "full")) == 2
    assert "is not empty" in capsys.readouterr().err


def test_finetune_says_its_chat_format_and_trains_in_the_one_chat_uses(base, tmp_path, capsys):
    """No template in the tiny model's tokenizer: the fallback ChatML is named on stderr, the same
    sentence ``chat`` prints; ``--chat-format chatml`` is used as asked."""
    assert main(finetune_argv(base, tmp_path / "a", "--steps", "1")) == 0
    assert "minillm finetune: the model carries no chat template: using ChatML" in capsys.readouterr().err
    assert main(finetune_argv(base, tmp_path / "b", "--steps", "1", "--chat-format", "chatml")) == 0
    assert "chat format chatml (" in capsys.readouterr().err


def test_finetune_refuses_an_unknown_chat_format_before_any_work(base, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(finetune_argv(base, out, "--chat-format", "nosuch")) != 0
    err = capsys.readouterr().err
    assert "nosuch" in err and "llama3" in err and not out.exists()


def test_an_adapter_naming_its_base_by_hugging_face_repo_id_finds_the_downloaded_model():
    """PEFT needs the base's repo id; minillm reads it as the model it downloads under a name (the
    shipped weights/tarvessa-lora names HuggingFaceTB/SmolLM2-135M-Instruct: smollm2)."""
    from pathlib import Path

    from minillm.train.lora.files import adapter_base
    shipped = Path(__file__).resolve().parents[2] / "weights" / "tarvessa-lora"
    assert adapter_base(shipped) == "smollm2"
