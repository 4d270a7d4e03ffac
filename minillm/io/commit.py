"""Several files of one folder replaced together: all of the new ones, or none (atomic.py's rule
for a model folder's config.json + model.safetensors, or a tokenizer's two files).

A save (``atomic_files``)::

    1. write each new file to DIR/.NAME.tmp-<12 hex> and fsync it     (the old files untouched;
       the caller creates and writes it plainly, O_EXCL: ``open_new``, ``write_safetensors``)
    2. take DIR's lock, exclusive (folder_lock.py), waiting for the loads in progress
    3. write the commit record DIR/.minillm-commit-<12 hex>.json       <- the commit point
    4. rename each temporary file to its name; delete a model's stale weights files; fsync DIR
    5. delete the record; release the lock

A load (``reading``) holds DIR's lock, shared, while it reads both files. Why this is enough:

- A reader never sees a mix. Steps 3-5 happen under the exclusive lock, so while a reader holds
  the shared one no commit starts or ends: it reads the old pair or the new pair, whole. (Two
  files cannot be replaced by one rename, so without the lock a reader could open config.json
  before a commit and model.safetensors after it.)
- A reader never removes a record a live saver owns. The kernel drops a lock when its process
  ends (``kill -9`` too). A record a reader finds under its lock therefore belongs to a saver
  that died between steps 3 and 5: only then does the reader finish it (steps 4-5 again,
  idempotent: each rename is done once, by whoever comes first; a second reader finishing the
  same record at the same time finds the temporary file gone and the name already the new
  file). A saver is never disturbed, so it never dies because a reader helped.
- A read-only folder loads when its interrupted commit needs no more renames: the pair in place
  is the new one, whole, and only the record's deletion (impossible there) is left. A commit
  with renames left is refused there, naming the folder: its two files do not match yet.
- A reader waits at most ``WAIT_SECONDS`` for a commit (a few renames); a save waits for loads.

Records minillm vouches for (commit_record.py): every record in the folder is checked before any
is replayed (all or nothing), and replayed only if it was written by minillm, in this folder, for
a pair minillm commits, and its files are still the ones it wrote; another name than
``.minillm-commit-<12 hex>.json`` is not a record and is left alone.

A model's save names its weights files (``config.json`` + ``model.safetensors``, or + the
index and shards 1 … n of n: hf/shards.py); the weights files of an earlier save it does not
replace (``model.safetensors`` under a sharded save, an index and shards under a one-file save,
shards 4 and 5 of an earlier 5 under a save of 3) are stale: the record lists them and step 4
deletes them, so the folder never holds two checkpoints (which a load refuses).

Temporary files a killed save left (steps 1-2) are removed by the next save of those names, and
only names minillm's writer creates (``.NAME.tmp-`` + 12 hex digits, atomic.py): never a user's
``.config.json.backup.tmp``.

    with atomic_files("weights/mine", ("model.safetensors", "config.json")) as tmp:
        write_safetensors(tmp["model.safetensors"], tensors)
        write_new_text(tmp["config.json"], text)     # both appear together when the block ends
"""
from __future__ import annotations

import contextlib
import os
import re
import stat
import threading
from pathlib import Path

from minillm.io.atomic import (RECORD, TEMP, atomic_write_text, fsync_dir, refuse_link,
                               refuse_linked_folder, remove_temps, temp_name)
from minillm.io.commit_record import committed_pair, is_file, record_text, vouched
from minillm.io.folder_lock import WAIT_SECONDS, locked
from minillm.io.hf.shards import is_model_save, is_weights_name

_RECORD_NAME = re.compile(rf"{re.escape(RECORD)}[0-9a-f]{{12}}\.json")


@contextlib.contextmanager
def atomic_files(folder: str | Path, names: tuple[str, ...]):
    """Yield {name: temporary path} for the caller to create and write (``open_new``: exclusive,
    no temporary file of its own); on a clean exit each is fsynced and every file replaces
    ``folder/name`` together (the steps above). On an exception nothing is replaced."""
    folder = Path(folder)
    if not committed_pair(names):
        raise ValueError(f"{names} is not a pair minillm commits together: a model's "
                         f"('model.safetensors', 'config.json'), a LoRA adapter's "
                         f"('adapter_model.safetensors', 'adapter_config.json') or a "
                         f"tokenizer's ('<name>.json', 'tokenizer_config.json')")
    refuse_linked_folder(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model = is_model_save(names)
    for name in (*names, *(_weights_in(folder) if model else ())):
        refuse_link(folder / name)
    with locked(folder, exclusive=True):       # (finishing a dead saver's commit, cleaning up)
        _finish(folder)
        remove_temps(folder, (*names, *(_weights_in(folder, temps=True) if model else ())))
        remove_temps(folder, _uncommitted_records(folder))     # a kill while writing a record
    tmp = {name: folder / temp_name(name) for name in names}
    record = folder / f"{RECORD}{os.urandom(6).hex()}.json"
    try:
        yield tmp
        pairs = [[path.name, name, *_written(folder / name, path)] for name, path in tmp.items()]
        with locked(folder, exclusive=True):   # steps 2-5
            stale = sorted(set(_weights_in(folder)) - set(names)) if model else []
            atomic_write_text(record, record_text(folder, pairs, stale))
            _replay(folder, record, pairs, stale)
    except BaseException:
        if not record.exists():                # (once it is written, its commit is finished
            for path in tmp.values():          #  by the next load or save, never undone)
                with contextlib.suppress(OSError):
                    os.unlink(path)
        raise


@contextlib.contextmanager
def reading(folder: str | Path):
    """Hold ``folder`` for a load: no commit into it starts or ends meanwhile, and the commits
    dead savers left are finished first (or refused, see above).

    Held once per thread: a ``reading`` of a folder this thread already holds takes nothing
    more (``load_model`` holds the folder for the model and its tokenizer; ``from_pretrained``
    and ``read_checkpoint_config``, called inside it, also hold it when called alone)."""
    key = _identity(folder)
    if key is not None and key in _held():
        yield                            # (the outer hold already keeps commits out)
        return
    with locked(folder, exclusive=False, wait=WAIT_SECONDS) as held:
        _finish(Path(folder))
        if held and key is not None:
            _held().add(key)
        try:
            yield
        finally:
            _held().discard(key)


_HOLDS = threading.local()


def _held() -> set:
    """The folders (device, inode) this thread holds for a load."""
    if not hasattr(_HOLDS, "folders"):
        _HOLDS.folders = set()
    return _HOLDS.folders


def _identity(folder) -> tuple[int, int] | None:
    """(device, inode) of the folder, whatever path names it; None if there is none."""
    try:
        found = os.stat(folder)
    except (OSError, ValueError):
        return None
    return found.st_dev, found.st_ino


def finish_interrupted(folder: str | Path) -> None:
    """Complete every commit a crash interrupted in ``folder`` (``reading`` for no read)."""
    with reading(folder):
        pass


def _finish(folder: Path) -> None:
    """Finish every record in ``folder`` (the caller holds its lock: their savers are dead)."""
    try:
        entries = sorted(e.name for e in os.scandir(folder) if _RECORD_NAME.fullmatch(e.name))
    except (FileNotFoundError, NotADirectoryError):
        return
    checked = [(folder / name, vouched(folder, folder / name)) for name in entries]
    for record, found in checked:                # (every record checked before any is replayed)
        if found is not None:
            _replay(folder, record, *found)


def _replay(folder: Path, record: Path, pairs: list, stale: list = ()) -> None:
    """Steps 4 and 5: rename each temporary file still there, delete the stale weights files
    (regular files only: a link is never followed nor removed), then delete the record."""
    for tmp, name, ino, size in pairs:
        if is_file(folder / tmp, ino, size):
            try:
                os.replace(folder / tmp, folder / name)
            except FileNotFoundError:          # (another reader finished this rename)
                pass
            except OSError as exc:
                raise ValueError(f"{folder}: a save was interrupted before its files were in "
                                 f"place, and finishing it failed ({exc.strerror}): make the "
                                 f"folder writable and load it again") from None
    for name in stale:
        if _regular(folder / name):
            try:
                os.unlink(folder / name)
            except FileNotFoundError:          # (another reader removed it)
                pass
            except OSError as exc:
                raise ValueError(f"{folder}: a save was interrupted before the stale {name} "
                                 f"was removed, and removing it failed ({exc.strerror}): make "
                                 f"the folder writable and load it again") from None
    fsync_dir(folder)
    try:
        record.unlink()
    except FileNotFoundError:
        pass
    except OSError:                            # read-only: the new pair is whole, in place
        return
    fsync_dir(folder)


def _written(name: Path, path: Path) -> list[int]:
    """[inode, size] of the temporary file ``path`` after an fsync (it must have been written)."""
    if not path.is_file() or path.is_symlink():
        raise ValueError(f"{name} was not written (no {path.name})")
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        st = os.fstat(fd)
    finally:
        os.close(fd)
    return [st.st_ino, st.st_size]


def _uncommitted_records(folder: Path) -> list[str]:
    """The names of commit records whose write a kill interrupted (their temp files remain)."""
    return sorted({e.name[1:e.name.index(TEMP)] for e in os.scandir(folder)
                   if e.name.startswith("." + RECORD) and TEMP in e.name})


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _weights_in(folder: Path, temps: bool = False) -> list[str]:
    """The model weights files (hf/shards.py's names) in ``folder``; with ``temps``, the names
    that temporary files in it (``.NAME.tmp-<12 hex>``, a killed save's) are of."""
    try:
        entries = [e.name for e in os.scandir(folder)]
    except (FileNotFoundError, NotADirectoryError):
        return []
    if temps:
        entries = [e[1:e.index(TEMP)] for e in entries if e.startswith(".") and TEMP in e]
    return sorted({e for e in entries if is_weights_name(e)})
