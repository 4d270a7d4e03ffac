"""Reading a file minillm did not write: a regular file of bounded size, or a clear ValueError.

Every file minillm reads (a model's weights, its config.json, tokenizer.json and the side files
beside them: tokenizer_config.json, vocab.bpe, generation_config.json, a download's record …)
goes through here first. What a hostile or broken folder can put under such a name, and what
happens to it::

    a link to /dev/zero, a FIFO, a socket      refused by type (fstat of the opened file):
    a directory                                 "… is a character device, not a regular file"
    /proc/self/pagemap, /proc/self/status       regular by type but not by nature: their size
                                                says 0 and reading gives more (or EINVAL), so
                                                "changed size while being read" / "cannot be read"
    a file larger than the caller's limit       refused unread, naming the size and the limit
    a 5,000-character name, a loop of links     ValueError with the system's reason, the name
                                                shortened to its ends

The file is opened with ``O_NONBLOCK`` (a FIFO would otherwise block the open until a writer
comes) and checked with ``os.fstat`` on the descriptor itself, so it cannot be swapped between
the check and the read. Example::

    text = read_bounded("model/config.json", 1 << 20, "a config file").decode("utf-8")
"""
from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"))


def shown(path) -> str:
    """The path for a message: whole when short, else its first 60 and last 30 characters."""
    text = os.fspath(path)
    return text if len(text) <= 100 else f"{text[:60]}…{text[-30:]} ({len(text):,} characters)"


def probe(path) -> os.stat_result | None:
    """What is at ``path`` (links followed): its stat, None when nothing is, or a ValueError when
    the system refuses the path itself (a name over the length limit, a loop of links, no
    permission) — ``Path.exists`` would raise a bare OSError there."""
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise ValueError(f"{shown(path)}: cannot be read ({exc.strerror})") from None


def open_regular(path):
    """Open ``path`` for binary reading, refused unless it is a regular file (checked on the
    opened descriptor). The caller closes it (``with open_regular(p) as f``)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise FileNotFoundError(f"{shown(path)}: no such file") from None
    except OSError as exc:
        raise ValueError(f"{shown(path)}: cannot be read ({exc.strerror})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = next((name for test, name in _KINDS if test(mode)), "a special file")
        raise ValueError(f"{shown(path)} is {kind}, not a regular file")
    return os.fdopen(fd, "rb")


def read_bounded(path, limit: int, what: str = "this file") -> bytes:
    """The whole content of the regular file ``path``, at most ``limit`` bytes, or a ValueError.

    subtle: the read asks for one byte more than the size ``fstat`` reported, so a file whose
    size lies (/proc, sysfs: size 0, content generated on read) is caught, and no read can run
    past the limit whatever the file does while it is read."""
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        if size > limit:
            raise ValueError(f"{shown(path)} is {size:,} bytes; {what} is limited to {limit:,}")
        try:
            data = f.read(size + 1)
        except OSError as exc:
            raise ValueError(f"{shown(path)}: cannot be read ({exc.strerror})") from None
    if len(data) != size:
        raise ValueError(f"{shown(path)} changed size while being read ({size:,} bytes, then "
                         f"{len(data):,}+): not a plain file (a /proc entry?) or being written")
    return data


def read_bounded_text(path, limit: int, what: str = "this file") -> str:
    """``read_bounded`` decoded as UTF-8, or a ValueError naming the file."""
    try:
        return read_bounded(path, limit, what).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{shown(Path(path))} is not UTF-8 text: {exc}") from None


def sha256_file(path) -> str:
    """The sha256 (hex) of the regular file ``path``, read 1 MB at a time (a file of any size)."""
    digest = hashlib.sha256()
    with open_regular(path) as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
