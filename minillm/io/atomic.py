"""The one rule for every file minillm writes: a crash never leaves it half-written, and nothing
is written, renamed or deleted through a symbolic link minillm did not make.

One file (``atomic_open``)::

    refuse DIR/NAME if it is a symlink           (os.lstat: a planted link is never replaced)
    refuse DIR if it, or a folder it would create, is a symlink   (out_guard.py's link rule)
    delete DIR/.NAME.tmp-<12 hex> a killed save left (regular files with minillm's names only)
    write the new bytes to  DIR/.NAME.tmp-<random>   (same folder: same file system; created
                                                      with O_EXCL | O_NOFOLLOW)
    flush + os.fsync                             (the bytes are on disk, not in a cache)
    os.replace(tmp, DIR/NAME)                    (atomic: readers see the old file or the new)
    fsync DIR                                    (the rename itself is on disk)

Several files that must match (``atomic_files``, commit.py: config.json + model.safetensors, a
tokenizer's two files) are written the same way, then committed together by a record renamed into
place last; a reader or the next save finishes an interrupted commit. A checkpoint folder is
written whole beside the live one and swapped in by renames (train/checkpoint.py). The training
log is the one file that is appended to (``append_line``: O_APPEND | O_NOFOLLOW, a link refused).

Whatever happens — ``kill -9``, a full disk (``OSError(ENOSPC)``), an exception in the caller —
``DIR/NAME`` is either the complete previous file or the complete new one, and the temporary
file is removed when the write fails (or, after a kill, by the next save of that name).
Subtle: two processes saving the same file at once is not supported (one removes the other's
temporary file, which then fails); the last complete save wins.

Example::

    with atomic_open("model.safetensors", "wb") as f:
        f.write(data)                      # model.safetensors is untouched until this returns
    atomic_write_text("config.json", text)
"""
from __future__ import annotations

import contextlib
import os
import re
import stat
from pathlib import Path

O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)    # (absent on Windows: the lstat checks remain)
TEMP = ".tmp-"                                # DIR/.NAME.tmp-<12 hex digits>: minillm's own names
RECORD = ".minillm-commit-"                   # DIR/.minillm-commit-<12 hex digits>.json (commit.py)
_HEX12 = re.compile("[0-9a-f]{12}")
_OWNED = re.compile(rf"\..+{re.escape(TEMP)}[0-9a-f]{{12}}|{re.escape(RECORD)}[0-9a-f]{{12}}\.json")


def refuse_link(path: str | Path) -> None:
    """ValueError if ``path`` is a symbolic link (minillm never writes or deletes through one)."""
    path = Path(path)
    if path.is_symlink():
        raise ValueError(f"{path} is a symbolic link (to {os.readlink(path)}): minillm does not "
                         f"write, rename or delete through links; remove the link or choose "
                         f"another path")


def refuse_linked_folder(folder: str | Path) -> None:
    """ValueError if ``folder``, or a missing folder on the way to it, is a symbolic link: a
    write into it would land wherever the link points (out_guard.py's link rule)."""
    from minillm.io.out_guard import refuse_linked_path
    refuse_linked_path(folder, "the folder")


def temp_name(name: str) -> str:
    """A fresh temporary name beside ``name``: ``.NAME.tmp-<random>``."""
    return f".{name}{TEMP}{os.urandom(6).hex()}"


def is_temp_of(entry: str, name: str) -> bool:
    """Whether ``entry`` is a temporary name minillm's writer gives ``name``: exactly
    ``.NAME.tmp-<12 hex digits>`` (``temp_name``). subtle: nothing looser, since what matches is
    deleted as a killed save's litter, and a user's ``.config.json.backup.tmp`` is theirs."""
    prefix = f".{name}{TEMP}"
    return entry.startswith(prefix) and _HEX12.fullmatch(entry[len(prefix):]) is not None


def owned_temp(entry: str) -> bool:
    """Whether ``entry`` has one of the names minillm gives its temporary files and records."""
    return _OWNED.fullmatch(entry) is not None


def remove_temps(folder: str | Path, names) -> None:
    """Delete what killed saves of ``names`` left in ``folder``: regular files with minillm's
    temporary names, never a link or a folder."""
    folder = Path(folder)
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        for entry in os.scandir(folder):
            if entry.is_file(follow_symlinks=False) and any(is_temp_of(entry.name, n)
                                                            for n in names):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)


def fsync_dir(path: str | Path) -> None:
    """Make a rename or a new entry in the directory ``path`` durable (no-op where unsupported)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:                 # some file systems refuse fsync on a directory
        pass
    finally:
        os.close(fd)


def create_new(path: str | Path) -> int:
    """A descriptor of a new file (O_EXCL: never an existing file or a link's target). Its mode
    is the one any new file gets, 0o666 less the umask."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | getattr(os, "O_BINARY", 0)
    return os.open(path, flags, 0o666)


@contextlib.contextmanager
def open_new(path: str | Path, mode: str = "wb", encoding: str | None = None):
    """Create ``path`` (it must not exist: ``create_new``) and open it to write, plainly: no
    temporary file, no fsync, no rename. The core ``atomic_open`` wraps, and what the writers of
    an ``atomic_files`` commit use on the temporary paths it hands out (the commit fsyncs and
    renames them). ``mode`` is "wb" or "w" (text, ``encoding`` default UTF-8)."""
    if mode not in ("wb", "w"):
        raise ValueError(f"minillm writes whole files: mode must be 'wb' or 'w', got {mode!r}")
    fd = create_new(path)
    with os.fdopen(fd, mode, encoding=(encoding or "utf-8") if mode == "w" else None) as f:
        yield f


@contextlib.contextmanager
def atomic_open(path: str | Path, mode: str = "wb", encoding: str | None = None):
    """Open a temporary file beside ``path``; on a clean exit fsync it and rename it to ``path``.

    ``mode`` is "wb" or "w" (text, ``encoding`` default UTF-8). On an exception the temporary file
    is deleted and ``path`` is left exactly as it was. A ``path`` that is a link is refused.
    """
    path = Path(path)
    refuse_link(path)
    refuse_linked_folder(path.parent)
    remove_temps(path.parent, (path.name,))
    tmp = path.with_name(temp_name(path.name))
    try:
        with open_new(tmp, mode, encoding) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def atomic_write_text(path: str | Path, text: str) -> None:
    with atomic_open(path, "w") as f:
        f.write(text)


def write_new_text(path: str | Path, text: str) -> None:
    """``text`` into the new file ``path`` (``open_new``: an ``atomic_files`` temporary path)."""
    with open_new(path, "w") as f:
        f.write(text)


def append_line(path: str | Path, line: str) -> None:
    """Append one line (``line`` + newline) to ``path`` and fsync it. The file is created if
    missing; a link (even a dangling one) or anything but a regular file is refused."""
    path = Path(path)
    refuse_link(path)
    if path.exists() and not path.is_file():
        raise ValueError(f"{path} is not a regular file: minillm appends its log only to one")
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | O_NOFOLLOW
    fd = os.open(path, flags, 0o666)         # (O_NOFOLLOW: a link planted since is refused too)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{path} is not a regular file: minillm appends its log only to one")
        data = (line + "\n").encode("utf-8")
        while data:
            data = data[os.write(fd, data):]
        os.fsync(fd)
    finally:
        os.close(fd)
