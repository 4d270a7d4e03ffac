"""Exercises of notebook 12 (past the memory bound: bytes per token, the roofline, speculation)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from minillm.config import ModelConfig
from minillm.io.sizes import parameter_count

from .core import Exercise, arrays_differ, as_array, as_ids, as_number, fmt, output_hint


def describe_config(c: ModelConfig) -> str:
    return (f"a {c.arch} config (vocab {c.vocab_size}, d_model {c.d_model}, {c.n_layers} layers, "
            f"{c.n_heads} query heads, {c.n_kv_heads} key/value heads of width {c.d_head})")


def decode_parts(config, n) -> tuple[int, int]:
    """(weight bytes, cache bytes) of one decode step at a context of n, float32."""
    return 4 * parameter_count(config), 2 * config.n_layers * config.n_kv_heads * n * config.d_head * 4


def judge_decode_bytes(fn, case):
    config, n = case
    weights, cache = decode_parts(config, n)
    got = as_number(fn(config, n), "a number of bytes")
    if got == weights + cache:
        return None
    return (f"you returned {got:,.0f} bytes; the weights are {weights // 4:,} parameters × 4 = "
            f"{weights:,} bytes and the cache is 2 (K, V) × {config.n_layers} layers × "
            f"{config.n_kv_heads} heads × {n} positions × {config.d_head} × 4 = {cache:,} bytes: "
            f"{weights + cache:,} in all")


def decode_hint(text, bug):
    return output_hint(text, lambda c: bug(*decode_parts(*c), c[0]))


DECODE_HINTS = (
    decode_hint("you left out the KV cache: attention reads every cached key and value",
                lambda w, c, config: w),
    decode_hint("the cache holds keys AND values", lambda w, c, config: w + c // 2),
    decode_hint("count bytes: a float32 is 4 bytes", lambda w, c, config: (w + c) // 4),
    decode_hint("the cache stores n_kv_heads heads, not n_heads: grouped-query heads share them",
                lambda w, c, config: w + c // config.n_kv_heads * config.n_heads),
)


def config_case(arch, n_heads, group, d_head, n_layers, vocab, n_frac):
    n_kv = max(1, n_heads // group) if arch == "llama" else n_heads
    config = ModelConfig(vocab_size=vocab, n_ctx=64, d_model=n_heads * d_head, n_heads=n_heads,
                         n_layers=n_layers, n_kv_heads=n_kv, arch=arch)
    return config, max(1, round(n_frac * config.n_ctx))


GPT2_SMALL = ModelConfig(vocab_size=50257, n_ctx=1024, d_model=768, n_heads=12, n_layers=12)
SMOLLM2_135M = ModelConfig(vocab_size=49152, n_ctx=8192, d_model=576, n_heads=9, n_kv_heads=3,
                           n_layers=30, d_ff=1536, arch="llama")


def judge_roofline(fn, case):
    intensity, peak, bandwidth = case
    want = np.minimum(peak, np.asarray(intensity) * bandwidth)
    got = as_array(fn(intensity.copy() if isinstance(intensity, np.ndarray) else intensity, peak,
                      bandwidth), np.shape(want), "FLOP/s")
    if not arrays_differ(got, want):
        return None
    memory = np.asarray(intensity) * bandwidth
    return (f"you returned {fmt(got / 1e9)} GFLOP/s; memory allows intensity × bandwidth = "
            f"{fmt(memory / 1e9)} GFLOP/s and the attainable is the smaller of that and the peak: "
            f"{fmt(want / 1e9)} GFLOP/s")


ROOF_HINTS = (
    output_hint("that is the memory line alone: no kernel beats the arithmetic peak",
                lambda c: np.asarray(c[0]) * c[2]),
    output_hint("the smaller of the two limits, not the larger",
                lambda c: np.maximum(c[1], np.asarray(c[0]) * c[2])),
)


GIGA = st.integers(1, 500).map(lambda g: g * 1e9)
INTENSITY = st.integers(-8, 40).map(lambda e: 2.0 ** (e / 4))        # 0.25 … 1024 flop/byte
ROOF_CASES = st.tuples(st.one_of(INTENSITY, st.lists(INTENSITY, min_size=1, max_size=5).map(np.array)),
                       GIGA, GIGA)


def accept_reference(drafts, logits):
    out = []
    for i, d in enumerate(drafts):
        best = int(np.argmax(logits[i]))
        if d != best:
            return out + [best]                  # the target's own token replaces the first miss
        out.append(d)
    return out + [int(np.argmax(logits[len(drafts)]))]    # all k accepted: the bonus token


def judge_accept(fn, case):
    drafts, logits = case
    want = accept_reference(drafts, logits)
    got = as_ids(fn(list(drafts), logits.copy()), what="token ids")
    if got == want:
        return None
    best = np.argmax(logits, axis=1).tolist()
    a = len(want) - 1
    agree = "no draft agrees: draft 1" if a == 0 else f"the first {a} agree, draft {a + 1}"
    why = (f"all {len(drafts)} agree, so all are kept plus the bonus token {want[-1]}"
           if a == len(drafts) else
           f"{agree} ({drafts[a]}) does not, so the target's own {want[-1]} replaces it and "
           f"nothing after it counts")
    return (f"you returned {got}; the target's argmax after each prefix is {best}: {why} → {want}")


def accept_case(seed, k, V, n_match, rematch=False):
    """k drafts whose first n_match equal the target's argmax; then a miss; then random (or, with
    rematch, the argmax again: drafts that agree AFTER a miss must still be dropped)."""
    rng = np.random.default_rng(seed)
    logits = rng.integers(-5, 6, size=(k + 1, V)).astype(float)          # [k + 1, V]
    best = np.argmax(logits, axis=1)                                       # [k + 1]
    drafts = [int(t) for t in rng.integers(0, V, size=k)]
    for i in range(k):
        if i < n_match or (rematch and i > n_match):
            drafts[i] = int(best[i])
        elif i == n_match:
            drafts[i] = int(best[i] + 1) % V
    return drafts, logits


EXERCISES = [
    Exercise("decode_bytes", "decode_bytes(config, n) -> the bytes read from memory to decode one "
             "token at a context of n tokens, float32: every parameter once (parameter_count(config) "
             "from minillm.io.sizes) plus the KV cache: keys and values of n positions in every "
             "layer, n_kv_heads · d_head floats each.", judge_decode_bytes,
             lambda c: f"{describe_config(c[0])}, n = {c[1]}",
             st.builds(config_case, st.sampled_from(["gpt2", "llama"]), st.sampled_from([1, 2, 4]),
                       st.sampled_from([1, 2, 4]), st.sampled_from([2, 4, 8]), st.integers(1, 4),
                       st.integers(8, 100), st.floats(0, 1)),
             ((GPT2_SMALL, 16), (SMOLLM2_135M, 100)), DECODE_HINTS),
    Exercise("roofline", "attainable(intensity, peak, bandwidth) -> FLOP/s: min(peak, intensity × "
             "bandwidth); intensity (flop per byte) may be a number or an array.", judge_roofline,
             lambda c: f"intensity {fmt(c[0])} flop/byte, peak {c[1] / 1e9:g} GFLOP/s, bandwidth {c[2] / 1e9:g} GB/s",
             ROOF_CASES,
             ((0.5, 100e9, 20e9), (1000.0, 100e9, 20e9), (np.array([0.5, 5.0, 50.0]), 100e9, 20e9)),
             ROOF_HINTS),
    Exercise("accept_drafts", "accept(drafts [k], logits [k + 1, V]) -> the tokens one greedy "
             "speculative round yields: the longest prefix of drafts equal to the argmax of "
             "logits[i] (np.argmax: lowest id on ties), then one token of the target's own — "
             "argmax of the row after the last accepted draft.", judge_accept,
             lambda c: f"drafts {c[0]}, target logits {c[1].tolist()}",
             st.integers(1, 5).flatmap(lambda k: st.builds(
                 accept_case, st.integers(0, 999), st.just(k), st.integers(2, 6),
                 st.integers(0, k), st.booleans())),
             (accept_case(0, 3, 5, 3), accept_case(1, 3, 5, 0), accept_case(2, 4, 5, 1, rematch=True))),
]
