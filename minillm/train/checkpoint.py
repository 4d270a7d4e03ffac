"""Checkpoints that survive any crash: write the new one beside the old, then swap by renames.

A checkpoint is a folder: config.json + model.safetensors (the model, loadable on its own),
optimizer.safetensors (AdamW's m, v; t and the settings in its metadata; absent for ``best/``) and,
written LAST, ``manifest.json`` (manifest.py): the step, the log and data digests, the size and
sha256 of every file, and a digest of itself. A folder whose manifest does not verify is not a
checkpoint.

Rotation (``write_checkpoint(..., "checkpoint")``)::

    1. write OUT/checkpoint.tmp/ completely (every file fsynced, the manifest last)
    2. rename OUT/checkpoint -> OUT/checkpoint.old     (if there was one)
    3. rename OUT/checkpoint.tmp -> OUT/checkpoint
    4. delete OUT/checkpoint.old

A ``kill -9`` anywhere leaves at least one complete, verified checkpoint among checkpoint,
checkpoint.tmp and checkpoint.old (after 1: the old one; between 2 and 3: both), and
``find_checkpoint`` takes the newest that verifies. Nothing here deletes a file it did not write,
nor goes through a link: a folder is emptied of minillm's file names only (regular files, never
links), removed only if it is then empty, and any of the three names that is a symbolic link (or
holds one) is refused before anything is written.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

from minillm.io.atomic import fsync_dir, is_temp_of, owned_temp, refuse_link
from minillm.train.manifest import (CHECKPOINT_FILES, MODEL_FILES, OPTIMIZER, WRITTEN,
                                    read_manifest, write_manifest)

SUFFIXES = ("", ".tmp", ".old")                                      # a live folder, then spares


def _ours(child: Path) -> bool:
    name = child.name
    return child.is_file() and not child.is_symlink() and (
        name in WRITTEN or owned_temp(name)                          # atomic.py's temp files
        or any(is_temp_of(name, w) for w in WRITTEN))


def foreign_files(out: Path, names=("checkpoint", "best")) -> list[Path]:
    """Files under out/checkpoint*, out/best* that minillm did not write (it will not move them).
    Any of those folders that is a link is refused (ValueError)."""
    folders = [out / (n + s) for n in names for s in SUFFIXES]
    for folder in folders:
        refuse_link(folder)
    return [c for f in folders if f.is_dir() for c in sorted(f.iterdir()) if not _ours(c)]


def remove_written(folder: Path) -> None:
    """Delete minillm's checkpoint files in ``folder`` (and temp files it left); remove the
    folder only if nothing else is in it. A user's own file is never touched, a link never
    followed."""
    refuse_link(folder)
    if not folder.is_dir():
        return
    for child in folder.iterdir():
        if _ours(child):
            child.unlink()
    if not any(folder.iterdir()):
        folder.rmdir()


def write_checkpoint(model, out: Path, name: str, fields: dict, opt=None, settings=None,
                     save=None) -> Path:
    """Write ``out/name`` (model; optimiser too when ``opt`` is given) by the rotation above.
    ``fields``: what the manifest records besides the files (manifest.py). ``save(folder)``, if
    given, writes the model's files instead of config.json + model.safetensors (a LoRA
    fine-tune: its adapter, manifest.ADAPTER_FILES)."""
    from minillm.io.checkpoints import save_hf_checkpoint
    from minillm.io.safetensors import save_safetensors
    final, tmp, old = (out / (name + s) for s in SUFFIXES)
    if foreign := foreign_files(out, (name,)):
        raise FileExistsError(f"{foreign[0]} was not written by minillm, which will not move or "
                              f"delete it: move it out of {foreign[0].parent} first")
    remove_written(tmp)                          # a leftover of an earlier crash: ours to redo
    if save is None:
        save_hf_checkpoint(tmp, model.config, model.params)
    else:
        save(tmp)
    if opt is not None:
        save_safetensors(tmp / OPTIMIZER, opt.state_arrays(),
                         metadata={"step": str(opt.t), "settings": json.dumps(asdict(settings))})
    write_manifest(tmp, fields)
    remove_written(old)
    if final.exists():
        os.rename(final, old)
    os.rename(tmp, final)
    fsync_dir(out)
    remove_written(old)
    return final


def find_checkpoint(out: Path, name: str = "checkpoint", required: tuple[str, ...] | None = None
                    ) -> tuple[Path, dict]:
    """The newest checkpoint among out/name, .tmp and .old that verifies -> (folder, manifest).

    Raises ValueError when there is none, listing what was found and why it was refused.
    ``required``: the files it must list (default: a model's, + the optimiser's for checkpoint/).
    """
    if required is None:
        required = CHECKPOINT_FILES if name == "checkpoint" else MODEL_FILES
    found, problems = [], []
    for folder in (out / (name + s) for s in SUFFIXES):
        if os.path.lexists(folder):
            try:                                  # (every file hashed here, once: keep it)
                found.append((folder, read_manifest(folder, required)))
            except ValueError as exc:
                problems.append(str(exc))
    if not found:
        detail = "; ".join(problems) if problems else f"no {name}/ folder"
        raise ValueError(f"nothing to resume in {out}: {detail}. Start a new run without "
                         f"--resume (in an empty folder, or with --overwrite)")
    return max(found, key=lambda pair: (pair[1]["step"], str(pair[0])))
