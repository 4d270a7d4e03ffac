# %% [markdown]
# # 06 · Sampling: temperature, top-k, top-p, min-p
#
# > 输入文本 → 模型前向计算（全词表概率分布）→【Temperature】调整概率陡峭度 →【Top-K】限制候选上限 →
# > 【Top-P】累计概率筛选 → 归一化概率 →【采样策略】选择 1 个 token → 输出拼入序列，重复
# >
# > *Input → forward (a distribution over the whole vocabulary) → temperature (steepness) → top-k
# > (at most K candidates) → top-p (cumulative-probability filter) → normalise → pick one token →
# > append, repeat.*
#
# Every step of that pipeline is a module of `minillm.sampling`, composed in this order by
# `Sampler`. This notebook puts exact numbers on the explainer articles' examples: the temperature
# table (whose figures are illustrative), the weighted draw, the size of the top-k / top-p
# candidate pools on a real model's next-token distributions, min-p (a filter the articles do not
# mention, relative to the most likely token), the presets — and one place where the articles'
# example code does not do what the pipeline diagram says.
#
# **Try this:** change the temperatures in `article_table` (1 to 5 rows; temperatures 0.1 to 10,
# each row 4 probabilities summing to 1), the `PROMPTS` (1 to 6 non-empty prompts), the `MIN_P`
# value (0.01 to 1), or a preset's numbers in `PRESETS` (the four presets code, qa, chat and
# creative; temperature 0.1 to 2, top_k 0 = off to 1000, top_p 0.05 to 1), and re-run. A value
# outside its range is refused with a message before any work starts.

# %%
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # CI runs two notebooks at once on two cores

import matplotlib.pyplot as plt
import numpy as np

from minillm.functional import softmax
from minillm.sampling import PRESETS, Sampler, apply_temperature, categorical, min_p, top_k, top_p
from minillm.tokenizer.display import render_token
from nbhelpers import claim, explore, knob, load_pretrained

np.set_printoptions(precision=4, suppress=True)
knob("PRESETS", PRESETS, lambda ps: set(ps) == {"code", "qa", "chat", "creative"} and all(
        0.1 <= s.temperature <= 2 and 0 <= s.top_k <= 1000 and 0.05 <= s.top_p <= 1 for s in ps.values()),
     "the presets code, qa, chat and creative, each with temperature 0.1 to 2, top_k 0 to 1000, top_p 0.05 to 1")

# %% [markdown]
# ## Temperature on the articles' distribution
#
# > 原始概率: [0.5, 0.3, 0.15, 0.05]
# > Temp = 0.5（更确定）→ [0.64, 0.24, 0.09, 0.03]
# > Temp = 2.0（更随机）→ [0.33, 0.27, 0.22, 0.18]
# >
# > 数学上，Temperature 把 logits 除以一个温度值，再做 softmax。
# > *Mathematically, temperature divides the logits by T, then applies softmax.*
#
# Take the formula at its word: logits z = log p (any constant shift gives the same softmax),
# divide by T, softmax. That is `apply_temperature` followed by `softmax`:

# %%
article_p = np.array([0.5, 0.3, 0.15, 0.05])
article_table = {0.5: [0.64, 0.24, 0.09, 0.03], 1.0: [0.5, 0.3, 0.15, 0.05], 2.0: [0.33, 0.27, 0.22, 0.18]}
knob("article_table", article_table,
     lambda t: 1 <= len(t) <= 5 and all(0.1 <= T <= 10 and len(row) == 4 and min(row) >= 0
                                        and abs(sum(row) - 1) < 0.02 for T, row in t.items()),
     "1 to 5 rows {T: [p1, p2, p3, p4]}, T from 0.1 to 10, each row 4 probabilities summing to 1 (±0.02)")
logits = np.log(article_p)                                            # [4]
exact = {T: softmax(apply_temperature(logits, T)) for T in article_table}
for T, claimed in article_table.items():
    print(f"T = {T}: exact {exact[T]}   articles {np.array(claimed)}   "
          f"largest gap {np.abs(exact[T] - claimed).max():.3f}")
for T in exact:                           # softmax(log p / T) = p^(1/T) renormalised: T = 0.5 squares
    assert np.allclose(exact[T], article_p ** (1 / T) / (article_p ** (1 / T)).sum()), \
        f"T = {T}: softmax(log p / T) should equal p^(1/T) renormalised"
claim(1.0 in article_table and np.allclose(exact[1.0], article_table[1.0]),
      "the articles' T = 1 row is exact", "your table has no such row, or another one")
_ = claim(0.5 in exact and abs(exact[0.5][0] - 0.685) < 1e-3, "at T = 0.5 the top token has 0.685, "
      "not the articles' 0.64", "your table has no T = 0.5 row")

# %% [markdown]
# The articles' T = 1 row is exact, but its T = 0.5 and T = 2 rows are **illustrations, not the
# formula**: at T = 0.5 each probability is squared and renormalised (p² / Σp²), so the top token
# gets 0.685, not 0.64, and the last one 0.007, not 0.03; at T = 2 it is √p / Σ√p, so 0.379 and
# 0.1198, not 0.33 and 0.18. Which temperatures *would* produce the articles' rows?

# %%
# The search spans 0.01 to 100, ten times beyond the knob's 0.1 to 10 at each end, evenly in
# log T (a step of 0.2 % in T): an answer at an edge of the grid would say only "beyond the search".
grid = np.geomspace(0.01, 100, 4601)
for T, claimed in article_table.items():
    gaps = np.array([np.abs(softmax(apply_temperature(logits, t)) - claimed).max() for t in grid])
    best = int(np.argmin(gaps))
    edge = "  (at the edge of the search: the best fit lies beyond it)" if best in (0, len(grid) - 1) else ""
    print(f"the row labelled T = {T}: closest temperature {grid[best]:.2f} (largest gap there {gaps[best]:.3f}){edge}")

labels = ["很 (very)", "真 (really)", "挺 (quite)", "非常 (extremely)"]
fig, ax = plt.subplots(figsize=(9, 3.8))
for j, T in enumerate(article_table):                                  # bars side by side, centred
    x = np.arange(4) + (j - (len(article_table) - 1) / 2) * 0.27
    ax.bar(x, exact[T], width=0.27, label=f"T = {T} (exact)")
    ax.scatter(x, article_table[T], color="black", marker="_", s=300,
               zorder=3, label="the articles' figure" if j == 0 else None)
ax.set_xticks(range(4), ["very", "really", "quite", "extremely"])
ax.set_ylabel("probability")
ax.set_title("Temperature on p = [0.5, 0.3, 0.15, 0.05]: exact values vs the articles'")
ax.legend()
plt.show()

# %% [markdown]
# ## The weighted draw
#
# > 生成随机数 r ∈ [0, 1)：r ∈ [0, 0.5) → 选 "很" (50%)；[0.5, 0.8) → "真" (30%)；
# > [0.8, 0.95) → "挺" (15%)；[0.95, 1.0) → "非常" (5%)
#
# That is inverse-CDF sampling, which is what `categorical` does. Drawing 10,000 times with a
# fixed seed:

# %%
N = 10_000
rng = np.random.default_rng(0)
draws = categorical(np.tile(article_p, (N, 1)), rng)                  # [N] one draw per row
freq = np.bincount(draws, minlength=4) / N
for label, p, f in zip(labels, article_p, freq):
    print(f"{label:18s} p = {p:.2f}   observed {f:.4f}   (±{2 * np.sqrt(p * (1 - p) / N):.4f} at 2σ)")
sigma = np.sqrt(article_p * (1 - article_p) / N)
assert (np.abs(freq - article_p) < 4 * sigma).all(), "a draw frequency is off by more than 4σ"

# %% [markdown]
# ## Top-k and top-p pools on a real model
#
# > Top-P：自适应筛选……比如 Top-P=0.9，实际候选数可能是 5~20 个（取决于分布形状）。
# > Top-K = 50（只保留前 50 个）→ Top-P = 0.9（从 50 个中筛选到 3~10 个）
# >
# > *Top-p adapts: with p = 0.9 the pool may hold 5–20 tokens, depending on the distribution's
# > shape. Top-k 50 keeps 50; top-p 0.9 then narrows them to 3–10.*
#
# Measured on real next-token distributions (SmolLM2's, when it is present: a vocabulary of tens of
# thousands of tokens, like the articles' example; its size is printed):

# %%
model, tok, model_name = load_pretrained()
PROMPTS = ["The capital of France is", "Once upon a time, there was a",
           "My favourite colour is", "def add(a, b):\n    return"]
knob("PROMPTS", PROMPTS, lambda ps: 1 <= len(ps) <= 6 and all(isinstance(x, str) and x for x in ps),
     "a list of 1 to 6 non-empty strings")
dists = np.stack([model(np.array(tok.encode(p)), last_only=True)[-1] for p in PROMPTS])  # [4, V]

def pool(sampler, z):
    """How many tokens the sampler can still draw from."""
    return int(np.isfinite(sampler.process(z)).sum())

print(f"vocabulary: {dists.shape[1]:,} tokens")
for prompt, z in zip(PROMPTS, dists):
    probs = softmax(z)
    best = np.argsort(-probs)[:4]
    print(f"{prompt!r:36}: top-k 50 → {pool(Sampler(top_k=50), z):2d};  top-p 0.9 alone → "
          f"{pool(Sampler(top_p=0.9), z):5d};  top-k 50 then top-p 0.9 → "
          f"{pool(Sampler(top_k=50, top_p=0.9), z):2d};  top tokens "
          f"{[(render_token(tok.token_bytes(int(i))), round(float(probs[i]), 3)) for i in best]}")
nucleus = [pool(Sampler(top_p=0.9), z) for z in dists]
if model_name == "SmolLM2-135M-Instruct":       # the claim below the plot, checked
    claim(min(nucleus) <= 20 and max(nucleus) >= 100, f"top-p 0.9 keeps ≤ 20 tokens for the most "
          f"confident prompt and ≥ 100 for the most open one (pools {nucleus})",
          "these PROMPTS are all alike: mix a confident one and an open one")
else:
    print("(The pool sizes discussed below are SmolLM2's: python -m minillm download smollm2. The "
          "small fallback model has a 2,048-token vocabulary and knows little of these prompts.)")

# %%
fig, ax = plt.subplots(figsize=(9, 4))
for prompt, z in zip(PROMPTS, dists):
    cum = np.cumsum(np.sort(softmax(z))[::-1])
    ax.plot(np.arange(1, len(cum) + 1), cum, label=f"{prompt!r} → {pool(Sampler(top_p=0.9), z)} tokens")
ax.axhline(0.9, color="grey", ls=":", label="top-p = 0.9")
ax.axvline(50, color="grey", ls="--", label="top-k = 50")
ax.set_xscale("log")
ax.set_xlabel("number of most probable tokens kept (log scale)")
ax.set_ylabel("their total probability")
ax.set_title(f"How many tokens reach 90% of the mass? ({model_name})")
ax.legend(fontsize=7)
plt.show()

# %% [markdown]
# The pool size is a property of the distribution, not of p: a confident prediction needs a
# few tokens to reach 90% of the mass, an open one can need hundreds (the counts printed above).
#
# Temperature and top-p together, on the most open of these prompts: its 20 most likely tokens
# after dividing the logits by T, coloured when top-p keeps them. With Jupyter widgets installed
# (`pip install ipywidgets`, part of the `[notebooks]` extra) two sliders move T and p; without
# them (and in the test suite) the figure shows three fixed settings side by side.

# %%
open_z = dists[int(np.argmax(nucleus))]                               # [V] the widest pool above


def draw_pool(ax, T, top_p):
    """The 20 most likely tokens at temperature T; coloured: the ones top-p keeps."""
    probs = softmax(apply_temperature(open_z, T))                     # [V]
    best = np.argsort(-probs)[:20]
    kept = np.isfinite(Sampler(temperature=T, top_p=top_p).process(open_z))[best]
    ax.bar(range(20), probs[best], color=np.where(kept, "C0", "lightgrey"))
    ax.set_xticks(range(20), [render_token(tok.token_bytes(int(i))) for i in best], rotation=90, fontsize=7)
    ax.set_ylabel("probability")
    ax.set_title(f"T = {T:g}, top-p {top_p:g}: {pool(Sampler(temperature=T, top_p=top_p), open_z)} "
                 f"tokens kept", fontsize=9)


shown = explore(draw_pool, {"T": (0.1, 3.0, 0.1, 1.0), "top_p": (0.05, 1.0, 0.05, 0.9)},
                static=[{"T": 0.5, "top_p": 0.9}, {"T": 1.0, "top_p": 0.9}, {"T": 2.0, "top_p": 0.9}])

# %% [markdown]
# A lower T sharpens the distribution, so the same p is reached with fewer tokens; a higher T
# flattens it and the pool grows (the three titles give the counts).
#
# ## The articles' "3–10" and "5–20", measured
#
# Four prompts are an anecdote. Every position of a paragraph gives a next-token distribution in
# one forward pass (notebook 04): count, on all of them, the pools of the articles' two claims —
# top-p 0.9 alone ("5–20") and top-k 50 then top-p 0.9 ("3–10").

# %%
TEXT = ("The sea looks blue because water absorbs red light more strongly than blue light. "
        "Sunlight that enters the water loses its red part first, and the blue that is "
        "scattered back reaches our eyes.")
all_logits = model(np.array(tok.encode(TEXT)))                       # [T, V], one forward
every = np.concatenate([dists, all_logits])                          # [P + T, V]

def measured(pools, low, high, claim_text):
    """How often the articles' range low–high holds for these pool sizes; printed and returned."""
    pools = np.array(pools)
    inside = int(((pools >= low) & (pools <= high)).sum())
    print(f"{claim_text}: {low}–{high} holds at {inside} of {len(pools)} distributions "
          f"({inside / len(pools):.0%}); below {low}: {int((pools < low).sum())}, above {high}: "
          f"{int((pools > high).sum())}; median {np.median(pools):.0f}, range {pools.min()}–{pools.max()}")
    return inside / len(pools)

share_p = measured([pool(Sampler(top_p=0.9), z) for z in every], 5, 20, "top-p 0.9 alone")
share_kp = measured([pool(Sampler(top_k=50, top_p=0.9), z) for z in every], 3, 10, "top-k 50 → top-p 0.9")
print(f"(on {model_name}: {len(dists)} prompts and {len(all_logits)} positions of the paragraph)")
_ = claim(share_kp < 0.5, "the articles' \"3–10 candidates\" after top-k 50 → top-p 0.9 holds at fewer than half of "
      "these distributions", f"it holds at {share_kp:.0%}")

# %% [markdown]
# So the articles' ranges are neither a rule nor a bound: the lines above count how often each
# holds on this model, and the pools spread from a single token to hundreds (the ranges printed).
# A pool size is a fact about one distribution; the honest version of "3–10" is the spread just
# measured. That is also why top-k is kept as a hard cap next to top-p.
#
# ## Min-p: a threshold relative to the most likely token
#
# Top-p asks "how many tokens reach mass p?". Min-p (used by llama.cpp and Hugging Face; the
# articles do not mention it) asks "which tokens are at least `MIN_P` times as likely as the most
# likely one?": keep p_i ≥ min_p · p_max. On the articles' distribution with min-p 0.2 the
# threshold is 0.2 · 0.5 = 0.1, so 很, 真 and 挺 stay and 非常 (0.05) goes. Its pool shrinks when
# the model is confident (p_max large) and grows when it is not — without a cumulative sum:

# %%
MIN_P = 0.1
knob("MIN_P", MIN_P, lambda m: 0.01 <= m <= 1, "a number from 0.01 to 1")
kept_toy = np.flatnonzero(np.isfinite(min_p(np.log(article_p), 0.2)))
print("min-p 0.2 on [0.5, 0.3, 0.15, 0.05] keeps", [labels[i] for i in kept_toy])
assert kept_toy.tolist() == [0, 1, 2], \
    f"min-p 0.2 keeps p ≥ 0.2 · 0.5 = 0.1: tokens [0, 1, 2], got {kept_toy.tolist()} (article_p = {article_p})"
for prompt, z in zip(PROMPTS, dists):
    probs = softmax(z)
    print(f"{prompt!r:36}: p_max {probs.max():.3f} → min-p {MIN_P} keeps "
          f"{pool(Sampler(min_p=MIN_P), z):4d} tokens (top-p 0.9 keeps {pool(Sampler(top_p=0.9), z):5d})")
order = np.argsort([softmax(z).max() for z in dists])                # least to most confident
min_p_pools = [pool(Sampler(min_p=MIN_P), dists[i]) for i in order]
print("min-p pools from the least to the most confident prediction:", min_p_pools)
bounds = [1 / (MIN_P * softmax(dists[i]).max()) for i in order]   # min-p keeps at most 1 / (min_p · p_max)
assert all(n <= b for n, b in zip(min_p_pools, bounds)), \
    f"min-p {MIN_P} pools {min_p_pools} should be at most 1 / (min_p · p_max) = {[round(b, 1) for b in bounds]}"
_ = claim(min_p_pools == sorted(min_p_pools, reverse=True),
      "the more confident the prediction, the smaller the min-p pool (on these PROMPTS)",
      f"pools {min_p_pools} from the least to the most confident prediction are not decreasing")

# %% [markdown]
# The more confident the prediction, the smaller the pool (checked above on these prompts). And a
# bound top-p does not have: every kept token has p_i ≥ min_p · p_max and the probabilities sum
# to at most 1, so min-p keeps at most 1 / (min_p · p_max) tokens — 10 / p_max for min-p 0.1 —
# while top-p on a flat distribution can keep thousands.
#
# ## The presets
#
# > 任务 Temperature Top-K Top-P：代码生成 0.2 50 0.9；事实问答 0.7 40 0.85；日常对话 0.8 50 0.9；创意写作 1.0 0 0.95
#
# `PRESETS` holds exactly the articles' table (code generation, factual QA, chat, creative writing;
# top-k 0 = off). On the same four distributions, the pool each preset leaves and five tokens
# drawn with seed 0:

# %%
for name, sampler in PRESETS.items():
    print(f"{name:8s} T={sampler.temperature} top_k={sampler.top_k} top_p={sampler.top_p}")
    for prompt, z in zip(PROMPTS, dists):
        rng = np.random.default_rng(0)
        picks = [render_token(tok.token_bytes(int(sampler.sample(z, rng)))) for _ in range(5)]
        print(f"    {prompt!r:36} pool {pool(sampler, z):3d}   draws {picks}")

# %% [markdown]
# %%
mean_pool = {name: np.mean([pool(sampler, z) for z in dists]) for name, sampler in PRESETS.items()}
print({name: round(float(v), 1) for name, v in mean_pool.items()})
middle = [v for name, v in mean_pool.items() if name not in ("code", "creative")]
_ = claim(mean_pool["code"] < min(middle) and mean_pool["creative"] > max(middle),   # strictly: ties are no order
      "code leaves the smallest pools on average and creative the largest",
      "not with these PRESETS / PROMPTS: the pool depends on both")

# %% [markdown]
# Temperature is applied *before* top-p, so a low temperature (code: 0.2) sharpens the
# distribution and the 0.9 nucleus shrinks to a handful of tokens; creative writing (T = 1, no
# top-k, p = 0.95) keeps the widest pools.
#
# ## The articles' `sample_next_token`: top-p on probabilities not renormalised after top-k
#
# The articles' code (PyTorch) computes `probs = softmax(logits / T)` over the whole vocabulary,
# takes the top-k of those *probabilities* and then runs the top-p cumulative sum over them
# **without renormalising them first**; it renormalises only at the very end, before the draw.
# Here it is, translated line by line to NumPy:

# %%
def article_sample_next_token_pool(logits, temperature=1.0, top_k=50, top_p=0.9):
    """The articles' steps 1-5, returning the candidate ids and their final probabilities."""
    logits = logits / temperature                                    # step 1
    probs = softmax(logits)                                          # step 2
    if top_k > 0:                                                    # step 3: torch.topk
        top_k_indices = np.argsort(-probs, kind="stable")[:min(top_k, len(probs))]
        top_k_probs = probs[top_k_indices]
    else:
        top_k_probs, top_k_indices = probs, np.arange(len(probs))
    cumsum = np.cumsum(top_k_probs)                                  # step 4 (NOT renormalised)
    cutoff_index = np.nonzero(cumsum >= top_p)[0]
    cutoff_index = cutoff_index[0] + 1 if len(cutoff_index) > 0 else len(top_k_probs)
    final_probs, final_indices = top_k_probs[:cutoff_index], top_k_indices[:cutoff_index]
    return final_indices, final_probs / final_probs.sum()            # step 5

# %% [markdown]
# The pipeline diagram (and Hugging Face's `TopKLogitsWarper` → `TopPLogitsWarper`, and minillm's
# `Sampler`) applies top-p to the distribution *as it is after top-k*, i.e. renormalised over
# the k survivors. The renormalised cumulative sums are larger, so top-p stops no later: the
# pipeline's pool is never larger than the articles', and smaller only when the larger sums
# cross p at an earlier token — which the k survivors holding less than all the mass allows but
# does not force (a preset whose pools never differ on the paragraph below shows it). The smallest example, on the articles' own distribution with top-k 2
# and top-p 0.6: their code sums 0.5, 0.8 and keeps two tokens; renormalised, 0.5 / 0.8 = 0.625
# ≥ 0.6 already, so the pipeline keeps one.

# %%
toy = np.log(article_p)
article_ids, _ = article_sample_next_token_pool(toy, top_k=2, top_p=0.6)
ours = np.flatnonzero(np.isfinite(top_p(top_k(toy, 2), 0.6)))
print("cumulative sums over the top 2: the articles' code", np.cumsum(article_p[:2]),
      "  renormalised first", np.cumsum(article_p[:2]) / article_p[:2].sum())
print("the articles' code keeps", [labels[i] for i in article_ids], "   minillm / HF order keeps",
      [labels[i] for i in ours])
assert len(article_ids) == 2 and len(ours) == 1, \
    f"on [0.5, 0.3, 0.15, 0.05] with top-k 2, top-p 0.6 the articles' code should keep 2 tokens and the "\
    f"renormalised pipeline 1; got {len(article_ids)} and {len(ours)} (article_p = {article_p})"

# %% [markdown]
# On real distributions: every position of a paragraph gives a next-token distribution in one
# forward pass. For each preset, how often do the two pools differ, and by how much?

# %%
print(f"{len(all_logits)} next-token distributions (the paragraph above)")
sizes = {}
for name, s in PRESETS.items():
    ours_n = np.array([pool(Sampler(temperature=s.temperature, top_k=s.top_k, top_p=s.top_p), z)
                       for z in all_logits])
    article_n = np.array([len(article_sample_next_token_pool(z, s.temperature, s.top_k, s.top_p)[0])
                          for z in all_logits])
    sizes[name] = (ours_n, article_n)
    print(f"{name:8s} pools differ at {(ours_n != article_n).sum():2d} of {len(ours_n)} positions; "
          f"mean pool: minillm/HF {ours_n.mean():6.1f}, the articles' code {article_n.mean():6.1f}; "
          f"their pool never smaller: {bool((article_n >= ours_n).all())}")
    assert (article_n >= ours_n).all(), f"{name}: the articles' pool can never be smaller (its sums are " \
        f"not renormalised, so they reach p later); smaller at positions {np.flatnonzero(article_n < ours_n)}"
claim(sizes["creative"][1].mean() > 5 * sizes["creative"][0].mean(), "with the 'creative' preset (top_k = 0) "
      "the articles' code keeps more than 5× minillm's pool: the top_k = 0 problem below",
      "your 'creative' preset has top_k > 0, or these positions are all confident")

fig, ax = plt.subplots(figsize=(9, 3.8))
ours_n, article_n = sizes["qa"]
ax.plot(article_n, "o-", label="the articles' sample_next_token (top-p on un-renormalised top-k)")
ax.plot(ours_n, "s-", label="minillm Sampler / HF order (renormalised after top-k)")
ax.set_xlabel("position in the paragraph")
ax.set_ylabel("candidate pool size")
ax.set_title("Preset 'qa' (T=0.7, top-k 40, top-p 0.85): pool size per position")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# The 'creative' row shows a **second problem** in the articles' code: with `top_k = 0` it skips the
# sort (`top_k_probs, top_k_indices = probs, torch.arange(len(probs))`), so its "top-p" keeps the
# tokens with the *lowest ids* until their mass reaches p — thousands of arbitrary tokens, not the
# nucleus. minillm's `top_p` always sorts by probability first.
#
# Where the pools differ otherwise, the articles' code keeps extra low-probability tokens (all k of them when
# the top-k mass is below p, since the cumulative sum never reaches p). Its final renormalisation
# (step 5) does not undo that: the extra tokens stay drawable. The fix is two lines — sort the
# probabilities when `top_k = 0` too, and divide `top_k_probs` by its sum before the cumulative
# sum — and gives minillm's (and Hugging Face's)
# order: temperature → top-k → renormalise → top-p → renormalise → draw. (llama.cpp differs again:
# its default chain applies temperature *last*, after top-k and top-p; see
# `minillm/sampling/pipeline.py`.)

# %% [markdown]
# ## Exercises
#
# Write the function, run the cell: `check` prints the first case it gets wrong, or how many it
# passed. Solutions: `solutions/06_sampling.py`. The filters return logits with the removed tokens
# set to `-np.inf` and the kept ones unchanged.
#
# **1. Temperature**: `temperature(logits, T)` -> the probabilities softmax(logits / T), T > 0.

# %%
from exercises import check

def temperature(logits, T):
    raise NotImplementedError    # your code here

check("temperature", temperature)

# %% [markdown]
# **2. Top-k**: keep exactly k of the largest logits (on a tie at the k-th place, any of the tied
# ids), set the rest to -inf.

# %%
def top_k_(logits, k):
    raise NotImplementedError    # your code here

check("top_k", top_k_)

# %% [markdown]
# **3. Top-p**: keep the smallest set of most probable tokens whose probabilities sum to ≥ p.
# (Watch the token that crosses p: it belongs to the set.)

# %%
def top_p_(logits, p):
    raise NotImplementedError    # your code here

check("top_p", top_p_)

# %% [markdown]
# **4. Min-p**: keep the tokens with p_i ≥ m · p_max.

# %%
def min_p_(logits, m):
    raise NotImplementedError    # your code here

check("min_p", min_p_)
