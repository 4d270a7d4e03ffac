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

A run's lock (``run_lock``) is another: one ``train`` or ``finetune`` at a time writes into an
OUT. It is an flock on OUT/.minillm-run.lock (a file: commits take the folder's own lock, which
the run must not hold against itself), taken without waiting — a second run is refused at once,
naming the first's pid — and released on any exit (``kill -9`` too: the kernel drops it, and the
stale file left behind is simply locked again by the next run). A clean exit removes the file.

    with run_lock("runs/tiny"):        # ValueError at once if another run holds it
        ...train, checkpoint, save...
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

RUN_LOCK = ".minillm-run.lock"    # OUT's run lock (never a user's file: check_out ignores it)
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


@contextlib.contextmanager
def run_lock(out):
    """Hold OUT for one run (see above); OUT is made if missing, and removed again on exit if
    the run left it empty. A ValueError at once if another live run holds it."""
    from pathlib import Path
    from minillm.io.atomic import O_NOFOLLOW, refuse_link
    out = Path(out)
    made = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    path = out / RUN_LOCK
    refuse_link(path)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | O_NOFOLLOW, 0o666)
        try:
            held = _acquire_now(fd, out, path)
            same = os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False              # (the run before removed it as we opened it: again)
        except BaseException:
            os.close(fd)
            raise
        if same or not held:
            break
        os.close(fd)
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode("ascii"))
    try:
        yield held
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
        os.close(fd)                   # (releases the lock)
        if made:
            with contextlib.suppress(OSError):
                out.rmdir()            # (only if empty: a refused run leaves no OUT behind)


def refuse_if_held(out) -> None:
    """The lock's ValueError if another live run holds OUT now (nothing is made or changed):
    a check that failed on what that run is writing (a checkpoint half swapped) says so instead."""
    from pathlib import Path
    from minillm.io.atomic import O_NOFOLLOW
    path = Path(out) / RUN_LOCK
    try:
        fd = os.open(path, os.O_RDONLY | O_NOFOLLOW)
    except OSError:
        return                              # no lock file: no run holds OUT
    try:
        if _acquire_now(fd, out, path):     # free: ours for a moment, given back
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _acquire_now(fd: int, out, path) -> bool:
    if fcntl is None:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        try:
            pid = path.read_text(encoding="ascii").strip() or "unknown"
        except (OSError, ValueError):
            pid = "unknown"
        raise ValueError(f"--out {out}: another minillm run (pid {pid}) is writing into it; "
                         f"wait for it to end or choose another --out") from None
    except OSError as exc:
        if exc.errno in (errno.ENOLCK, errno.EBADF, errno.EINVAL, errno.EOPNOTSUPP):
            return False            # a file system without flock: unlocked
        raise
