"""``minillm train``: train a BPE tokenizer on a text file, then a GPT-2-style model on it.

    python -m minillm train --data corpus.txt --out weights/NAME [--vocab-size 2048 --layers 4
        --d-model 128 --heads 4 --context 128 --steps 3000 --batch 16 --seed 0]

Writes into OUT: tokenizer.json (+ .vocab dump), config.json + model.safetensors (loadable by
``minillm generate --model OUT``), train_log.jsonl, val_sample.txt (the first ~40 KB of the
held-out text) and eval.json (final losses in nats per token and bits per character).
While training, OUT/checkpoint/ holds the latest checkpoint; ``--resume`` continues from it
(with the same arguments) and it is removed once the run has finished.
"""
from __future__ import annotations

import json
import shutil
import sys
import time
from dataclasses import asdict
from pathlib import Path

VAL_SAMPLE_BYTES = 40_000


def add_arguments(p) -> None:
    p.add_argument("--data", required=True, help="UTF-8 text file to train on")
    p.add_argument("--out", required=True, help="output directory (e.g. weights/NAME)")
    p.add_argument("--vocab-size", type=int, default=2048, help="BPE vocabulary (256 bytes + merges)")
    p.add_argument("--pattern", action="append", default=None, metavar="REGEX_OR_NAME",
                   help="pre-tokenisation pattern (gpt2, cl100k, o200k or a regex); repeat it "
                        "for several stages, e.g. --pattern '\\p{Han}' --pattern gpt2 to make "
                        "each Chinese character its own piece (default: gpt2)")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--d-model", type=int, default=128)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--context", type=int, default=128, help="tokens per training window (n_ctx)")
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lr", type=float, default=2e-3, help="peak learning rate (after warmup)")
    p.add_argument("--min-lr", type=float, default=None, help="final learning rate (default lr/10)")
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--eval-every", type=int, default=200)
    p.add_argument("--val-fraction", type=float, default=0.05, help="held-out tail of the text")
    p.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint")


def run(args) -> int:
    from minillm.config import ModelConfig
    from minillm.model import GPT
    from minillm.tokenizer import Tokenizer
    from minillm.train.data import split_text, token_array
    from minillm.train.loop import LOG_NAME, TrainSettings, evaluate_text, train

    out = Path(args.out)
    data = Path(args.data)
    if not data.is_file():
        raise FileNotFoundError(f"--data {data}: no such file")
    text = data.read_text(encoding="utf-8")
    train_text, val_text = split_text(text, args.val_fraction)
    settings = TrainSettings(steps=args.steps, batch=args.batch, lr=args.lr,
                             min_lr=args.min_lr if args.min_lr is not None else args.lr / 10,
                             warmup=args.warmup, weight_decay=args.weight_decay,
                             eval_every=args.eval_every, seed=args.seed)

    def model_config(vocab_size):
        return ModelConfig(vocab_size=vocab_size, n_ctx=args.context, d_model=args.d_model,
                           n_heads=args.heads, n_layers=args.layers, arch="gpt2")
    model_config(args.vocab_size)             # bad shapes fail now, not after the tokenizer
    out.mkdir(parents=True, exist_ok=True)
    say = _printer()

    tok_path = out / "tokenizer.json"
    t0 = time.perf_counter()
    if args.resume and tok_path.is_file():
        tok = Tokenizer.load(tok_path)
    else:       # the tokenizer learns from the training part only: validation stays unseen
        tok = Tokenizer.train(train_text, args.vocab_size, pattern=_stages(args.pattern))
        tok.save(tok_path)
    train_ids = token_array(tok.encode_ordinary(train_text), tok.vocab_size)
    val_ids = token_array(tok.encode_ordinary(val_text), tok.vocab_size)
    say(f"tokenizer: {tok.vocab_size} tokens; train {len(train_ids):,} tokens "
        f"({len(train_text) / len(train_ids):.2f} chars/token), validation {len(val_ids):,} "
        f"tokens ({time.perf_counter() - t0:.0f} s)")

    config = model_config(tok.vocab_size)
    model = GPT(config, seed=args.seed)
    say(f"model: {model.num_parameters():,} parameters, {config.n_layers} layers, "
        f"d_model {config.d_model}, {config.n_heads} heads, context {config.n_ctx}")
    sample = _head_bytes(val_text, VAL_SAMPLE_BYTES)
    (out / "val_sample.txt").write_text(sample, encoding="utf-8")
    if not args.resume:
        (out / LOG_NAME).unlink(missing_ok=True)

    train(model, train_ids, val_ids, out, settings, resume=args.resume, progress=say)
    model.save_pretrained(out)

    report = {"val_sample": evaluate_text(model, tok, sample),
              "val_split": evaluate_text(model, tok, val_text, max_windows=256),
              "train_split": evaluate_text(model, tok, train_text[:2_000_000], max_windows=256),
              "settings": asdict(settings), "parameters": model.num_parameters()}
    (out / "eval.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    with open(out / LOG_NAME, "a", encoding="utf-8") as f:
        f.write(json.dumps({"step": settings.steps, "final": True,
                            "val_sample_loss": report["val_sample"]["loss"],
                            "val_loss": report["val_split"]["loss"],
                            "train_loss": report["train_split"]["loss"]}) + "\n")
    shutil.rmtree(out / "checkpoint", ignore_errors=True)
    say(f"done: train {report['train_split']['loss']:.4f}, validation "
        f"{report['val_split']['loss']:.4f} nats/token "
        f"({report['val_split']['bits_per_char']:.3f} bits/char); val_sample.txt "
        f"{report['val_sample']['loss']:.4f} nats/token; written to {out}")
    return 0


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
