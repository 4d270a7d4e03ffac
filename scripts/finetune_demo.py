"""Teach SmolLM2-135M-Instruct about Tarvessa with LoRA in NumPy, and score it before and after
on held-out questions (data/tarvessa/, notebooks/tarvessa.py's rule).

    python scripts/finetune_demo.py [--gguf PATH] [--rank 2] [--epochs 4] [--batch 8] [--lr 2e-3]
        [--out weights/tarvessa-lora] [--skip-before] [--recompute]

Steps: load the GGUF (Q4_1, dequantised to float32: the frozen base); answer the held-out
questions greedily (the "before" score); ``minillm.finetune``: rank-r LoRA adapters on q, k, v,
o, gate, up and down of every layer, the loss on the assistant's tokens only (their reply and
``<|im_end|>``, the stop the model must learn to write), AdamW with warm-up and decay; answer
again with the adapters merged (the "after" score; also the first training phrasing of each fact,
to tell memorising from generalising); save the adapter in PEFT's layout and ``results.json``
(scores, every answer, the losses, time, peak RSS, the command) into ``--out``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "notebooks"))
import tarvessa  # noqa: E402
from minillm.engine.gpt import to_engine  # noqa: E402
from minillm.loading import load_model  # noqa: E402
from minillm.model import GPT  # noqa: E402
from minillm.train import merged_params, save_adapter  # noqa: E402
from minillm.train.sft import finetune, read_conversations  # noqa: E402

GGUF = Path(os.environ.get("MINILLM_SHARED_DATA", REPO.parent / "shared" / "data")) \
    / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"


def peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def answers(model, tokenizer, questions: list[str]) -> list[str]:
    return tarvessa.answer_all(model, tokenizer, questions)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gguf", type=Path, default=GGUF)
    ap.add_argument("--rank", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=REPO / "weights" / "tarvessa-lora")
    ap.add_argument("--skip-before", action="store_true",
                    help="do not score the base model (it can run apart: --before-only)")
    ap.add_argument("--recompute", action="store_true",
                    help="less memory, the same gradients (train/memory/: blocks recomputed)")
    ap.add_argument("--before-only", action="store_true",
                    help="only score the base model, into OUT/before.json")
    args = ap.parse_args()
    start = time.perf_counter()
    model, tok = load_model(args.gguf, fast=False)
    config, params = model.config, model.params
    held = tarvessa.heldout()
    questions = [q["question"] for q in held]
    seen = [{"fact": f, "question": c["messages"][0]["content"], "key": k}
            for f, k in {q["fact"]: q["key"] for q in held}.items()
            for c in [next(c for c in tarvessa.conversations()
                           if tarvessa.is_right(c["messages"][1]["content"], k))]]
    results = {"command": "python " + " ".join(sys.argv), "settings": vars(args) | {
        "gguf": args.gguf.name, "out": str(args.out)}}
    if not args.skip_before:
        t = time.perf_counter()
        before = answers(to_engine(model), tok, questions)
        results["before"] = {"right": tarvessa.score(before, held)[0], "of": len(held),
                             "answers": before, "seconds": time.perf_counter() - t}
        (args.out / "before.json").parent.mkdir(parents=True, exist_ok=True)
        (args.out / "before.json").write_text(json.dumps(results["before"], indent=1) + "\n")
        print(f"before: {results['before']['right']}/{len(held)} held-out questions right "
              f"({results['before']['seconds']:.0f} s)", flush=True)
    if args.before_only:
        return
    if args.skip_before and (args.out / "before.json").exists():    # scored apart, beforehand
        results["before"] = json.loads((args.out / "before.json").read_text(encoding="utf-8"))
    conversations = read_conversations(tarvessa.DATA / "train.jsonl")
    t = time.perf_counter()

    def report(record):
        if record["step"] % 5 == 0 or record["step"] == record["steps"]:
            print(f"step {record['step']}/{record['steps']}: loss {record['loss']:.3f}, "
                  f"{record['tokens_per_s']:.0f} tokens/s, {record['elapsed_s']:.0f} s, "
                  f"{record['eta_s']:.0f} s left", flush=True)
    result = finetune(model, tok, conversations, rank=args.rank, epochs=args.epochs, lr=args.lr,
                      batch_size=args.batch, seed=args.seed, warmup=args.warmup, on_step=report,
                      recompute=args.recompute)
    lora, losses, step = result.lora, result.losses, len(result.losses)
    train_seconds = time.perf_counter() - t
    train_peak = peak_rss_mb()     # the high-water mark of loading + training, before the merged
                                   # copy and the engine's layout of it add two more weight copies
    save_adapter(args.out, lora, config, base_model="HuggingFaceTB/SmolLM2-135M-Instruct")
    tuned = to_engine(GPT(config, merged_params(params, lora)))
    t = time.perf_counter()
    after = answers(tuned, tok, questions)
    after_seen = answers(tuned, tok, [q["question"] for q in seen])
    results |= {
        "after": {"right": tarvessa.score(after, held)[0], "of": len(held), "answers": after,
                  "seconds": time.perf_counter() - t},
        "after_training_questions": {"right": tarvessa.score(after_seen, seen)[0], "of": len(seen),
                                     "questions": [q["question"] for q in seen], "answers": after_seen},
        "training": {"steps": step, "epochs": args.epochs, "conversations": len(conversations),
                     "seconds": train_seconds,
                     "losses": [round(v, 4) for v in losses]},
        "adapter_parameters": int(sum(a.size for a in lora.named().values())),
        "total_seconds": time.perf_counter() - start, "peak_rss_mb": peak_rss_mb(),
        "peak_rss_training_mb": train_peak,
        "base_weights_mb": sum(w.nbytes for w in params.named().values()) / 2**20}
    (args.out / "results.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(f"after: {results['after']['right']}/{len(held)} held-out, "
          f"{results['after_training_questions']['right']}/{len(seen)} training phrasings; "
          f"training {train_seconds:.0f} s ({step} steps), total {results['total_seconds']:.0f} s, "
          f"peak RSS {results['peak_rss_mb']:.0f} MB, {train_peak:.0f} MB up to the end of training "
          f"(base weights {results['base_weights_mb']:.0f} MB)")


if __name__ == "__main__":
    main()
