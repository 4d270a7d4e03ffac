"""A checkpoint's manifest, ``manifest.json``: verified before anything in the folder is trusted.

    {"step": 120, "log_records": 12, "log_sha256": "…",     the log as it was at that step
     "data_sha256": "…",                                    the token ids trained and validated on
     "files": {"config.json": {"bytes": 762, "sha256": "…"},
               "model.safetensors": {…}, "optimizer.safetensors": {…}},
     "val_loss": 2.31,                                      (best/ only)
     "manifest_sha256": "…"}

``manifest_sha256`` is the sha256 of the canonical JSON (sorted keys, no spaces, ASCII) of
everything else, so an edited ``step`` or ``log_records`` no longer verifies. ``files`` must list
every file the checkpoint consists of (``required``): an empty list verifies nothing and is
refused. Each refusal is one line naming the file and what does not match.

    >>> manifest = write_manifest(folder, {"step": 3, "log_records": 1, ...})
    >>> read_manifest(folder)["step"]
    3
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from minillm.io.atomic import atomic_write_text
from minillm.io.bounded import read_bounded_text, sha256_file

MANIFEST = "manifest.json"
OPTIMIZER = "optimizer.safetensors"
MODEL_FILES = ("config.json", "model.safetensors")            # best/: a model
CHECKPOINT_FILES = (*MODEL_FILES, OPTIMIZER)                   # checkpoint/: + AdamW's state
ADAPTER_FILES = ("adapter_config.json", "adapter_model.safetensors")   # a LoRA fine-tune's model
KNOWN = (*CHECKPOINT_FILES, *ADAPTER_FILES)                    # what a manifest may list
WRITTEN = (*KNOWN, MANIFEST)                                   # the only names minillm deletes
MAX_MANIFEST_BYTES = 1 << 20
_FIELDS = {"step": int, "log_records": int, "log_sha256": str, "data_sha256": str, "files": dict}


def self_digest(manifest: dict) -> str:
    """sha256 of the manifest's canonical JSON without its own ``manifest_sha256``."""
    rest = {k: v for k, v in manifest.items() if k != "manifest_sha256"}
    canonical = json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def write_manifest(folder: Path, fields: dict) -> dict:
    """Digest every checkpoint file in ``folder``, then write the manifest (last, atomically)."""
    files = {name: {"bytes": (folder / name).stat().st_size, "sha256": sha256_file(folder / name)}
             for name in KNOWN if (folder / name).is_file()}
    manifest = {**fields, "files": files}
    manifest["manifest_sha256"] = self_digest(manifest)
    atomic_write_text(folder / MANIFEST, json.dumps(manifest, indent=1) + "\n")
    return manifest


def read_manifest(folder: Path, required: tuple[str, ...] = MODEL_FILES) -> dict:
    """The verified manifest of a checkpoint folder; a one-line ValueError saying what is wrong."""
    path = folder / MANIFEST
    if folder.is_symlink() or path.is_symlink():
        raise ValueError(f"{folder if folder.is_symlink() else path} is a symbolic link: a "
                         f"checkpoint is never read through one")
    if not path.is_file():
        raise ValueError(f"{folder} is incomplete: no {MANIFEST} (a write was interrupted)")
    text = read_bounded_text(path, MAX_MANIFEST_BYTES, "a checkpoint manifest")
    try:
        manifest = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"{path} is not valid JSON ({str(exc)[:80]})") from None
    if not isinstance(manifest, dict):
        raise ValueError(f"{path} is not a checkpoint manifest (a JSON object)")
    if manifest.get("manifest_sha256") != self_digest(manifest):
        raise ValueError(f"{path} does not match its own manifest_sha256 (edited or damaged)")
    for key, kind in _FIELDS.items():
        value = manifest.get(key)
        if type(value) is not kind or (kind is int and value < 0):
            raise ValueError(f"{path}: {key!r} must be a{' non-negative' * (kind is int)} "
                             f"{kind.__name__}, got {value!r}")
    _check_files(folder, manifest["files"], required)
    return manifest


def _check_files(folder: Path, files: dict, required: tuple[str, ...]) -> None:
    """Every required file is listed, nothing else is, and each matches its size and sha256."""
    path = folder / MANIFEST
    unknown = sorted(set(files) - set(KNOWN))
    if unknown:
        raise ValueError(f"{path} lists {unknown[0]!r}, not a file of a checkpoint "
                         f"({', '.join(KNOWN)})")
    missing = [name for name in required if name not in files]
    if missing:
        raise ValueError(f"{path} does not list {missing[0]}: a manifest must list every file "
                         f"of the checkpoint ({', '.join(required)})")
    for name, info in files.items():
        p = folder / name
        if not isinstance(info, dict) or type(info.get("bytes")) is not int \
                or type(info.get("sha256")) is not str:
            raise ValueError(f"{path}: the entry of {name} must be {{'bytes': int, 'sha256': str}}")
        if p.is_symlink() or not p.is_file():
            raise ValueError(f"{p} is missing or not a regular file (a partial checkpoint)")
        if p.stat().st_size != info["bytes"]:
            raise ValueError(f"{p} has {p.stat().st_size:,} bytes, its manifest says "
                             f"{info['bytes']:,} (a partial or damaged checkpoint)")
        if sha256_file(p) != info["sha256"]:
            raise ValueError(f"{p} does not match its sha256 in {MANIFEST} (a corrupt checkpoint)")
