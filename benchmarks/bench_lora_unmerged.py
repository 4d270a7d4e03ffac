"""A LoRA step with and without rebuilding the merged weights W + s·A B (same model, same batch).

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_lora_unmerged.py [--model PATH.gguf|DIR]
        [--batch 4] [--context 128] [--rank 8] [--rounds 3]

``merged``: ``lora_loss_and_grads_merged`` (the definition: W' built per adapted matrix, the full
backward, then ∂L/∂A = s·G Bᵀ, ∂L/∂B = s·Aᵀ G); ``unmerged``: ``lora_loss_and_grads`` (x W +
s·(x A) B, no gradient of any frozen weight). Rounds alternate the two (a change of machine load
hits both); the figures are median step times, wall clock and the process's CPU time (with one
BLAS thread, the CPU time is the work done; on a shared machine it varies far less than the wall
clock). Default model: the SmolLM2-135M GGUF in the shared
data folder (dequantised to float32), else a random model of SmolLM2-135M's shapes.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from minillm.config import ModelConfig  # noqa: E402
from minillm.loading import load_model  # noqa: E402
from minillm.model import GPT  # noqa: E402
from minillm.train.lora.adapters import (init_lora, lora_loss_and_grads,  # noqa: E402
                                         lora_loss_and_grads_merged)

SHARED = Path(os.environ.get("MINILLM_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
GGUF = SHARED / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=str(GGUF))
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--context", type=int, default=128)
    ap.add_argument("--rank", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if Path(args.model).exists():
        model, _ = load_model(args.model, fast=False)
        name = Path(args.model).name
    else:
        config = ModelConfig(vocab_size=49152, n_ctx=2048, d_model=576, n_heads=9, n_kv_heads=3,
                             n_layers=30, d_ff=1536, arch="llama")
        model, name = GPT(config, seed=0), "random SmolLM2-135M shapes"
    config, params = model.config, model.params
    lora = init_lora(params, args.rank, np.random.default_rng(0))
    ids = np.random.default_rng(1).integers(0, config.vocab_size, (args.batch, args.context + 1))
    x, y = ids[:, :-1], ids[:, 1:]
    forms = {"merged": lora_loss_and_grads_merged, "unmerged": lora_loss_and_grads}
    times = {k: [] for k in forms}
    cpu = {k: [] for k in forms}
    for k, f in forms.items():                                       # warm-up
        f(params, config, lora, x, y)
    for _ in range(args.rounds):
        for k, f in forms.items():
            t, c = time.perf_counter(), time.process_time()
            f(params, config, lora, x, y)
            times[k].append(time.perf_counter() - t)
            cpu[k].append(time.process_time() - c)
    med = {k: statistics.median(v) for k, v in times.items()}
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    print(f"{name}: batch {args.batch} x {args.context} tokens, rank {args.rank}, "
          f"{len(lora.adapters)} adapted matrices, median of {args.rounds}")
    for k, v in med.items():
        print(f"  {k:9s} {v:7.3f} s/step  {args.batch * args.context / v:7.0f} tokens/s   "
              f"CPU {med_cpu[k]:7.3f} s/step")
    print(f"  unmerged / merged: {med['unmerged'] / med['merged']:.2f} (wall), "
          f"{med_cpu['unmerged'] / med_cpu['merged']:.2f} (CPU)")


if __name__ == "__main__":
    main()
