"""The training log, ``OUT/train_log.jsonl``: one JSON record per line, each with its ``step``.

It is the one file minillm appends to (``io/atomic.append_line``: O_APPEND | O_NOFOLLOW, fsynced,
a link refused). A checkpoint records how many records the log held when it was written and the
sha256 of exactly those lines (``log_digest``); a resumed run checks both (``check_log``) and cuts
the log back to them (``truncate_log``), so the log never holds a record twice or loses one.

    >>> append_record(out / LOG_NAME, {"step": 10, "loss": 3.2})
    >>> log_records(out / LOG_NAME)[-1]["step"]
    10
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from minillm.io.atomic import append_line, atomic_write_text, refuse_link

LOG_NAME = "train_log.jsonl"


def append_record(path: Path, record: dict) -> None:
    append_line(path, json.dumps(record))


def _lines(path: Path) -> list[str]:
    """The log's complete lines (each with its newline). A last line without its newline is a
    write a crash interrupted: it is not a record."""
    refuse_link(path)
    if not path.exists():
        return []
    if not path.is_file():
        raise ValueError(f"{path} is not a regular file: it cannot be the training log")
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    return lines if not lines or lines[-1].endswith("\n") else lines[:-1]


def log_records(path: Path) -> list[dict]:
    """The log's records; ValueError naming the line when one is not a record with a step."""
    records = []
    for n, line in enumerate(_lines(path), 1):
        try:
            record = json.loads(line)
            if not isinstance(record, dict) or type(record.get("step")) is not int:
                raise ValueError("not an object with an integer 'step'")
        except ValueError as exc:
            raise ValueError(f"{path}:{n}: not a training log record ({exc}): {line[:60]!r}") from None
        records.append(record)
    return records


def log_digest(path: Path, n: int) -> str:
    """sha256 of the log's first ``n`` lines, exactly as written."""
    return hashlib.sha256("".join(_lines(path)[:n]).encode("utf-8")).hexdigest()


def check_log(path: Path, n: int, step: int, digest: str) -> None:
    """The checkpoint of ``step`` was written after the log's first ``n`` records, whose sha256
    was ``digest``: check it."""
    records = log_records(path)
    if len(records) < n or (n and records[n - 1]["step"] > step):
        raise ValueError(f"{path} and the checkpoint of step {step} disagree (the log has "
                         f"{len(records)} records, the checkpoint expects at least {n} up to "
                         f"step {step}); restore the log or start a new run")
    if log_digest(path, n) != digest:
        raise ValueError(f"{path}: its first {n} records differ from those the checkpoint of "
                         f"step {step} saw (sha256 mismatch); restore the log or start a new run")


def truncate_log(path: Path, n: int) -> None:
    """Keep the log's first ``n`` records (a resumed run rewrites what came after)."""
    lines = _lines(path)
    if path.exists() and "".join(lines[:n]) != path.read_text(encoding="utf-8", errors="replace"):
        atomic_write_text(path, "".join(lines[:n]))
