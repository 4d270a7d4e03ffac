"""Checkpoints that survive any crash: write the new one beside the old, then swap by renames.

A checkpoint is a folder: config.json + model.safetensors (the model, loadable on its own),
optimizer.safetensors (AdamW's m, v; t and the settings in its metadata; absent for ``best/``) and,
written LAST, ``manifest.json``: the step, the number of log records at that step, and the size
and sha256 of every file. A folder without a manifest whose digests match is not a checkpoint.

Rotation (``write_checkpoint(..., "checkpoint")``)::

    1. write OUT/checkpoint.tmp/ completely (every file fsynced, the manifest last)
    2. rename OUT/checkpoint -> OUT/checkpoint.old     (if there was one)
    3. rename OUT/checkpoint.tmp -> OUT/checkpoint
    4. delete OUT/checkpoint.old

A ``kill -9`` anywhere leaves at least one complete, verified checkpoint among checkpoint,
checkpoint.tmp and checkpoint.old (after 1: the old one; between 2 and 3: both), and
``find_checkpoint`` takes the newest that verifies. Nothing here deletes a file it did not write:
a folder is emptied of minillm's file names only, and removed only if it is then empty.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict
from pathlib import Path

from minillm.io.atomic import atomic_write_text, fsync_dir

MANIFEST = "manifest.json"
OPTIMIZER = "optimizer.safetensors"
WRITTEN = ("config.json", "model.safetensors", OPTIMIZER, MANIFEST)  # the only names we delete
SUFFIXES = ("", ".tmp", ".old")                                      # a live folder, then spares


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _ours(child: Path) -> bool:
    name = child.name
    return child.is_file() and not child.is_symlink() and (
        name in WRITTEN or (name.endswith(".tmp")                    # atomic_open's temp files
                            and any(name.startswith(f".{w}.") for w in WRITTEN)))


def foreign_files(out: Path, names=("checkpoint", "best")) -> list[Path]:
    """Files under out/checkpoint*, out/best* that minillm did not write (it will not move them)."""
    folders = [out / (n + s) for n in names for s in SUFFIXES]
    return [c for f in folders if f.is_dir() for c in sorted(f.iterdir()) if not _ours(c)]


def remove_written(folder: Path) -> None:
    """Delete minillm's checkpoint files in ``folder`` (and temp files it left); remove the
    folder only if nothing else is in it. A user's own file is never touched."""
    if not folder.is_dir():
        return
    for child in folder.iterdir():
        if _ours(child):
            child.unlink()
    if not any(folder.iterdir()):
        folder.rmdir()


def write_checkpoint(model, out: Path, name: str, step: int, records: int,
                     opt=None, settings=None, extra: dict | None = None) -> Path:
    """Write ``out/name`` (model; optimiser too when ``opt`` is given) by the rotation above."""
    from minillm.io.checkpoints import save_hf_checkpoint
    from minillm.io.safetensors import save_safetensors
    final, tmp, old = (out / (name + s) for s in SUFFIXES)
    if foreign := foreign_files(out, (name,)):
        raise FileExistsError(f"{foreign[0]} was not written by minillm, which will not move or "
                              f"delete it: move it out of {foreign[0].parent} first")
    remove_written(tmp)                          # a leftover of an earlier crash: ours to redo
    save_hf_checkpoint(tmp, model.config, model.params)
    if opt is not None:
        save_safetensors(tmp / OPTIMIZER, opt.state_arrays(),
                         metadata={"step": str(opt.t), "settings": json.dumps(asdict(settings))})
    files = {p.name: {"bytes": p.stat().st_size, "sha256": _sha256(p)}
             for p in sorted(tmp.iterdir()) if p.name in WRITTEN}
    manifest = {"step": step, "log_records": records, "files": files, **(extra or {})}
    atomic_write_text(tmp / MANIFEST, json.dumps(manifest, indent=1) + "\n")
    remove_written(old)
    if final.exists():
        os.rename(final, old)
    os.rename(tmp, final)
    fsync_dir(out)
    remove_written(old)
    return final


def read_manifest(folder: Path) -> dict:
    """The verified manifest of a checkpoint folder; ValueError saying what is wrong."""
    path = folder / MANIFEST
    if not path.is_file():
        raise ValueError(f"{folder} is incomplete: no {MANIFEST} (a write was interrupted)")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        files, step, records = manifest["files"], manifest["step"], manifest["log_records"]
        if type(step) is not int or type(records) is not int or not isinstance(files, dict):
            raise TypeError("step and log_records must be ints, files an object")
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path} is not a valid checkpoint manifest: {exc}") from None
    for fname, info in files.items():
        p = folder / fname
        if not p.is_file() or p.stat().st_size != info.get("bytes"):
            raise ValueError(f"{p} is missing or has the wrong size (a partial checkpoint)")
        if _sha256(p) != info.get("sha256"):
            raise ValueError(f"{p} does not match its sha256 in {MANIFEST} (a corrupt checkpoint)")
    return manifest


def find_checkpoint(out: Path, name: str = "checkpoint") -> tuple[Path, dict]:
    """The newest checkpoint among out/name, .tmp and .old that verifies -> (folder, manifest).

    Raises ValueError when there is none, listing what was found and why it was refused.
    """
    found, problems = [], []
    for folder in (out / (name + s) for s in SUFFIXES):
        if folder.exists():
            try:
                found.append((read_manifest(folder)["step"], str(folder), folder))
            except ValueError as exc:
                problems.append(str(exc))
    if not found:
        detail = "; ".join(problems) if problems else f"no {name}/ folder"
        raise ValueError(f"nothing to resume in {out}: {detail}. Start a new run without "
                         f"--resume (in an empty folder, or with --overwrite)")
    step, _, folder = max(found)
    return folder, read_manifest(folder)


# ---- the log (JSON lines) and the checkpoint agree -------------------------------------------
def log_records(path: Path) -> list[dict]:
    """The log's records; ValueError naming the line when one is not a record with a step.
    A last line without its newline is a write a crash interrupted: it is not a record."""
    records = []
    if not path.exists():
        return records
    text = path.read_text(encoding="utf-8", errors="replace")
    lines = text.splitlines()
    if lines and not text.endswith("\n"):
        lines.pop()
    for n, line in enumerate(lines, 1):
        try:
            record = json.loads(line)
            if not isinstance(record, dict) or type(record.get("step")) is not int:
                raise ValueError("not an object with an integer 'step'")
        except ValueError as exc:
            raise ValueError(f"{path}:{n}: not a training log record ({exc}): {line[:60]!r}") from None
        records.append(record)
    return records


def check_log(path: Path, n: int, step: int) -> None:
    """The checkpoint of ``step`` was written after the log's first ``n`` records: check it."""
    records = log_records(path)
    if len(records) < n or (n and records[n - 1]["step"] > step):
        raise ValueError(f"{path} and the checkpoint of step {step} disagree (the log has "
                         f"{len(records)} records, the checkpoint expects at least {n} up to "
                         f"step {step}); restore the log or start a new run")


def truncate_log(path: Path, n: int) -> None:
    """Keep the log's first ``n`` records (a resumed run rewrites what came after)."""
    if path.exists():
        keep = log_records(path)[:n]
        atomic_write_text(path, "".join(json.dumps(r) + "\n" for r in keep))
