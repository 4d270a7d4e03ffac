"""Search for a witness against each mutant that scripts/mutants_equivalent.txt calls equivalent.

A witness is an input on which the mutant's output differs from the code's, or on which the
mutant does not return within the time limit. Each mutant runs in its own subprocess: the
mutated module is executed in place of the original, then the filter it defines is compared
with the original on random logits (sizes 1 … 20,000, ties, -inf, extreme magnitudes) and on
every k / p at its edges. Covers the filters (sampling/top_k.py, top_p.py, min_p.py), whose
outputs are pure functions of (logits, k or p); other files' entries are listed as not searched.

    python scripts/witness_search.py [--seconds 20] [--trials 300]
"""
import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutate import REPO, apply, equivalent_list, mutants_of  # noqa: E402

FILTERS = {"sampling/top_k.py": ("top_k", "k"), "sampling/top_p.py": ("top_p", "p"),
           "sampling/min_p.py": ("min_p", "p")}

SEARCH = r'''
import importlib, sys, types
import numpy as np
sys.path.insert(0, sys.argv[1])
name, fn, kind, trials = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
original = importlib.import_module("minillm." + name)
mutant = types.ModuleType("minillm." + name)
mutant.__file__ = original.__file__
exec(compile(sys.stdin.read(), original.__file__, "exec"), mutant.__dict__)
rng = np.random.default_rng(0)

def inputs():
    for V in (1, 2, 3, 17, 64, 65, 200, 4095, 4096, 4097, 20000):
        yield V, np.zeros(V, np.float32)                                   # all tied
        yield V, np.full(V, -37.5, np.float32)
    for t in range(trials):
        V = int(rng.choice([1, 2, 5, 16, 33, 100, 1000, 4096, 5000, 20000]))
        z = (rng.standard_normal(V) * rng.choice([0.01, 1, 10, 1e3, 1e30])).astype(np.float32)
        if t % 3 == 0:
            z = np.round(z).astype(np.float32)                             # many ties
        if t % 5 == 0:
            z[rng.random(V) < 0.3] = -np.inf
            z[rng.integers(V)] = 0.0
        if t % 7 == 0:
            z = np.concatenate([[0.0], np.full(V - 1, -37.5)]).astype(np.float32)
        yield V, z

def settings(V):
    if kind == "k":
        return sorted({1, 2, 3, 15, 16, 17, V // 2, V - 1, V} & set(range(1, V + 1)))
    return [1e-9, 0.01, 0.1, 0.5, 0.9, 0.999, 1 - 5e-13, 1.0]

for V, z in inputs():
    for a in settings(V):
        try:
            want = getattr(original, fn)(z.copy(), a)
        except Exception as e:
            want = type(e).__name__
        try:
            got = getattr(mutant, fn)(z.copy(), a)
        except Exception as e:
            got = type(e).__name__
        same = (isinstance(want, str) and want == got) or (
            not isinstance(want, str) and not isinstance(got, str)
            and np.array_equal(np.asarray(want), np.asarray(got)))
        if not same:
            print(f"WITNESS V={V} {kind}={a!r} z[:4]={z[:4].tolist()} want={str(want)[:60]} got={str(got)[:60]}")
            sys.exit(0)
print("none")
'''


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=20, help="time limit per mutant (a hang)")
    ap.add_argument("--trials", type=int, default=300, help="random logit vectors per mutant")
    args = ap.parse_args()
    equivalent = equivalent_list()
    searched = set()
    for relative, (fn, kind) in FILTERS.items():
        source = (REPO / "minillm" / relative).read_text(encoding="utf-8")
        for m in mutants_of(relative):
            if m.id not in equivalent:
                continue
            searched.add(m.id)
            name = relative[:-3].replace("/", ".")
            try:
                done = subprocess.run([sys.executable, "-c", SEARCH, str(REPO), name, fn, kind,
                                       str(args.trials)], input=apply(source, m), text=True,
                                      capture_output=True, timeout=args.seconds)
                found = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else \
                    "ERROR " + done.stderr.strip().splitlines()[-1]
            except subprocess.TimeoutExpired:
                found = f"WITNESS hang: no answer within {args.seconds:g} s"
            print(f"{m.id} | {relative}:{m.line} | {m.what} | {found}", flush=True)
    rest = sorted(set(equivalent) - searched)
    print(f"searched {len(searched)} of {len(equivalent)} entries; not searched: {len(rest)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
