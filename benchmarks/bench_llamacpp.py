"""minillm against llama.cpp on the same GGUF files, one thread each, in one run.

    python benchmarks/bench_llamacpp.py                      # every file, 3 rounds (~2-3 min)
    python benchmarks/bench_llamacpp.py --quick --files gpt2-f32
    python benchmarks/bench_llamacpp.py --workdir /tmp/gguf  # keep the exported files for next time

Needs ``cyllama==0.2.18`` (llama.cpp b9190 in a PyPI wheel, built without BLAS) and threadpoolctl,
in a development venv: never a test or run-time dependency. The files, each read by both:

    gpt2-f32      a GPT-2-124M-shaped model (random weights, seed 0) exported F32 by minillm
    smollm2-f32   SmolLM2-135M-Instruct (../shared/data/models, Q4_1) loaded and exported F32
    smollm2-q8_0  the same exported Q8_0 by minillm (llama.cpp's own quantisation format)
    smollm2-q4_1  the shipped Q4_1 file itself

minillm dequantises every file to float32 at load, so its speed is the same on all four encodings
of SmolLM2; llama.cpp multiplies the quantised blocks directly (fewer bytes per token).

What is timed, the same for both (wall clock, one BLAS / ggml thread):
  decode   a 16-token prompt goes in, then 64 greedy tokens one per forward pass; tokens/s over the
           64 forward passes alone (the prompt excluded). The argmax and, for llama.cpp, the wheel
           copying the logits into a Python list (~1 ms per token, printed) are outside the clock.
  prompt   one forward pass over a 256-token prompt into an empty cache, last position's logits only.
Rounds (``--rounds``) alternate the two engines and which goes first; figures are the best of the
rounds and (in brackets) the median. On F32 files the greedy tokens are compared (how many of the
first ones agree). llama.cpp runs without flash attention and with an F32 KV cache (as minillm:
exact float32 attention); ``--llamacpp-defaults`` keeps its defaults (flash attention, F16 cache).
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")      # before numpy: no BLAS threads spawned

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "scripts"), str(ROOT / "benchmarks")]
from bench_decode import CONFIG, blas_info  # noqa: E402

from minillm import GPT, KVCache, Tokenizer, load_model, read_gguf  # noqa: E402

SMOLLM2 = Path(os.environ.get("MINILLM_SHARED_DATA", ROOT.parent / "shared" / "data")) \
    / "models/SmolLM2-135M-Instruct.Q4_1.gguf"
FILES = ("gpt2-f32", "smollm2-f32", "smollm2-q8_0", "smollm2-q4_1")


def make_file(name: str, workdir: Path) -> Path:
    """The GGUF file ``name``, exported by minillm into ``workdir`` (reused when already there)."""
    if name == "smollm2-q4_1":
        return SMOLLM2
    path = workdir / f"{name}.gguf"
    if not path.exists():
        t = time.perf_counter()
        if name == "gpt2-f32":
            model, tok = GPT(CONFIG, seed=0), Tokenizer.load("gpt2")
        else:
            model, tok = load_model(SMOLLM2, fast=False)
        model.save_gguf(path, tok, dtype=name.split("-")[1])
        print(f"  exported {path.name} ({path.stat().st_size / 1e6:.0f} MB) in "
              f"{time.perf_counter() - t:.1f} s")
    return path


# The clock both sides' passes are timed with: wall (default) or, with ``--clock cpu`` in the
# decode benchmarks, the process's CPU time (on an oversubscribed machine the wall clock counts
# the time spent waiting for a core; one thread each, so CPU time is the pass's own work).
CLOCK = [time.perf_counter]


class LlamaSide:
    """llama.cpp through the wheel (``scripts/llama_cpp_ref.py`` holds its workarounds)."""

    def __init__(self, path: Path, n_ctx: int, exact: bool):
        from llama_cpp_ref import LlamaCpp
        self.ref, self.exact = LlamaCpp(path, n_ctx=n_ctx, threads=1), exact
        self.fetch = []                                   # seconds of each logits copy to a list

    def _eval(self, ctx, ids, start: int) -> float:
        """Feed ``ids`` at positions start.. (logits for the last only) -> seconds of the pass."""
        from cyllama.llama import llama_cpp as cy
        batch = cy.LlamaBatch(n_tokens=len(ids), embd=0, n_seq_max=1)
        for k, t in enumerate(ids):
            batch.add(int(t), start + k, [0], k == len(ids) - 1)
        t = CLOCK[0]()
        ctx.decode(batch)
        return CLOCK[0]() - t

    def _next(self, ctx) -> tuple[int, float]:
        """The argmax of the last logits, and its top-2 margin (outside the clock)."""
        t = time.perf_counter()
        logits = np.asarray(ctx.get_logits_ith(-1), np.float32)           # [V]
        self.fetch.append(time.perf_counter() - t)
        top2 = np.sort(logits)[-2:]
        return int(logits.argmax()), float(top2[1] - top2[0])

    def decode(self, prompt, n: int) -> tuple[float, list[int], list[float]]:
        """-> (seconds of the n one-token passes, the n greedy tokens, their top-2 margins)."""
        ctx = self.ref.context(self.exact)
        self._eval(ctx, prompt, 0)
        tokens, margins, self.steps = [], [], []          # steps: seconds of each one-token pass
        for i in range(n):
            token, margin = self._next(ctx)
            tokens.append(token)
            margins.append(margin)
            self.steps.append(self._eval(ctx, [token], len(prompt) + i))
        del ctx
        return sum(self.steps), tokens, margins

    def prompt(self, ids) -> float:
        ctx = self.ref.context(self.exact)
        seconds = self._eval(ctx, ids, 0)
        del ctx
        return seconds

    def close(self) -> None:
        self.ref.close()


class MinillmSide:
    """minillm's engine (``load_model``), a preallocated KV cache, greedy."""

    def __init__(self, path: Path, layout: str | None = None):
        self.model, _ = load_model(path)
        if layout is not None:                 # the same weights copied into another arena layout
            from minillm.engine import EngineGPT, to_arena
            c = self.model.config
            self.model = EngineGPT(c, to_arena(self.model.params, c, layout))

    def _eval(self, ids, cache) -> tuple[float, np.ndarray]:
        x = np.array(ids)[None]                                            # [1, T]
        t = CLOCK[0]()
        logits = self.model(x, cache=cache, last_only=True)                # [1, 1, V]
        return CLOCK[0]() - t, logits[0, -1]

    def decode(self, prompt, n: int) -> tuple[float, list[int]]:
        cache = KVCache(self.model.config, 1, capacity=len(prompt) + n)
        _, logits = self._eval(prompt, cache)
        tokens, self.steps = [], []                       # steps: seconds of each one-token pass
        for _ in range(n):
            tokens.append(int(logits.argmax()))
            dt, logits = self._eval([tokens[-1]], cache)
            self.steps.append(dt)
        return sum(self.steps), tokens

    def prompt(self, ids) -> float:
        return self._eval(ids, KVCache(self.model.config, 1, capacity=len(ids)))[0]


def agreement(ours: list[int], theirs: list[int], margins: list[float]) -> str:
    if ours == theirs:
        return f"the same {len(ours)} greedy tokens"
    i = next(k for k, (a, b) in enumerate(zip(ours, theirs)) if a != b)
    return (f"greedy tokens agree for the first {i} of {len(ours)} (llama.cpp's top-2 margin "
            f"there: {margins[i]:.2g})")


def bench_file(name: str, path: Path, text_ids: list[int], args) -> dict:
    n_new, n_prompt = args.tokens, args.prompt
    short, long = text_ids[:16], text_ids[:n_prompt]
    llama = LlamaSide(path, n_ctx=max(n_prompt, 16 + n_new), exact=not args.llamacpp_defaults)
    mine = MinillmSide(path)
    for side in (llama, mine):                                             # warm up
        side.decode(short, 4)
        side.prompt(long[:64])
    r = {k: [] for k in ("l_dec", "m_dec", "l_pre", "m_pre")}
    greedy = {}                                                            # tag -> first round's
    for k in range(args.rounds):
        sides = [("l", llama), ("m", mine)][::1 if k % 2 == 0 else -1]     # alternate who goes first
        for tag, side in sides:
            seconds, *greedy[tag] = side.decode(short, n_new)
            r[f"{tag}_dec"].append(n_new / seconds)
        for tag, side in sides:
            r[f"{tag}_pre"].append(len(long) / side.prompt(long))
    fetch_ms = 1e3 * statistics.median(llama.fetch)
    llama.close()
    del mine
    check = agreement(greedy["m"][0], *greedy["l"]) if "f32" in name else ""
    return {**r, "check": check, "fetch_ms": fetch_ms}


def fmt(rates: list[float]) -> str:
    return f"{max(rates):6.1f} ({statistics.median(rates):.1f})"


def llama_build() -> str:
    import cyllama
    from cyllama.llama import llama_cpp as cy
    cfg = json.loads((Path(cyllama.__file__).parent / "build_config.json").read_text())
    blas = "BLAS" if cfg["backend"]["blas"]["enabled"] else "no BLAS"
    return (f"llama.cpp {cfg['versions']['llama_cpp_version']} (ggml {cy.ggml_version()}, "
            f"{cy.ggml_commit()}; {blas}) via cyllama {cyllama.__version__}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", nargs="+", choices=FILES, default=list(FILES))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="16 new tokens, a 64-token prompt, 1 round")
    parser.add_argument("--workdir", type=Path, help="where exported files are kept (default: a temp dir)")
    parser.add_argument("--llamacpp-defaults", action="store_true",
                        help="llama.cpp with flash attention and an F16 KV cache (its defaults)")
    args = parser.parse_args()
    args.tokens, args.prompt = (16, 64) if args.quick else (64, 256)
    args.rounds = 1 if args.quick else args.rounds
    from threadpoolctl import threadpool_limits
    threadpool_limits(1)                                # whatever the environment said
    print(f"BLAS: {blas_info()}; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print("env: " + " ".join(f"{k}={v}" for k, v in os.environ.items()
                             if k.startswith(("OPENBLAS", "OMP_", "MKL_"))))
    print(f"{llama_build()}; n_threads=1; " + ("its default attention (flash, F16 KV cache)"
          if args.llamacpp_defaults else "flash attention off, F32 KV cache"))
    print(f"decode: 16-token prompt, then {args.tokens} greedy tokens; prompt: {args.prompt} tokens; "
          f"best (median) of {args.rounds} round(s), tokens/s")
    files = [f for f in args.files if f == "gpt2-f32" or SMOLLM2.exists()]
    if len(files) < len(args.files):
        print(f"{SMOLLM2} absent: the SmolLM2 files are skipped (MINILLM_SHARED_DATA= the folder "
              f"holding models/)")
    gpt2_ids = Tokenizer.load("gpt2").encode((ROOT / "README.md").read_text())   # real text
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        smol_ids = Tokenizer.from_gguf_metadata(read_gguf(str(SMOLLM2)).metadata).encode(
            (ROOT / "README.md").read_text()) if SMOLLM2.exists() else []
        for name in files:
            path = make_file(name, workdir)
            r = bench_file(name, path, gpt2_ids if name.startswith("gpt2") else smol_ids, args)
            rows.append((name, r))
            print(f"  {name}: done (load average {os.getloadavg()[0]:.2f}); llama.cpp's logits "
                  f"copied to a list: {r['fetch_ms']:.2f} ms per token, not timed"
                  + (f"; {r['check']}" if r["check"] else ""), flush=True)
    print(f"\nload average after: {os.getloadavg()[0]:.2f}; ratio = minillm / llama.cpp (best; median)")
    print(f"| file | llama.cpp decode | minillm decode | ratio | llama.cpp prompt ({args.prompt}) "
          f"| minillm prompt | ratio |")
    print("|---|---|---|---|---|---|---|")
    for name, r in rows:
        dec = (max(r["m_dec"]) / max(r["l_dec"]), statistics.median(r["m_dec"]) / statistics.median(r["l_dec"]))
        pre = (max(r["m_pre"]) / max(r["l_pre"]), statistics.median(r["m_pre"]) / statistics.median(r["l_pre"]))
        print(f"| {name} | {fmt(r['l_dec'])} | {fmt(r['m_dec'])} | {dec[0]:.2f}x; {dec[1]:.2f}x "
              f"| {fmt(r['l_pre'])} | {fmt(r['m_pre'])} | {pre[0]:.2f}x; {pre[1]:.2f}x |")


if __name__ == "__main__":
    main()
