"""A fine-tuning run's folder: its log, its checkpoints and an exact resume — train's machinery.

The checkpoint is train's (train/checkpoint.py: written beside the old one, swapped by renames,
``kill -9``-safe; train/manifest.py: every file digested, verified before it is trusted), holding
the trained part only:

    LoRA   OUT/checkpoint/adapter_config.json + adapter_model.safetensors   (PEFT's layout)
    full   OUT/checkpoint/config.json + model.safetensors                   (the whole model)
    both   + optimizer.safetensors (AdamW's m, v; t and the settings) + manifest.json

``resume`` checks, before loading anything, what train's resume checks: the settings (those
added since an older checkpoint was written at their defaults: settings.py), the step,
the data (sha256 of the rendered conversations), the base model (``base_digest``: its config
and an even sample of every weight, so another model of the same shapes is refused by name; a
checkpoint written before this was recorded resumes with a warning that the base is unchecked),
the log (train_log.jsonl) and the optimiser
state's names and shapes; then loads the adapters (or weights) and AdamW's state in place, so
the resumed run computes exactly the numbers of an uninterrupted one (the batches depend only on
(seed, step): batches.py).

``start(clear=True)`` (``finetune(..., overwrite=True)``, the CLI's ``--overwrite``) first deletes
an earlier run's output in OUT (``clear_earlier``): its adapter or model (a sharded one's index and
shards too), tokenizer, eval.json and checkpoint folders, so that OUT never holds two runs' files.
It runs once every check of the new run has passed: a refused run deletes nothing.
"""
from __future__ import annotations

import hashlib
import json
import warnings
from dataclasses import asdict
from pathlib import Path

import numpy as np

from minillm.io.atomic import refuse_link
from minillm.io.checkpoints import load_weights
from minillm.io.hf.config import read_config
from minillm.io.hf.shards import is_weights_name
from minillm.io.safetensors import read_safetensors
from minillm.train.checkpoint import SUFFIXES, find_checkpoint, remove_written, write_checkpoint
from minillm.train.lora.files import load_adapter, save_adapter
from minillm.train.manifest import ADAPTER_FILES, CHECKPOINT_FILES, MODEL_FILES, OPTIMIZER
from minillm.train.resume import _optimizer_metadata
from minillm.train.sft.settings import saved_settings
from minillm.train.trainlog import LOG_NAME, append_record, check_log, log_digest, truncate_log

# what a train or finetune run leaves in OUT besides its log (and a sharded model's weights files)
EARLIER = (*ADAPTER_FILES, *MODEL_FILES, "tokenizer.json", "tokenizer_config.json",
           "tokenizer.json.vocab", "eval.json", "val_sample.txt")


def clear_earlier(out: Path) -> None:
    """Delete an earlier run's output in ``out``: the files of ``EARLIER``, a model's weights
    files (hf/shards.py's names) and the checkpoint folders (``best`` too). Only minillm's names,
    only regular files; a link among them is refused before anything is deleted."""
    earlier = sorted(p for p in out.iterdir() if p.name in EARLIER or is_weights_name(p.name))
    for path in earlier:
        refuse_link(path)
    for path in earlier:
        if path.is_file():
            path.unlink()
    for name in ("checkpoint", "best"):
        for suffix in SUFFIXES:
            remove_written(out / (name + suffix))


def examples_digest(*groups) -> str:
    """sha256 of the rendered conversations (ids and counted flags, in order)."""
    digest = hashlib.sha256()
    for examples in groups:
        digest.update(f"group {len(examples or [])}".encode("ascii"))
        for ids, counted in examples or []:
            digest.update(np.ascontiguousarray(ids, np.int64).tobytes())
            digest.update(np.ascontiguousarray(counted, np.uint8).tobytes())
    return digest.hexdigest()


def base_digest(model, samples: int = 4096) -> str:
    """sha256 of the model's config and of ``samples`` evenly spaced values of every weight
    (name and shape too): cheap (a few thousand values a tensor), and a different model of the
    same shapes differs in nearly every sampled value."""
    digest = hashlib.sha256(repr(model.config).encode("utf-8"))
    for name, w in sorted(model.params.named().items()):
        flat = w.reshape(-1)                                           # [N]
        digest.update(f"{name} {w.shape}".encode("utf-8"))
        sample = flat[::max(1, flat.size // samples)]                  # [<= 2 · samples]
        digest.update(np.ascontiguousarray(sample, np.float32).tobytes())
    return digest.hexdigest()


def dated_as_begun(out: Path, fmt, full: bool):
    """A format that writes a date (SmolLM3's ``date_string``) as the run being resumed rendered
    it (its checkpoint's ``chat_date``): so a run begun yesterday resumes today on the very
    same tokens. Any other format, or no readable checkpoint (``resume`` says why), as it is."""
    if fmt.options.get("date_string") is None:
        return fmt
    try:
        _, manifest = find_checkpoint(Path(out), required=CHECKPOINT_FILES if full else
                                      (*ADAPTER_FILES, OPTIMIZER))
    except ValueError:
        return fmt
    date = manifest.get("chat_date")
    return fmt.with_options(date_string=date) if isinstance(date, str) else fmt


class Run:
    """out: the folder; the model, the adapters (None: full fine-tuning) and AdamW being trained."""

    def __init__(self, out, model, lora, opt, settings, examples, held_out, base_model=None):
        self.out, self.model, self.lora, self.opt, self.settings = Path(out), model, lora, opt, settings
        self.out.mkdir(parents=True, exist_ok=True)
        self.base_model = base_model
        self.base_sha256 = base_digest(model)       # (before a resume loads trained weights)
        self.data_sha256 = examples_digest(examples, held_out)
        self.records = 0
        self.chat_date = None                       # (SmolLM3's: dated_as_begun)
        self.files = (*ADAPTER_FILES, OPTIMIZER) if lora is not None else CHECKPOINT_FILES

    def start(self, clear: bool = False) -> None:
        """A new run: an empty log (``clear``: an earlier run's output deleted first)."""
        if clear:
            clear_earlier(self.out)
        truncate_log(self.out / LOG_NAME, 0)

    def log(self, record: dict) -> None:
        append_record(self.out / LOG_NAME, record)
        self.records += 1

    def checkpoint(self, step: int) -> Path:
        fields = {"step": step, "log_records": self.records, "data_sha256": self.data_sha256,
                  "base_sha256": self.base_sha256, "base_model": self.base_model,
                  **({"chat_date": self.chat_date} if self.chat_date is not None else {}),
                  "log_sha256": log_digest(self.out / LOG_NAME, self.records)}
        save = None if self.lora is None else \
            (lambda folder: save_adapter(folder, self.lora, self.model.config, self.base_model))
        return write_checkpoint(self.model, self.out, "checkpoint", fields, opt=self.opt,
                                settings=self.settings, save=save)

    def resume(self) -> int:
        """Load the newest verified checkpoint; -> the step to continue from."""
        path, manifest = find_checkpoint(self.out, required=self.files)
        step = manifest["step"]
        opt_path = path / OPTIMIZER
        header, state = read_safetensors(opt_path, mmap=True)
        meta = _optimizer_metadata(opt_path, header.get("__metadata__", {}))
        saved = saved_settings(meta["settings"], opt_path)   # an older run's: + ADDED defaults
        now = json.loads(json.dumps(asdict(self.settings)))
        if self.lora is not None:           # targets None (every projection) = their list
            trained = sorted({name.split(".")[-1] for name in self.lora.adapters})
            for either in (saved, now):
                either["targets"] = sorted(either["targets"] or trained)
        if saved != now:
            differ = "; ".join(f"{k} {saved[k]!r}, now {now[k]!r}" for k in now if saved[k] != now[k])
            raise ValueError(f"{opt_path} was written with other settings ({differ}); resume "
                             f"with the same ones or start in an empty directory")
        if meta["step"] != step:
            raise ValueError(f"{opt_path}: the optimiser is at step {meta['step']}, the manifest "
                             f"says {step}")
        if manifest["data_sha256"] != self.data_sha256:
            raise ValueError(f"{path} was fine-tuned on other conversations (their sha256 differs):"
                             f" resume with the same --data and --eval, or start a new run")
        self._check_base(path, manifest)
        check_log(self.out / LOG_NAME, manifest["log_records"], step, manifest["log_sha256"])
        want = {f"{mv}.{k}": p.shape for k, p in self.opt.params.items() for mv in "mv"}
        got = {k: a.shape for k, a in state.items()}
        if got != want or any(header[k]["dtype"] != "F32" for k in want):
            raise ValueError(f"{opt_path}: the optimiser state does not match what is trained "
                             f"(differing: {sorted(set(got.items()) ^ set(want.items()))[:3]})")
        if self.lora is None:
            if read_config(path) != self.model.config:
                raise ValueError(f"{path} holds a model of another shape")
            load_weights(path / "model.safetensors", self.model.config, self.model.params)
        else:
            stored = load_adapter(path, self.model.config)
            if (stored.rank, stored.alpha) != (self.lora.rank, self.lora.alpha) \
                    or set(stored.adapters) != set(self.lora.adapters):
                raise ValueError(f"{path} holds other adapters (rank {stored.rank}, "
                                 f"{len(stored.adapters)} matrices)")
            for name, (A, B) in self.lora.adapters.items():
                A[...], B[...] = stored.adapters[name]
        self.opt.load_state_arrays(state, step)
        self.records = manifest["log_records"]
        truncate_log(self.out / LOG_NAME, self.records)
        return step

    def _check_base(self, path: Path, manifest: dict) -> None:
        """The checkpoint continues training of this very base model (by ``base_digest``)."""
        saved = manifest.get("base_sha256")
        if saved is None:
            warnings.warn(f"{path} was written before checkpoints recorded their base model: "
                          f"resuming without checking that --model is the one it was trained "
                          f"from", stacklevel=3)
        elif saved != self.base_sha256:
            raise ValueError(f"{path} was trained from another base model "
                             f"({manifest.get('base_model') or 'unnamed'}, its weights differ "
                             f"from {self.base_model or 'the model given'}'s): resume with the "
                             f"same --model, or start a new run")
