"""The text a command reads from the user: a file named on the command line, or standard input
("-" or no file) — bounded by size and type, like every file minillm reads (io/bounded.py).

    --data (train)                      DATA_LIMIT  (256 MiB: tokenised whole, then trained on)
    count FILE / stdin, tokenize stdin  TEXT_LIMIT  (64 MiB)
    --prompt-file (generate)            TEXT_LIMIT

A larger input is refused before it is read, naming the file (or standard input) and the limit;
a device, FIFO or folder under the name is refused by its type ("/dev/zero is a character
device, not a regular file"), never reported missing. Example::

    text = read_text("corpus.txt", TEXT_LIMIT, "count")
"""
from __future__ import annotations

import sys

from minillm.io.bounded import read_bounded

TEXT_LIMIT = 64 << 20
DATA_LIMIT = 256 << 20


def read_stdin(what: str, limit: int = TEXT_LIMIT, errors: str = "strict") -> str:
    """All of standard input (at most ``limit`` bytes), decoded as UTF-8; at a terminal, first a
    line on stderr saying what is awaited (a command waiting silently looks hung)."""
    if sys.stdin.isatty():
        print(f"minillm: reading {what} from standard input; end it with Ctrl-D (Ctrl-Z Enter "
              f"on Windows)", file=sys.stderr)
    stream = getattr(sys.stdin, "buffer", sys.stdin)       # (a test's StringIO has no buffer)
    data = stream.read(limit + 1)                           # subtle: one more, to see "larger"
    if len(data) > limit:
        raise ValueError(f"standard input holds more than {limit:,} bytes; {what} is limited to "
                         f"{limit:,}: pass a smaller text")
    return data if isinstance(data, str) else _decoded(data, "standard input", errors)


def read_text(name: str, limit: int, flag: str = "", errors: str = "strict") -> str:
    """The text of the file ``name`` (standard input for "-"), at most ``limit`` bytes; errors
    begin with ``flag`` ("--data") when the file came with one."""
    if name == "-":
        return read_stdin(f"{flag or 'the text'}", limit, errors)
    prefix = f"{flag} " if flag else ""
    try:
        data = read_bounded(name, limit, flag or "a text to read")
    except FileNotFoundError:
        raise FileNotFoundError(f"{prefix}{name}: no such file") from None
    except ValueError as exc:
        raise ValueError(f"{prefix}{exc}") from None
    return _decoded(data, f"{prefix}{name}", errors)


def _decoded(data: bytes, source: str, errors: str) -> str:
    try:
        return data.decode("utf-8", errors=errors)
    except UnicodeDecodeError as exc:
        raise ValueError(f"{source}: not UTF-8 text ({exc})") from None
