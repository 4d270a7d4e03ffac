"""Structured output's cost: the vocabulary index for SmolLM2's 49,152 tokens and a 5-field
object, and the per-token work of a guide against one decode step of the model.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_constraints.py [--gguf PATH] [--rounds 3]

Prints (medians; every figure from this one run, 1 BLAS thread):
  pattern      the object's regex (string, integer, enum, array of strings, nested object)
  dfa          byte-DFA states, and the seconds of regex -> NFA -> DFA -> byte DFA
  index        seconds of Guide.build (DFA and index, cache cleared first) and the index's bytes
               (Guide.nbytes: the byte table and each state's allowed ids and next states), and
               the [V] bool masks allowed() keeps once a state is visited
  per token    allowed(state) + advance(state, id) along a real reply's tokens, first visit of
               a state (its mask made) and later visits (cached), and np.where(mask, logits, -inf)
  decode step  one decode step of SmolLM2 with the KV cache, and the ratio per token / step
Goal (issue 42): per-token overhead < 10 % of a decode step.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from bench_decode import blas_info  # noqa: E402

from minillm import KVCache, load_model, load_tokenizer  # noqa: E402
from minillm.decoding.constraints import Guide, token_bytes_of  # noqa: E402
from minillm.decoding.constraints import guide as guide_module  # noqa: E402
from minillm.decoding.constraints.automaton import build_dfa, build_nfa  # noqa: E402
from minillm.decoding.constraints.byte_dfa import build_byte_dfa  # noqa: E402
from minillm.decoding.constraints.regex import parse  # noqa: E402

DEFAULT = Path(os.environ.get("MINILLM_SHARED_DATA", HERE.parent.parent / "shared" / "data")) \
    / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
STRING = r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"'
INTEGER = r"-?(?:0|[1-9][0-9]*)"
SP = r"[ ]?"                                        # the whitespace policy: one optional space
OBJECT = (r"\{" + SP + r'"name":' + SP + STRING + "," + SP + r'"age":' + SP + INTEGER + ","
          + SP + r'"color":' + SP + r'(?:"red"|"green"|"blue")' + "," + SP + r'"tags":' + SP
          + r"\[" + SP + "(?:" + STRING + "(?:," + SP + STRING + ")*)?" + SP + r"\]" + "," + SP
          + r'"address":' + SP + r"\{" + SP + r'"city":' + SP + STRING + "," + SP + r'"zip":'
          + SP + STRING + SP + r"\}" + SP + r"\}")
REPLY = ('{"name": "Ada Lovelace", "age": 36, "color": "green", "tags": ["math", "poetry", '
         '"engines"], "address": {"city": "London", "zip": "W1"}}')


def cpu_model() -> str:
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
        return next(line.split(":", 1)[1].strip() for line in lines if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def seconds(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def per_token(guide, ids, logits) -> tuple[float, float, float]:
    """Median seconds of allowed + advance per token, first visits and cached; mask applied."""
    first, later, applied = [], [], []
    for cached in (False, True):
        if not cached:
            guide._masks.clear()
        state = guide.start
        for token_id in ids:
            t = time.perf_counter()
            mask = guide.allowed(state)
            state = guide.advance(state, token_id)
            (later if cached else first).append(time.perf_counter() - t)
            t = time.perf_counter()
            np.where(mask, logits, -np.inf)
            applied.append(time.perf_counter() - t)
    return statistics.median(first), statistics.median(later), statistics.median(applied)


def decode_step(model, rounds: int) -> float:
    prompt = np.arange(37)[None] % model.config.vocab_size                    # [1, 37]
    cache = KVCache(model.config, capacity=37 + 8 * rounds + 1)
    logits = model(prompt, cache=cache, last_only=True)                       # [1, 1, V]
    times = []
    for _ in range(8 * rounds):
        token = np.array([[int(np.argmax(logits[0, -1]))]])                   # [1, 1]
        t = time.perf_counter()
        logits = model(token, cache=cache, last_only=True)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", type=Path, default=DEFAULT)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not args.gguf.exists():
        sys.exit(f"{args.gguf} is absent: pass --gguf or set MINILLM_SHARED_DATA")
    print(f"CPU {cpu_model()}; {blas_info()}")
    tok = load_tokenizer(args.gguf)
    token_bytes = token_bytes_of(tok)
    print(f"pattern ({len(OBJECT)} chars): {OBJECT}")
    dfa_s = seconds(lambda: build_byte_dfa(build_dfa(build_nfa(parse(OBJECT)))), args.rounds)

    def build():
        guide_module._CACHE.clear()
        return Guide.build(OBJECT, token_bytes, [tok.eos_id])
    build_s = seconds(build, args.rounds)
    guide = build()
    print(f"dfa          {guide.dfa.n_states} byte-DFA states, {dfa_s:.3f} s")
    print(f"index        build {build_s:.2f} s (V = {len(token_bytes)}), {guide.nbytes() / 1e6:.2f} MB")
    ids = tok.encode(REPLY)
    state = guide.start
    for i in ids:
        state = guide.advance(state, i)
    if not guide.is_accepting(state):
        sys.exit("the reply does not match the pattern")
    model, _ = load_model(args.gguf)
    step = decode_step(model, args.rounds)
    logits = np.zeros(len(token_bytes), np.float32)
    first, later, applied = per_token(guide, ids, logits)
    print(f"per token    allowed+advance {first * 1e6:.1f} us first visit, {later * 1e6:.1f} us "
          f"cached; mask applied {applied * 1e6:.1f} us ({len(ids)} tokens of the reply)")
    masks = sum(m.nbytes for m in guide._masks.values())
    print(f"masks        {len(guide._masks)} states' [V] masks cached by the walk: {masks / 1e6:.2f} MB "
          f"(all {guide.dfa.n_states}: {guide.dfa.n_states * len(token_bytes) / 1e6:.2f} MB)")
    print(f"decode step  {step * 1e3:.2f} ms; per token / step = {(first + applied) / step:.4f} "
          f"(first visit), {(later + applied) / step:.4f} (cached)")


if __name__ == "__main__":
    main()
