"""Several files of one folder replaced together: all of the new ones, or none (atomic.py's rule
for a model folder's config.json + model.safetensors, or a tokenizer's two files).

    1. write each new file to DIR/.NAME.tmp-<random> and fsync it     (the old files untouched)
       (the caller creates and writes it plainly, O_EXCL: ``open_new``, ``write_safetensors``)
    2. write the commit record DIR/.minillm-commit-<random>.json:      <- the commit point
       [[temp name, final name], …], renamed into place like any file
    3. rename each temp file to its final name; fsync DIR
    4. delete the commit record

Crash windows: a kill before 2 leaves the old files and temp litter (removed by the next save of
those names); a kill after 2 leaves a record that ``finish_interrupted`` completes (step 3 again,
idempotent) — the next save into DIR and every model load (``load_hf_checkpoint``) call it first,
so no reader sees a new config.json beside old weights. The alternative, writing a whole new
folder beside DIR and swapping folders, would have to carry over everything else DIR holds (a
training run keeps its log and checkpoints there).

    with atomic_files("weights/mine", ("model.safetensors", "config.json")) as tmp:
        write_safetensors(tmp["model.safetensors"], tensors)
        write_new_text(tmp["config.json"], text)     # both appear together when the block ends
"""
from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from minillm.io.atomic import (RECORD, TEMP, atomic_write_text, fsync_dir, is_temp_of,
                               refuse_link, remove_temps, temp_name)


@contextlib.contextmanager
def atomic_files(folder: str | Path, names: tuple[str, ...]):
    """Yield {name: temporary path} for the caller to create and write (``open_new``: exclusive,
    no temporary file of its own); on a clean exit each is fsynced and every file replaces
    ``folder/name`` together (the steps above). On an exception nothing is replaced."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    finish_interrupted(folder)
    for name in names:
        _check_name(folder, name)
        refuse_link(folder / name)
    remove_temps(folder, names)
    remove_temps(folder, _uncommitted_records(folder))     # a kill while writing a record
    tmp = {name: folder / temp_name(name) for name in names}
    try:
        yield tmp
        for name, path in tmp.items():
            if not path.is_file() or path.is_symlink():
                raise ValueError(f"{folder / name} was not written (no {path.name})")
            _fsync_file(path)
        record = folder / f"{RECORD}{os.urandom(6).hex()}.json"
        atomic_write_text(record, json.dumps([[p.name, n] for n, p in tmp.items()]) + "\n")
    except BaseException:
        for path in tmp.values():
            with contextlib.suppress(OSError):
                os.unlink(path)
        raise
    _replay(record)


def finish_interrupted(folder: str | Path) -> None:
    """Complete every commit a crash interrupted in ``folder`` (steps 3 and 4 above)."""
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            if entry.name.startswith(RECORD) and entry.name.endswith(".json"):
                if not entry.is_file(follow_symlinks=False):
                    raise ValueError(f"{entry.path} is not a commit record minillm wrote (not a "
                                     f"regular file): remove it")
                _replay(Path(entry.path))


def _replay(record: Path) -> None:
    """Rename each temp file of ``record`` that is still there, then delete the record."""
    folder = record.parent
    try:
        pairs = json.loads(record.read_text(encoding="utf-8"))
        if not all(isinstance(p, list) and len(p) == 2 and all(isinstance(s, str) for s in p)
                   for p in pairs):
            raise ValueError("not a list of [temp name, name] pairs")
        for tmp, name in pairs:
            _check_name(folder, name)
            if not is_temp_of(tmp, name) or "/" in tmp or os.sep in tmp:
                raise ValueError(f"{tmp!r} is not a temporary name of {name!r}")
    except (ValueError, TypeError) as exc:      # (json's errors are ValueErrors)
        raise ValueError(f"{record} is not a commit record minillm wrote ({exc}): remove it "
                         f"(and check the files of {folder})") from None
    for tmp, name in pairs:
        if os.path.lexists(folder / tmp):
            refuse_link(folder / tmp)
            refuse_link(folder / name)
            with contextlib.suppress(FileNotFoundError):   # (a reader finished it meanwhile)
                os.replace(folder / tmp, folder / name)
    fsync_dir(folder)
    with contextlib.suppress(FileNotFoundError):
        record.unlink()
    fsync_dir(folder)


def _uncommitted_records(folder: Path) -> list[str]:
    """The names of commit records whose write a kill interrupted (their temp files remain)."""
    return sorted({e.name[1:e.name.index(TEMP)] for e in os.scandir(folder)
                   if e.name.startswith("." + RECORD) and TEMP in e.name})


def _check_name(folder: Path, name: str) -> None:
    if not name or name in (".", "..") or "/" in name or os.sep in name or name.startswith("."):
        raise ValueError(f"{name!r} is not a file name for {folder}: a plain name is needed")


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
