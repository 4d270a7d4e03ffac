"""``finetune`` never loses a file: an OUT that is (or lies under) a link, inputs inside OUT, a
second run into one OUT, another base model on --resume, a chat format the tokenizer lacks, and
the false refusals and late failures of issue 46 — each refused before anything is deleted (or
accepted, when valid)."""
import copy
import json
import os

import pytest

from minillm.chat.formats import get_format
from minillm.cli import main
from minillm.io.folder_lock import RUN_LOCK, run_lock
from minillm.train.manifest import self_digest
from minillm.train.sft import finetune
from minillm.train.sft.data import parse_conversations
from tests.train.test_finetune_cli import base, finetune_argv  # noqa: F401
from tests.train.test_links import snapshot
from tests.train.test_sft import CONVERSATIONS, chat_model, chat_tokenizer


def victim_copy(base, tmp_path):
    """A user's model folder (a copy of the base): what a link would have --overwrite delete."""
    victim = tmp_path / "victim"
    chat_model().save_pretrained(victim)
    chat_tokenizer().save(victim / "tokenizer.json")
    (victim / "eval.json").write_text("{}")
    return victim


@pytest.mark.parametrize("how", ["out is a link", "a link on the path it creates"])
def test_overwrite_never_deletes_through_an_out_that_is_or_lies_under_a_link(base, tmp_path,  # noqa: F811
                                                                             capsys, how):
    victim = victim_copy(base, tmp_path)
    before = snapshot(victim)
    if how == "out is a link":
        out = tmp_path / "out"
        out.symlink_to(victim)
    else:                               # (runs -> victim/new, missing: mkdir would create it)
        (tmp_path / "runs").symlink_to(victim / "new")
        out = tmp_path / "runs" / "run"
    assert main(finetune_argv(base, out, "--steps", "1", "--overwrite")) == 2
    assert "symbolic link" in capsys.readouterr().err
    assert snapshot(victim) == before



def test_finetune_into_an_out_under_a_symlinked_parent_folder_works(base, tmp_path):  # noqa: F811
    """macOS's /tmp (a link to /private/tmp), a home folder that is a link: the folders that
    already exist above OUT are the user's layout, resolved once (io/out_guard.py)."""
    real = tmp_path / "private"
    real.mkdir()
    (tmp_path / "tmp").symlink_to(real)
    assert main(finetune_argv(base, tmp_path / "tmp" / "runs" / "run", "--steps", "1")) == 0
    assert (real / "runs" / "run" / "adapter_model.safetensors").is_file()
    chat_model().save_pretrained(tmp_path / "tmp" / "saved")         # the library's writer too
    assert (real / "saved" / "model.safetensors").is_file()


def test_an_out_that_is_itself_a_link_is_still_refused_under_a_symlinked_parent(tmp_path):
    from minillm.io.out_guard import refuse_linked_path
    real = tmp_path / "private"
    (real / "model").mkdir(parents=True)
    (tmp_path / "tmp").symlink_to(real)
    assert refuse_linked_path(tmp_path / "tmp" / "a" / "b") == real.resolve() / "a" / "b"
    (real / "out").symlink_to(real / "model")
    for out in (real / "out", tmp_path / "tmp" / "out"):
        with pytest.raises(ValueError, match="is a symbolic link"):
            refuse_linked_path(out)
        with pytest.raises(ValueError, match="symbolic link"):
            chat_model().save_pretrained(out)
    assert list((real / "model").iterdir()) == []

def test_overwrite_refuses_data_and_eval_inside_out_naming_them(base, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "out"
    assert main(finetune_argv(base, out, "--steps", "1")) == 0
    data = out / "eval.json"
    for name in ("eval.json", "train_log.jsonl"):          # (valid conversations by those names)
        (out / name).write_bytes((base / "chat.jsonl").read_bytes())
    before = snapshot(out)
    argv = finetune_argv(base, out, "--steps", "1", "--overwrite")
    argv[argv.index("--data") + 1] = str(out / "train_log.jsonl")
    assert main(argv) == 2 and "--data" in capsys.readouterr().err
    argv = finetune_argv(base, out, "--steps", "1", "--overwrite", "--eval", str(data))
    assert main(argv) == 2 and "--eval" in capsys.readouterr().err
    assert snapshot(out) == before


def test_overwrite_refuses_an_adapter_whose_base_lives_in_out(base, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "out"
    argv = finetune_argv(base, out, "--steps", "1")
    argv[argv.index("--lora"):argv.index("--lora") + 2] = ["--full"]
    assert main(argv) == 0                                    # OUT: a whole model
    adapter = tmp_path / "adapter"
    assert main(finetune_argv(base, adapter, "--steps", "1")) == 0
    config = json.loads((adapter / "adapter_config.json").read_text())
    (adapter / "adapter_config.json").write_text(json.dumps(
        {**config, "base_model_name_or_path": str(out)}))
    before = snapshot(out)
    argv = finetune_argv(base, out, "--steps", "1", "--overwrite")
    argv[argv.index("--model") + 1] = str(adapter)
    assert main(argv) == 2 and "--model's base" in capsys.readouterr().err
    assert snapshot(out) == before


def test_a_second_run_into_a_locked_out_is_refused_at_once(base, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "out"
    with run_lock(out):                        # (another run, as far as the lock can tell)
        assert main(finetune_argv(base, out, "--steps", "1", "--overwrite")) == 2
        assert "another minillm run" in capsys.readouterr().err
    assert not out.exists()                    # (made for the lock, empty: removed)


def test_a_stale_lock_file_of_a_killed_run_does_not_block_the_next(base, tmp_path):  # noqa: F811
    out = tmp_path / "out"
    out.mkdir()
    (out / RUN_LOCK).write_text("12345\n")     # what kill -9 leaves: a file nobody locks
    assert main(finetune_argv(base, out, "--steps", "1")) == 0
    assert not (out / RUN_LOCK).exists()


def library_run(out, model=None, **extra):
    tok = chat_tokenizer()
    return finetune(model or chat_model(), tok, CONVERSATIONS, rank=2, steps=4, batch_size=2,
                    checkpoint_every=2, out=out, base_model="base", **extra)


def test_resume_refuses_another_base_model_of_the_same_shapes(tmp_path):
    out = tmp_path / "out"
    library_run(out)
    with pytest.raises(ValueError, match="another base model"):
        library_run(out, model=chat_model(seed=1), resume=True)
    library_run(out, resume=True)                             # the same base: resumed


def test_resume_of_a_checkpoint_without_a_base_digest_warns(tmp_path):
    out = tmp_path / "out"
    library_run(out)
    path = out / "checkpoint" / "manifest.json"
    manifest = {k: v for k, v in json.loads(path.read_text()).items()
                if k not in ("base_sha256", "manifest_sha256")}
    path.write_text(json.dumps({**manifest, "manifest_sha256": self_digest(manifest)}))
    with pytest.warns(UserWarning, match="before checkpoints recorded their base model"):
        library_run(out, resume=True)


def test_finetune_refuses_a_chat_format_the_tokenizer_lacks(base, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "out"
    assert main(finetune_argv(base, out, "--steps", "1", "--chat-format", "llama3")) == 2
    assert "no special token '<|start_header_id|>'" in capsys.readouterr().err
    assert not out.exists()
    tok = copy.copy(chat_tokenizer())          # a template that only mentions a Llama 3 marker
    tok.gguf_metadata = {"tokenizer.chat_template": (8, "{# not <|start_header_id|> #}")}
    with pytest.raises(ValueError, match="no special token"):
        finetune(chat_model(), tok, CONVERSATIONS, rank=2, steps=1)


@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\u0085"])
def test_jsonl_with_raw_line_separators_inside_strings_is_read(char):
    messages = [{"role": "user", "content": f"a{char}b"}, {"role": "assistant", "content": "c"}]
    text = json.dumps({"messages": messages}, ensure_ascii=False) + "\n"
    assert char in text and parse_conversations(text) == [messages]


def test_a_smollm3_format_run_resumes_the_next_day(tmp_path):
    from dataclasses import replace

    from tests.model.strategies import random_model
    out = tmp_path / "out"
    fmt = get_format("smollm3")                 # (its system block needs a longer context)
    model = lambda: random_model(replace(chat_model().config, n_ctx=1400), 0)  # noqa: E731
    library_run(out, model(), chat_format=fmt.with_options(date_string="06 December 2026"))
    library_run(out, model(), chat_format=fmt.with_options(date_string="07 December 2026"),
                resume=True)


def test_a_library_checkpoint_with_targets_none_resumes_with_the_cli_list(tmp_path):
    out = tmp_path / "out"
    library_run(out, targets=None)
    every = ["wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down"]
    library_run(out, targets=every, resume=True)


def test_a_folder_named_like_an_output_file_is_refused_before_training(base, tmp_path,  # noqa: F811
                                                                       capsys):
    out = tmp_path / "out"
    (out / "adapter_model.safetensors").mkdir(parents=True)
    assert main(finetune_argv(base, out, "--steps", "1", "--overwrite")) == 2
    assert "not a regular file" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["adapter_model.safetensors"]


def test_a_huge_lora_rank_is_refused_with_its_range(base, tmp_path, capsys):  # noqa: F811
    argv = finetune_argv(base, tmp_path / "out", "--steps", "1")
    argv[argv.index("--lora") + 1] = "1000000"
    assert main(argv) == 2 and "must be in [1, " in capsys.readouterr().err


def test_a_save_keeps_a_users_file_named_like_a_one_of_one_shard(tmp_path):
    (tmp_path / "model-00001-of-00001.safetensors").write_text("mine")
    chat_model().save_pretrained(tmp_path)
    assert (tmp_path / "model-00001-of-00001.safetensors").read_text() == "mine"


def test_a_null_byte_in_a_path_names_the_flag(base, tmp_path, capsys):  # noqa: F811
    argv = finetune_argv(base, tmp_path / "out", "--steps", "1")
    argv[argv.index("--data") + 1] = "chat\0.jsonl"
    assert main(argv) == 2 and "--data" in capsys.readouterr().err


def test_a_fifo_given_as_data_is_not_a_regular_file(base, tmp_path, capsys):  # noqa: F811
    os.mkfifo(tmp_path / "pipe")
    argv = finetune_argv(base, tmp_path / "out", "--steps", "1")
    argv[argv.index("--data") + 1] = str(tmp_path / "pipe")
    assert main(argv) == 2 and "not a regular file" in capsys.readouterr().err
