"""Resuming a run: the newest verified checkpoint (checkpoint.py, manifest.py) loaded into the
model and AdamW, after checking that everything agrees with it — the settings, the model's shape,
the optimiser state's names, shapes and dtypes, the step, the data and the log. Each disagreement
is one ValueError line naming the file and what differs. Nothing is loaded before all these checks
pass; then the weights are read straight into the model's own arrays (no second copy of them), so
a file damaged past its header can leave the run's fresh model half-filled when the error ends
the run — never the checkpoint, the log or anything else the user keeps.

    start, records = resume(model, opt, out, settings, data_sha256)   # continue at step `start`
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict
from pathlib import Path

import numpy as np

from minillm.io.hf.config import read_config
from minillm.io.checkpoints import load_weights
from minillm.io.safetensors import read_safetensors
from minillm.train.checkpoint import find_checkpoint
from minillm.train.manifest import OPTIMIZER, read_manifest
from minillm.train.trainlog import LOG_NAME, check_log


def data_digest(train_ids: np.ndarray, val_ids: np.ndarray) -> str:
    """sha256 of the token ids trained and validated on (a resumed run must see the same)."""
    digest = hashlib.sha256()
    for ids in (train_ids, val_ids):
        ids = np.ascontiguousarray(ids)
        digest.update(f"{ids.dtype.str}{ids.shape}".encode("ascii"))
        digest.update(memoryview(ids).cast("B"))
    return digest.hexdigest()


def resume(model, opt, out: Path, settings, data_sha256: str,
           found: tuple[Path, dict] | None = None) -> tuple[int, int]:
    """Load the newest verified checkpoint of ``out`` into model and opt (in place); ``found``:
    the (folder, manifest) ``find_checkpoint(out)`` returned (already verified), if at hand.
    -> (the step to continue from, the number of log records written up to it)."""
    path, manifest = found or find_checkpoint(out)
    step = manifest["step"]
    opt_path = path / OPTIMIZER
    # its header read once; the state mapped, not read: its bytes are copied into the optimiser
    # only after every check below (a settings mismatch does not pay for reading the file)
    header, state = read_safetensors(opt_path, mmap=True)
    meta = _optimizer_metadata(opt_path, header.get("__metadata__", {}))
    if meta["settings"] != asdict(settings):
        raise ValueError(f"{opt_path} was written with other settings ({json.dumps(meta['settings'])}"
                         f"); resume with the same ones or start in an empty directory")
    if meta["step"] != step:
        raise ValueError(f"{opt_path}: the optimiser is at step {meta['step']}, the manifest "
                         f"says {step}")
    if manifest["data_sha256"] != data_sha256:
        raise ValueError(f"{path} was trained on other data (the token ids' sha256 differs): "
                         f"resume with the same --data and tokenizer, or start a new run")
    check_log(out / LOG_NAME, manifest["log_records"], step, manifest["log_sha256"])
    config = read_config(path)                        # the config first, then the weights
    if config != model.config:
        raise ValueError(f"{path} holds a model of another shape: {config}")
    _check_optimizer_state(opt_path, header, state, model)
    # in place, header read once: the optimiser holds these arrays
    load_weights(path / "model.safetensors", config, model.params)
    opt.load_state_arrays(state, step)
    return step, manifest["log_records"]


def _optimizer_metadata(path: Path, meta: dict) -> dict:
    """{"step": int, "settings": dict} from the optimiser file's metadata, or a ValueError."""
    step, settings = meta.get("step"), meta.get("settings")
    if not isinstance(step, str) or not step.isascii() or not step.isdigit():
        raise ValueError(f"{path}: its metadata needs 'step', a non-negative integer, got {step!r}")
    try:
        settings = json.loads(settings) if isinstance(settings, str) else None
    except (ValueError, RecursionError):
        settings = None
    if not isinstance(settings, dict):
        raise ValueError(f"{path}: its metadata needs 'settings', the run's settings as a JSON "
                         f"object")
    return {"step": int(step), "settings": settings}


def _check_optimizer_state(path: Path, header: dict, state: dict, model) -> None:
    """AdamW's m and v: exactly one float32 array per parameter, of its shape (stored as F32:
    the loader would widen F16 silently, and resuming would not be exact)."""
    params = model.params.named()
    want = {f"{mv}.{name}": a.shape for name, a in params.items() for mv in "mv"}
    if set(state) != set(want):
        extra, missing = sorted(set(state) - set(want)), sorted(set(want) - set(state))
        raise ValueError(f"{path}: the optimiser state does not match the model's parameters "
                         f"(missing {missing[:3]}, unexpected {extra[:3]})")
    for name, shape in want.items():
        stored = header[name]["dtype"]
        if stored != "F32" or state[name].shape != shape:
            raise ValueError(f"{path}: {name!r} is {stored} {state[name].shape}, the model "
                             f"needs F32 {shape}")


def best_so_far(out: Path) -> float:
    """The validation loss of OUT/best/ (inf when there is none that verifies)."""
    try:
        value = read_manifest(out / "best").get("val_loss", math.inf)
    except ValueError:
        return math.inf
    return float(value) if isinstance(value, (int, float)) else math.inf
