"""What a run checks about its output folder OUT before it writes or deletes anything there.

* ``refuse_linked_path``: the link rule. Refused, naming it: OUT itself a symbolic link (even a
  dangling one), or a link among the folders the run would create on the way to OUT (the
  missing ones: ``mkdir`` would create through it). ``--out runs/x`` with ``x`` a link to a
  user's model folder would otherwise have ``--overwrite`` delete that folder's files (minillm
  never writes or deletes through a link it did not make: atomic.py; a link *inside* OUT at a
  name the run writes is refused by ``atomic.refuse_link``). The folders that already exist
  above OUT are the user's own layout and are not judged: macOS's ``/tmp`` (a link to
  ``/private/tmp``) or a home folder that is a link works. They are resolved once and the
  resolved path returned (a caller that keeps it is not redirected by a link swapped in above
  OUT later); OUT resolving onto the run's inputs is ``refuse_inputs_inside``'s refusal.
* ``refuse_inputs_inside``: a file the run reads (``--data``, ``--eval``, the model, an
  adapter's base) that lies in OUT among the names the run writes or deletes is refused before
  anything is deleted, naming the flag and the file: ``--overwrite`` would destroy the run's
  own input, and a new run truncates OUT/train_log.jsonl.

Example::

    refuse_linked_path(Path("runs/x"), "--out")      # ValueError if runs/x is a link
    refuse_inputs_inside(out, {"--data": data}, owned=lambda name: name == "train_log.jsonl")
"""
from __future__ import annotations

import os
from pathlib import Path


def refuse_linked_path(path: str | Path, flag: str = "--out") -> Path:
    """ValueError if ``path`` is a link, or a folder the run would create on the way to it is;
    otherwise ``path`` with its existing ancestors resolved (``os.path.realpath``, once).

    Example: with ``/tmp -> /private/tmp``, ``refuse_linked_path("/tmp/run/x")`` returns
    ``/private/tmp/run/x``; with ``/tmp/run/x -> ~/model``, it raises."""
    path = Path(path)
    missing = []                            # OUT and the folders above it that do not exist yet
    at = path
    while not at.exists() and at != at.parent:
        missing.append(at)
        at = at.parent
    for link in (path, *missing):           # (a dangling link does not exist, yet is one)
        if link.is_symlink():
            where = "is" if link == path else f"would be created through {link}, which is"
            raise ValueError(f"{flag} {path} {where} a symbolic link (to {os.readlink(link)}): "
                             f"minillm does not write or delete through links; give the real "
                             f"folder ({os.path.realpath(link)}) or another one")
    rest = path.relative_to(at) if at != path else Path()
    return Path(os.path.realpath(at)) / rest


def refuse_inputs_inside(out: str | Path, inputs: dict, owned) -> None:
    """``inputs``: {flag: path}; ``owned(name)``: whether the run writes or deletes OUT/name.
    ValueError for the first input that is such a file (or lies in such a folder) of OUT."""
    root = os.path.realpath(out)
    for flag, path in inputs.items():
        if path is None:
            continue
        rel = os.path.relpath(os.path.realpath(path), root)
        first = rel.split(os.sep)[0]
        if rel == os.curdir or (first != os.pardir and owned(first)):
            where = "--out itself" if rel == os.curdir else f"in --out, as {first}"
            raise ValueError(f"{flag} {path} is {where}, which this run writes or deletes: it "
                             f"would destroy its own input; move it out of {out} or choose "
                             f"another --out")
