"""A commit record (commit.py's step 3) that minillm can vouch for: written for one folder and
one pair of files, and checked by its content before anything of it is replayed.

The record is JSON: {"body": {"format", "folder": [device, inode], "pairs": [[temporary name,
name, inode, size], …]}, "sha256": of the body}. Replayed only if all of this holds: minillm's
format; the sha256 matches (a torn or hand-edited record is not); the folder is the one it was
written in (a record copied with its folder, or shipped inside a downloaded one, names another);
its names are exactly a pair minillm commits (``committed_pair``), with the temporary names
minillm's writer gives them; and each file is still its temporary file or already renamed,
recognised by inode and size. Otherwise a ValueError names the record.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

from minillm.io.atomic import is_temp_of
from minillm.io.bounded import read_bounded

FORMAT = "minillm-commit/2"
RECORD_LIMIT = 1 << 16             # bytes: a record names two files


def record_text(folder: Path, pairs: list) -> str:
    """The record of ``pairs`` ([temporary name, name, inode, size]) written in ``folder``."""
    body = {"format": FORMAT, "folder": _identity(folder), "pairs": pairs}
    return json.dumps({"body": body, "sha256": _digest(body)}) + "\n"


def committed_pair(names) -> bool:
    """Whether ``names`` is one of the pairs minillm commits together."""
    names = list(names)
    if sorted(names) in (["config.json", "model.safetensors"],                       # a model
                         ["adapter_config.json", "adapter_model.safetensors"]):      # LoRA (PEFT)
        return True
    other = [n for n in names if n != "tokenizer_config.json"]
    return len(names) == 2 and len(other) == 1 and other[0].endswith(".json") and \
        other[0] != "config.json" and not other[0].startswith(".") and \
        "/" not in other[0] and os.sep not in other[0]


def vouched(folder: Path, record: Path) -> list | None:
    """The [temporary name, name, inode, size] pairs of ``record``, or a ValueError; None when
    it is gone (another reader finished it meanwhile)."""
    def refused(why):
        return ValueError(f"{record} is not a commit record minillm wrote for this folder "
                          f"({why}): remove it (and check the files of {folder})")
    try:
        regular = stat.S_ISREG(os.lstat(record).st_mode)
        doc = json.loads(read_bounded(record, RECORD_LIMIT, "a commit record")) if regular else 0
    except FileNotFoundError:
        return None
    except ValueError as exc:                  # (json's errors are ValueErrors)
        raise refused(exc) from None
    if not regular:
        raise refused("not a regular file")
    if not isinstance(doc, dict) or sorted(doc) != ["body", "sha256"] or \
            not isinstance(doc["body"], dict) or doc["body"].get("format") != FORMAT:
        raise refused(f"not minillm's record format {FORMAT!r}")
    body = doc["body"]
    if doc["sha256"] != _digest(body):
        raise refused("its sha256 does not match its content")
    if body.get("folder") != _identity(folder):
        raise refused("it was written in another folder: a copy?")
    pairs = body.get("pairs")
    if not isinstance(pairs, list) or not all(
            isinstance(p, list) and len(p) == 4 and all(isinstance(s, str) for s in p[:2])
            and all(type(n) is int for n in p[2:]) for p in pairs):
        raise refused("not a list of [temporary name, name, inode, size]")
    if not committed_pair([name for _, name, _, _ in pairs]):
        raise refused(f"it names {[name for _, name, _, _ in pairs]}, not a pair minillm commits")
    for tmp, name, ino, size in pairs:
        if not is_temp_of(tmp, name):
            raise refused(f"{tmp!r} is not a temporary name minillm gives {name!r}")
        if not (is_file(folder / tmp, ino, size) or is_file(folder / name, ino, size)):
            raise refused(f"{name} is neither the new file it names nor its temporary file")
    return pairs


def _identity(folder: Path) -> list[int]:
    st = os.stat(folder)
    return [st.st_dev, st.st_ino]


def _digest(body) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode("utf-8")).hexdigest()


def is_file(path: Path, ino: int, size: int) -> bool:
    """Whether ``path`` is the regular file with this inode and size (a link never is)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_ino == ino and st.st_size == size
