"""``minillm finetune --overwrite`` clears an earlier output fully before its first step: a sharded
model save (index and shards), adapters, eval.json and checkpoints go; a user's own file stays; the
new output loads as what it is."""
import json

import numpy as np
import pytest

from minillm import GPT
from minillm.cli import main
from minillm.loading import load_model
from minillm.train.lora.adapters import merged_params
from minillm.train.lora.files import load_adapter
from tests.train.test_finetune_cli import base, finetune_argv, logits_of  # noqa: F401
from tests.train.test_sft import chat_model


def earlier_output(out):
    """What an earlier run could have left: a sharded model, an adapter, eval.json, a checkpoint
    folder; and a user's notes."""
    chat_model(seed=1).save_pretrained(out, max_shard_size=20_000)
    (out / "adapter_config.json").write_text(json.dumps({"r": 2, "base_model_name_or_path": "x"}))
    (out / "adapter_model.safetensors").write_bytes(b"old")
    (out / "eval.json").write_text("{}")
    (out / "checkpoint").mkdir()
    (out / "checkpoint" / "manifest.json").write_text("{}")
    (out / "notes.txt").write_text("mine")
    shards = sorted(p.name for p in out.glob("model-*-of-*.safetensors"))
    assert len(shards) >= 2 and (out / "model.safetensors.index.json").is_file()


def test_overwrite_of_a_sharded_save_leaves_only_the_new_adapter(base, tmp_path):  # noqa: F811
    out = tmp_path / "out"
    out.mkdir()
    earlier_output(out)
    assert main(finetune_argv(base, out, "--steps", "2", "--overwrite")) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "adapter_config.json", "adapter_model.safetensors", "notes.txt", "tokenizer.json",
        "tokenizer.json.vocab", "tokenizer_config.json", "train_log.jsonl"]
    model, _ = load_model(out, fast=False)           # the base with the new adapter merged
    plain = GPT.from_pretrained(base / "base")
    want = GPT(plain.config, merged_params(plain.params, load_adapter(out, plain.config)))
    np.testing.assert_allclose(logits_of(model), logits_of(want), atol=1e-5)


def test_full_overwrite_of_a_sharded_save_writes_one_model(base, tmp_path):  # noqa: F811
    out = tmp_path / "out"
    out.mkdir()
    earlier_output(out)
    argv = finetune_argv(base, out, "--steps", "2", "--overwrite")
    argv[argv.index("--lora"):argv.index("--lora") + 2] = ["--full"]
    assert main(argv) == 0
    names = sorted(p.name for p in out.iterdir())
    assert "model.safetensors" in names and "notes.txt" in names
    assert not [n for n in names if n.startswith(("adapter_", "model-", "model.safetensors.")) or
                n in ("eval.json", "checkpoint")]
    tuned, _ = load_model(out, fast=False)
    assert tuned.config == GPT.from_pretrained(base / "base").config


def test_overwrite_refuses_a_link_among_the_earlier_files_before_deleting(base, tmp_path,  # noqa: F811
                                                                          capsys):
    out = tmp_path / "out"
    out.mkdir()
    earlier_output(out)
    (tmp_path / "elsewhere").write_text("keep")
    last = sorted(out.glob("model-*-of-*.safetensors"))[-1]
    last.unlink()
    last.symlink_to(tmp_path / "elsewhere")
    assert main(finetune_argv(base, out, "--steps", "2", "--overwrite")) == 2
    assert "symbolic link" in capsys.readouterr().err
    assert (out / "eval.json").is_file() and (tmp_path / "elsewhere").read_text() == "keep"


@pytest.mark.parametrize("extra, message", [(["--batch", "0"], "batch must be a positive integer"),
                                            (["--max-tokens", "20"], "conversation 1 has")],
                         ids=["settings", "data"])
def test_an_overwrite_run_that_is_refused_deletes_nothing(base, tmp_path, capsys, extra,  # noqa: F811
                                                          message):
    out = tmp_path / "out"
    out.mkdir()
    earlier_output(out)
    before = sorted(p.name for p in out.iterdir())
    assert main(finetune_argv(base, out, "--steps", "2", "--overwrite", *extra)) == 2
    assert message in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == before


def test_the_base_model_folder_is_refused_as_out(base, tmp_path, capsys):  # noqa: F811
    import shutil
    shutil.copytree(base / "base", tmp_path / "model")
    before = sorted(p.name for p in (tmp_path / "model").iterdir())
    argv = finetune_argv(base, tmp_path / "model", "--overwrite")
    argv[argv.index("--model") + 1] = str(tmp_path / "model")
    assert main(argv) == 2
    assert "is --out" in capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "model").iterdir()) == before
