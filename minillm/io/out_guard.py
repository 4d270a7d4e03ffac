"""What a run checks about its output folder OUT before it writes or deletes anything there.

* ``refuse_linked_path``: OUT, or any folder on the path to it as given, that is a symbolic
  link is refused, naming it. ``--out runs/x`` with ``runs`` a link to a user's model folder
  would otherwise have ``--overwrite`` delete that folder's files (minillm never writes or
  deletes through a link it did not make: atomic.py).
* ``refuse_inputs_inside``: a file the run reads (``--data``, ``--eval``, the model, an
  adapter's base) that lies in OUT among the names the run writes or deletes is refused before
  anything is deleted, naming the flag and the file: ``--overwrite`` would destroy the run's
  own input, and a new run truncates OUT/train_log.jsonl.

Example::

    refuse_linked_path(Path("runs/x"), "--out")            # ValueError if runs/ is a link
    refuse_inputs_inside(out, {"--data": data}, owned=lambda name: name == "train_log.jsonl")
"""
from __future__ import annotations

import os
from pathlib import Path


def refuse_linked_path(path: str | Path, flag: str = "--out") -> None:
    """ValueError if ``path`` or one of the folders leading to it (as written) is a link."""
    path = Path(path)
    prefix = Path(path.anchor) if path.is_absolute() else Path()
    for part in path.parts[1 if path.is_absolute() else 0:]:
        prefix = prefix / part
        if prefix.is_symlink():
            where = "is" if prefix == path else f"lies under {prefix}, which is"
            raise ValueError(f"{flag} {path} {where} a symbolic link (to {os.readlink(prefix)}): "
                             f"minillm does not write or delete through links; give the real "
                             f"folder ({os.path.realpath(prefix)}) or another one")


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
