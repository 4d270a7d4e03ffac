"""One LoRA training step on SmolLM2-135M: minillm (NumPy) against PyTorch on the CPU, same weights,
same batch, same threads; and each side's peak memory against the base weights' size.

    python benchmarks/bench_lora_step.py [--gguf PATH] [--batch 4] [--context 128] [--rank 8]
        [--steps 5] [--runs 2] [--threads 1 2] [--form unmerged|merged] [--recompute [--keep F]]
        [--sides minillm torch] [--workdir DIR]

A step is: forward, loss (mean next-token cross-entropy over B·T positions), backward to the
adapters only, and an AdamW update of the adapters. LoRA of rank r (α = 2r) on q, k, v, o, gate,
up and down of all 30 layers; the batch is B sequences of T random token ids (seeded). Each side
runs in its own subprocess (so peak RSS is its own: ``resource.getrusage``'s ``ru_maxrss``) with
OPENBLAS_NUM_THREADS = OMP_NUM_THREADS = MKL_NUM_THREADS = n and, for torch,
``torch.set_num_threads(n)``; it loads the weights, takes one untimed step, then ``--steps`` timed
ones: the figures are their medians, wall clock and CPU time (on a busy machine the wall clock
includes waiting for a core; the CPU time does not). Every thread count is run ``--runs`` times,
the sides alternating (a change of machine load hits both); the load average is printed per run.

The weights: the SmolLM2-135M-Instruct GGUF (Q4_1) dequantised to float32 and saved once as a
Hugging Face folder (``--workdir``), which both sides load: minillm with
``GPT.from_pretrained`` (plain arrays), PyTorch with ``LlamaForCausalLM.from_pretrained`` and
``peft.get_peft_model``. The base weights' size is their float32 bytes. ``--form merged`` times
``lora_loss_and_grads_merged`` (W + s·A B rebuilt per step, full backward) instead of the
frozen-weight form. ``--recompute`` times the memory-saving step (train/memory/: each block
recomputed in the backward, the top ones keeping their FFN's a and u within ``--keep`` × the
weights' bytes, default recompute.py's KEEP; the head and loss in chunks of rows; the same
gradients). The table
gives each side's peak RSS as a multiple of the base weights and whether it is at most 2×.
``--sides minillm`` runs minillm alone. Needs torch, transformers and peft for the torch side
(benchmarks only; never minillm's).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
GGUF = Path(os.environ.get("MINILLM_SHARED_DATA", REPO.parent / "shared" / "data")) \
    / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
HF_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
LR = 1e-4


def peak_rss_mb() -> float:
    """This process's peak resident set: VmHWM of /proc/self/status (Linux), which starts afresh
    at exec; elsewhere ru_maxrss. subtle: on Linux ru_maxrss survives exec, so a child started by
    a large parent would report the parent's peak."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024                       # kB -> MB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024     # Linux: KiB


def batch(vocab: int, B: int, T: int) -> tuple[np.ndarray, np.ndarray]:
    ids = np.random.default_rng(1).integers(0, vocab, (B, T + 1))
    return ids[:, :-1], ids[:, 1:]


def timed(step, n: int) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU seconds (``time.process_time``: every thread of this process) of ``n``
    steps after an untimed warm-up. On a busy machine the wall clock includes waiting for a core;
    the CPU time does not, and at 1 thread it is the fairer figure."""
    step()                                                           # warm-up, untimed
    wall, cpu = [], []
    for _ in range(n):
        start, start_cpu = time.perf_counter(), time.process_time()
        step()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return wall, cpu


def numpy_blas() -> str:
    info = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    return f"numpy {np.__version__}, {info.get('name')} {info.get('version')}"


def side_minillm(args) -> dict:
    from minillm.model import GPT
    from minillm.train import AdamW
    from minillm.train.lora import adapters
    model = GPT.from_pretrained(args.workdir)
    loaded = peak_rss_mb()
    config, params = model.config, model.params
    lora = adapters.init_lora(params, args.rank, np.random.default_rng(0))
    opt = AdamW(lora.named(), weight_decay=0.0)
    x, y = batch(config.vocab_size, args.batch, args.context)
    f = adapters.lora_loss_and_grads_merged if args.form == "merged" else adapters.lora_loss_and_grads
    more = {"recompute": True} if args.recompute else {}
    if args.keep is not None:                            # the memory-saving step, another keep
        from minillm.train.memory.recompute import loss_and_grads_recompute

        def f(params, config, lora, x, y):
            return loss_and_grads_recompute(adapters.frozen_params(params, lora), config, x, y,
                                            frozen=True, keep=args.keep)
        more = {}

    def step():
        _, grads = f(params, config, lora, x, y, **more)
        opt.step(grads, LR)
    times, cpu = timed(step, args.steps)
    return {"times": times, "cpu": cpu, "rss_loaded_mb": loaded, "peak_rss_mb": peak_rss_mb(),
            "weights_mb": sum(w.nbytes for w in params.named().values()) / 2**20,
            "adapter_params": sum(a.size for a in lora.named().values()), "blas": numpy_blas()}


def side_torch(args) -> dict:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaForCausalLM
    torch.set_num_threads(args.threads)
    model = LlamaForCausalLM.from_pretrained(args.workdir, dtype=torch.float32)
    weights_mb = sum(p.numel() * p.element_size() for p in model.parameters()) / 2**20
    loaded = peak_rss_mb()
    model = get_peft_model(model, LoraConfig(r=args.rank, lora_alpha=2 * args.rank, lora_dropout=0.0,
                                             target_modules=HF_TARGETS))
    model.train()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=LR,
                            weight_decay=0.0)
    x, y = (torch.from_numpy(a) for a in batch(model.config.vocab_size, args.batch, args.context))

    def step():
        logits = model(input_ids=x).logits                               # [B, T, V]
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten())
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    times, cpu = timed(step, args.steps)
    blas = re.findall(r"BLAS_INFO=(\w+)", torch.__config__.show())
    return {"times": times, "cpu": cpu, "rss_loaded_mb": loaded, "peak_rss_mb": peak_rss_mb(),
            "weights_mb": weights_mb,
            "adapter_params": sum(p.numel() for p in model.parameters() if p.requires_grad),
            "blas": f"torch {torch.__version__}, BLAS {blas[0] if blas else '?'}, "
                    f"threads {torch.get_num_threads()}"}


def prepare(workdir: Path, gguf: Path) -> None:
    """The GGUF dequantised to float32, saved once as a Hugging Face folder both sides load."""
    from minillm.loading import load_model
    if not gguf.is_file():
        sys.exit(f"no SmolLM2 GGUF at {gguf}: give --gguf PATH (python -m minillm download smollm2)")
    model, _ = load_model(gguf, fast=False)
    model.save_pretrained(workdir)


def run_side(side: str, threads: int, args) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads), PYTHONPATH=str(REPO))
    cmd = [sys.executable, __file__, "--side", side, "--threads", str(threads),
           "--batch", str(args.batch), "--context", str(args.context), "--rank", str(args.rank),
           "--steps", str(args.steps), "--form", args.form, "--workdir", str(args.workdir)]
    cmd += ["--recompute"] if args.recompute else []
    cmd += ["--keep", str(args.keep)] if args.keep is not None else []
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"{side} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gguf", type=Path, default=GGUF)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/minillm-bench-smollm2-f32"))
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--context", type=int, default=128)
    ap.add_argument("--rank", type=int, default=8)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--form", choices=["unmerged", "merged"], default="unmerged")
    ap.add_argument("--recompute", action="store_true",
                    help="minillm: recompute each block in the backward, the head in chunks")
    ap.add_argument("--keep", type=float, default=None,
                    help="with --recompute: the FFN activations kept, a fraction of the weights' bytes")
    ap.add_argument("--sides", nargs="+", choices=["minillm", "torch"], default=["minillm", "torch"])
    ap.add_argument("--side", choices=["minillm", "torch"], help=argparse.SUPPRESS)
    ap.add_argument("--prepare", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.recompute and args.form == "merged":
        ap.error("--recompute is a form of the unmerged step; drop --form merged")
    if args.keep is not None and not args.recompute:
        ap.error("--keep chooses the memory-saving step's policy: give --recompute too")
    if args.prepare:
        return prepare(args.workdir, args.gguf)
    if args.side:                                        # a child: one side, one JSON line
        args.threads = args.threads[0]
        result = side_minillm(args) if args.side == "minillm" else side_torch(args)
        print(json.dumps(result))
        return
    if not (args.workdir / "model.safetensors").exists():      # in a child: this process stays small
        subprocess.run([sys.executable, __file__, "--prepare", "--gguf", str(args.gguf),
                        "--workdir", str(args.workdir)], check=True)
    print(f"LoRA step on SmolLM2-135M: batch {args.batch} × {args.context} tokens, rank {args.rank} "
          f"(α {2 * args.rank}) on {', '.join(HF_TARGETS)}; AdamW; median of {args.steps} steps "
          f"after one warm-up; minillm form: {args.form}{' with --recompute' * args.recompute}"
          f"{f' --keep {args.keep}' if args.keep is not None else ''}; "
          f"OPENBLAS_NUM_THREADS = OMP_NUM_THREADS = MKL_NUM_THREADS = the thread count, "
          f"torch.set_num_threads too")
    both = len(args.sides) == 2
    columns = [f"{side} s/step (CPU s)" for side in args.sides] + ["ratio wall (CPU)"] * both \
        + [f"{side} peak RSS (× weights, ≤ 2×?)" for side in args.sides]
    print(f"\n| threads | run | load avg | {' | '.join(columns)} |\n"
          f"|{'---|' * (3 + len(columns))}", flush=True)
    for threads in args.threads:
        for run in range(1, args.runs + 1):
            load = os.getloadavg()[0]
            r = {side: run_side(side, threads, args) for side in args.sides}
            wall = {side: statistics.median(v["times"]) for side, v in r.items()}
            cpu = {side: statistics.median(v["cpu"]) for side, v in r.items()}
            cells = [f"{wall[side]:.2f} ({cpu[side]:.2f})" for side in args.sides]
            if both:
                cells.append(f"{wall['minillm'] / wall['torch']:.2f}× "
                             f"({cpu['minillm'] / cpu['torch']:.2f}×)")
            for side in args.sides:
                ratio = r[side]["peak_rss_mb"] / r[side]["weights_mb"]
                cells.append(f"{r[side]['peak_rss_mb']:.0f} MB ({ratio:.2f}×, "
                             f"{'yes' if ratio <= 2 else 'no'})")
            print(f"| {threads} | {run} | {load:.1f} | {' | '.join(cells)} |", flush=True)
            if run == 1 and threads == args.threads[0]:
                for side, v in r.items():
                    print(f"  ({side}: {v['blas']}; adapter parameters {v['adapter_params']:,}; "
                          f"base weights {v['weights_mb']:.0f} MB; peak RSS after loading only "
                          f"{v['rss_loaded_mb']:.0f} MB)", flush=True)


if __name__ == "__main__":
    main()
