"""Reading and dequantising the SmolLM2 Q4_1 GGUF: "dequantise once" vs "dequantise on use".

    python benchmarks/bench_dequant.py [path/to/SmolLM2-135M-Instruct.Q4_1.gguf] [--repeats 5]

Prints (medians of --repeats runs):
- parse: read_gguf (header, metadata incl. the 49k-token vocabulary, tensor table; data mmapped);
- dequantise all: every tensor to float32, the float32 total vs the file size;
- per layer: dequantising one layer's 7 matrices (q, k, v, o, gate, up, down) vs the baseline of
  one token's matrix-vector products through them with float32 weights already in memory. The
  ratio is what "keep Q4_1, dequantise a matrix on use" costs per generated token, per layer,
  relative to "dequantise once" (which pays the memory instead).
"""
import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from minillm.io import read_gguf  # noqa: E402

DEFAULT = REPO.parent / "shared" / "data" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
LAYER = ["attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"]


def seconds(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median_seconds(fn, repeats):
    return statistics.median(seconds(fn) for _ in range(repeats))


def interleaved(fns, repeats):
    """Medians (and minima) of fns timed in alternation: a busy machine slows all of them alike."""
    times = [[] for _ in fns]
    for _ in range(repeats):
        for fn, t in zip(fns, times):
            t.append(seconds(fn))
    return [(statistics.median(t), min(t)) for t in times]


def blas_info():
    try:
        from threadpoolctl import threadpool_info
        return "; ".join(f"{p['internal_api']} {p.get('version')} threads={p['num_threads']}"
                         for p in threadpool_info())
    except ImportError:
        return "threadpoolctl not installed"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default=DEFAULT)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--blas-threads", type=int, default=None,
                        help="limit BLAS threads (threadpoolctl); 1 is steadier on a busy machine")
    args = parser.parse_args()
    if args.blas_threads is not None:
        from threadpoolctl import threadpool_limits
        threadpool_limits(args.blas_threads)
    print(f"numpy {np.__version__}; BLAS: {blas_info()}")
    print("env:", {k: v for k, v in os.environ.items() if k.startswith(("OPENBLAS_", "OMP_"))})

    parse = median_seconds(lambda: read_gguf(args.path), args.repeats)
    g = read_gguf(args.path)
    print(f"parse: {parse * 1e3:.1f} ms ({len(g.tensors)} tensors, {len(g.metadata)} keys)")

    def dequantise_all():
        return {name: g.tensor(name) for name in g.tensors}
    dense = dequantise_all()  # also warms the page cache
    whole = median_seconds(dequantise_all, args.repeats)
    f32_bytes = sum(x.nbytes for x in dense.values())
    file_bytes = os.path.getsize(args.path)
    print(f"dequantise all: {whole:.2f} s; float32 {f32_bytes / 2**20:.0f} MiB vs file "
          f"{file_bytes / 2**20:.0f} MiB ({f32_bytes / file_bytes:.1f}x)")

    names = [f"blk.0.{m}.weight" for m in LAYER]
    types = sorted({g.tensors[n].type_name for n in names})
    x = {n: np.random.default_rng(0).standard_normal(dense[n].shape[1]).astype(np.float32)
         for n in names}                                                     # [in] per matrix
    (deq, deq_min), (mv, mv_min) = interleaved(
        [lambda: [g.tensor(n) for n in names], lambda: [dense[n] @ x[n] for n in names]],
        args.repeats * 4)
    layers = g.metadata["llama.block_count"]
    print(f"one layer ({', '.join(LAYER)}; {types}): dequantise {deq * 1e3:.2f} ms "
          f"(min {deq_min * 1e3:.2f}), float32 matvec baseline {mv * 1e3:.3f} ms "
          f"(min {mv_min * 1e3:.3f}); ratio of medians {deq / mv:.0f}x, "
          f"of minima {deq_min / mv_min:.0f}x")
    print(f"per token over {layers} layers: dequantise-on-use adds {deq * layers * 1e3:.0f} ms to "
          f"{mv * layers * 1e3:.1f} ms of matvecs; dequantise-once adds 0 ms but keeps "
          f"{f32_bytes / 2**20:.0f} MiB of float32 resident instead of "
          f"{file_bytes / 2**20:.0f} MiB")

if __name__ == "__main__":
    main()
