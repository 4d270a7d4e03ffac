"""``minillm finetune``: teach a chat model from conversations, with LoRA (default) or in full.

    python -m minillm finetune --model smollm2 --data chat.jsonl --lora 8 --out DIR
        [--eval held_out.jsonl [--eval-every N]] [--recompute] [--steps N | --epochs N]
        [--lr 1e-3] [--warmup 0] [--batch 4] [--seed 0] [--chat-format NAME]
        [--targets q,k,v,o,gate,up,down] [--alpha 2×RANK] [--full] [--merge] [--pack] [--max-tokens N]
        [--checkpoint-every 50] [--resume] [--overwrite]

--data: one conversation per line, ``{"messages": [{"role": …, "content": …}, …]}``; the loss
counts the assistant's tokens only (train/sft/). Writes into OUT:

    LoRA    adapter_config.json + adapter_model.safetensors   PEFT's layout (peft reads it too)
            + with --merge: config.json + model.safetensors (the merged model)
    --full  config.json + model.safetensors
    both    the tokenizer (tokenizer.json, tokenizer_config.json)
    always  train_log.jsonl (one record per step) and, with --eval, eval.json (held-out loss
            and accuracy on the assistant's tokens, before and after; with --eval-every N also
            every N steps: "during", and eval_loss / eval_accuracy in those steps' records and
            progress lines)

--recompute: the same steps in less memory (each block recomputed in the backward, the head and
its loss a chunk of rows at a time; 15–40% more CPU time): SmolLM2-135M at batch 4 × 128
tokens peaks at 1.4× its float32 weights instead of 2.8× (benchmarks/README.md).

``python -m minillm chat --model OUT`` then talks to the result: the merged model when OUT has
one, else the base model (named in adapter_config.json) with the adapter merged on loading.

Safety as ``minillm train``'s: OUT must be new or empty (or ``--resume``, or ``--overwrite``: an
earlier run's files there, a sharded model's and the checkpoints too, deleted once every check
has passed, before the first step);
OUT/checkpoint/ (every ``--checkpoint-every`` steps; the adapter or the model, AdamW's state and
a manifest that digests them, swapped in by renames) is what ``--resume`` continues from, bit for
bit, once it verifies; it is removed when the run has finished.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from minillm.cli.options import seed

TARGETS = {"q": "wq", "k": "wk", "v": "wv", "o": "wo", "gate": "w_gate", "up": "w_up",
           "down": "w_down"}
WRITTEN = ("adapter_config.json", "adapter_model.safetensors", "config.json", "model.safetensors",
           "tokenizer.json", "tokenizer_config.json", "tokenizer.json.vocab", "train_log.jsonl",
           "eval.json")


def add_arguments(p) -> None:
    p.add_argument("--model", required=True,
                   help="the base model: a checkpoint folder, a .gguf file or a downloaded "
                        "model's name (smollm2)")
    p.add_argument("--data", required=True, help="JSONL of conversations to learn from")
    p.add_argument("--out", required=True, help="output folder (the adapter, the log, eval.json)")
    p.add_argument("--eval", default=None, metavar="FILE",
                   help="JSONL of held-out conversations, scored before and after")
    p.add_argument("--eval-every", type=int, default=None, metavar="N",
                   help="also score --eval every N steps (progress lines, train_log.jsonl, eval.json)")
    p.add_argument("--recompute", action="store_true",
                   help="less memory, the same gradients: recompute each block in the backward "
                        "(15-40%% more time)")
    kind = p.add_mutually_exclusive_group()
    kind.add_argument("--lora", type=int, default=8, metavar="RANK", help="LoRA rank")
    kind.add_argument("--full", action="store_true",
                      help="train every weight instead of adapters (small models: 16 bytes of "
                           "memory per parameter)")
    p.add_argument("--alpha", type=float, default=None, help="LoRA's α (default: 2 × rank)")
    p.add_argument("--targets", default=",".join(TARGETS),
                   help="the projections to adapt, comma-separated, from " + ",".join(TARGETS))
    length = p.add_mutually_exclusive_group()
    length.add_argument("--steps", type=int, default=None, help="optimizer steps")
    length.add_argument("--epochs", type=int, default=1, help="passes over --data")
    p.add_argument("--chat-format", default=None, metavar="NAME",
                   help="the conversations' chat format (default: the model's template's, as chat "
                        "picks it; else ChatML)")
    p.add_argument("--lr", type=float, default=1e-3, help="peak learning rate (cosine to lr/10)")
    p.add_argument("--warmup", type=int, default=0, help="steps of linear learning-rate warmup")
    p.add_argument("--batch", type=int, default=4, help="conversations per step")
    p.add_argument("--seed", type=seed, default=0, help="adapter initialisation and batch order")
    p.add_argument("--max-tokens", type=int, default=None,
                   help="refuse longer conversations (default: the model's context)")
    p.add_argument("--pack", action="store_true",
                   help="pack several conversations per row (attention stays inside each)")
    p.add_argument("--merge", action="store_true",
                   help="also write the merged model (W + (α/r)·A B) into OUT")
    p.add_argument("--checkpoint-every", type=int, default=50,
                   help="steps between checkpoints (OUT/checkpoint/, what --resume continues from)")
    p.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint")
    p.add_argument("--overwrite", action="store_true",
                   help="write into a non-empty OUT: an earlier run's files there (minillm's "
                        "only) are deleted before the first step")


def parse_targets(text: str) -> list[str]:
    """"q,v,down" -> ["wq", "wv", "w_down"], or a ValueError naming the allowed ones."""
    names = [t.strip() for t in text.split(",") if t.strip()]
    wrong = [t for t in names if t not in TARGETS]
    if not names or wrong:
        raise ValueError(f"--targets {text!r}: give a comma-separated list of "
                         f"{', '.join(TARGETS)}")
    return [TARGETS[t] for t in dict.fromkeys(names)]


def run(args) -> int:
    from minillm.cli._train_checks import check_out
    from minillm.io.folder_lock import refuse_if_held, run_lock
    out = Path(args.out)
    try:
        check_out(out, args.resume, args.overwrite)     # before OUT is made or locked
    except ValueError:
        refuse_if_held(out)                             # (another run's half-swapped files)
        raise
    with run_lock(out):                                  # one run at a time writes into OUT
        return _run(args, out)


def _run(args, out: Path) -> int:
    from minillm.cli._train_checks import check_out, check_rates
    from minillm.cli.resolve import resolve_model_path
    from minillm.io.atomic import atomic_write_text, refuse_link
    from minillm.io.download import MODELS
    from minillm.loading import load_model
    from minillm.train.checkpoint import SUFFIXES, find_checkpoint, remove_written
    from minillm.train.lora.adapters import merged_params
    from minillm.train.lora.files import save_adapter
    from minillm.train.manifest import ADAPTER_FILES, CHECKPOINT_FILES, OPTIMIZER
    from minillm.train.sft import evaluate_conversations, finetune, read_conversations
    from minillm.train.trainlog import LOG_NAME, log_records

    targets = parse_targets(args.targets)
    if args.eval_every is not None and not args.eval:
        raise ValueError("--eval-every needs --eval FILE: the held-out conversations to score")
    if args.full and (args.merge or args.alpha is not None or args.targets != ",".join(TARGETS)):
        raise ValueError("--merge and --alpha are for LoRA, as is --targets; --full trains the "
                         "weights themselves")
    check_out(out, args.resume, args.overwrite)         # (again, under the lock)
    for name in WRITTEN:
        refuse_link(out / name)
        if (out / name).exists() and not (out / name).is_file():        # (before training)
            raise ValueError(f"{out / name} is not a regular file (a folder?) but has the name of "
                             f"a file this run writes: move it out of {out} first")
    if args.chat_format is not None:            # a wrong name: refused before any work
        from minillm.chat.formats import get_format
        get_format(args.chat_format)
    check_rates(args.lr)
    for flag, value in (("--steps", args.steps), ("--eval-every", args.eval_every),
                        ("--max-tokens", args.max_tokens)):
        if value is not None and value < 1:         # (None: the flag not given)
            raise ValueError(f"{flag} must be a positive integer, got {value}")
    conversations = _flagged("--data", read_conversations, args.data)
    held_out = _flagged("--eval", read_conversations, args.eval) if args.eval else None
    if args.resume:         # before anything is loaded or written: a checkpoint that verifies
        find_checkpoint(out, required=CHECKPOINT_FILES if args.full else (*ADAPTER_FILES, OPTIMIZER))
    path = resolve_model_path(args.model)
    if out.exists() and path.resolve() == out.resolve():
        raise ValueError(f"--model {args.model} is --out: the run would write over the model it "
                         f"reads; choose another --out")
    from minillm.cli._train_checks import check_inputs
    check_inputs(out, {"--data": args.data, "--eval": args.eval, "--model": path}, WRITTEN)
    base = args.model if args.model in MODELS else str(path.resolve())
    model, tokenizer = load_model(path, fast=False)        # plain arrays: the trainer's
    if tokenizer is None:
        raise ValueError(f"{path} carries no tokenizer; fine-tuning renders conversations with it")
    if not args.full and model.config.arch != "llama":
        raise ValueError(f"--model {args.model} is a GPT-2-style model (one fused Q|K|V "
                         f"matrix): LoRA and --targets are for the Llama family (Llama, SmolLM2, "
                         f"Qwen2, Mistral, Gemma, Phi-3, OLMo 2: separate q, k, v, o, gate, up, "
                         f"down projections); fine-tune it with --full instead")
    from minillm.chat.formats.detect import choose_format
    fmt, note = choose_format(tokenizer, args.chat_format)
    print(f"minillm finetune: {note}", file=sys.stderr)
    say = print if not sys.stdout.isatty() else _bar_printer()
    how = "full fine-tuning" if args.full else f"LoRA rank {args.lora} on {args.targets}"
    say(f"{len(conversations)} conversations; {how} of {path.name} "
        f"({model.num_parameters():,} parameters)")
    before = evaluate_conversations(model, tokenizer, held_out, chat_format=fmt) if held_out else None
    from minillm.cli.interrupt import FirstInterrupt, interrupted
    from minillm.train.loop import TrainingInterrupted
    stop = FirstInterrupt().install()      # Ctrl-C: a checkpoint between steps, then exit 130
    try:
        result = finetune(model, tokenizer, conversations, rank=args.lora, alpha=args.alpha,
                          targets=targets, full=args.full, steps=args.steps, epochs=args.epochs,
                          lr=args.lr, warmup=args.warmup, batch_size=args.batch, seed=args.seed,
                          max_tokens=args.max_tokens, pack=args.pack, eval_conversations=held_out, chat_format=fmt,
                          checkpoint_every=args.checkpoint_every, out=out, resume=args.resume,
                          overwrite=args.overwrite,
                          eval_every=args.eval_every, recompute=args.recompute,
                          base_model=base, on_step=lambda r: show(r, say), stop=stop)
    except TrainingInterrupted as exc:
        return interrupted(exc)
    finally:
        stop.restore()
    if result.lora is not None:
        save_adapter(out, result.lora, model.config, base)
    if args.full or args.merge:
        params = model.params if args.full else merged_params(model.params, result.lora)
        type(model)(model.config, params).save_pretrained(out)
    tokenizer.save(out / "tokenizer.json")        # (count, tokenize --model OUT read it)
    if held_out:
        report = {"before": before, "after": result.eval, "conversations": len(held_out)}
        if args.eval_every is not None:     # from the log: a resumed run's earlier ones too
            report["during"] = [{"step": r["step"], "loss": r["eval_loss"],
                                 "accuracy": r["eval_accuracy"]}
                                for r in log_records(out / LOG_NAME) if "eval_loss" in r]
        atomic_write_text(out / "eval.json", json.dumps(report, indent=2) + "\n")
    for suffix in SUFFIXES:
        remove_written(out / ("checkpoint" + suffix))
    if held_out:
        say(f"held-out assistant tokens: loss {before['loss']:.4f} -> {result.eval['loss']:.4f}, "
            f"accuracy {before['accuracy']:.1%} -> {result.eval['accuracy']:.1%}")
    say(f"done: written to {out}; talk to it: python -m minillm chat --model {out}")
    return 0


def show(r: dict, say) -> None:
    """Every step on a terminal (one bar, redrawn); else about fifty lines per run, and every
    step with a held-out score."""
    if sys.stdout.isatty() or r["step"] % max(1, r["steps"] // 50) == 0 or r["step"] == r["steps"] \
            or "eval_loss" in r:
        say(progress_line(r))


def progress_line(r: dict, width: int = 20) -> str:
    """One step's progress: ``step 12/100 [##------] loss 1.2345 | 530 tok/s | 0:42 left``,
    with ``| held-out loss 1.5000, accuracy 61.0%`` after the loss on an evaluated step."""
    filled = round(width * r["step"] / r["steps"])
    eta = int(r["eta_s"])
    held = f" | held-out loss {r['eval_loss']:.4f}, accuracy {r['eval_accuracy']:.1%}" \
        if "eval_loss" in r else ""
    return (f"step {r['step']}/{r['steps']} [{'#' * filled}{'-' * (width - filled)}] "
            f"loss {r['loss']:.4f}{held} | {r['tokens_per_s']:,.0f} tok/s | "
            f"{eta // 3600}:{eta // 60 % 60:02d}:{eta % 60:02d} left")


def _bar_printer():
    """On a terminal the step lines overwrite each other (one bar); other lines end it."""
    state = {"bar": False, "last": 0.0}

    def say(line: str) -> None:
        if line.startswith("step "):
            now = time.monotonic()
            if now - state["last"] < 0.1 and "left" in line and not line.endswith("0:00:00 left"):
                return                                   # at most ten redraws a second
            state["last"], state["bar"] = now, True
            sys.stdout.write("\r" + line + "\033[K")
        else:
            sys.stdout.write(("\n" if state["bar"] else "") + line + "\n")
            state["bar"] = False
        sys.stdout.flush()
    return say


def _flagged(flag: str, read, path):
    """``read(path)``, its errors beginning with the flag that named the file (``--data …``)."""
    try:
        return read(path)
    except FileNotFoundError:
        raise FileNotFoundError(f"{flag} {path}: no such file (expected a JSONL file of "
                                f"conversations)") from None
    except ValueError as exc:
        raise ValueError(f"{flag} {exc}") from None
