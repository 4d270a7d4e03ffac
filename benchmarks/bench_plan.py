"""The engine with this machine's plan against the engine without it, llama.cpp and the bound.

    python benchmarks/bench_plan.py --workdir /tmp/gguf          # 1 and 2 threads (~3-4 min)
    python benchmarks/bench_plan.py --quick --threads 1           # a short look (~1 min)

On the same F32 GGUF of SmolLM2-135M-Instruct (exported by minillm from the shipped Q4_1 file,
as ``bench_llamacpp.py`` makes it), per thread count (BLAS threads and llama.cpp's n_threads):
  machine      CPU model, cache sizes, BLAS library and the kernel it chose (threadpoolctl)
  plan         the plan measured now (``minillm/engine/plan.py``, in a temporary folder: the
               user's stored plan is neither read nor replaced) and how long it took; per shape
               the layout and the forms chosen for 1, 2, 8 rows
  bound        the best streaming read rate of this run (``bench_decode.bandwidth``: five
               read-only kernels over 512 MB arrays) -> the tokens/s that reads the weights at it
  decode       16-token prompt, then --tokens greedy tokens: tokens/s of the planned engine, the
               un-planned one ("by_width" and rows.py's fixed rule: what MINILLM_PLAN=off runs),
               llama.cpp (flash attention off, F32 KV cache); best and median of the rounds,
               interleaved; % of the bound; the same greedy tokens checked
  prompt       a 256-token prompt's forward, planned vs llama.cpp
  batch        B = 8 greedy decode steps (one [8, 1] forward a step) vs B = 1: aggregate tokens/s
               ratio, planned, un-planned, and with the batch plan (MINILLM_PLAN=batch: each
               shape stored the way 2-32 rows read it fastest)
  speculative  prompt lookup (k = 5) vs plain greedy on a copy-heavy prompt (rename a variable
               in code, as bench_speculative.py): the same tokens, the time ratio, planned and
               with the batch plan
  ceiling      the most B = 8 and speculative decoding can gain over one row with NumPy's
               products here: 8 (or 6) rows' best rate with the matrix in cache, against the
               weights' read time (``batch_ceiling.py``)
Wall clock, medians of interleaved rounds (``--rounds``), all in one run; with 2 threads a 0.3 s
pause before each engine's turn lets the other's worker threads (OpenBLAS's, ggml's) stop spinning. Needs cyllama==0.2.18
and threadpoolctl (a development venv; never a dependency of minillm).
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")      # the most this run uses: limited below

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE.parent / "scripts"), str(HERE)]
from bench_decode import bandwidth, blas_info, kernel_rates  # noqa: E402
from batch_ceiling import ceiling_line, ceilings  # noqa: E402
from decode_bound import products_seconds, step_matrices  # noqa: E402
from bench_llamacpp import SMOLLM2, LlamaSide, agreement, llama_build, make_file  # noqa: E402
from bench_speculative import TASKS  # noqa: E402

from minillm import KVCache, PromptLookup, generate, load_model  # noqa: E402
from minillm.chat.chatml import chatml_ids, stop_ids  # noqa: E402
from minillm.engine import EngineGPT, rows, to_arena  # noqa: E402
from minillm.engine.measure import chosen_forms  # noqa: E402
from minillm.engine import plan as plans  # noqa: E402
from minillm.engine.plan import plan_for, product_shapes, use  # noqa: E402


class Side:
    """One minillm engine model and the plan its products use (None: the fixed rule)."""

    def __init__(self, model, plan):
        self.model, self.plan = model, plan
        self.forms = {} if plan is None else plan.table()     # what plan.use(plan) installs

    def use(self) -> None:
        rows.CHOSEN = self.forms

    def _eval(self, ids, cache):
        self.use()
        x = np.asarray(ids).reshape(len(ids) if np.ndim(ids) == 2 else 1, -1)   # [B, T]
        t = time.perf_counter()
        logits = self.model(x, cache=cache, last_only=True)                       # [B, 1, V]
        return time.perf_counter() - t, logits[:, -1]

    def decode(self, prompt, n: int) -> tuple[float, list[int]]:
        cache = KVCache(self.model.config, 1, capacity=len(prompt) + n)
        _, logits = self._eval(prompt, cache)
        tokens, seconds = [], 0.0
        for _ in range(n):
            tokens.append(int(logits[0].argmax()))
            dt, logits = self._eval([tokens[-1]], cache)
            seconds += dt
        return seconds, tokens

    def prompt(self, ids) -> float:
        return self._eval(ids, KVCache(self.model.config, 1, capacity=len(ids)))[0]

    def batch_rate(self, B: int, prompt, n: int) -> float:
        """Aggregate tokens/s of n greedy steps of a B-row batch (each row the same prompt)."""
        cache = KVCache(self.model.config, B, capacity=len(prompt) + n)
        _, logits = self._eval([list(prompt)] * B, cache)
        seconds = 0.0
        for _ in range(n):
            dt, logits = self._eval(logits.argmax(-1)[:, None], cache)           # [B, 1]
            seconds += dt
        return B * n / seconds

    def speculative(self, prompt, n: int, stops) -> tuple[float, float, bool, float]:
        """(seconds plain greedy, seconds prompt lookup k = 5, the same tokens?, tokens per
        target forward of the speculative run)."""
        self.use()
        out, lookup = [], PromptLookup()
        for draft in (None, lookup):
            t = time.perf_counter()
            ids = [s.id for s in generate(self.model, prompt, n, temperature=0, stop_ids=stops,
                                          draft=draft, num_draft_tokens=5)]
            out.append((time.perf_counter() - t, ids))
        per_forward = len(out[1][1]) / max(lookup.rounds, 1)
        return out[0][0], out[1][0], out[0][1] == out[1][1], per_forward


def base_l2() -> int:
    from minillm.engine.machine import machine_key
    return machine_key().get("caches", {}).get("L2", 1 << 20)


def med(values) -> float:
    return statistics.median(values)


def show_plan(plan, config) -> list[str]:
    lines = [f"  plan measured in {plan.seconds:.1f} s"]
    for c, n in product_shapes(config):
        e, lay = plan.products.get(f"{c}x{n}"), plan.layout((c, n))
        if e is None:
            lines.append(f"    {c}x{n}: not measured (the budget ran out): the fixed rule")
            continue
        forms = chosen_forms((c, n), lay, e["rates"][lay])
        lines.append(f"    {c}x{n}: stored {lay}; 1 row {e['one_row'][lay]:.1f} GB/s "
                     f"(other layout {e['one_row']['nc' if lay == 'cn' else 'cn']:.1f}); "
                     + ", ".join(f"{m} rows {forms[str(m)]} {e['rates'][lay][str(m)][forms[str(m)]]:.1f}"
                                 for m in (2, 8)))
    for heads, entry in plan.attention.items():
        lines.append(f"    attention {heads}: blocks of {entry['block']} queries ("
                     + ", ".join(f"{b}: {ms:.1f} ms" for b, ms in entry["ms"].items()) + ", 512 tokens)")
    return lines


def run_threads(threads: int, base, path: Path, tok, args) -> None:
    from threadpoolctl import threadpool_limits
    threadpool_limits(threads)
    from minillm.engine.machine import machine_key
    key = machine_key()
    print(f"\n== {threads} thread(s): BLAS {key['blas']} kernel {key['blas_kernel']}, "
          f"threads {key['threads']}; load average {os.getloadavg()[0]:.2f}")
    c = base.config
    plans.BUDGET = args.budget                               # (a busy machine: see the plan whole)
    with tempfile.TemporaryDirectory() as d:
        os.environ["MINILLM_PLAN_DIR"] = d
        os.environ.pop("MINILLM_PLAN", None)
        plan = plan_for(c)
        print("\n".join(show_plan(plan, c)))
        os.environ["MINILLM_PLAN"] = "batch"                # the same plan, both layouts measured
        bplan = plan_for(c)
        print("\n".join(show_plan(bplan, c)).replace("plan measured", "batch plan measured"))
    planned = Side(EngineGPT(c, to_arena(base.params, c, plan)), plan)
    batched = Side(EngineGPT(c, to_arena(base.params, c, bplan)), bplan)
    plain = Side(EngineGPT(c, to_arena(base.params, c, "by_width")), None)
    llama = LlamaSide(path, n_ctx=max(args.prompt, 16 + args.tokens), exact=True)
    llama.ref.threads = threads
    text_ids = tok.encode((HERE.parent / "README.md").read_text(), disallowed_special=())
    short, long = text_ids[:16], text_ids[:args.prompt]
    sides = {"planned": planned, "unplanned": plain, "llama.cpp": llama}
    for side in sides.values():                                            # warm up
        side.decode(short, 4)
    r = {k: [] for k in ("bw", "products", *sides, "p_planned", "p_llama.cpp", "b1", "b8", "u1", "u8",
                         "x1", "x8", "greedy", "spec", "xgreedy", "xspec")}
    tokens, same = {}, True
    spec_prompt = chatml_ids(tok, [{"role": "user", "content": TASKS["rename in code"]}])
    for k in range(args.rounds):
        r["bw"].append(bandwidth(2))
        planned.use()
        seconds, product_bytes = products_seconds(planned.model, 3)       # one row x every matrix
        r["products"].append(seconds)
        for name in (list(sides) if k % 2 == 0 else list(sides)[::-1]):    # alternate the order
            time.sleep(0.3 if threads > 1 else 0)     # the other engine's threads stop spinning
            seconds, *got = sides[name].decode(short, args.tokens)
            r[name].append(args.tokens / seconds)
            tokens[name] = got[0]
        r["p_planned"].append(len(long) / planned.prompt(long))
        time.sleep(0.3 if threads > 1 else 0)
        r["p_llama.cpp"].append(len(long) / llama.prompt(long))
        time.sleep(0.3 if threads > 1 else 0)
        for tag, side in (("b", planned), ("u", plain), ("x", batched)):
            r[f"{tag}1"].append(side.batch_rate(1, short, args.batch_steps))
            r[f"{tag}8"].append(side.batch_rate(8, short, args.batch_steps))
        for tag, side in (("", planned), ("x", batched)):
            g, s, ok, per_forward = side.speculative(spec_prompt, args.spec_tokens, stop_ids(tok))
            r[f"{tag}greedy"].append(g)
            r[f"{tag}spec"].append(s)
            same &= ok
    llama.close()
    use(None)
    nbytes = 4 * base.num_parameters()                                     # every weight read once
    bound = med(r["bw"]) / nbytes
    print(f"  bound: streaming read {med(r['bw']) / 1e9:.2f} GB/s (best of five kernels, median "
          f"of rounds; the last round's {kernel_rates()}) -> {bound:.1f} tokens/s for "
          f"{nbytes / 1e6:.0f} MB of weights")
    step = 1 / med(r["planned"])
    print(f"  the planned step: {step * 1e3:.1f} ms; its weight products alone (one row x every "
          f"matrix, best of 3) {med(r['products']) * 1e3:.1f} ms = "
          f"{product_bytes / med(r['products']) / 1e9:.1f} GB/s; "
          f"the rest (norms, attention, RoPE, the cache, Python) {(step - med(r['products'])) * 1e3:.1f} ms")
    for name in sides:
        print(f"  decode {name:10s} {max(r[name]):6.1f} ({med(r[name]):.1f}) tokens/s = "
              f"{med(r[name]) / bound:4.0%} of the bound")
    print(f"  decode planned / llama.cpp {med(r['planned']) / med(r['llama.cpp']):.2f}x (medians), "
          f"{max(r['planned']) / max(r['llama.cpp']):.2f}x (best); planned / unplanned "
          f"{med(r['planned']) / med(r['unplanned']):.2f}x; "
          f"{agreement(tokens['planned'], tokens['llama.cpp'], [0.0] * args.tokens)}")
    print(f"  prompt ({args.prompt}) planned {med(r['p_planned']):.0f} vs llama.cpp "
          f"{med(r['p_llama.cpp']):.0f} tokens/s: {med(r['p_planned']) / med(r['p_llama.cpp']):.2f}x")
    print(f"  batch B = 8 vs B = 1 (aggregate tokens/s): planned {med(r['b8']) / med(r['b1']):.2f}x "
          f"({med(r['b8']):.0f} vs {med(r['b1']):.1f}); batch plan {med(r['x8']) / med(r['x1']):.2f}x "
          f"({med(r['x8']):.0f} vs {med(r['x1']):.1f}; vs the planned B = 1: "
          f"{med(r['x8']) / med(r['b1']):.2f}x); unplanned {med(r['u8']) / med(r['u1']):.2f}x "
          f"({med(r['u8']):.0f} vs {med(r['u1']):.1f})")
    matrices, l2 = step_matrices(planned.model), base_l2()
    t1, p1, rate = 1 / med(r["b1"]), med(r["products"]), med(r["bw"])
    print(ceiling_line("B = 8 vs B = 1", ceilings(matrices, 8, t1, p1, rate, l2), 8, t1))
    print(f"  speculative (prompt lookup, k = 5) vs greedy, 'rename in code', {args.spec_tokens} "
          f"tokens: planned {med(r['greedy']) / med(r['spec']):.2f}x, batch plan "
          f"{med(r['xgreedy']) / med(r['xspec']):.2f}x (vs the planned greedy: "
          f"{med(r['greedy']) / med(r['xspec']):.2f}x); {per_forward:.2f} tokens per target forward; "
          f"the same tokens: {same}")
    print(ceiling_line(f"speculative ({per_forward:.2f} tokens per forward of 6 rows)",
                       ceilings(matrices, 6, t1, p1, rate, l2), per_forward, t1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=64, help="greedy tokens decoded per round")
    parser.add_argument("--workdir", type=Path, help="where the F32 export is kept (default: temp)")
    parser.add_argument("--quick", action="store_true", help="16 tokens, 1 round, short prompt")
    parser.add_argument("--budget", type=float, default=120.0,
                        help="seconds the plan's measuring may take (the engine's own: 15)")
    args = parser.parse_args()
    args.prompt, args.batch_steps, args.spec_tokens = 256, 16, 120
    if args.quick:
        args.tokens, args.rounds, args.prompt, args.batch_steps, args.spec_tokens = 16, 1, 64, 4, 40
    if not SMOLLM2.exists():
        sys.exit(f"{SMOLLM2} absent (MINILLM_SHARED_DATA= the folder holding models/)")
    from minillm.engine.machine import machine_key
    key = machine_key()
    caches = ", ".join(f"{k} {v >> 10} KiB" for k, v in key["caches"].items())
    print(f"CPU: {key['cpu']}; {caches}; {os.cpu_count()} CPUs; numpy {key['numpy']}")
    print(f"BLAS: {blas_info()}; {llama_build()}")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        path = make_file("smollm2-f32", workdir)
        os.environ["MINILLM_PLAN"] = "off"                   # the base: plain arrays, no plan
        base, tok = load_model(path, fast=False)
        print(f"model: {path.name}, {base.num_parameters():,} parameters, F32")
        for threads in args.threads:
            run_threads(threads, base, path, tok, args)


if __name__ == "__main__":
    main()
