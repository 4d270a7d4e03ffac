"""Every command that writes or deletes, pointed at a link farm: a victim folder outside the
target (hashed before and after) reached through OUT itself being a link, a dangling link on
the path the command would create (``mkdir`` would create through it), or links inside OUT at
the very names the command writes (io/out_guard.py's link rule; an OUT under an existing linked
parent folder is the user's own layout and works: tests/train/test_finetune_out_guard.py).
In every case the victim is unchanged: the command either refuses (exit 2, or a ValueError from the library) or writes
inside the target only. (``download`` needs the network: its folder goes through the same
atomic writer, tests/test_download_integrity.py.)"""
import pytest

from minillm.cli import main
from tests.cli.test_export_safety import model_folder  # noqa: F401
from tests.train.test_data_safety import TRAIN_ARGS, corpus
from tests.train.test_finetune_cli import base, finetune_argv  # noqa: F401
from tests.train.test_links import snapshot
from tests.train.test_sft import chat_model, chat_tokenizer

WRITES = ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
          "adapter_config.json", "adapter_model.safetensors", "train_log.jsonl", "eval.json",
          "val_sample.txt", "model.gguf"]
LAYOUTS = ["out is a link", "a link on the path it creates", "links inside out"]


@pytest.fixture
def farm(tmp_path):
    """-> (victim folder, make(layout) -> the OUT path to give the command)."""
    victim = tmp_path / "victim"
    victim.mkdir()
    for name in WRITES:
        (victim / name).write_text(f"the user's {name}")

    def make(layout):
        if layout == "out is a link":
            (tmp_path / "out").symlink_to(victim)
            return tmp_path / "out"
        if layout == "a link on the path it creates":
            (tmp_path / "up").symlink_to(victim / "made")    # (dangling: victim/made is missing)
            return tmp_path / "up" / "run"
        out = tmp_path / "out"
        out.mkdir()
        for name in WRITES:
            (out / name).symlink_to(victim / name)
        return out
    return victim, make


def unchanged_after(victim, action):
    before = snapshot(victim)
    try:
        code = action()
    except ValueError as exc:                        # the library's refusal
        assert "symbolic link" in str(exc)
        code = 2
    assert snapshot(victim) == before
    return code


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("flags", [[], ["--overwrite"], ["--merge", "--overwrite"]],
                         ids=["new", "overwrite", "merge"])
def test_finetune_never_touches_a_victim_through_links(base, farm, layout, flags):  # noqa: F811
    victim, make = farm
    assert unchanged_after(victim, lambda: main(finetune_argv(base, make(layout), "--steps", "1",
                                                              *flags))) == 2


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("flags", [[], ["--overwrite"]], ids=["new", "overwrite"])
def test_train_never_touches_a_victim_through_links(tmp_path, farm, layout, flags):
    victim, make = farm
    argv = ["train", "--data", str(corpus(tmp_path)), "--steps", "1", *TRAIN_ARGS, *flags]
    assert unchanged_after(victim, lambda: main([*argv, "--out", str(make(layout))])) == 2


@pytest.mark.parametrize("layout", LAYOUTS)
def test_export_gguf_never_touches_a_victim_through_links(model_folder, farm, layout):  # noqa: F811
    victim, make = farm
    out = make(layout)
    target = out if layout == "out is a link" else out / "model.gguf"
    unchanged_after(victim, lambda: main(["export", str(model_folder), "--gguf", str(target),
                                          "--overwrite"]))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_save_pretrained_and_tokenizer_save_never_touch_a_victim(farm, layout):
    victim, make = farm
    out = make(layout)
    unchanged_after(victim, lambda: chat_model().save_pretrained(out))
    unchanged_after(victim, lambda: chat_tokenizer().save(out / "tokenizer.json"))
