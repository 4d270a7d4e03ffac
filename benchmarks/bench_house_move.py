"""Two source trees of minillm, timed against each other in one run: did a refactor cost speed?

    git archive 8185417 | tar -x -C /tmp/before       # the tree before the change
    /work/venv/bin/python benchmarks/bench_house_move.py --before /tmp/before --after .

Each round runs one fresh process per tree, in turn (before, after, before, after, ...), with
one BLAS thread, and each process times, in this order:
  import        ``import minillm``
  load folder   ``load_model`` of a checkpoint folder (a SmolLM2-135M, written once from the GGUF)
  load gguf     ``load_model`` of SmolLM2-135M-Instruct.Q4_1.gguf (config, family, dequantised)
  decode        median seconds of a cached decode step at context 16, GPT-2-124M shape
                (bench_decode.py's ``Decoder``, the tree's own copy)
  batch 8       median seconds of a B = 8 decode step at context 16 (bench_batch.py's
                ``step_times``, the tree's own copy)
Printed per figure: the median over rounds of each tree, the spread (min .. max), and the ratio
after / before of the medians. The loads need MINILLM_SHARED_DATA's GGUF; without it they are
skipped (said so). Interleaving is what keeps the ratio meaningful on a shared, noisy machine.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

INNER = r"""
import json, statistics, sys, time
t = time.perf_counter(); import minillm; t_import = time.perf_counter() - t
sys.path.insert(0, "benchmarks")
out = {"import": t_import}
folder, gguf, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
if gguf:
    t = time.perf_counter(); minillm.load_model(folder); out["load folder"] = time.perf_counter() - t
    t = time.perf_counter(); minillm.load_model(gguf); out["load gguf"] = time.perf_counter() - t
import numpy as np
from bench_decode import CONFIG, Decoder
from bench_batch import step_times
from minillm.engine import EngineGPT, empty_arena
from minillm.model.init import init_params
arena = empty_arena(CONFIG, "rows")
init_params(CONFIG, np.random.default_rng(0), params=arena.params)
model = EngineGPT(CONFIG, arena)
d = Decoder(model, 16, steps); d.steps(2)                       # warm up
out["decode"] = statistics.median(d.steps(steps))
out["batch 8"] = statistics.median(step_times(model, 8, 16, steps))
from bench_decode import blas_info
out["blas"] = blas_info()
print(json.dumps(out))
"""


def run(tree: Path, folder: str, gguf: str, steps: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-c", INNER, folder, gguf, str(steps)], cwd=tree,
                          env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{tree}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=16)
    args = parser.parse_args()
    shared = Path(os.environ.get("MINILLM_SHARED_DATA", "/work/shared/data"))
    gguf = shared / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "smollm2"
        if gguf.is_file():
            sys.path.insert(0, str(args.after.resolve()))
            from minillm import load_model
            load_model(gguf)[0].save_pretrained(folder)
        else:
            print(f"no {gguf}: the load times are skipped")
        trees = {"before": args.before.resolve(), "after": args.after.resolve()}
        got = {name: [] for name in trees}
        for _ in range(args.rounds):
            for name, tree in trees.items():                  # interleaved: before, after, ...
                got[name].append(run(tree, str(folder), str(gguf) if gguf.is_file() else "",
                                     args.steps))
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), os.uname().machine)
    print(f"{args.rounds} rounds, one fresh process per tree per round, 1 BLAS thread; "
          f"{cpu}, {os.cpu_count()} cores; BLAS: {got['after'][0].pop('blas')}")
    got["before"][0].pop("blas")
    for key in got["before"][0]:
        b = [r[key] for r in got["before"]]
        a = [r[key] for r in got["after"]]
        mb, ma = statistics.median(b), statistics.median(a)
        print(f"{key:12s} before {mb * 1e3:8.1f} ms ({min(b) * 1e3:.1f} .. {max(b) * 1e3:.1f})   "
              f"after {ma * 1e3:8.1f} ms ({min(a) * 1e3:.1f} .. {max(a) * 1e3:.1f})   "
              f"after/before {ma / mb:.3f}")


if __name__ == "__main__":
    main()
