"""Run mutated files through minillm's loaders and count what happens.

    python -m tests.fuzz.runner [--cases N] [--seed S] [FORMAT ...]

Each case: a seed file of the format (corpus.py), mutated by a ``random.Random(seed, case)``,
written to a fresh folder, loaded. Outcomes: ``loaded`` (then the tokenizer must round-trip),
``clear`` (a ValueError / TypeError / FileNotFoundError with a message), ``traceback`` (any other
exception: a bug), ``wrong`` (loaded, but the tokenizer does not round-trip), ``hang`` (over
HANG_S seconds), ``memory`` (a MemoryError: the run is under an address-space limit of its start
+ 1 GiB, so any allocation over 1 GB from these sub-1-MB files shows here).
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

from tests.fuzz.corpus import FORMATS, round_trips, tokenizer_of

HANG_S = 10.0
CLEAR = (ValueError, TypeError, FileNotFoundError)


def run_case(fmt, seed_value, case: int, seed: int, folder: Path):
    """-> (outcome, detail) for one mutated case."""
    rng = random.Random(f"{fmt.name}/{seed}/{case}")
    mutated = fmt.mutate(seed_value, rng)
    if isinstance(seed_value, dict) and all(isinstance(v, bytes) for v in seed_value.values()):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        for name, data in mutated.items():
            (folder / name).write_bytes(data)
        target = folder
    else:
        target = mutated
    t0 = time.perf_counter()
    try:
        loaded = fmt.load(target)
    except MemoryError:
        return "memory", traceback.format_exc(limit=-3)
    except CLEAR as exc:
        outcome, detail = ("clear", "") if str(exc) else ("traceback", "empty message")
    except Exception:                    # noqa: BLE001 - counting is the point
        outcome, detail = "traceback", traceback.format_exc(limit=-4)
    else:
        tok = tokenizer_of(loaded)
        try:
            ok = tok is None or round_trips(tok)
        except CLEAR:
            ok = True                    # e.g. a pattern that refuses the text: said clearly
        except Exception:                # noqa: BLE001
            return "traceback", traceback.format_exc(limit=-4)
        outcome, detail = ("loaded", "") if ok else ("wrong", "does not round-trip")
    if time.perf_counter() - t0 > HANG_S:
        return "hang", f"{time.perf_counter() - t0:.1f} s"
    return outcome, detail


def run_format(name: str, cases: int, seed: int = 0) -> tuple[Counter, list]:
    fmt = FORMATS[name]
    seed_value = fmt.seed()
    counts, findings = Counter(), []
    with tempfile.TemporaryDirectory(prefix="minillm-fuzz-") as tmp:
        for case in range(cases):
            outcome, detail = run_case(fmt, seed_value, case, seed, Path(tmp) / "case")
            counts[outcome] += 1
            if outcome not in ("loaded", "clear"):
                findings.append((case, outcome, detail))
    return counts, findings


def limit_memory(extra_bytes: int = 1 << 30) -> None:
    """Cap the address space at what is mapped now + ``extra_bytes`` (Linux)."""
    with open("/proc/self/statm") as f:
        mapped = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (mapped + extra_bytes, resource.RLIM_INFINITY))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("formats", nargs="*", default=list(FORMATS))
    p.add_argument("--cases", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    for name in args.formats:            # build every seed first: they are not part of the budget
        FORMATS[name].seed()
    limit_memory()
    bad = 0
    print(f"{'format':<20}{'cases':>7}{'loaded':>8}{'clear':>7}{'traceback':>10}{'wrong':>6}"
          f"{'hang':>6}{'memory':>8}{'seconds':>9}")
    for name in args.formats:
        t0 = time.perf_counter()
        counts, findings = run_format(name, args.cases, args.seed)
        print(f"{name:<20}{sum(counts.values()):>7}{counts['loaded']:>8}{counts['clear']:>7}"
              f"{counts['traceback']:>10}{counts['wrong']:>6}{counts['hang']:>6}"
              f"{counts['memory']:>8}{time.perf_counter() - t0:>9.1f}", flush=True)
        for case, outcome, detail in findings[:5]:
            print(f"  case {case}: {outcome}: {detail.strip()[-600:]}", file=sys.stderr)
        bad += len(findings)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
