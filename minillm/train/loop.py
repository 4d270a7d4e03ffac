"""The training loop: batches -> loss and gradients -> clip -> AdamW, with validation,
checkpoints (model + optimiser state, safetensors) and exact resume.

    for step in start … steps − 1:
        x, y = random_batch(train_ids, seed, step)        # a pure function of (seed, step)
        loss, grads = loss_and_grads(params, x, y)         # one forward, one backward
        clip_grad_norm(grads, grad_clip); opt.step(grads, lr_at(step))
        every eval_every steps: validation loss on fixed held-out windows
        every checkpoint_every steps: write OUT/checkpoint/ (checkpoint.py: never half-written)
        a validation loss lower than any before: write the model to OUT/best/

A loss or gradient norm that is not finite (a learning rate far too high) stops the run with
``TrainingDiverged``: nothing is written after it, so the last checkpoint is the last good one.
Resume = load the checkpoint's parameters, AdamW's m, v and t, and continue at step t: because
the batches depend only on (seed, step), the resumed run computes exactly the same numbers as
an uninterrupted one (the tests check bit-for-bit equality).

The log is JSON lines (``train_log.jsonl``): one record every ``log_every`` steps with the mean
training loss since the last record, and ``val_loss`` where it was measured.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from minillm.model import GPT
from minillm.train.checkpoint import find_checkpoint, write_checkpoint
from minillm.train.data import eval_windows, random_batch
from minillm.train.evaluate import evaluate
from minillm.train.grad_model import check_trainable, loss_and_grads
from minillm.train.manifest import read_manifest
from minillm.train.optim import AdamW, clip_grad_norm, lr_at
from minillm.train.resume import best_so_far, data_digest, resume as resume_from
from minillm.train.trainlog import LOG_NAME, append_record, log_digest, truncate_log
RISING_EVALS = 3         # warn when the validation loss has risen this many evaluations in a row


class TrainingDiverged(ValueError):
    """The loss or the gradient norm stopped being a finite number."""


class TrainingInterrupted(Exception):
    """``stop()`` said so between two steps: ``step`` steps were done and written to
    ``checkpoint`` (None when the run had no folder), which ``resume`` continues from exactly;
    ``total``: the run's steps."""

    def __init__(self, step: int, checkpoint, total: int):
        super().__init__(f"interrupted after step {step} of {total}")
        self.step, self.checkpoint, self.total = step, checkpoint, total


@dataclass
class TrainSettings:
    """Everything besides the model's shape that fixes a run (saved with every checkpoint)."""
    steps: int = 1000
    batch: int = 16
    lr: float = 2e-3
    min_lr: float = 2e-4
    warmup: int = 100
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    eval_every: int = 200
    eval_windows: int = 32           # held-out windows scored at each evaluation
    checkpoint_every: int = 500
    log_every: int = 10
    seed: int = 0

    def __post_init__(self):
        for name in ("steps", "batch", "warmup", "eval_every", "eval_windows", "checkpoint_every",
                     "log_every"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if not 0 < self.min_lr <= self.lr < math.inf:
            raise ValueError(f"need 0 < min_lr ≤ lr, both finite, got lr={self.lr}, "
                             f"min_lr={self.min_lr}")
        if not 0 < self.grad_clip < math.inf:  # subtle: a negative clip would reverse the step
            raise ValueError(f"grad_clip must be a finite number > 0, got {self.grad_clip!r}")
        if not 0 <= self.weight_decay < math.inf:
            raise ValueError(f"weight_decay must be a finite number >= 0, got {self.weight_decay!r}")


def train(model: GPT, train_ids: np.ndarray, val_ids: np.ndarray, out: str | Path,
          settings: TrainSettings, resume: bool | tuple[Path, dict] = False,
          progress=print, stop=None) -> GPT:
    """Train ``model`` in place for ``settings.steps`` steps; write checkpoints and the log in
    ``out``. With ``resume``, continue from the checkpoint in ``out`` (ValueError if there is
    none that verifies, or if it and the log disagree: never a silent restart); ``resume`` may
    also be the (folder, manifest) that ``find_checkpoint(out)`` returned (not verified again).
    ``stop``: a callable asked before every step; when it returns True the run writes a checkpoint
    of the steps done and raises ``TrainingInterrupted`` (the CLI's Ctrl-C: cli/interrupt/).

    Example: ``train(GPT(config), train_ids, val_ids, "runs/tiny", TrainSettings(steps=200))``
    with ``train_ids``, ``val_ids`` 1-D token arrays (``data.token_array``).
    """
    check_trainable(model.config)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    s, T = settings, model.config.n_ctx
    opt = AdamW(model.params.named(), weight_decay=s.weight_decay)
    data_sha256 = data_digest(train_ids, val_ids)
    found = resume if isinstance(resume, tuple) else (find_checkpoint(out) if resume else None)
    start, records = resume_from(model, opt, out, s, data_sha256, found) if resume else (0, 0)
    truncate_log(out / LOG_NAME, records)
    best = best_so_far(out) if resume else math.inf

    def manifest_fields(done: int) -> dict:     # (manifest.py)
        return {"step": done, "log_records": records, "data_sha256": data_sha256,
                "log_sha256": log_digest(out / LOG_NAME, records),
                "pending_losses": [float(v) for v in losses]}   # since the last record
    val_x, val_y = eval_windows(val_ids, T, s.eval_windows)             # [W, T] each, fixed
    tokens_per_step = s.batch * T
    # a checkpoint between two records carries the losses since the last one (floats: exact)
    losses = [float(v) for v in found[1].get("pending_losses", [])] if found else []
    t0, t_last, log_last = time.perf_counter(), time.perf_counter(), start
    saved = start if resume else None           # the step the newest checkpoint holds
    val_history = []
    for step in range(start, s.steps):
        if stop is not None and stop():         # between steps only: the state is whole here
            if saved != step:
                write_checkpoint(model, out, "checkpoint", manifest_fields(step), opt=opt,
                                 settings=s)
            raise TrainingInterrupted(step, out / "checkpoint", s.steps)
        x, y = random_batch(train_ids, s.batch, T, s.seed, step)        # [B, T] each
        with np.errstate(over="ignore", invalid="ignore"):   # a diverging run: checked below
            loss, grads = loss_and_grads(model.params, model.config, x, y)
            norm = clip_grad_norm(grads, s.grad_clip)
        lr = lr_at(step, s.lr, s.min_lr, s.warmup, s.steps)
        if not (math.isfinite(loss) and math.isfinite(norm)):
            raise TrainingDiverged(_diverged_message(out, step + 1, loss, norm, s.lr))
        opt.step(grads, lr)
        losses.append(loss)
        done = step + 1
        if done % s.log_every == 0 or done == s.steps:
            now = time.perf_counter()
            record = {"step": done, "loss": float(np.mean(losses)), "lr": lr, "grad_norm": norm,
                      "tokens_per_s": tokens_per_step * (done - log_last) / (now - t_last),
                      "elapsed_s": now - t0}
            if done % s.eval_every == 0 or done == s.steps:
                record["val_loss"] = val = evaluate(model, val_x, val_y)
                if not math.isfinite(val):
                    raise TrainingDiverged(_diverged_message(out, done, val, norm, s.lr))
                if val < best:
                    best = val
                    write_checkpoint(model, out, "best", {**manifest_fields(done), "val_loss": val})
                val_history.append(val)
                if _rising(val_history, RISING_EVALS):
                    progress(f"warning: the validation loss has risen {RISING_EVALS} evaluations "
                             f"in a row ({' -> '.join(f'{v:.4f}' for v in val_history[-4:])}): "
                             f"the model may be overfitting; the best so far ({best:.4f}) is "
                             f"kept in {out / 'best'}")
            eta = (now - t0) / (done - start) * (s.steps - done)
            progress(_progress_line(record, s.steps, eta))
            append_record(out / LOG_NAME, record)
            records += 1
            losses, t_last, log_last = [], time.perf_counter(), done
        if done % s.checkpoint_every == 0 or done == s.steps:
            write_checkpoint(model, out, "checkpoint", manifest_fields(done), opt=opt, settings=s)
            saved = done
    return model


def _rising(history: list[float], n: int) -> bool:
    """True when the last n evaluations each rose above the one before (said once per rise)."""
    tail = history[-(n + 1):]
    return len(tail) == n + 1 and all(a < b for a, b in zip(tail, tail[1:])) \
        and not (len(history) > n + 1 and history[-(n + 2)] < history[-(n + 1)])


def _diverged_message(out: Path, step: int, loss: float, norm: float, lr: float) -> str:
    try:
        kept = f"the last good checkpoint (step {read_manifest(out / 'checkpoint')['step']}) is " \
               f"kept in {out / 'checkpoint'}"
    except ValueError:
        kept = "no checkpoint had been written yet"
    return (f"training diverged at step {step}: loss {loss}, gradient norm {norm} (not finite). "
            f"Stopped without saving the model; {kept}. Try a lower --lr (it was {lr:g}).")


def _progress_line(r: dict, steps: int, eta: float) -> str:
    val = f" | val {r['val_loss']:.4f}" if "val_loss" in r else ""
    return (f"step {r['step']:>6}/{steps} | loss {r['loss']:.4f}{val} | lr {r['lr']:.2e} | "
            f"{r['tokens_per_s']:,.0f} tok/s | ETA {int(eta) // 60}:{int(eta) % 60:02d}")
