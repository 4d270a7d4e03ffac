"""The training loop: batches -> loss and gradients -> clip -> AdamW, with validation,
checkpoints (model + optimiser state, safetensors) and exact resume.

    for step in start … steps − 1:
        x, y = random_batch(train_ids, seed, step)        # a pure function of (seed, step)
        loss, grads = loss_and_grads(params, x, y)         # one forward, one backward
        clip_grad_norm(grads, grad_clip); opt.step(grads, lr_at(step))
        every eval_every steps: validation loss on fixed held-out windows
        every checkpoint_every steps: write OUT/checkpoint/ (via checkpoint.tmp/, then a rename)

Resume = load the checkpoint's parameters, AdamW's m, v and t, and continue at step t: because
the batches depend only on (seed, step), the resumed run computes exactly the same numbers as
an uninterrupted one (the tests check bit-for-bit equality).

The log is JSON lines (``train_log.jsonl``): one record every ``log_every`` steps with the mean
training loss since the last record, and ``val_loss`` where it was measured.
"""
from __future__ import annotations

import json
import math
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from minillm.functional import cross_entropy
from minillm.io.checkpoints import load_hf_checkpoint
from minillm.io.safetensors import load_safetensors, load_safetensors_metadata, save_safetensors
from minillm.model import GPT
from minillm.train.data import bits_per_char, eval_windows, random_batch, token_array
from minillm.train.grad_model import check_trainable, loss_and_grads
from minillm.train.optim import AdamW, clip_grad_norm, lr_at

LOG_NAME = "train_log.jsonl"


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


def evaluate(model: GPT, inputs: np.ndarray, targets: np.ndarray, batch: int = 16) -> float:
    """Mean next-token loss (nats) of ``model`` over windows inputs/targets [W, T], in batches."""
    total = 0.0
    for i in range(0, len(inputs), batch):
        logits = model(inputs[i:i + batch])                             # [b, T, V]
        total += cross_entropy(logits, targets[i:i + batch]) * len(logits)
    return total / len(inputs)


def evaluate_text(model: GPT, tokenizer, text: str, max_windows: int | None = None) -> dict:
    """Score ``text``: encode it, tile it with windows of n_ctx tokens, mean loss over them.

    -> {"loss": nats per token, "bits_per_char", "tokens": scored, "windows"}. Bits per character
    use the text's own characters per token, so they compare across tokenizers.
    """
    ids = token_array(tokenizer.encode_ordinary(text), model.config.vocab_size)   # [N]
    x, y = eval_windows(ids, model.config.n_ctx, max_windows)                     # [W, T] each
    loss = evaluate(model, x, y)
    return {"loss": loss, "bits_per_char": bits_per_char(loss, len(ids), len(text)),
            "tokens": int(x.size), "windows": len(x)}


def train(model: GPT, train_ids: np.ndarray, val_ids: np.ndarray, out: str | Path,
          settings: TrainSettings, resume: bool = False, progress=print) -> GPT:
    """Train ``model`` in place for ``settings.steps`` steps; write checkpoints and the log in
    ``out``. With ``resume`` and a checkpoint in ``out/checkpoint``, continue from it.

    Example: ``train(GPT(config), train_ids, val_ids, "runs/tiny", TrainSettings(steps=200))``
    with ``train_ids``, ``val_ids`` 1-D token arrays (``data.token_array``).
    """
    check_trainable(model.config)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    s, T = settings, model.config.n_ctx
    opt = AdamW(model.params.named(), weight_decay=s.weight_decay)
    start = _resume(model, opt, out, s) if resume else 0
    _truncate_log(out / LOG_NAME, start)
    val_x, val_y = eval_windows(val_ids, T, s.eval_windows)             # [W, T] each, fixed
    tokens_per_step = s.batch * T
    losses, t0, t_last, log_last = [], time.perf_counter(), time.perf_counter(), start
    for step in range(start, s.steps):
        x, y = random_batch(train_ids, s.batch, T, s.seed, step)        # [B, T] each
        loss, grads = loss_and_grads(model.params, model.config, x, y)
        norm = clip_grad_norm(grads, s.grad_clip)
        lr = lr_at(step, s.lr, s.min_lr, s.warmup, s.steps)
        opt.step(grads, lr)
        losses.append(loss)
        done = step + 1
        if done % s.log_every == 0 or done == s.steps:
            now = time.perf_counter()
            record = {"step": done, "loss": float(np.mean(losses)), "lr": lr, "grad_norm": norm,
                      "tokens_per_s": tokens_per_step * (done - log_last) / (now - t_last),
                      "elapsed_s": now - t0}
            if done % s.eval_every == 0 or done == s.steps:
                record["val_loss"] = evaluate(model, val_x, val_y)
            eta = (now - t0) / (done - start) * (s.steps - done)
            progress(_progress_line(record, s.steps, eta))
            with open(out / LOG_NAME, "a", encoding="utf-8") as f:
                f.write(json.dumps(record) + "\n")
            losses, t_last, log_last = [], time.perf_counter(), done
        if done % s.checkpoint_every == 0 or done == s.steps:
            save_checkpoint(model, opt, out / "checkpoint", s)
    return model


def _progress_line(r: dict, steps: int, eta: float) -> str:
    val = f" | val {r['val_loss']:.4f}" if "val_loss" in r else ""
    return (f"step {r['step']:>6}/{steps} | loss {r['loss']:.4f}{val} | lr {r['lr']:.2e} | "
            f"{r['tokens_per_s']:,.0f} tok/s | ETA {int(eta) // 60}:{int(eta) % 60:02d}")


def save_checkpoint(model: GPT, opt: AdamW, path: Path, settings: TrainSettings) -> None:
    """model (config.json + model.safetensors) and optimiser.safetensors (m, v; t and the settings
    in its metadata), written to a temporary directory that then replaces ``path``."""
    tmp = path.with_name(path.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    save_safetensors(tmp / "optimizer.safetensors", opt.state_arrays(),
                     metadata={"step": str(opt.t), "settings": json.dumps(asdict(settings))})
    shutil.rmtree(path, ignore_errors=True)
    tmp.rename(path)


def _resume(model: GPT, opt: AdamW, out: Path, settings: TrainSettings) -> int:
    """Load out/checkpoint into model and opt (in place); return the step to continue from."""
    path = out / "checkpoint"
    if not (path / "optimizer.safetensors").is_file():
        return 0
    meta = load_safetensors_metadata(path / "optimizer.safetensors")
    if json.loads(meta["settings"]) != asdict(settings):
        raise ValueError(f"{path} was written with other settings ({meta['settings']}); "
                         f"resume with the same ones or start in an empty directory")
    config, params = load_hf_checkpoint(path)
    if config != model.config:
        raise ValueError(f"{path} holds a model of another shape: {config}")
    named = params.named()
    for name, a in model.params.named().items():   # in place: the optimiser holds these arrays
        a[...] = named[name]
    opt.load_state_arrays(load_safetensors(path / "optimizer.safetensors", mmap=False),
                          int(meta["step"]))
    return opt.t


def _truncate_log(path: Path, step: int) -> None:
    """Keep the log records up to ``step`` (a resumed run rewrites what came after)."""
    if not path.exists():
        return
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines()
             if ln.strip() and json.loads(ln)["step"] <= step]
    path.write_text("".join(ln + "\n" for ln in lines), encoding="utf-8")
