"""io/atomic.py and io/commit.py: a write is all or nothing (one file, or several together), the
file gets the mode any new file gets, and nothing is written through a link."""
import errno
import os
import stat
from pathlib import Path

import numpy as np
import pytest

from minillm import GPT, ModelConfig
from minillm.io import commit
from minillm.io.atomic import append_line, atomic_open, atomic_write_text


@pytest.mark.skipif(not hasattr(os, "fchmod"), reason="file modes are POSIX")
def test_atomic_writes_get_the_permissions_of_a_plain_open(tmp_path):
    """Regression: mkstemp's 0o600 survived the rename, so a trained model's config.json was
    -rw------- where `open(path, "w")` gives 0o666 less the umask (-rw-r--r-- under 022)."""
    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "config.json", "{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "config.json").stat().st_mode) == 0o644


def test_a_failed_write_leaves_the_previous_file_and_no_temporary(tmp_path):
    path = tmp_path / "model.safetensors"
    path.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic_open(path) as f:
        f.write(b"half of the new")
        raise RuntimeError("disk full")
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["model.safetensors"]


def test_atomic_open_refuses_a_link_and_leaves_its_target(tmp_path):
    (tmp_path / "target").write_text("theirs")
    (tmp_path / "config.json").symlink_to(tmp_path / "target")
    with pytest.raises(ValueError, match="symbolic link"):
        atomic_write_text(tmp_path / "config.json", "{}")
    assert (tmp_path / "target").read_text() == "theirs" and (tmp_path / "config.json").is_symlink()


def test_a_killed_saves_temp_files_are_removed_by_the_next_save(tmp_path):
    (tmp_path / ".config.json.tmp-0123456789ab").write_text("half")         # minillm's name
    users = [".config.json.backup.tmp", ".config.json.k2j3h4g5.tmp", ".config.json.tmp-mine"]
    for name in users:                                                       # a user's files
        (tmp_path / name).write_text("theirs")
    (tmp_path / ".config.json.tmp-abcdefabcdef").symlink_to(tmp_path / "kept")   # a link
    (tmp_path / "kept").write_text("x")
    atomic_write_text(tmp_path / "config.json", "{}")
    assert sorted(os.listdir(tmp_path)) == sorted(
        [*users, ".config.json.tmp-abcdefabcdef", "config.json", "kept"])


def test_a_save_of_a_model_leaves_a_users_look_alike_temp_files(tmp_path):
    users = [".config.json.backup.tmp", ".model.safetensors.partial.tmp"]
    for name in users:
        (tmp_path / name).write_text("theirs")
    small(0).save_pretrained(tmp_path)
    small(1).save_pretrained(tmp_path)
    assert sorted(os.listdir(tmp_path)) == sorted([*users, "config.json", "model.safetensors"])
    assert all((tmp_path / name).read_text() == "theirs" for name in users)


def test_append_line_refuses_a_dangling_link(tmp_path):
    (tmp_path / "log.jsonl").symlink_to(tmp_path / "outside.jsonl")
    with pytest.raises(ValueError, match="symbolic link"):
        append_line(tmp_path / "log.jsonl", "{}")
    assert not (tmp_path / "outside.jsonl").exists()
    append_line(tmp_path / "real.jsonl", "1")
    append_line(tmp_path / "real.jsonl", "2")
    assert (tmp_path / "real.jsonl").read_text() == "1\n2\n"


# ---- several files as one (commit.py) -------------------------------------------------------
def small(seed, d_model=32):
    return GPT(ModelConfig(vocab_size=26, n_ctx=16, d_model=d_model, n_heads=2, n_layers=1),
               seed=seed)


def same(a, b):
    return all(np.array_equal(x, b.params.named()[k]) for k, x in a.params.named().items())


def test_save_pretrained_that_fails_midway_keeps_the_old_model(tmp_path, monkeypatch):
    """Regression: config.json was renamed into place before model.safetensors was written, so a
    failure (or a kill) left the new shape's config beside the old weights: neither loaded."""
    old = small(0)
    old.save_pretrained(tmp_path)
    import minillm.io.safetensors as st
    def disk_full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(st, "open_new", disk_full)     # (the commit writes it plainly)
    with pytest.raises(OSError):
        small(1, d_model=64).save_pretrained(tmp_path)
    monkeypatch.undo()
    assert same(GPT.from_pretrained(tmp_path), old)
    assert sorted(os.listdir(tmp_path)) == ["config.json", "model.safetensors"]


def test_an_interrupted_commit_is_finished_by_the_next_load(tmp_path, monkeypatch):
    small(0).save_pretrained(tmp_path)
    new = small(1, d_model=64)
    def killed_after_one_rename(src, dst):    # model.safetensors is renamed, then config.json
        if os.path.basename(dst) == "config.json":
            raise KeyboardInterrupt              # (what a kill at that moment leaves behind)
        real_replace(src, dst)
    real_replace = commit.os.replace
    monkeypatch.setattr(commit.os, "replace", killed_after_one_rename)
    with pytest.raises(KeyboardInterrupt):
        new.save_pretrained(tmp_path)
    monkeypatch.undo()
    assert any(n.startswith(commit.RECORD) for n in os.listdir(tmp_path))   # the commit record
    assert same(GPT.from_pretrained(tmp_path), new)                      # finished on load
    assert sorted(os.listdir(tmp_path)) == ["config.json", "model.safetensors"]


def test_a_commit_record_that_names_other_files_is_refused(tmp_path):
    (tmp_path / f"{commit.RECORD}0123456789ab.json").write_text(
        '[["../../etc/passwd", "config.json"]]')
    with pytest.raises(ValueError, match="not a commit record minillm wrote"):
        commit.finish_interrupted(tmp_path)


def test_atomic_files_with_a_file_left_unwritten_replaces_nothing(tmp_path):
    (tmp_path / "config.json").write_text("old")
    with pytest.raises(ValueError, match="was not written"):
        with commit.atomic_files(tmp_path, ("model.safetensors", "config.json")) as tmp:
            tmp["config.json"].write_text("new")
    assert os.listdir(tmp_path) == ["config.json"] and (tmp_path / "config.json").read_text() == "old"


def test_atomic_files_commits_only_a_model_or_a_tokenizer_pair(tmp_path):
    with pytest.raises(ValueError, match="not a pair minillm commits"):
        with commit.atomic_files(tmp_path, ("notes.txt", "config.json")):
            pass


def test_save_pretrained_writes_each_file_once_not_a_temp_of_a_temp(tmp_path, monkeypatch):
    """Regression: the commit's temporary files were written with atomic_open again (a temporary
    file of the temporary file: a second fsync and rename for each). Now three renames: the
    commit record into place, then each temporary file to its name."""
    renames = []
    def replace(src, dst):
        renames.append((Path(src).name, Path(dst).name))
        real_replace(src, dst)
    real_replace = os.replace
    monkeypatch.setattr(os, "replace", replace)
    small(0).save_pretrained(tmp_path)
    monkeypatch.undo()
    assert sorted(dst for _, dst in renames if not dst.startswith(commit.RECORD)) == \
        ["config.json", "model.safetensors"] and len(renames) == 3
    assert all(src.startswith(f".{dst}{commit.TEMP}") for src, dst in renames)
