"""io/commit.py's protocol: a load holds the folder while a save commits, finishes only what a
dead saver left, and replays only records minillm wrote for this folder (all or nothing)."""
import errno
import json
import os
import shutil
import subprocess
import sys

import pytest

from minillm import GPT
from minillm.io import commit, commit_record
from tests.conftest import REPO
from tests.io.test_atomic import same, small


def interrupted_save(folder, monkeypatch, model, at="config.json"):
    """Save ``model`` into ``folder`` as a kill would leave it: the record written, the renames
    done up to ``at`` (None: all of them, only the record's deletion left)."""
    real_replace, real_fsync = commit.os.replace, commit.fsync_dir
    def replace(src, dst):
        if os.path.basename(dst) == at:
            raise KeyboardInterrupt
        real_replace(src, dst)
    def fsync_dir(path):                     # (called once the renames are done)
        raise KeyboardInterrupt
    monkeypatch.setattr(commit.os, "replace", replace)
    if at is None:
        monkeypatch.setattr(commit, "fsync_dir", fsync_dir)
    with pytest.raises(KeyboardInterrupt):
        model.save_pretrained(folder)
    monkeypatch.setattr(commit.os, "replace", real_replace)
    monkeypatch.setattr(commit, "fsync_dir", real_fsync)
    return next(folder.glob(f"{commit.RECORD}*.json"))


def test_a_load_waits_for_a_live_savers_commit_and_leaves_its_record(tmp_path, monkeypatch):
    small(0).save_pretrained(tmp_path)
    record = interrupted_save(tmp_path, monkeypatch, small(1, d_model=64))
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import sys, time; sys.path.insert(0, {str(REPO)!r})\n"
         f"from minillm.io.folder_lock import locked\n"
         f"with locked({str(tmp_path)!r}, exclusive=True):\n"
         f"    print('held', flush=True); time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"     # (a saver between steps 2 and 5)
        monkeypatch.setattr(commit, "WAIT_SECONDS", 0.3)
        with pytest.raises(TimeoutError, match="a save into this folder has held it"):
            GPT.from_pretrained(tmp_path)
        assert record.exists()                           # the live saver's record: untouched
    finally:
        holder.kill()
        holder.wait()
    assert same(GPT.from_pretrained(tmp_path), small(1, d_model=64))
    assert not record.exists()                           # its owner gone: finished by the load


def test_a_read_only_folder_whose_renames_are_done_loads(tmp_path, monkeypatch):
    record = interrupted_save(tmp_path, monkeypatch, small(1), at=None)
    def read_only(self, *args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")
    monkeypatch.setattr(commit.Path, "unlink", read_only)
    assert same(GPT.from_pretrained(tmp_path), small(1))
    assert record.exists()


def test_a_read_only_folder_with_renames_left_is_refused_by_name(tmp_path, monkeypatch):
    small(0).save_pretrained(tmp_path)
    interrupted_save(tmp_path, monkeypatch, small(1))
    def read_only(src, dst):
        raise OSError(errno.EROFS, "Read-only file system")
    monkeypatch.setattr(commit.os, "replace", read_only)
    with pytest.raises(ValueError, match=r"a save was interrupted .*Read-only file system"):
        GPT.from_pretrained(tmp_path)


def test_a_record_copied_with_its_folder_is_not_replayed(tmp_path, monkeypatch):
    small(0).save_pretrained(tmp_path / "a")
    interrupted_save(tmp_path / "a", monkeypatch, small(1))
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    before = sorted(os.listdir(tmp_path / "b"))
    with pytest.raises(ValueError, match="written in another folder"):
        GPT.from_pretrained(tmp_path / "b")
    assert sorted(os.listdir(tmp_path / "b")) == before


def test_every_record_is_checked_before_any_is_replayed(tmp_path, monkeypatch):
    small(0).save_pretrained(tmp_path)
    interrupted_save(tmp_path, monkeypatch, small(1))
    (tmp_path / f"{commit.RECORD}ffffffffffff.json").write_text("{}")
    before = {n: (tmp_path / n).read_bytes() for n in os.listdir(tmp_path)}
    with pytest.raises(ValueError, match="ffffffffffff.json is not a commit record"):
        GPT.from_pretrained(tmp_path)
    assert {n: (tmp_path / n).read_bytes() for n in os.listdir(tmp_path)} == before


def test_a_hand_edited_record_is_refused(tmp_path, monkeypatch):
    small(0).save_pretrained(tmp_path)
    record = interrupted_save(tmp_path, monkeypatch, small(1))
    doc = json.loads(record.read_text())
    doc["body"]["pairs"][0][1] = "config.json"
    record.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="sha256 does not match"):
        GPT.from_pretrained(tmp_path)


def test_a_record_for_files_outside_the_pair_is_refused(tmp_path):
    small(0).save_pretrained(tmp_path)
    (tmp_path / ".notes.txt.tmp-0123456789ab").write_text("planted")
    st = os.stat(tmp_path / ".notes.txt.tmp-0123456789ab")
    body = {"format": commit_record.FORMAT, "folder": commit_record._identity(tmp_path),
            "pairs": [[".notes.txt.tmp-0123456789ab", "notes.txt", st.st_ino, st.st_size]]}
    (tmp_path / f"{commit.RECORD}0123456789ab.json").write_text(
        json.dumps({"body": body, "sha256": commit_record._digest(body)}))
    with pytest.raises(ValueError, match="not a pair minillm commits"):
        GPT.from_pretrained(tmp_path)
    assert not (tmp_path / "notes.txt").exists()


def test_a_file_not_named_like_a_record_is_left_alone(tmp_path):
    small(0).save_pretrained(tmp_path)
    (tmp_path / f"{commit.RECORD}evil.json").write_text('[["x", "config.json"]]')
    assert same(GPT.from_pretrained(tmp_path), small(0))
    assert (tmp_path / f"{commit.RECORD}evil.json").exists()


def test_a_huge_record_is_refused_unread(tmp_path, monkeypatch):
    small(0).save_pretrained(tmp_path)
    with open(tmp_path / f"{commit.RECORD}0123456789ab.json", "wb") as f:
        f.truncate(3 << 30)                              # (sparse: 3 GB, no disk used)
    with pytest.raises(ValueError, match="3,221,225,472 bytes; a commit record is limited to"):
        GPT.from_pretrained(tmp_path)
