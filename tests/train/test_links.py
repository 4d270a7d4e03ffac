"""``train --out OUT`` never writes, renames or deletes through a link it did not make, nor
outside OUT: a link planted at any name it uses is refused (one line, exit 2) before anything is
written, and whatever the link points to is left exactly as it was."""
import hashlib

import pytest

from minillm.cli import main
from minillm.train.loop import TrainSettings, train
from tests.train.test_data_safety import TRAIN_ARGS, corpus
from tests.train.test_loop import TEXT_IDS, tiny

LINKED_FOLDERS = ["best.old", "best.tmp", "best", "checkpoint.tmp", "checkpoint.old", "checkpoint"]


def snapshot(folder):
    """Every path under ``folder`` with its content's digest (links as their target)."""
    return {str(p.relative_to(folder)): (hashlib.sha256(p.read_bytes()).hexdigest()
                                         if p.is_file() else str(p.readlink()) if p.is_symlink()
                                         else "dir")
            for p in sorted(folder.rglob("*"))}


@pytest.fixture
def elsewhere(tmp_path):
    """A folder outside OUT holding a model (what a planted link would make minillm delete)."""
    victim = tmp_path / "elsewhere"
    tiny().save_pretrained(victim)
    (victim / "manifest.json").write_text("{}")
    return victim


def run_train(capsys, tmp_path, out, *extra):
    code = main(["train", "--data", str(corpus(tmp_path)), "--out", str(out), "--steps", "4",
                 *TRAIN_ARGS, *extra])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("name", LINKED_FOLDERS)
@pytest.mark.parametrize("flag", ["--overwrite", "--resume"])
def test_train_refuses_a_linked_checkpoint_folder(capsys, tmp_path, elsewhere, name, flag):
    out = tmp_path / "out"
    out.mkdir()
    (out / name).symlink_to(elsewhere, target_is_directory=True)
    before, outside = snapshot(out), snapshot(elsewhere)
    code, err = run_train(capsys, tmp_path, out, flag)
    assert code == 2 and "symbolic link" in err and str(out / name) in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert snapshot(elsewhere) == outside and snapshot(out) == before


@pytest.mark.parametrize("name", ["train_log.jsonl", "config.json", "model.safetensors",
                                  "tokenizer.json", "val_sample.txt", "eval.json"])
def test_train_refuses_a_dangling_link_at_a_file_it_writes(capsys, tmp_path, name):
    out = tmp_path / "out"
    out.mkdir()
    (out / name).symlink_to(tmp_path / "outside")
    code, err = run_train(capsys, tmp_path, out, "--overwrite")
    assert code == 2 and "symbolic link" in err and not (tmp_path / "outside").exists()
    assert sorted(p.name for p in out.iterdir()) == [name]


def test_the_library_refuses_a_linked_best_folder(tmp_path, elsewhere):
    (tmp_path / "best.old").symlink_to(elsewhere, target_is_directory=True)
    outside = snapshot(elsewhere)
    settings = TrainSettings(steps=4, batch=2, warmup=1, eval_every=2, checkpoint_every=2,
                             log_every=2)
    with pytest.raises(ValueError, match="symbolic link"):
        train(tiny(), TEXT_IDS, TEXT_IDS, tmp_path, settings, progress=lambda line: None)
    assert snapshot(elsewhere) == outside


def test_the_library_refuses_a_dangling_log_link(tmp_path):
    (tmp_path / "train_log.jsonl").symlink_to(tmp_path.parent / "outside_log.jsonl")
    settings = TrainSettings(steps=2, batch=2, warmup=1, eval_every=2, log_every=1)
    with pytest.raises(ValueError, match="symbolic link"):
        train(tiny(), TEXT_IDS, TEXT_IDS, tmp_path, settings, progress=lambda line: None)
    assert not (tmp_path.parent / "outside_log.jsonl").exists()


def test_resume_without_a_checkpoint_writes_nothing(capsys, tmp_path):
    """Regression: --resume on a model folder without a checkpoint rewrote its val_sample.txt
    before it found there was nothing to resume."""
    out = tmp_path / "out"
    assert run_train(capsys, tmp_path, out)[0] == 0           # a finished run: no checkpoint
    before = snapshot(out)
    code, err = run_train(capsys, tmp_path, out, "--resume")
    assert code == 2 and "nothing to resume" in err and snapshot(out) == before
    code, err = run_train(capsys, tmp_path, tmp_path / "new", "--resume")
    assert code == 2 and "nothing to resume" in err and not (tmp_path / "new").exists()
