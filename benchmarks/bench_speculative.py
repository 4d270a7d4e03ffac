"""Speculative decoding on SmolLM2-135M-Instruct: copy-heavy tasks and free chat, greedy.

    /work/venv/bin/python benchmarks/bench_speculative.py            # 3 tasks, k = 3, 5, 8
    /work/venv/bin/python benchmarks/bench_speculative.py --quick    # fewer tokens, k = 5

Prints per task (greedy, so the speculative output must equal plain decoding's — checked;
generation stops at <|im_end|> or after --tokens):
  plain         tokens/s of ``generate(..., temperature=0)``
  draft, k      acceptance rate (accepted / proposed drafts), tokens per target forward, and
                tokens/s as a ratio to plain measured in the same round (median over rounds).
                Drafts: "prompt" (n-gram lookup in the context) and, with --layers N, the
                model's own first N layers (self-speculation)
Goals (issue 14): copy-heavy >= 2x plain tokens/s; free chat >= 0.95x plain.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from bench_decode import blas_info  # noqa: E402

from minillm import PromptLookup, DraftModel, first_layers, generate  # noqa: E402
from minillm.chat.chatml import chatml_ids, stop_ids  # noqa: E402

SMOLLM2 = HERE.parent.parent / "shared" / "data" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"

PARAGRAPH = ("The ocean apears blue becuase water absorbs more of the red light from the sun, "
             "while blue light is scatered back towards the surface. In shallow water the "
             "colour of the sand and the plants underneath also change what we see, so a bay "
             "can look green or even brown on a cloudy day.")
CODE = '''def total_price(items, tax_rate):
    total_price = 0
    for item in items:
        total_price += item.price * item.quantity
    total_price = total_price * (1 + tax_rate)
    return total_price
'''
TASKS = {   # a 135M model copies loosely: these prompts are the ones it copies most from
    "correct a paragraph": f"Rewrite this paragraph with the spelling mistakes fixed:\n\n{PARAGRAPH}",
    "rename in code": (f"In this Python code, rename the variable total_price to subtotal. Show the "
                       f"full code.\n\n```python\n{CODE}```"),
    "free chat": "Tell me a short story about a lighthouse keeper.",
}


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024      # Linux: KiB


def run(model, prompt, n: int, stops, draft=None, k: int = 5) -> tuple[list[int], float]:
    t = time.perf_counter()
    ids = [s.id for s in generate(model, prompt, n, temperature=0, stop_ids=stops, draft=draft,
                                  num_draft_tokens=k)]
    return ids, time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(SMOLLM2))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--tokens", type=int, default=120, help="new tokens per generation")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--k", type=int, nargs="+", default=[3, 5, 8])
    parser.add_argument("--layers", type=int, default=0, help="also self-speculate with N layers")
    parser.add_argument("--quick", action="store_true", help="60 tokens, 1 round, k = 5")
    args = parser.parse_args()
    if args.quick:
        args.tokens, args.rounds, args.k = 60, 1, [5]
    if not Path(args.model).exists():
        sys.exit(f"no model at {args.model}: run `python -m minillm download smollm2` and pass --model")
    from threadpoolctl import threadpool_limits

    from minillm.loading import load_gguf_model
    model, tok = load_gguf_model(args.model)
    stops = stop_ids(tok)                                         # the answer ends at <|im_end|>
    with threadpool_limits(args.threads):
        print(f"BLAS: {blas_info()}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print("env: " + (" ".join(f"{k}={v}" for k, v in os.environ.items()
                                  if k.startswith(("OPENBLAS", "OMP_", "MKL_"))) or "(none set)"))
        print(f"model: SmolLM2-135M-Instruct, greedy, {args.tokens} new tokens, {args.rounds} round(s)")
        drafts = [("prompt", k, lambda: PromptLookup()) for k in args.k]
        if args.layers:
            small = first_layers(model, args.layers)
            drafts += [(f"{args.layers} layers", k, lambda: DraftModel(small)) for k in args.k]
        for task, text in TASKS.items():
            prompt = chatml_ids(tok, [{"role": "user", "content": text}])
            rates = {(name, k): [] for name, k, _ in drafts}
            stats = {}
            plain_times = []
            for _ in range(args.rounds):
                want, plain = run(model, prompt, args.tokens, stops)
                plain_times.append(plain)
                for name, k, make in drafts:
                    source = make()
                    got, sec = run(model, prompt, args.tokens, stops, source, k)
                    if got != want:
                        print(f"  MISMATCH: {name} k={k} differs from plain greedy")
                    rates[name, k].append(plain / sec)          # speed ratio, same round
                    stats[name, k] = (source.accepted / max(source.proposed, 1),
                                      len(got) / max(source.rounds, 1))
            plain = statistics.median(plain_times)
            print(f"\n== {task}: {len(want)} tokens; plain {len(want) / plain:.1f} tok/s")
            for (name, k), r in rates.items():
                acc, per = stats[name, k]
                print(f"  {name:10s} k={k}  accepted {acc:5.1%}  {per:4.2f} tokens/forward  "
                      f"{statistics.median(r):4.2f}x plain tok/s")
    print(f"\npeak RSS {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
