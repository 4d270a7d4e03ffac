"""Supervised fine-tuning on conversations: LoRA (default) or full, with exact resume.

    examples = [render(tokenizer, c, fmt) for c in conversations]     # ids + counted (mask.py)
    for step in start … steps − 1:
        rows = batch_indices(n, batch, seed, step)                     # batches.py: (seed, step)
        x, y, m = pad_rows(examples[rows])                             # [B, T] each
        loss, grads = lora_loss_and_grads(params, config, lora, x, y, m)   # or loss_and_grads
        clip_grad_norm(grads, grad_clip); opt.step(grads, lr_at(step))
        every eval_every steps: the held-out score, in the step's record (evaluate.py)
        every checkpoint_every steps: OUT/checkpoint/ (resume.py: the adapter or the model,
        AdamW's state, the manifest; the rotation of train/checkpoint.py)

The loss is the mean over the assistant's tokens of the batch (mask.py): −Σ m log p / Σ m.
``evaluate_conversations`` scores held-out conversations the same way (loss and the share of
counted tokens the model ranks first), without training.

Example::

    result = finetune(model, tokenizer, read_conversations("chat.jsonl"), rank=8, steps=100)
    result.lora      # the adapters (save_adapter(folder, result.lora, model.config))
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from minillm.train.grad_model import check_trainable, loss_and_grads
from minillm.train.lora.adapters import LoRA, init_lora, lora_loss_and_grads
from minillm.train.lora.files import peft_names
from minillm.train.loop import TrainingDiverged, TrainingInterrupted
from minillm.train.memory.recompute import loss_and_grads_recompute
from minillm.train.optim import AdamW, clip_grad_norm, lr_at
from minillm.train.sft.batches import (batch_indices, check_lengths, pack_rows, pad_rows,
                                       steps_per_epoch, too_long)
from minillm.train.sft.data import check_conversation
from minillm.train.sft.evaluate import evaluate_examples
from minillm.train.sft.mask import TooLong, render
from minillm.train.sft.resume import Run, dated_as_begun
from minillm.train.sft.settings import FinetuneSettings


@dataclass
class FinetuneResult:
    """lora: the trained adapters (None for full fine-tuning, where ``model`` itself changed);
    losses: the training loss of every step run; eval: ``evaluate_conversations`` of the held-out
    conversations after the last step (None without them); evals: with ``eval_every``, the
    held-out score every that many steps run by this call, {"step", "loss", "accuracy", "tokens"}
    (a resumed run's earlier ones are in its train_log.jsonl)."""
    model: object
    lora: LoRA | None
    settings: FinetuneSettings
    losses: list = field(default_factory=list)
    eval: dict | None = None
    evals: list = field(default_factory=list)


def render_all(tokenizer, conversations, fmt, limit: int, what: str) -> list:
    """Each conversation checked (data.py's rules), rendered and within ``limit`` tokens."""
    if isinstance(conversations, (str, bytes, dict)) or not conversations:
        raise ValueError(f"expected a non-empty list of {what}s, each a list of messages "
                         f"(read_conversations(path) reads a JSONL file), got {conversations!r:.60}")
    for n, messages in enumerate(conversations, start=1):
        check_conversation({"messages": messages}, f"{what} {n}")
    fmt = chat_format_for(tokenizer, fmt)
    fmt.check_tokenizer(tokenizer)     # chat's own rule: what chat would refuse is not trained
    examples = []
    for n, c in enumerate(conversations, start=1):
        try:
            examples.append(render(tokenizer, c, fmt, limit))
        except TooLong as exc:                  # (measured before the turns are: mask.render)
            raise ValueError(too_long(what, n, exc.n_tokens, limit)) from None
    check_lengths(examples, limit, what)
    return examples


def chat_format_for(tokenizer, chat_format):
    """A format object as given, else the one ``chat`` would use (chat/formats/detect.py): the
    name asked for, or the model's template's, or ChatML — so a model is trained in the very
    format it is later talked to in."""
    if chat_format is not None and not isinstance(chat_format, str):
        return chat_format
    from minillm.chat.formats.detect import choose_format
    return choose_format(tokenizer, chat_format)[0]


def finetune(model, tokenizer, conversations, *, rank: int = 8, alpha=None, targets=None,
             full: bool = False, steps: int | None = None, epochs: int = 1, lr: float = 1e-3,
             batch_size: int = 4, seed: int = 0, max_tokens: int | None = None,
             eval_conversations=None, chat_format=None, on_step=None, out=None,
             resume: bool = False, overwrite: bool = False, base_model: str | None = None,
             stop=None, **more) -> FinetuneResult:
    """Fine-tune ``model`` (plain arrays: ``load_model(path, fast=False)``) on ``conversations``
    (lists of {"role", "content"}: data.py). LoRA of ``rank`` on ``targets`` by default; ``full``
    trains every weight in place. ``on_step(record)`` after every step (step, loss, lr,
    tokens_per_s, eta_s; with ``eval_every=N`` every N-th step also eval_loss and eval_accuracy,
    the held-out score of ``eval_conversations`` then, logged too); ``recompute=True``: the same
    gradients in less memory (train/memory/recompute.py); ``out``: checkpoints in out/checkpoint
    (resume.py), ``resume`` continues the run there exactly, ``overwrite`` (a new run) deletes an
    earlier run's output there once every check has passed; ``stop``: asked before every step,
    True -> a checkpoint of the steps done (with ``out``) and ``TrainingInterrupted`` (the CLI's
    Ctrl-C). ``more``: the other
    ``FinetuneSettings`` fields."""
    check_trainable(model.config)
    if resume and out is None:
        raise ValueError("resume=True needs out=, the folder of the run to continue")
    s = FinetuneSettings(rank=rank, alpha=alpha, targets=targets, full=full, steps=steps,
                         epochs=epochs, batch=batch_size, lr=lr, seed=seed, max_tokens=max_tokens,
                         **more)
    config = model.config
    limit = config.n_ctx if s.max_tokens is None else s.max_tokens
    if not 2 <= limit <= config.n_ctx:
        raise ValueError(f"max_tokens must be in [2, n_ctx = {config.n_ctx}], got {limit}")
    chat_format = chat_format_for(tokenizer, chat_format)
    if resume:                                  # SmolLM3's date: the one the run began with
        chat_format = dated_as_begun(out, chat_format, s.full)
    examples = render_all(tokenizer, conversations, chat_format, limit, "conversation")
    held_out = None if not eval_conversations else \
        render_all(tokenizer, eval_conversations, chat_format, limit, "held-out conversation")
    if s.eval_every is not None and not held_out:
        raise ValueError("eval_every needs eval_conversations: the held-out conversations to score")
    total = s.steps or s.epochs * steps_per_epoch(len(examples), s.batch)
    if s.warmup > total:
        raise ValueError(f"warmup {s.warmup} is longer than the run's {total} steps: the learning "
                         f"rate would never reach lr; take fewer warmup steps or more steps")
    lora = None if s.full else init_lora(model.params, s.rank, np.random.default_rng(s.seed),
                                         s.alpha, s.targets)
    opt = AdamW(model.params.named() if s.full else lora.named(), weight_decay=s.weight_decay)
    if lora is not None and out is not None:
        peft_names(config)              # checkpoints hold PEFT's layout: a ValueError now, not later
    run = Run(out, model, lora, opt, s, examples, held_out, base_model) if out is not None else None
    if run:
        run.chat_date = chat_format.options.get("date_string")
    start = run.resume() if (run and resume) else 0
    if run and not resume:
        run.start(clear=overwrite)
    min_lr = s.lr / 10 if s.min_lr is None else s.min_lr
    result = FinetuneResult(model, lora, s)
    t0 = t_last = time.perf_counter()
    saved = start if resume else None                # the step the newest checkpoint holds
    for step in range(start, total):
        if stop is not None and stop():              # between steps only: the state is whole
            if run and saved != step:
                run.checkpoint(step)
            raise TrainingInterrupted(step, run.out / "checkpoint" if run else None, total)
        chosen = [examples[i] for i in batch_indices(len(examples), s.batch, s.seed, step)]
        x, y, m, segments = make_batch(chosen, s, limit)                # [B, T] each
        with np.errstate(over="ignore", invalid="ignore"):     # a diverging run: checked below
            if s.full:
                step_of = loss_and_grads_recompute if s.recompute else loss_and_grads
                loss, grads = step_of(model.params, config, x, y, m, segments)
            else:
                loss, grads = lora_loss_and_grads(model.params, config, lora, x, y, m, segments,
                                                  recompute=s.recompute)
            norm = clip_grad_norm(grads, s.grad_clip)
        if not (math.isfinite(loss) and math.isfinite(norm)):
            raise TrainingDiverged(f"fine-tuning diverged at step {step + 1}: loss {loss}, "
                                   f"gradient norm {norm}; try a lower lr (it was {s.lr:g})")
        rate = lr_at(step, s.lr, min_lr, s.warmup, total)
        opt.step(grads, rate)
        result.losses.append(loss)
        now, done = time.perf_counter(), step + 1
        tokens = sum(len(ids) - 1 for ids, _ in chosen)                 # the batch's real positions
        record = {"step": done, "steps": total, "loss": loss, "lr": rate, "grad_norm": norm,
                  "tokens": tokens, "counted": int(m.sum()),
                  "tokens_per_s": tokens / max(now - t_last, 1e-9), "elapsed_s": now - t0,
                  "eta_s": (now - t0) / (done - start) * (total - done)}
        if s.eval_every is not None and done % s.eval_every == 0:     # (after the update)
            score = evaluate_examples(model, held_out, lora, s.batch)
            record |= {"eval_loss": score["loss"], "eval_accuracy": score["accuracy"]}
            result.evals.append({"step": done, **score})
            now = time.perf_counter()                                   # (not in the next tok/s)
        t_last = now
        if run:
            run.log(record)
            if done % s.checkpoint_every == 0 or done == total:
                run.checkpoint(done)
                saved = done
        if on_step is not None:
            on_step(record)
    if held_out:
        last = result.evals[-1] if result.evals and result.evals[-1]["step"] == total else None
        result.eval = {k: v for k, v in last.items() if k != "step"} if last else \
            evaluate_examples(model, held_out, lora, s.batch)
    return result


def make_batch(examples, s: FinetuneSettings, limit: int):
    """Padded rows (segments None) or, with ``s.pack``, packed rows of ``limit − 1`` positions."""
    if s.pack:
        return pack_rows(examples, limit - 1)
    return (*pad_rows(examples), None)


def evaluate_conversations(model, tokenizer, conversations, lora: LoRA | None = None,
                           chat_format=None, batch_size: int = 8) -> dict:
    """Score held-out conversations on their assistant tokens (those training counts):
    {"loss": mean −log p, "accuracy": the share the model ranks first, "tokens": how many}."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    examples = render_all(tokenizer, conversations, chat_format, model.config.n_ctx,
                          "held-out conversation")
    return evaluate_examples(model, examples, lora, batch_size)
