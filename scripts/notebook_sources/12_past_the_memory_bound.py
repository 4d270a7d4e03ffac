# %% [markdown]
# # 12 · Past the memory bound: batching and speculation
#
# Notebook 05 made each new token cost O(n) instead of O(n²). What is left is the cost of the
# weights: to produce ONE token, the model multiplies one vector by every weight matrix, so
# every weight is read from memory once — for two floating-point operations (a multiply and an
# add). A processor can do many more than two operations in the time memory delivers one float
# (how many is the *ridge* of this machine, measured in section 1), so a single stream of tokens
# waits for memory, not for arithmetic: **decoding is memory-bound**.
#
# The plan, all small enough to run in seconds:
# 0. a roofline by hand: one tiny matrix product on a made-up machine, counted with a pencil;
# 1. bytes and flops per token, and this machine's two limits (memory bandwidth, arithmetic
#    speed) — the **roofline**, a prediction of how fast decoding can go;
# 2. **batching** and **speculation** measured: B sequences share each read of the weights; one
#    forward checks k guesses of one sequence — their measured speeds plotted on the roofline,
#    where the gap between prediction and measurement is the lesson;
# 3. continuous batching (`serve`) against static batches, counted the same way;
# 4. speculative decoding: output identical to plain greedy decoding (`generate(..., draft=...)`).
# An appendix at the end times two of the engine's weight layouts.
#
# **Try this:** change the made-up machine's `PEAK` and `BANDWIDTH` in section 0 (each 1 to
# 1000), the model shape `gpt2` in section 1, the `BATCH_SIZES` measured (1 to
# 32 rows), the request `BUDGETS` (1 to 60 tokens) and `SLOTS` (1 to 12) of continuous
# batching, or the `VERSE` and `NUM_DRAFT` guesses of speculative decoding (1 to 12), and re-run.

# %%
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # CI runs two notebooks at once on two cores

import matplotlib.pyplot as plt
import numpy as np

from minillm import GPT, KVCache, ModelConfig, PromptLookup, generate, generate_batch, serve
from minillm.engine import to_engine
from nbhelpers import claim, knob_range, load_shipped, min_times

BATCH_SIZES = (1, 4, 16)           # rows per decode step in section 2
BUDGETS, SLOTS = [4, 8, 40], 4      # tokens each request may want; requests served at once
VERSE = "ROMEO:\nBut soft, what light through yonder window breaks?\n"
NUM_DRAFT = 6                       # guesses checked per forward (sections 2 and 4)
knob_range("BATCH_SIZES", list(BATCH_SIZES), 1, 32)
knob_range("BUDGETS", BUDGETS, 1, 60)
knob_range("SLOTS", SLOTS, 1, 12)
knob_range("NUM_DRAFT", NUM_DRAFT, 1, 12)

# %% [markdown]
# ## 0. A roofline by hand
#
# One layer's product `y = x @ W` with W of shape [4, 4] (16 weights, 4 bytes each in float32),
# for B rows of x [B, 4]. With a pencil:
# - **flops**: each of the B × 4 outputs is a sum of 4 products: 4 multiplies and 4 adds, so
#   2 · B · 4 · 4 flops;
# - **bytes of weights**: W is read once however many rows share it: 16 · 4 bytes;
# - **intensity** = flops / bytes = B / 2 flop per byte. (x and y are left out: in this toy they
#   are as large as W, but in a real model a row of x is a few hundred numbers against millions
#   of weights.)
#
# A made-up machine does `PEAK` flop per nanosecond and reads `BANDWIDTH` bytes per nanosecond.
# A kernel can go no faster than either: attainable = min(PEAK, BANDWIDTH × intensity). The
# **ridge** is where the two meet, PEAK / BANDWIDTH flop per byte: left of it a kernel waits for
# memory, right of it for arithmetic.

# %%
PEAK, BANDWIDTH = 64.0, 16.0          # the made-up machine: flop/ns and bytes/ns
knob_range("PEAK and BANDWIDTH", [PEAK, BANDWIDTH], 1, 1000)
toy_ridge = PEAK / BANDWIDTH
print(f"ridge = {PEAK:g} / {BANDWIDTH:g} = {toy_ridge:g} flop/byte")
claim(toy_ridge == 4, "on the default machine one row (intensity 0.5) is memory-bound and 8 rows (4) reach "
      "the ridge: from there on, more rows cost time", f"your PEAK / BANDWIDTH put the ridge at {toy_ridge:g}")
print(f"{'rows B':>6} {'flops':>6} {'weight bytes':>13} {'intensity':>10} {'attainable flop/ns':>19}  side")
for B in (1, 2, 8, 32):
    x, W = np.ones((B, 4), dtype=np.float32), np.ones((4, 4), dtype=np.float32)
    flops_toy = 2 * x.shape[0] * W.shape[0] * W.shape[1]           # 2 · B · 4 · 4
    bytes_toy = W.nbytes                                           # 16 weights · 4 bytes
    intensity_toy = flops_toy / bytes_toy
    attainable = min(PEAK, BANDWIDTH * intensity_toy)
    side = ("memory-bound" if intensity_toy < toy_ridge else "at the ridge" if intensity_toy == toy_ridge
            else "compute-bound")
    print(f"{B:>6} {flops_toy:>6} {bytes_toy:>13} {intensity_toy:>10g} {attainable:>19g}  {side}")

# %% [markdown]
# One row uses an eighth of the default machine's arithmetic; eight rows share each weight read
# and reach the ridge; past it, more rows no longer come for free. The rest of the notebook is
# this table for a real model on this machine.
#
# ## 1. Bytes and flops per token
#
# A GPT-2-124M-shaped model: 12 blocks of d = 768, a vocabulary of 50,257. Per token, each
# weight matrix W [in, out] is used once in `x @ W`: in·out multiply-adds = 2·in·out flops, and
# in·out·4 bytes read (float32). Summed over the model: about **2 flops per parameter and 4
# bytes per parameter** — an arithmetic intensity of 0.5 flop per byte.

# %%
gpt2 = ModelConfig(vocab_size=50257, n_ctx=1024, d_model=768, n_heads=12, n_layers=12)
C, F, V, L = gpt2.d_model, gpt2.d_ff, gpt2.vocab_size, gpt2.n_layers
per_block = 4 * C * C + 2 * C * F                    # wq, wk, wv, wo; w_up, w_down
matrix_params = L * per_block + V * C                # + the LM head (wte, tied)
print(f"weights read per token: {4 * matrix_params / 1e6:.0f} MB")
print(f"flops per token:        {2 * matrix_params / 1e6:.0f} MFLOP")
print(f"arithmetic intensity:   {2 * matrix_params / (4 * matrix_params):.2f} flop/byte")

# %% [markdown]
# ## This machine's two limits
#
# Bandwidth: sum a 256 MB array (far bigger than any cache) — every byte read once. Arithmetic:
# a 1024 × 1024 matrix product (2·1024³ flops on data that stays in cache). Each is the best of
# several runs, interleaved (`nbhelpers.min_times`): on a shared machine noise only ever lowers a
# rate, so the fastest run is the least disturbed. Small and quick all the same, so the figures
# are rough — a busy machine can still measure them low; `benchmarks/bench_decode.py` measures the
# bandwidth properly.

# %% tags=["volatile"]
big = np.ones(64 * 2**20, dtype=np.float32)                               # [N] 256 MB
a = np.ones((1024, 1024), dtype=np.float32)
limits = min_times({"read": lambda: np.add.reduce(big), "multiply": lambda: a @ a}, repeats=7)
bandwidth = big.nbytes / limits["read"]                                  # bytes / s, the best run
flops = 2 * 1024**3 / limits["multiply"]                                 # flop / s, the best run
del big
ridge = flops / bandwidth
print(f"bandwidth {bandwidth / 1e9:.1f} GB/s, arithmetic {flops / 1e9:.0f} GFLOP/s (1 thread)")
print(f"ridge point: {ridge:.0f} flop/byte — below it a kernel waits for memory")
print(f"one stream's limit at the measured bandwidth: {bandwidth / (4 * matrix_params):.1f} tokens/s "
      f"for GPT-2-124M here")

# %% [markdown]
# ## The roofline: the prediction
#
# The best speed a kernel can reach is min(arithmetic, bandwidth × intensity). One stream sits
# at 0.5 flop/byte, far left of the ridge: it uses a small fraction of the arithmetic. Two ways
# raise the intensity, because both do more work per weight read:
# - **a batch of B sequences**: B tokens per read, intensity B/2;
# - **speculation**: one forward scores k + 1 positions of ONE sequence, intensity (k+1)/2 — and
#   the tokens it yields are those of the accepted guesses plus one.
#
# So the roofline predicts: B rows per step cost about what one row costs while B/2 is below the
# ridge. Section 2 measures it, and prints what a B-row step costs against one row: the gap
# between that and the prediction is what the roofline leaves out (attention, normalisation,
# Python between the products).

# %% [markdown]
# ## 2. Batching and speculation, measured — on the roofline
#
# A model whose weights do not fit in the caches (its size is printed below; random weights: speed does not
# depend on their values), as the engine loads it. One decode step for B rows is one forward of
# [B, 1] tokens; one speculative check is one forward of [1, k + 1] tokens (k = `NUM_DRAFT`
# guesses and the position after them). Each is timed as the least of 5 runs, all interleaved in
# the same rounds (`nbhelpers.min_times`: noise only adds time). "× one stream" is
# B × (the B = 1 step) / (the B-row step): how many streams' worth of tokens per second a B-row
# step delivers.

# %% tags=["volatile"]
cfg = ModelConfig(vocab_size=8192, n_ctx=64, d_model=512, n_heads=8, n_layers=8)
mem_model = to_engine(GPT(cfg, seed=0), layout="rows")      # each matrix by output row (appendix)
P_mem = mem_model.num_parameters()
print(f"{P_mem / 1e6:.0f} M parameters = {4 * P_mem / 1e6:.0f} MB float32")


def forward_step(model, B, T):
    """A repeatable forward of [B, T] new tokens after an 8-token prefill (the cache rolled back)."""
    cache = KVCache(cfg, batch_size=B, capacity=8 + T)
    model(np.ones((B, 8), dtype=np.int64), cache=cache, last_only=True)       # prefill 8 tokens
    tokens = np.ones((B, T), dtype=np.int64)                                    # [B, T]
    def one_step():
        model(tokens, cache=cache)
        cache.rollback(8)
    return one_step


sizes = sorted({1, *BATCH_SIZES})                    # B = 1: the baseline, timed in the same rounds
cases = {("batch", B): (B, 1) for B in sizes}
cases["speculation", NUM_DRAFT + 1] = (1, NUM_DRAFT + 1)
step = min_times({key: forward_step(mem_model, *shape) for key, shape in cases.items()})
measured = {}                                          # key -> (intensity, achieved flop/s)
for key, (B, T) in cases.items():
    t, positions = step[key], B * T
    measured[key] = (positions / 2, 2 * P_mem * positions / t)      # the weights' 2 flops per parameter per position
    what = f"B = {B:2d} rows" if key[0] == "batch" else f"1 row, {T} positions (speculation)"
    roof = min(flops, bandwidth * positions / 2)                     # the measured roof at this intensity
    above = " — above it: the roof was measured low" if measured[key][1] > roof else ""
    print(f"{what:34s}: {t * 1e3:6.1f} ms per forward = {t / step['batch', 1]:4.1f}x the B = 1 step's time, "
          f"{positions * step['batch', 1] / t:4.1f}x one stream's positions per second; "
          f"{measured[key][1] / 1e9:5.1f} GFLOP/s at intensity {positions / 2:g} (the measured roof: "
          f"{roof / 1e9:.1f}{above})")

# %%
intensity = np.logspace(-1, 3, 200)
fig, ax = plt.subplots(figsize=(8, 4.5))
ax.loglog(intensity, np.minimum(flops, bandwidth * intensity) / 1e9, "k-", label="roofline (measured here)")
ax.axvline(ridge, color="grey", ls=":", label=f"ridge ≈ {ridge:.0f} flop/byte")
point_styles = iter([("C0", "o"), ("C1", "^"), ("C2", "D"), ("C4", "v"), ("C5", "P"), ("C6", "X"),
                     ("C7", "*"), ("C8", "h")] * 4)                   # one per batch size
for key, (x, achieved) in measured.items():
    colour, marker = next(point_styles) if key[0] == "batch" else ("C3", "s")
    ax.plot([x, x], [achieved / 1e9, min(flops, bandwidth * x) / 1e9], color=colour, lw=0.8, ls="--")
    ax.plot(x, achieved / 1e9, marker, color=colour,
            label=(f"B = {key[1]} (measured)" if key[0] == "batch" else f"k + 1 = {key[1]} positions (measured)"))
ax.set_xlabel("arithmetic intensity (flop / byte of weights)")
ax.set_ylabel("GFLOP/s")
ax.legend(fontsize=8)
ax.set_title("Prediction (the roof) and measurement (the points): the dashed gap")
plt.show()
largest = max(sizes)
if largest > 1:
    claim(measured["batch", largest][1] > 2 * measured["batch", 1][1],
          f"B = {largest} rows do more than twice the arithmetic per second of one row: sharing the "
          f"weight reads pays", "not on this machine now")
gaps = {key: min(flops, bandwidth * x) / achieved for key, (x, achieved) in measured.items()}
print("the roof over the measurement:", {f"{k[0]} {k[1]}": f"{g:.1f}x" for k, g in gaps.items()})

# %% [markdown]
# **Reading the figure.** The roofline predicts that the points climb with the intensity: more
# positions per weight read, more arithmetic per second (whether they do on this machine today is
# the checked line above — a busy machine can flatten them). The roof is two measurements of
# ideal work (one long streaming read, one large matrix product), while a decode step is many
# smaller products plus attention, normalisation and Python between them, so a point usually sits
# below it (a printed ratio above 1). A point *above* the roof (a ratio below 1) does not beat a
# limit: it means the roof itself was measured low — the read or the product ran during a busy
# moment — so it is an estimate of the limit, not a guaranteed bound. The lesson is the direction
# and its limit: batching and speculation buy throughput by reusing each weight read, and only
# while the step stays memory-bound. The appendix says how the engine's matrix layout narrows
# the gap.

# %% [markdown]
# ## 3. Continuous batching
#
# Requests do not all want the same number of tokens. A static batch holds every row until its
# longest member is done; `serve` retires a finished request between steps and lets a waiting
# one take its slot. Counted the same way for all three — every forward pass of the model,
# prefills included — for 12 requests of uneven lengths, `SLOTS` at a time:

# %%
model, tok = load_shipped("shakespeare")
rng = np.random.default_rng(0)
prompts = [tok.encode(t) for t in ["ROMEO:", "JULIET:\nO", "KING:", "First Citizen:\nWe"] * 3]
budgets = [int(n) for n in rng.choice(BUDGETS, size=len(prompts))]
calls = {"n": 0}
real_forward = type(model).__call__


def counting(self, *args, **kwargs):
    calls["n"] += 1
    return real_forward(self, *args, **kwargs)


def forwards(fn):
    """(what fn returns, the forward passes it made)."""
    calls["n"] = 0
    type(model).__call__ = counting
    try:
        return fn(), calls["n"]
    finally:
        type(model).__call__ = real_forward


out, served = forwards(lambda: serve(model, prompts, budgets, batch_size=SLOTS, temperature=0))
groups = [range(i, min(i + SLOTS, len(prompts))) for i in range(0, len(prompts), SLOTS)]
static, static_forwards = forwards(lambda: [generate_batch(model, [prompts[i] for i in g], max(budgets[i] for i in g),
                                                           temperature=0, stop_at_eos=False) for g in groups])
alone, alone_forwards = forwards(lambda: [[s.id for s in generate(model, p, n, temperature=0)]
                                          for p, n in zip(prompts, budgets)])
wasted = sum(max(budgets[i] for i in g) * len(g) - sum(budgets[i] for i in g) for g in groups)
print("budgets:", budgets)
print(f"forward passes, prefills included: one by one {alone_forwards}; static batches of {SLOTS} "
      f"{static_forwards}; serve {served}")
coincidence = (" — the same number as the one-by-one forwards only by coincidence"
               if wasted == alone_forwards else "")
print(f"tokens (not forwards) the static batches generate past their request's budget: {wasted}{coincidence}")
claim(served <= static_forwards, f"serve needs {served} forwards against the static batches' "
      f"{static_forwards}", "not for these BUDGETS / SLOTS")
assert out == alone, f"serve should give every request its tokens alone (greedy); request(s) "\
    f"{[i for i, (a, b) in enumerate(zip(out, alone)) if a != b]} differ"
print("✓ every request got the tokens it gets alone")

# %% [markdown]
# ## 4. Speculative decoding: k guesses, one forward, the same text
#
# `draft="prompt"` guesses that the text continues as it did the last time its latest few
# tokens appeared (prompt lookup). The model then scores all k guesses in ONE forward, keeps the
# longest prefix it agrees with, and adds its own next token. Under greedy decoding every kept
# token is exactly the one plain decoding would have produced — the guesses only change how many
# forwards it takes. Repetitive text (copying, code, verse with refrains) is where guesses hit.

# %%
prompt = tok.encode(VERSE * 2 + "ROMEO:\n")
plain = [s.id for s in generate(model, prompt, 60, temperature=0)]
lookup = PromptLookup()
fast = [s.id for s in generate(model, prompt, 60, temperature=0, draft=lookup, num_draft_tokens=NUM_DRAFT)]
assert fast == plain, f"greedy speculative decoding must keep plain greedy's tokens; they part at "\
    f"token {next((i for i, (a, b) in enumerate(zip(fast + [None], plain + [None])) if a != b), None)}"
print("✓ identical to plain greedy decoding")
print(f"{len(fast)} tokens in {lookup.rounds} target forwards instead of {len(plain)} "
      f"({len(fast) / lookup.rounds:.2f} tokens per forward); "
      f"{lookup.accepted} of {lookup.proposed} guesses accepted")
print(repr(tok.decode(fast)))

# %% [markdown]
# Fewer forwards are not less time. Speculation pays only if a check of k + 1 positions costs less
# than (tokens per forward) × one position's step. The cell below puts the acceptance just printed
# next to section 2's measured costs (the memory-bound model, the same k), and times this small
# model both ways: a speed below 1× is a net slowdown — too few guesses accepted for what a
# check costs.

# %% tags=["volatile"]
per_forward = len(fast) / lookup.rounds                               # tokens per target forward
check_cost = step["speculation", NUM_DRAFT + 1] / step["batch", 1]     # a (k+1)-position check / one position
net = per_forward / check_cost


def verdict(speed):
    """A speed against plain decoding's, in words (within ±5 %: about even)."""
    return ("a net slowdown" if round(speed, 2) < 0.95 else "about even" if round(speed, 2) <= 1.05
            else "a net speed-up")


print(f"section 2's model: one {NUM_DRAFT + 1}-position check costs "
      f"{step['speculation', NUM_DRAFT + 1] * 1e3:.1f} ms against {step['batch', 1] * 1e3:.1f} ms for one "
      f"position ({check_cost:.1f}x); at {per_forward:.2f} tokens per forward that is {net:.2f}x plain "
      f"decoding's speed — {verdict(net)}")


def sixty_tokens(draft=None):
    """One greedy run of 60 tokens, plain (draft None) or speculative."""
    return list(generate(model, prompt, 60, temperature=0, draft=draft, num_draft_tokens=NUM_DRAFT))


walls = min_times({"plain": sixty_tokens, "speculative": lambda: sixty_tokens(PromptLookup())}, repeats=3)
small = walls["plain"] / walls["speculative"]
print(f"this small model, 60 tokens timed: plain {walls['plain'] * 1e3:.0f} ms, speculative "
      f"{walls['speculative'] * 1e3:.0f} ms = {small:.2f}x plain decoding's speed — {verdict(small)}")

# %% [markdown]
# With sampling (temperature > 0) a guess d is accepted with probability p(d) — for a drafting
# model q, min(1, p(d)/q(d)) — and a rejection draws from what is left of p. The tokens then follow
# the model's own distribution exactly (`minillm/decoding/speculative.py` writes out the proof; a
# chi-square test checks it). Whether a forward over k + 1 positions costs about as little as one
# position is a property of the machine — measured above; `benchmarks/bench_speculative.py`
# measures it on SmolLM2.

# %% [markdown]
# ## Appendix: two weight layouts
#
# How close the points come to the roof depends on the matrix-product routine. The "rows" layout
# used above (`minillm/engine/rows.py`) stores each matrix as Wᵀ [N, C], one row per output, in
# small tiles OpenBLAS reads where they lie; the "decode" layout stores W [C, N] for one large
# product. Both timed the same way as section 2 — ratios for this machine today, not promises
# (benchmarks/README.md compares them properly).

# %% tags=["volatile"]
by_columns = to_engine(mem_model, layout="decode")           # same weights, stored [C, N]
layouts = {"rows": mem_model, "decode": by_columns}
layout_step = min_times({(name, B): forward_step(m, B, 1) for name, m in layouts.items() for B in sizes})
for B in sizes:
    t, u = layout_step["rows", B], layout_step["decode", B]
    print(f"B = {B:2d}: rows {t * 1e3:6.1f} ms per step = {B * layout_step['rows', 1] / t:4.1f}x one stream;  "
          f"decode layout {u * 1e3:6.1f} ms = {B * layout_step['decode', 1] / u:4.1f}x")

# %% [markdown]
# ## Exercises
#
# Write the function, run the cell: `check` prints the first case it gets wrong, or how many it
# passed. Solutions: `solutions/12_past_the_memory_bound.py`.
#
# **1. Bytes per decoded token.** Decoding one token at a context of `n` tokens reads every
# weight once and, in attention, the cached keys and values of the `n` positions. Return the
# bytes read, float32 (4 bytes a number): `parameter_count(config)` counts the weights; the cache
# holds `config.n_kv_heads` heads of width `config.d_head` per layer (fewer than `n_heads` with
# grouped-query attention). When does the cache outweigh the weights?

# %%
from exercises import check
from minillm.io.sizes import parameter_count

def decode_bytes(config, n):
    raise NotImplementedError    # your code here

check("decode_bytes", decode_bytes)

# %% [markdown]
# **2. The roofline.** A kernel doing `intensity` flops per byte it reads can go no faster than
# memory delivers bytes (intensity × bandwidth) nor than the arithmetic runs (peak): return the
# attainable FLOP/s. `intensity` may be a number or an array of them.

# %%
def roofline(intensity, peak, bandwidth):
    raise NotImplementedError    # your code here

check("roofline", roofline)

# %% [markdown]
# **3. Accepting drafts (greedy).** One forward scored the k `drafts`: `logits[i]` [V] is the
# target's next-token scores after the context and the first i drafts (i = 0 … k). Return what the
# round yields: the drafts up to the first one that is not the argmax of its row, then the
# target's own argmax at that row — or, if all k agreed, the argmax of the last row (the bonus).

# %%
def accept_drafts(drafts, logits):
    raise NotImplementedError    # your code here

check("accept_drafts", accept_drafts)
