"""Writing a file so that a crash never leaves it half-written: temp file, fsync, rename.

    write the new bytes to  DIR/.NAME.XXXX.tmp   (same folder: same file system)
    flush + os.fsync                             (the bytes are on disk, not in a cache)
    os.replace(tmp, DIR/NAME)                    (atomic: readers see the old file or the new)
    fsync DIR                                    (the rename itself is on disk)

Whatever happens — ``kill -9``, a full disk (``OSError(ENOSPC)``), an exception in the caller —
``DIR/NAME`` is either the complete previous file or the complete new one, and the temporary
file is removed when the write fails.

Example::

    with atomic_open("model.safetensors", "wb") as f:
        f.write(data)                      # model.safetensors is untouched until this returns
    atomic_write_text("config.json", text)
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


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


def _umask() -> int:
    """The process's umask (read by setting it, then restoring it: there is no getter)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_open(path: str | Path, mode: str = "wb", encoding: str | None = None):
    """Open a temporary file beside ``path``; on a clean exit fsync it and rename it to ``path``.

    ``mode`` is "wb" or "w" (text, ``encoding`` default UTF-8). On an exception the temporary file
    is deleted and ``path`` is left exactly as it was.
    """
    if mode not in ("wb", "w"):
        raise ValueError(f"atomic_open writes whole files: mode must be 'wb' or 'w', got {mode!r}")
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # subtle: mkstemp makes the file private (0o600); a saved model should get the mode any
        # new file gets (0o666 less the umask), as `open(path, "w")` would have given it
        if hasattr(os, "fchmod"):
            os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, mode, encoding=(encoding or "utf-8") if mode == "w" else None) as f:
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
