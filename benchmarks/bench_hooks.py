"""The readable forward (``fast=False``: model/'s code) before and after the per-layer context
object and its hook points (minillm/hooks.py), with no hook: is the forward as fast as it was?

    python benchmarks/bench_hooks.py                       # baseline: the commit before the change
    python benchmarks/bench_hooks.py --baseline 8185417 --rounds 7
    MINILLM_SHARED_DATA=/work/shared/data python benchmarks/bench_hooks.py --memory

The baseline is the package as it was at ``--baseline`` (default: the parent of the commit that
added the hook points), unpacked with ``git archive`` into a temporary folder; the current one is
this checkout's. Each measurement is a child process importing one of the two (one BLAS thread:
OPENBLAS_NUM_THREADS=1 and threadpoolctl), building the same random model (``GPT(config,
seed=0)``: the random init is unchanged), and timing ``repeats`` calls after 3 warm-ups; rounds
alternate which one runs first. Two shapes of a Llama-style model (RMSNorm, RoPE, SwiGLU, GQA)
and one GPT-2-style, small enough that per-layer overheads weigh most (C 256, 8 layers): a
32-token prompt (prefill) and one decode step at context 32 (through the KV cache); and a decode
step of SmolLM2-135M's shape (30 layers, C 576, random weights).

Times are the child's CPU time by default (``--clock wall``: wall-clock time). Prints, per
case, each round's median seconds per call (before, after) and the ratio after /
before; then the median of the round ratios and their range (the spread on this machine), with
the CPU model, the BLAS library and the load average. Goal (issue 40): within 2 %.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CASES = {   # name -> (ModelConfig keywords, T of the prompt, decode: one step after it)
    "llama prefill 32": (dict(vocab_size=4096, n_ctx=128, d_model=256, n_heads=8, n_kv_heads=4,
                              n_layers=8, d_ff=768, arch="llama"), 32, False),
    "llama decode @32": (dict(vocab_size=4096, n_ctx=128, d_model=256, n_heads=8, n_kv_heads=4,
                              n_layers=8, d_ff=768, arch="llama"), 32, True),
    "gpt2 decode @32": (dict(vocab_size=4096, n_ctx=128, d_model=256, n_heads=8, n_layers=8),
                        32, True),
    "smollm2 decode @32": (dict(vocab_size=49152, n_ctx=128, d_model=576, n_heads=9, n_kv_heads=3,
                                n_layers=30, d_ff=1536, arch="llama", rope_theta=100000.0), 32, True),
}


def worker(case: str, repeats: int, clock) -> None:
    """In the child: time ``repeats`` forwards of ``case`` with the minillm on sys.path[0]."""
    import numpy as np
    from threadpoolctl import threadpool_limits
    from minillm import GPT, KVCache, ModelConfig
    keywords, T, decode = CASES[case]
    config = ModelConfig(**keywords)
    model = GPT(config, seed=0)
    ids = np.random.default_rng(0).integers(0, config.vocab_size, (1, T + 1))
    cache = KVCache(config, batch_size=1, capacity=T + 1)
    if decode:
        model(ids[:, :T], cache)

    def call():
        if decode:
            model(ids[:, T:], cache)
            cache.rollback(T)
        else:
            model(ids[:, :T])
    times = []
    with threadpool_limits(1):
        for i in range(3 + repeats):
            t = clock()
            call()
            if i >= 3:
                times.append(clock() - t)
    print(json.dumps({"median": statistics.median(times), "file": __import__("minillm").__file__}))


def memory(T: int = 64) -> None:
    """The bytes of a full record (``run_with_cache(ids)``, every name) of SmolLM2-135M-Instruct
    for T tokens: the sum of the arrays' sizes, and of the distinct buffers under them (the
    residual stream leaving block l is the one entering l + 1)."""
    import numpy as np
    from minillm import load_model
    path = Path(os.environ.get("MINILLM_SHARED_DATA", REPO / "data")) / "models" / \
        "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not path.exists():
        raise SystemExit(f"{path} is absent: set MINILLM_SHARED_DATA to the folder holding "
                         f"models/SmolLM2-135M-Instruct.Q4_1.gguf")
    model, _ = load_model(path, fast=False)
    ids = np.random.default_rng(0).integers(0, model.config.vocab_size, T)
    _, acts = model.run_with_cache(ids)

    def base(a):
        while isinstance(a.base, np.ndarray):
            a = a.base
        return a
    distinct = {id(base(a)): base(a).nbytes for a in acts.values()}
    by_name = {}
    for name, a in acts.items():
        short = name.split(".", 2)[2] if name.startswith("blocks.") else name
        by_name[short] = by_name.get(short, 0) + a.nbytes
    print(f"SmolLM2-135M, {T} tokens: {len(acts)} arrays, {sum(a.nbytes for a in acts.values()) / 2**20:.1f}"
          f" MiB ({sum(distinct.values()) / 2**20:.1f} MiB in {len(distinct)} distinct buffers)")
    for short, n in sorted(by_name.items(), key=lambda kv: -kv[1])[:5]:
        print(f"  {short}: {n / 2**20:.1f} MiB")


def baseline_commit() -> str:
    added = subprocess.run(["git", "log", "--diff-filter=A", "--format=%H", "--",
                            "minillm/model/hooks.py", "minillm/hooks.py"], cwd=REPO,
                           capture_output=True, text=True, check=True).stdout.split()
    if not added:
        raise SystemExit("no commit adds the hook points in this history: pass --baseline REF")
    return added[-1] + "^"


def unpack(ref: str, into: Path) -> Path:
    archive = subprocess.run(["git", "archive", "--format=tar", ref, "minillm"], cwd=REPO,
                             capture_output=True, check=True).stdout
    path = into / "archive.tar"
    path.write_bytes(archive)
    with tarfile.open(path) as tar:
        tar.extractall(into, filter="data")
    return into


def measure(root: Path, case: str, repeats: int, clock: str) -> float:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONPATH=str(root))
    out = subprocess.run([sys.executable, __file__, "--worker", case, "--repeats", str(repeats),
                          "--clock", clock],
                         env=env, capture_output=True, text=True, check=True, cwd=root).stdout
    result = json.loads(out.strip().splitlines()[-1])
    if not result["file"].startswith(str(root)):
        raise SystemExit(f"the child imported {result['file']}, not the copy under {root}")
    return result["median"]


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.processor())
    from threadpoolctl import threadpool_info
    blas = [f"{i.get('internal_api')} {i.get('version')} ({i.get('architecture')})"
            for i in threadpool_info() if i.get("user_api") == "blas"]
    return f"CPU {cpu}; BLAS {', '.join(blas) or 'unknown'}; 1 thread; load {os.getloadavg()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="git ref of the package before (default: the parent "
                        "of the commit adding the hook points)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="cpu (default): the child's CPU time, time.process_time, which on a "
                        "shared machine leaves out the time other jobs held the core (one thread "
                        "only); wall: time.perf_counter")
    parser.add_argument("--memory", action="store_true", help="print the memory of a full record "
                        "of SmolLM2-135M for 64 tokens instead (its GGUF in MINILLM_SHARED_DATA)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args.worker, args.repeats,
                      time.process_time if args.clock == "cpu" else time.perf_counter)
    if args.memory:
        return memory()
    import numpy as np
    np.zeros(1)                                              # (threadpoolctl sees the BLAS)
    ref = args.baseline or baseline_commit()
    print(machine())
    print(f"before: {ref} (git archive); after: this checkout ({REPO}); clock: {args.clock}")
    with tempfile.TemporaryDirectory() as tmp:
        roots = {"before": unpack(ref, Path(tmp)), "after": REPO}
        for case in CASES:
            ratios = []
            for r in range(args.rounds):
                order = ("before", "after") if r % 2 == 0 else ("after", "before")
                t = {which: measure(roots[which], case, args.repeats, args.clock) for which in order}
                ratios.append(t["after"] / t["before"])
                print(f"  {case:19s} round {r + 1}: before {t['before'] * 1e3:7.3f} ms, after "
                      f"{t['after'] * 1e3:7.3f} ms, after/before {ratios[-1]:.3f}")
            print(f"{case:19s} after/before: median {statistics.median(ratios):.3f} "
                  f"(rounds {min(ratios):.3f} … {max(ratios):.3f})")
    print(f"load at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
