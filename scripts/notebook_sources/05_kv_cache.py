# %% [markdown]
# # 05 · The KV cache
#
# > KV cache 本质上是一个工程优化：把"前面已经算过的 K/V 结果缓存下来"，避免每一步都从头算。
# > 没有 cache，复杂度是：O(n²) 每步 × n 步；有 cache，变成：O(n²) 一次 + O(n) 每步。
# > 注意：cache 不改变模型逻辑，只是减少重复计算，attention 的路由机制完全不变。
# >
# > *The KV cache is an engineering optimisation: keep the K/V already computed instead of
# > recomputing them at every step. Without a cache the cost is O(n²) per step × n steps; with it,
# > O(n²) once + O(n) per step. The cache does not change the model's logic, only removes repeated
# > work; attention's routing is unchanged.*
#
# First a cache in ten lines — two Python lists — on a toy attention layer; then three
# measurements on a real model: the outputs are identical with and without minillm's `KVCache`;
# the time per token against the context length, cache vs recompute; and the memory the cache
# takes. On the way, the articles' other sentence — every step recomputes the whole context,
# nothing in between is remembered — is reconciled with the cache.
#
# **Try this:** change the toy's `N_TOY` (1 to 64 tokens) / `D` (1 to 64), the real `PROMPT`
# (1 to 200 characters) and `N_NEW` (1 to 100 tokens; prompt and new tokens together at most the
# model's context of 128), or `LENGTHS` (4 to 8 different lengths from 16 to 1024), and re-run.
# A value outside its range is refused with a message before any work starts.

# %%
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # CI runs two notebooks at once on two cores

import dataclasses

import matplotlib.pyplot as plt
import numpy as np

from minillm import GPT, KVCache, generate
from minillm.functional import softmax
from minillm.model.attention import causal_mask
from minillm.io.gguf.read import read_gguf
from minillm.io.gguf.model import gguf_config
from nbhelpers import claim, find_smollm2, knob, load_shipped, min_times

model, tok = load_shipped("shakespeare")
print(model.config)

# %% [markdown]
# ## A cache in ten lines
#
# One attention layer of width D = 4 with random weights, and tokens arriving one at a time. When
# token t arrives we compute only ITS query, key and value, append the key and the value to two
# lists — the cache — and let its query attend over everything in them. The lists grow by one row
# per token:

# %%
N_TOY, D = 6, 4
knob("N_TOY", N_TOY, lambda n: isinstance(n, int) and 1 <= n <= 64, "a whole number from 1 to 64")
knob("D", D, lambda d: isinstance(d, int) and 1 <= d <= 64, "a whole number from 1 to 64")
rng = np.random.default_rng(0)
Wq, Wk, Wv = (rng.normal(size=(D, D)) for _ in range(3))              # [D, D] each
xs = rng.normal(size=(N_TOY, D))                                      # [N, D] the tokens' vectors

K_list, V_list, outputs = [], [], []                                  # the cache: two lists
for t, x in enumerate(xs):
    K_list.append(x @ Wk)                                             # this token's key   [D]
    V_list.append(x @ Wv)                                             # and value          [D]
    K, V = np.array(K_list), np.array(V_list)                         # [t + 1, D] each
    weights = softmax((x @ Wq) @ K.T / np.sqrt(D))                    # [t + 1] over the cache
    outputs.append(weights @ V)                                       # [D]
    print(f"token {t}: cache K {K.shape}, V {V.shape}; it attends over {len(weights)} positions")

# Without a cache: the whole sequence at once, with the causal mask (notebook 03).
scores = (xs @ Wq) @ (xs @ Wk).T / np.sqrt(D)                          # [N, N]
full = softmax(np.where(causal_mask(N_TOY, N_TOY), scores, -np.inf)) @ (xs @ Wv)   # [N, D]
print("largest difference, list cache vs full recompute:", np.abs(np.array(outputs) - full).max())
assert np.allclose(outputs, full), \
    f"the list cache should give the full computation's outputs; largest difference "\
    f"{np.abs(np.array(outputs) - full).max():.2g}: re-run the loop cell above before this check"

# %% [markdown]
# That is the whole idea. minillm's `KVCache` is the same with two engineering choices: one
# preallocated array per layer (`[layers, batch, KV heads, capacity, D]`) written in place instead
# of a list that is copied into an array at every step, and a `length` telling how many slots are
# filled.
#
# ## Identical outputs, on a real model
#
# Position t's key and value depend only on tokens ≤ t (the causal mask), so once computed they
# never change: keeping them is exact, not an approximation. Generate `N_NEW` tokens greedily with
# the cache (`minillm.decoding.generate`), and again by re-running the whole context at every step:

# %%
PROMPT, N_NEW = "ROMEO.\nBut soft, what light", 40
knob("PROMPT", PROMPT, lambda t: isinstance(t, str) and 1 <= len(t) <= 200, "a str of 1 to 200 characters")
knob("N_NEW", N_NEW, lambda n: isinstance(n, int) and 1 <= n <= 100, "a whole number from 1 to 100")
prompt = tok.encode(PROMPT)
knob("PROMPT and N_NEW", (PROMPT, N_NEW), len(prompt) + N_NEW <= model.config.n_ctx,
     f"the prompt's {len(prompt)} tokens + N_NEW at most the model's context, {model.config.n_ctx}")
cached = [s.id for s in generate(model, prompt, max_new_tokens=N_NEW, temperature=0)]

context, max_gap = list(prompt), 0.0
cache = KVCache(model.config, capacity=len(prompt) + N_NEW)
step_logits = model(np.array(prompt), cache=cache)[-1]               # [V] prefill
for n in range(N_NEW):
    full = model(np.array(context))[-1]                               # [V] recompute everything
    max_gap = max(max_gap, float(np.abs(full - step_logits).max()))
    context.append(int(np.argmax(full)))
    step_logits = model(np.array(context[-1:]), cache=cache)[-1]      # [V] one new token

recomputed = context[len(prompt):]
print("same tokens:", cached == recomputed)
assert cached == recomputed and max_gap < 1e-3, f"the cache must not change the logits (float32, ±1e-3) nor " \
    f"the tokens; largest logit difference {max_gap:.2g}, same tokens: {cached == recomputed}"
print(f"largest |logit difference|, cache vs recompute, over {N_NEW} steps: {max_gap:.2e} (float32 rounding)")
print(repr(tok.decode(prompt + cached)))

# %% [markdown]
# ## "Nothing is remembered" — and yet a cache
#
# The articles say both that every step is a full recomputation of the current context
# (每一步都是对"当前完整上下文"的一次全量重算: no intermediate state is carried from one step to the
# next) and that a KV cache keeps K and V between steps. Both hold, at two levels:
#
# - **The model keeps no state.** It is a function of the token ids: the same ids give the same
#   logits whatever was computed before. (Checked below: ids A, then B, then A again.)
# - **The cache is a copy of values that function computes, kept to save work.** Every K and V
#   in it is determined by the tokens alone (causal mask), so it can be thrown away at any step
#   and rebuilt from the tokens — the generation goes on exactly as before. (Checked below: the
#   cache dropped half-way, rebuilt by one prefill of the tokens so far.)
#
# So the *meaning* of generation is the articles' loop, in which nothing is remembered but the
# tokens; the cache is an implementation that remembers only what the tokens already determine
# — K and V, not the hidden states, attention weights or FFN activations, which are recomputed
# for the new position and dropped.

# %%
A, B = np.array(prompt), np.array(tok.encode("JULIET.\nAy me!"))
first = model(A)
model(B)                                                              # something else in between
claim(np.array_equal(model(A), first), "the same ids give bit-identical logits whatever ran before",
      "the model kept some state between calls")

context = list(prompt)
cache = KVCache(model.config, capacity=len(prompt) + N_NEW)
logits = model(np.array(context), cache=cache)[-1]                    # [V] prefill
DROP_AT = N_NEW // 2                                                  # the step where the cache is thrown away
for n in range(N_NEW):
    if n == DROP_AT:
        kept_k = cache.k[:, :, :, :cache.length].copy()               # [L, 1, K, n, D] what it held
        cache = KVCache(model.config, capacity=len(prompt) + N_NEW)   # forget everything but the tokens
        logits = model(np.array(context), cache=cache)[-1]            # rebuilt: one prefill
        rebuilt_gap = float(np.abs(cache.k[:, :, :, :cache.length] - kept_k).max())
    context.append(int(np.argmax(logits)))
    logits = model(np.array(context[-1:]), cache=cache)[-1]           # [V] one new token
print(f"cache dropped at step {DROP_AT} and rebuilt from the {len(prompt) + DROP_AT} tokens so far: keys "
      f"differ from the old cache's by at most {rebuilt_gap:.1e} (float32 rounding: one prefill "
      f"against one token at a time)")
claim(context[len(prompt):] == cached, "the generation goes on with exactly the same tokens",
      "the rebuilt cache led to other tokens")
per_token = 2 * model.config.n_layers * model.config.n_kv_heads * model.config.d_head
print(f"what the cache keeps per token: 2 · L · K · D = {per_token:,} numbers (K and V of every layer); "
      f"the hidden states, attention weights and FFN activations of each step are dropped")

# %% [markdown]
# ## Time per token against context length
#
# To see the shape of the cost we need long contexts: the shipped model's window is
# only its training length, so we time a model of **the same shape with a longer window and
# random weights** (the time of a forward pass does not depend on the values of the weights).
#
# What is measured, for each context length n in `LENGTHS`: the wall time of the one forward pass
# that produces token n + 1,
# - *recompute*: without a cache, that pass runs all n positions;
# - *cache*: with a cache of n − 1 positions, it feeds only the newest one.
#
# Each time is the **minimum of 5 runs** (`nbhelpers.min_times`, the two interleaved, after one
# untimed warm-up): on a shared machine noise only ever adds time, so the fastest run is the
# least disturbed one. Then a straight line is fitted to log time against log n over all the
# lengths (`np.polyfit`; keep at least 4 of them): its slope k says time ∝ n^k — 1 is linear,
# 0 is flat. A fit over six sizes is far steadier than the slope between two neighbouring
# points, which one disturbed run can swing anywhere.

# %% tags=["volatile"]
LENGTHS = [32, 64, 128, 256, 512, 1024]
knob("LENGTHS", LENGTHS, lambda ls: 4 <= len(set(ls)) == len(ls) <= 8 and all(16 <= n <= 1024 for n in ls),
     "a list of 4 to 8 different whole numbers from 16 to 1024")
N_MAX = max(LENGTHS)
timing_model = GPT(dataclasses.replace(model.config, n_ctx=N_MAX), seed=0)
ids = np.random.default_rng(0).integers(0, model.config.vocab_size, N_MAX)

recompute, with_cache = [], []
cache = KVCache(timing_model.config, capacity=N_MAX)
for n in LENGTHS:
    cache.rollback(0)
    timing_model(ids[:n - 1], cache=cache)                            # prefill n - 1 (not timed)

    def one_cached_step():
        cache.rollback(n - 1)                                         # forget the previous repeat
        timing_model(ids[n - 1:n], cache=cache, last_only=True)
    t = min_times({"recompute": lambda: timing_model(ids[:n], last_only=True), "cache": one_cached_step})
    recompute.append(t["recompute"])
    with_cache.append(t["cache"])
for n, r, c in zip(LENGTHS, recompute, with_cache):
    print(f"n = {n:4d}: recompute {r * 1e3:7.2f} ms   cache {c * 1e3:6.2f} ms   ratio {r / c:6.1f}×")

def fitted_slope(xs, ys):
    """Exponent k of y ∝ x^k: the slope of the least-squares line through (log x, log y)."""
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])

slopes = {"recompute": fitted_slope(LENGTHS, recompute), "cache": fitted_slope(LENGTHS, with_cache)}
print(f"fitted slopes over {len(LENGTHS)} lengths: recompute {slopes['recompute']:.2f}, "
      f"cache {slopes['cache']:.2f}")
claim(slopes["recompute"] >= 0.8, f"recomputing: time per token grows at least about linearly with n "
      f"(slope {slopes['recompute']:.2f} ≥ 0.8)", "the lengths may be too short to leave the fixed costs behind")
claim(slopes["cache"] <= 0.5, f"with the cache: time per token nearly flat (slope {slopes['cache']:.2f} ≤ 0.5: "
      f"doubling n adds at most 41 %)", "attention over the cache dominates at these lengths")
print(f"the cached step at n = {LENGTHS[-1]} takes {with_cache[-1] / with_cache[0]:.2f}× its time at "
      f"n = {LENGTHS[0]}; recomputing takes {recompute[-1] / recompute[0]:.0f}×")

# %%
totals = {name: np.cumsum(np.interp(np.arange(1, N_MAX + 1), LENGTHS, t))
          for name, t in (("recompute", recompute), ("cache", with_cache))}
fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4))
a1.loglog(LENGTHS, np.array(recompute) * 1e3, "o-", label=f"recompute (fitted slope {slopes['recompute']:.2f})")
a1.loglog(LENGTHS, np.array(with_cache) * 1e3, "s-", label=f"cache (fitted slope {slopes['cache']:.2f})")
a1.set_xlabel("context length n (tokens)")
a1.set_ylabel("time for one new token (ms)")
a1.set_title("Per-token time (log-log; slope 1 = linear in n)")
a1.legend()
for name, t in totals.items():
    a2.plot(np.arange(1, N_MAX + 1), t, label=name)
a2.set_xlabel("tokens generated from scratch")
a2.set_ylabel("total time (s)")
a2.set_title("Generating n tokens: summed per-token times")
a2.legend()
plt.tight_layout()
plt.show()
print(f"generating {N_MAX} tokens: recompute ≈ {totals['recompute'][-1]:.2f} s, cache ≈ {totals['cache'][-1]:.2f} s")
_ = claim(recompute[-1] > 5 * with_cache[-1], f"at n = {N_MAX} recomputing costs far more per token "
      f"({recompute[-1] / with_cache[-1]:.0f}× the cached step)", "try longer LENGTHS")

# %% [markdown]
# **The articles' complexity, made precise.** Without a cache, step n re-runs n positions: the
# projections and the FFN cost O(n·C²) and attention O(n²·C) — per step. With a cache, step n
# runs one position: O(C²) for the projections and O(n·C) to attend over n cached keys. Summed
# over n steps that is O(n²·C² + n³·C) against O(n·C² + n²·C); the prompt is processed once
# (the articles' "O(n²) 一次", the prefill). The fitted slopes show it: recomputing grows at
# least linearly with n per token (towards 2 once the n² attention term dominates, at n ≳ 6·C
# for this shape), while the cached step grows far more slowly: its fixed work (one position's
# projections, FFN and logits) does not grow at all, and the O(n) attention over the cache is
# small against it at these lengths — so small that the fitted slope (printed above) lands near
# 0, and on a quiet machine can even come out slightly negative: timing noise is as large as the
# attention's share. The O(n) term is there, but at these lengths the fixed work outweighs it;
# this measurement shows that the cached step does not grow like recomputing, not the O(n)
# itself. Absolute times are machine-dependent; the
# slopes and ratios are the point.
#
# ## The cache's memory
#
# The cache holds K and V for every layer, KV head and position: 2 · L · K · N · D float32 values
# (`KVCache.nbytes()`). Grouped-query attention (SmolLM2: 3 KV heads for 9 query heads) divides
# it by H / K.

# %%
configs = {"weights/shakespeare": model.config}
path = find_smollm2()
if path is not None:
    g = read_gguf(str(path))
    configs["SmolLM2-135M"] = gguf_config(g.metadata, g.tensors)
    mha = dataclasses.replace(configs["SmolLM2-135M"], n_kv_heads=configs["SmolLM2-135M"].n_heads)
    configs["SmolLM2-135M if it had 9 KV heads"] = mha
for name, c in configs.items():
    full_cache = KVCache(c, capacity=c.n_ctx)          # np.zeros: reserved, pages touched lazily
    per_token = full_cache.nbytes() // c.n_ctx
    print(f"{name:34s} L={c.n_layers:2d} K={c.n_kv_heads} D={c.d_head:3d}: {per_token:7,} bytes per "
          f"token; full window of {c.n_ctx:5,} tokens: {full_cache.nbytes() / 2**20:8.1f} MiB")

# %% [markdown]
# ## Exercises
#
# Write the function, run the cell: `check` prints the first case it gets wrong, or how many it
# passed. Solutions: `solutions/05_kv_cache.py`.
#
# **1. Append to a KV cache.** `K`, `V` are the cached [S, D] keys and values (S may be 0),
# `k_new`, `v_new` this step's [T, D]; return the new `(K, V)`, [S + T, D] each.

# %%
from exercises import check

def kv_append(K, V, k_new, v_new):
    raise NotImplementedError    # your code here

check("kv_append", kv_append)

# %% [markdown]
# **2. The mask with a cache.** T new queries arrive after S − T cached positions: query t sits at
# position S − T + t. Return the [T, S] bool mask (True = may see). One new token after two cached
# ones sees all three: `mask(1, 3) = [[True, True, True]]`.

# %%
def cached_causal_mask(T, S):
    raise NotImplementedError    # your code here

check("cached_causal_mask", cached_causal_mask)
