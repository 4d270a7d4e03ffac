"""``minillm train``: train a BPE tokenizer on a text file, then a GPT-2-style model on it (or,
with ``--arch llama``, a Llama-style one: RMSNorm, RoPE, SwiGLU, ``--kv-heads`` KV heads).

    python -m minillm train --data corpus.txt --out weights/NAME [--vocab-size 2048 --layers 4
        --d-model 128 --heads 4 --context 128 --steps 3000 --batch 16 --seed 0
        --arch llama --kv-heads 2]

Writes into OUT: tokenizer.json + tokenizer_config.json (Hugging Face's format; + a .vocab dump),
config.json + model.safetensors (loadable by
``minillm generate --model OUT``; with ``--max-shard-size 500MB``, weights over that size as
shards + model.safetensors.index.json, as transformers splits them), train_log.jsonl,
val_sample.txt (the first ~40 KB of the held-out text) and eval.json (final losses in nats per token and bits per character).
While training, OUT/checkpoint/ holds the latest checkpoint (every ``--checkpoint-every`` steps);
``--resume`` continues from it (with the same arguments) once its manifest verifies, and refuses
before writing anything when none does; it is removed once the run has finished. OUT/best/ holds the model
with the lowest validation loss when that is not the final one.

Nothing is lost: OUT must be new or empty (or ``--resume`` of the run in it, or ``--overwrite``
to replace minillm's files there); every file is written whole or not at all (io/atomic.py); a
link at any name minillm writes in OUT is refused; a loss that stops being finite ends the run
with an error and without saving over anything. One run at a time writes into an OUT (finetune's
lock, io/folder_lock.py: a second ``train`` into it is refused at once, naming the first's pid).
"""
from __future__ import annotations

import json
import shlex
import sys
import time
from dataclasses import asdict
from pathlib import Path

from minillm.cli.options import seed
from minillm.cli._train_checks import (check_data, check_memory, check_out, check_pattern,
                                       check_rates, check_schedule)

VAL_SAMPLE_BYTES = 40_000


def add_arguments(p) -> None:
    p.add_argument("--data", required=True, help="UTF-8 text file to train on")
    p.add_argument("--out", required=True, help="output directory (e.g. weights/NAME)")
    p.add_argument("--vocab-size", type=int, default=2048, help="BPE vocabulary (256 bytes + merges)")
    p.add_argument("--pattern", action="append", default=None, metavar="REGEX_OR_NAME",
                   help="pre-tokenisation pattern (gpt2, cl100k, o200k or a regex); repeat it "
                        "for several stages, e.g. --pattern '\\p{Han}' --pattern gpt2 to make "
                        "each Chinese character its own piece (default: gpt2)")
    p.add_argument("--layers", type=int, default=4, help="transformer blocks")
    p.add_argument("--d-model", type=int, default=128, help="width of every token's vector")
    p.add_argument("--heads", type=int, default=4, help="attention heads")
    p.add_argument("--arch", choices=("gpt2", "llama"), default="gpt2",
                   help="gpt2: LayerNorm, GELU MLP, learned positions; llama: RMSNorm, SwiGLU, "
                        "RoPE, grouped-query attention (default: gpt2)")
    p.add_argument("--kv-heads", type=int, default=None,
                   help="key/value heads, a divisor of --heads (--arch llama only; default: "
                        "--heads)")
    p.add_argument("--context", type=int, default=128, help="tokens per training window (n_ctx)")
    p.add_argument("--steps", type=int, default=3000, help="optimizer steps")
    p.add_argument("--batch", type=int, default=16, help="training windows per step")
    p.add_argument("--seed", type=seed, default=0, help="initial weights and batch order")
    p.add_argument("--lr", type=float, default=2e-3, help="peak learning rate (after warmup)")
    p.add_argument("--min-lr", type=float, default=None, help="final learning rate (default lr/10)")
    p.add_argument("--warmup", type=int, default=100, help="steps of linear learning-rate warmup")
    p.add_argument("--weight-decay", type=float, default=0.1, help="AdamW's decoupled weight decay")
    p.add_argument("--eval-every", type=int, default=200, help="steps between validation losses")
    p.add_argument("--log-every", type=int, default=10,
                   help="steps between records of train_log.jsonl (and progress lines)")
    p.add_argument("--checkpoint-every", type=int, default=500,
                   help="steps between checkpoints (OUT/checkpoint/, what --resume continues from)")
    p.add_argument("--val-fraction", type=float, default=0.05, help="held-out tail of the text")
    p.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint")
    p.add_argument("--overwrite", action="store_true",
                   help="train into a non-empty OUT, replacing the files minillm writes there")
    p.add_argument("--max-shard-size", type=shard_size, default=None, metavar="SIZE",
                   help="split the final model's weights into shards of at most SIZE bytes "
                        "(an integer, or a number with KB, MB, GB or TB: 500MB, 2GB) with "
                        "model.safetensors.index.json, as transformers does (default: one file)")


def shard_size(text: str) -> int:
    """``--max-shard-size``'s type: bytes, from "1000000", "500MB" or "2GB" (hf/shard_write.py)."""
    import argparse
    from minillm.io.hf.shard_write import shard_limit
    try:
        return shard_limit(int(text) if text.strip().isdigit() else text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run(args) -> int:
    from minillm.config import ModelConfig
    from minillm.train.data import split_text
    from minillm.cli._input import DATA_LIMIT, read_text
    from minillm.train.loop import TrainSettings

    check_schedule(args.steps, args.warmup)        # checks that need no data come first
    check_rates(args.lr, args.min_lr)
    check_pattern(_stages(args.pattern))
    if args.kv_heads is not None and args.arch != "llama":
        raise ValueError("--kv-heads needs --arch llama (GPT-2 has one K/V head per query head)")
    out = Path(args.out)
    text = read_text(args.data, DATA_LIMIT, "--data")    # a file of bounded size, never a device
    if not text.strip():
        raise ValueError(f"--data {args.data} is empty (or only whitespace): train needs a UTF-8 "
                         f"text to learn from (a few hundred KB makes a first model)")
    train_text, val_text = split_text(text, args.val_fraction)
    settings = TrainSettings(steps=args.steps, batch=args.batch, lr=args.lr,
                             min_lr=args.min_lr if args.min_lr is not None else args.lr / 10,
                             warmup=args.warmup, weight_decay=args.weight_decay,
                             eval_every=args.eval_every, checkpoint_every=args.checkpoint_every,
                             log_every=args.log_every, seed=args.seed)

    def model_config(vocab_size):
        return ModelConfig(vocab_size=vocab_size, n_ctx=args.context, d_model=args.d_model,
                           n_heads=args.heads, n_layers=args.layers, arch=args.arch,
                           n_kv_heads=args.kv_heads)
    check_memory(model_config(args.vocab_size))   # bad shapes fail now, not after the tokenizer
    from minillm.io.folder_lock import refuse_if_held, run_lock
    try:
        check_out(out, args.resume, args.overwrite)     # before OUT is made or locked
    except ValueError:
        refuse_if_held(out)                             # (another run's half-swapped files)
        raise
    with run_lock(out):                           # one run at a time writes into OUT (finetune's)
        check_out(out, args.resume, args.overwrite)               # (again, under the lock)
        return _locked_run(args, out, train_text, val_text, settings, model_config)


def _locked_run(args, out, train_text, val_text, settings, model_config) -> int:
    from minillm.train.checkpoint import find_checkpoint
    # before anything is written: a checkpoint that verifies (kept: each file is hashed once)
    found = find_checkpoint(out) if args.resume else False
    out.mkdir(parents=True, exist_ok=True)
    say = _printer()
    from minillm.cli.interrupt import FirstInterrupt, interrupted
    from minillm.train.loop import TrainingInterrupted
    stop = FirstInterrupt().install()      # Ctrl-C: a checkpoint between steps, then exit 130
    try:
        trained = _prepare_and_train(args, out, found, train_text, val_text, settings,
                                   model_config, say, stop)
    except TrainingInterrupted as exc:
        return interrupted(exc)
    finally:
        stop.restore()
    return _finish(args, out, trained, settings, train_text, val_text, say)


def _prepare_and_train(args, out, found, train_text, val_text, settings, model_config, say, stop):
    """The tokenizer (trained, or the run's own on --resume), the model, then the steps."""
    from minillm import GPT
    from minillm.io.atomic import atomic_write_text
    from minillm.tokenizer import Tokenizer
    from minillm.train.data import token_array
    from minillm.train.loop import train
    tok_path = out / "tokenizer.json"
    t0 = time.perf_counter()
    if args.resume:
        if not tok_path.is_file():
            raise ValueError(f"nothing to resume in {out}: no tokenizer.json (run without --resume)")
        tok = Tokenizer.load(tok_path)
    else:       # the tokenizer learns from the training part only: validation stays unseen
        tok = Tokenizer.train(train_text, args.vocab_size, pattern=_stages(args.pattern))
    train_ids = token_array(tok.encode_ordinary(train_text), tok.vocab_size)
    val_ids = token_array(tok.encode_ordinary(val_text), tok.vocab_size)
    check_data(len(train_ids), len(val_ids), args.context)   # before OUT holds anything
    if not args.resume:
        tok.save(tok_path, model_max_length=args.context)   # HF format: AutoTokenizer reads it
    say(f"tokenizer: {tok.vocab_size} tokens; train {len(train_ids):,} tokens "
        f"({len(train_text) / len(train_ids):.2f} chars/token), validation {len(val_ids):,} "
        f"tokens ({time.perf_counter() - t0:.0f} s)")

    config = model_config(tok.vocab_size)
    model = GPT(config, seed=args.seed)
    say(f"model: {model.num_parameters():,} parameters, {config.n_layers} layers, "
        f"d_model {config.d_model}, {config.n_heads} heads"
        f"{f' ({config.n_kv_heads} KV heads)' if config.n_kv_heads != config.n_heads else ''}, "
        f"context {config.n_ctx}, {config.arch}")
    sample = _head_bytes(val_text, VAL_SAMPLE_BYTES)
    atomic_write_text(out / "val_sample.txt", sample)

    train(model, train_ids, val_ids, out, settings, resume=found, progress=say, stop=stop)
    return model, tok


def _finish(args, out, trained, settings, train_text, val_text, say) -> int:
    """The model saved, scored (eval.json), the checkpoint removed, a sample shown."""
    from minillm.io.atomic import atomic_write_text
    from minillm.train.checkpoint import SUFFIXES, remove_written
    from minillm.train.evaluate import evaluate_text
    from minillm.train.trainlog import LOG_NAME, append_record
    model, tok = trained
    sample = _head_bytes(val_text, VAL_SAMPLE_BYTES)
    model.save_pretrained(out, max_shard_size=args.max_shard_size)

    report = {"val_sample": evaluate_text(model, tok, sample),
              "val_split": evaluate_text(model, tok, val_text, max_windows=256),
              "train_split": evaluate_text(model, tok, train_text[:2_000_000], max_windows=256),
              "settings": asdict(settings), "parameters": model.num_parameters()}
    atomic_write_text(out / "eval.json", json.dumps(report, indent=2) + "\n")
    append_record(out / LOG_NAME, {"step": settings.steps, "final": True,
                                   "val_sample_loss": report["val_sample"]["loss"],
                                   "val_loss": report["val_split"]["loss"],
                                   "train_loss": report["train_split"]["loss"]})
    for suffix in SUFFIXES:
        remove_written(out / ("checkpoint" + suffix))
    say(f"done: train {report['train_split']['loss']:.4f}, validation "
        f"{report['val_split']['loss']:.4f} nats/token "
        f"({report['val_split']['bits_per_char']:.3f} bits/char); val_sample.txt "
        f"{report['val_sample']['loss']:.4f} nats/token; written to {out}")
    _tell_best(out, settings.steps, say)
    _show_sample(model, tok, out, val_text, say)
    return 0


def _tell_best(out: Path, last_step: int, say) -> None:
    """Say which folder holds the best model by validation loss (OUT/best/ or OUT itself)."""
    from minillm.train.checkpoint import remove_written
    from minillm.train.manifest import read_manifest
    try:
        best = read_manifest(out / "best")
    except ValueError:
        return
    if best["step"] == last_step:
        remove_written(out / "best")       # the final model is the best one: one copy is enough
        say(f"the final model (step {last_step}) has the best validation loss: {out}")
    else:
        say(f"{out} holds the final model (step {last_step}); the lowest validation loss "
            f"({best['val_loss']:.4f}) was at step {best['step']}: that model is in {out / 'best'}")


def _show_sample(model, tok, out: Path, val_text: str, say) -> None:
    """A short continuation of the held-out text's first words, and the command that makes more."""
    from minillm.decoding.generate import generate
    prompt = " ".join(val_text.split()[:3])[:40] or "\n"
    ids = tok.encode_ordinary(prompt)[-model.config.n_ctx // 2:]
    new = [s.id for s in generate(model, ids, min(40, model.config.n_ctx - len(ids)), seed=0,
                                  stop_ids=() if tok.eos_id is None else (tok.eos_id,))]
    say(f"sample: {prompt + tok.decode(new)!r}"[:300])
    say(f"more: python -m minillm generate --model {shlex.quote(str(out))} {shlex.quote(prompt)}")


def _stages(patterns):
    """--pattern values -> the tokenizer's list of stage regexes (names expanded), or None."""
    if not patterns:
        return None
    from minillm.tokenizer import NAMED_PATTERNS
    return [stage for p in patterns for stage in NAMED_PATTERNS.get(p, (p,))]


def _head_bytes(text: str, max_bytes: int) -> str:
    """The longest prefix of whole lines whose UTF-8 encoding fits in ``max_bytes``."""
    cut = text.encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")
    end = cut.rfind("\n")
    return cut[:end + 1] if end != -1 else cut


def _printer():
    def say(line: str) -> None:
        print(line, file=sys.stdout, flush=True)
    return say
