"""A commit record (commit.py's step 3) that minillm can vouch for: written for one folder and
one pair of files, and checked by its content before anything of it is replayed.

The record is JSON: {"body": {"format", "folder": [device, inode], "pairs": [[temporary name,
name, inode, size], …]}, "sha256": of the body}. Replayed only if all of this holds: minillm's
format; the sha256 matches (a torn or hand-edited record is not); the folder is the one it was
written in (a record copied with its folder, or shipped inside a downloaded one, names another);
its names are exactly a pair minillm commits (``committed_pair``), with the temporary names
minillm's writer gives them; and each file is still its temporary file or already renamed,
recognised by inode and size. Otherwise a ValueError names the record. A model's save may also
list the stale weights files it removes ("remove": a sharded save removes ``model.safetensors``
and the shards of an earlier save with more of them; a one-file save the index and shards): only
names of a model's weights files (``shards.is_weights_name``), none of them one it writes.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

from minillm.io.atomic import is_temp_of
from minillm.io.bounded import read_bounded
from minillm.io.hf.shards import is_model_save, is_weights_name

FORMAT = "minillm-commit/2"
RECORD_LIMIT = 1 << 22             # bytes: a record names two files (a sharded model: its shards)


def record_text(folder: Path, pairs: list, remove: list | None = None) -> str:
    """The record of ``pairs`` ([temporary name, name, inode, size]) written in ``folder``
    (and of the stale weights files ``remove`` the commit deletes, if any)."""
    body = {"format": FORMAT, "folder": _identity(folder), "pairs": pairs}
    if remove:
        body["remove"] = list(remove)
    return json.dumps({"body": body, "sha256": _digest(body)}) + "\n"


def committed_pair(names) -> bool:
    """Whether ``names`` is one of the pairs minillm commits together."""
    names = list(names)
    if is_model_save(names) or \
            sorted(names) == ["adapter_config.json", "adapter_model.safetensors"]:   # LoRA (PEFT)
        return True
    other = [n for n in names if n != "tokenizer_config.json"]
    return len(names) == 2 and len(other) == 1 and other[0].endswith(".json") and \
        other[0] != "config.json" and not other[0].startswith(".") and \
        "/" not in other[0] and os.sep not in other[0]


def vouched(folder: Path, record: Path) -> tuple[list, list] | None:
    """(the [temporary name, name, inode, size] pairs of ``record``, the names it removes), or a
    ValueError; None when it is gone (another reader finished it meanwhile)."""
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
    remove, names = body.get("remove", []), [name for _, name, _, _ in pairs]
    if not isinstance(remove, list) or not all(isinstance(n, str) and is_weights_name(n)
                                               and n not in names for n in remove) \
            or (remove and not is_model_save(names)):
        raise refused("its \"remove\" is not a list of a model's stale weights files")
    return pairs, remove


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
