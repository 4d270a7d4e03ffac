"""An advisory lock on a folder: shared while a model is loaded from it, exclusive while a save
commits into it (commit.py says why).

The lock is ``flock(2)`` on a descriptor of the folder itself, so there is no lock file to leave
behind and a read-only folder can be locked too. It belongs to the open descriptor: the kernel
drops it when the descriptor is closed or its process ends, however it ends (``kill -9`` too),
so a lock that is held is held by a live process. Where ``flock`` is missing (Windows) or
refused (some network file systems answer ENOLCK or EBADF) nothing is locked and ``locked``
yields False: loads and saves then work as before, without the guarantee against a load racing
a save.

    with locked("weights/mine", exclusive=False):      # no commit starts or ends meanwhile
        ...read config.json and model.safetensors...
"""
from __future__ import annotations

import contextlib
import errno
import os
import time

try:
    import fcntl
except ImportError:                     # (Windows)
    fcntl = None

WAIT_SECONDS = 60.0      # the longest a load waits for a commit (a few renames) to end


@contextlib.contextmanager
def locked(folder, exclusive: bool, wait: float | None = None):
    """Hold ``folder``'s lock (shared or exclusive) for the block; yields whether it is held.

    ``wait``: None waits as long as it takes (a save waits for the loads in progress); a number
    of seconds raises TimeoutError after that long (a load never hangs behind a stopped save).
    A folder that does not exist is not locked (the caller reports what is missing)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        yield False
        return
    try:
        yield _acquire(fd, exclusive, wait, folder)
    finally:
        os.close(fd)                    # (releases the lock)


def _acquire(fd: int, exclusive: bool, wait: float | None, folder) -> bool:
    if fcntl is None:
        return False
    mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    deadline = None if wait is None else time.monotonic() + wait
    pause = 0.001
    while True:
        try:
            fcntl.flock(fd, mode if deadline is None else mode | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise TimeoutError(f"{folder}: a save into this folder has held it for "
                                   f"{wait:g} s (a stopped or hung process?); try again when "
                                   f"it has ended") from None
            time.sleep(pause)
            pause = min(2 * pause, 0.05)
        except OSError as exc:
            if exc.errno in (errno.ENOLCK, errno.EBADF, errno.EINVAL, errno.EOPNOTSUPP):
                return False            # a file system without flock: unlocked (see above)
            raise
