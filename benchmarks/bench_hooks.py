"""The readable forward (``fast=False``: model/'s code) before and after the per-layer context
object and its hook points (minillm/hooks.py), with no hook: is the forward as fast as it was?

    python benchmarks/bench_hooks.py                       # baseline: the commit before the change
    python benchmarks/bench_hooks.py --baseline 8185417 --rounds 7
    python benchmarks/bench_hooks.py --in-process --clock wall      # one process, interleaved
    MINILLM_SHARED_DATA=DIR python benchmarks/bench_hooks.py --memory   # DIR/models/SmolLM2-…gguf

The baseline is the package as it was at ``--baseline`` (default: the parent of the commit that
added the hook points), unpacked with ``git archive`` into a temporary folder; the current one is
this checkout's. Each measurement is a child process importing one of the two (one BLAS thread:
OPENBLAS_NUM_THREADS=1 and threadpoolctl), building the same random model (``GPT(config,
seed=0)``: the random init is unchanged), and timing ``repeats`` calls after 3 warm-ups; rounds
alternate which one runs first. Two shapes of a Llama-style model (RMSNorm, RoPE, SwiGLU, GQA)
and one GPT-2-style, small enough that per-layer overheads weigh most (C 256, 8 layers): a
32-token prompt (prefill) and one decode step at context 32 (through the KV cache); and a decode
step of SmolLM2-135M's shape (30 layers, C 576, random weights).

``--in-process``: the baseline's four model files loaded beside the current package in one
process, before and after called alternately on the same parameters (their logits checked
bit-identical), which a shared machine's load then hits alike. Times are the CPU time by
default (``--clock wall``: wall-clock time). Prints, per case, each round's median seconds per
call (before, after) and the ratio after / before; then the median of the round ratios and
their range (the spread on this machine), with the CPU model, the BLAS library and the load
average. Goal (issue 40): within 2 %.
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


def in_process(ref: str, rounds: int, repeats: int, clock) -> None:
    """Before and after in ONE process, calls interleaved: the baseline's model/attention.py,
    ffn.py, block.py and gpt.py (``git show REF:...``) loaded as modules of their own, bound to
    each other, around the current package's other modules (which they import), and run on the
    very same parameters; the logits must be bit-identical. Sharper than the child processes on
    a shared machine (both see the same moments of load), valid while the baseline's four files
    import only names the current package still has."""
    import importlib.util
    import numpy as np
    from threadpoolctl import threadpool_limits
    from minillm import GPT, KVCache, ModelConfig
    old = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("attention", "ffn", "block", "gpt"):
            source = subprocess.run(["git", "show", f"{ref}:minillm/model/{name}.py"], cwd=REPO,
                                    capture_output=True, text=True, check=True).stdout
            path = Path(tmp) / f"before_{name}.py"
            path.write_text(source, encoding="utf-8")
            spec = importlib.util.spec_from_file_location(f"before_{name}", path)
            old[name] = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(old[name])
            if name == "block":
                old[name].attention, old[name].ffn = old["attention"].attention, old["ffn"].ffn
            if name == "gpt":
                old[name].block = old["block"].block
    for case, (keywords, T, decode) in CASES.items():
        config = ModelConfig(**keywords)
        models = {"after": GPT(config, seed=0)}
        models["before"] = old["gpt"].GPT(config, models["after"].params)
        ids = np.random.default_rng(0).integers(0, config.vocab_size, (1, T + 1))
        caches = {w: KVCache(config, batch_size=1, capacity=T + 1) for w in models}
        if decode:
            for w, model in models.items():
                model(ids[:, :T], caches[w])

        def call(w):
            if not decode:
                return models[w](ids[:, :T])
            out = models[w](ids[:, T:], caches[w])
            caches[w].rollback(T)
            return out
        if not np.array_equal(call("before"), call("after")):
            raise SystemExit(f"{case}: the logits before and after differ")
        ratios = []
        with threadpool_limits(1):
            for r in range(rounds):
                times = {"before": [], "after": []}
                for i in range(repeats):
                    for w in (("before", "after") if i % 2 == 0 else ("after", "before")):
                        t = clock()
                        call(w)
                        times[w].append(clock() - t)
                m = {w: statistics.median(ts) for w, ts in times.items()}
                ratios.append(m["after"] / m["before"])
        print(f"{case:19s} in one process, after/before: median {statistics.median(ratios):.3f} "
              f"(rounds {min(ratios):.3f} … {max(ratios):.3f}; before {m['before'] * 1e3:.3f} ms, "
              f"after {m['after'] * 1e3:.3f} ms in the last round)")


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
    parser.add_argument("--in-process", action="store_true", help="before and after in one "
                        "process, interleaved call by call, bit-identical logits checked")
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
    if args.in_process:
        sys.path.insert(0, str(REPO))
        in_process(ref, args.rounds, args.repeats,
                   time.process_time if args.clock == "cpu" else time.perf_counter)
        return print(f"load at the end {os.getloadavg()}")
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
