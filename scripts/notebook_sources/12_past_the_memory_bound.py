# %% [markdown]
# # 12 · Past the memory bound: batching and speculation
#
# Notebook 05 made each new token cost O(n) instead of O(n²). What is left is the cost of the
# weights: to produce ONE token, the model multiplies one vector by every weight matrix, so
# every weight is read from memory once — for two floating-point operations (a multiply and an
# add). A processor does dozens of operations in the time memory delivers one float, so a
# single stream of tokens waits for memory, not for arithmetic: **decoding is memory-bound**.
#
# Three measurements in this notebook, all small enough to run in seconds:
# 1. bytes and flops per token, and a **roofline** from this machine's measured bandwidth and
#    arithmetic speed: where one stream sits, and where B streams or k guesses sit;
# 2. **batching**: B sequences share each read of the weights (`generate_batch`, `serve`);
# 3. **speculative decoding**: cheap guesses checked k at a time in one forward, with output
#    identical to plain greedy decoding (`generate(..., draft="prompt")`).
#
# **Try this:** change the model shape `gpt2` in section 1, the `BATCH_SIZES` measured, the
# request `BUDGETS` and `SLOTS` of continuous batching, or the `VERSE` and `NUM_DRAFT` guesses
# of speculative decoding, and re-run.

# %%
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # CI runs two notebooks at once on two cores

import matplotlib.pyplot as plt
import numpy as np

from minillm import GPT, KVCache, ModelConfig, PromptLookup, generate, serve
from minillm.engine import to_engine
from nbhelpers import load_shipped, median_time

BATCH_SIZES = (1, 4, 16)           # rows per decode step in section 3
BUDGETS, SLOTS = [4, 8, 40], 4      # tokens each request may want; requests served at once
VERSE = "ROMEO:\nBut soft, what light through yonder window breaks?\n"
NUM_DRAFT = 6                       # guesses checked per forward in section 4

# %% [markdown]
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
# ## 2. This machine's two limits
#
# Bandwidth: sum a 256 MB array (far bigger than any cache) — every byte read once. Arithmetic:
# a 1024 × 1024 matrix product (2·1024³ flops on data that stays in cache). Small and quick, so
# the figures are rough; `benchmarks/bench_decode.py` measures the bandwidth properly.

# %%
big = np.ones(64 * 2**20, dtype=np.float32)                               # [N] 256 MB
bandwidth = big.nbytes / median_time(lambda: np.add.reduce(big), 3)      # bytes / s
a = np.ones((1024, 1024), dtype=np.float32)
flops = 2 * 1024**3 / median_time(lambda: a @ a, 3)                      # flop / s
del big
ridge = flops / bandwidth
print(f"bandwidth {bandwidth / 1e9:.1f} GB/s, arithmetic {flops / 1e9:.0f} GFLOP/s (1 thread)")
print(f"ridge point: {ridge:.0f} flop/byte — below it a kernel waits for memory")
print(f"one stream's bound: {bandwidth / (4 * matrix_params):.1f} tokens/s for GPT-2-124M here")

# %% [markdown]
# ## The roofline
#
# The best speed a kernel can reach is min(arithmetic, bandwidth × intensity). One stream sits
# at 0.5 flop/byte, far left of the ridge: it uses a small fraction of the arithmetic. Two ways
# raise the intensity, because both do more work per weight read:
# - **a batch of B sequences**: B tokens per read, intensity B/2;
# - **speculation**: one forward scores k + 1 positions of ONE sequence, intensity (k+1)/2 — and
#   the tokens it yields are those of the accepted guesses plus one.

# %%
intensity = np.logspace(-1, 3, 200)
roof = np.minimum(flops, bandwidth * intensity)
fig, ax = plt.subplots(figsize=(7, 4))
ax.loglog(intensity, roof / 1e9, "k-", label="roofline (measured here)")
for B, color in [(1, "C3"), (8, "C0"), (32, "C2")]:
    x = B / 2
    ax.plot(x, min(flops, bandwidth * x) / 1e9, "o", color=color,
            label=f"{B} position(s) per weight read (intensity {x:g})")
ax.axvline(ridge, color="grey", ls=":", label=f"ridge ≈ {ridge:.0f} flop/byte")
ax.set_xlabel("arithmetic intensity (flop / byte of weights)")
ax.set_ylabel("attainable GFLOP/s")
ax.legend(fontsize=8)
ax.set_title("Decoding: one stream is far left of the ridge")
plt.show()

# %% [markdown]
# ## 3. Batching, measured
#
# A model whose weights do not fit in the caches (about 100 MB, random weights: speed does not
# depend on their values). One decode step for B rows is one forward of [B, 1] tokens. If the
# products read each matrix once per step, B rows cost about the same as one row until the
# arithmetic catches up.
#
# subtle: how close B rows get to B× depends on the matrix-product routine. A product
# `x [B, 1, C] @ W` with a batch dimension is computed by NumPy as B separate vector-matrix
# products (each reading W), so the engine's `linear` (`minillm/engine/ops.py`) flattens it to
# `x [B·T, C] @ W`: one product, one read.
# But for a few rows OpenBLAS's matrix product first copies ("packs") W into blocks, and for so
# few rows the copy costs more than the arithmetic. The loaders' "rows" layout
# (`minillm/engine/rows.py`) stores each matrix as Wᵀ [N, C], one row per output, so 32 outputs
# are 32 contiguous rows: each such tile is small enough for OpenBLAS's small-matrix kernel,
# which reads it where it lies, and one row still takes one matrix-vector product. The "decode"
# layout (W stored [C, N], one product) is timed beside it. Ratios, not promises: the output is
# this machine today.
#
# What is measured: the time of one decode step, the minimum of 5 (`nbhelpers.min_times`; noise
# only adds time), every layout and batch size interleaved in the same rounds. "× one stream" is
# B × (that layout's B = 1 step) / (its B-row step): how many streams' worth of tokens per second
# a B-row step delivers. B = 1 is always measured, in the same rounds, so its row reads 1.0x by
# construction and every ratio is taken within one run.

# %%
cfg = ModelConfig(vocab_size=8192, n_ctx=64, d_model=512, n_heads=8, n_layers=8)
mem_model = to_engine(GPT(cfg, seed=0), layout="rows")      # as loaded (the engine's default)
by_columns = to_engine(mem_model, layout="decode")           # same weights, stored [C, N]
print(f"{mem_model.num_parameters() / 1e6:.0f} M parameters = "
      f"{4 * mem_model.num_parameters() / 1e6:.0f} MB float32")

from nbhelpers import min_times

def decode_step(model, B):
    """A repeatable decode step of B rows: one forward of [B, 1] after an 8-token prefill."""
    cache = KVCache(cfg, batch_size=B, capacity=24)
    model(np.ones((B, 8), dtype=np.int64), cache=cache, last_only=True)       # prefill 8 tokens
    token = np.ones((B, 1), dtype=np.int64)                                     # [B, 1]
    def one_step():
        model(token, cache=cache, last_only=True)
        cache.rollback(8)
    return one_step

layouts = {"rows": mem_model, "decode": by_columns}
sizes = sorted({1, *BATCH_SIZES})                    # B = 1: the baseline, timed in the same rounds
step = min_times({(name, B): decode_step(m, B) for name, m in layouts.items() for B in sizes})
for B in sizes:
    t, u = step["rows", B], step["decode", B]
    print(f"B = {B:2d}: rows {t * 1e3:6.1f} ms per step = {B * step['rows', 1] / t:4.1f}x one stream;  "
          f"decode layout {u * 1e3:6.1f} ms = {B * step['decode', 1] / u:4.1f}x")

# %% [markdown]
# ## Continuous batching
#
# Requests do not all want the same number of tokens. A static batch holds every row until its
# longest member is done; `serve` retires a finished request between steps and lets a waiting
# one take its slot. Counting forward passes (the unit of cost here) for 12 requests of uneven
# lengths, `SLOTS` at a time:

# %%
model, tok = load_shipped("shakespeare")
rng = np.random.default_rng(0)
prompts = [tok.encode(t) for t in ["ROMEO:", "JULIET:\nO", "KING:", "First Citizen:\nWe"] * 3]
budgets = [int(n) for n in rng.choice(BUDGETS, size=len(prompts))]
static_steps = sum(max(budgets[i:i + SLOTS]) for i in range(0, len(prompts), SLOTS))
calls = {"n": 0}
real_forward = type(model).__call__
def counting(self, *args, **kwargs):
    calls["n"] += 1
    return real_forward(self, *args, **kwargs)
type(model).__call__ = counting
try:
    out = serve(model, prompts, budgets, batch_size=SLOTS, temperature=0)
finally:
    type(model).__call__ = real_forward
alone = [[s.id for s in generate(model, p, n, temperature=0)] for p, n in zip(prompts, budgets)]
print("budgets:", budgets)
print(f"static batches of {SLOTS}: {static_steps} decode steps; serve: {calls['n']} forwards "
      f"(including one prefill per request); one by one: {sum(budgets)} steps")
print("every request got what it would alone:", out == alone)
assert out == alone, f"serve should give every request its tokens alone (greedy); request(s) "\
    f"{[i for i, (a, b) in enumerate(zip(out, alone)) if a != b]} differ"

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
print("identical to plain greedy:", fast == plain)
assert fast == plain, f"greedy speculative decoding must keep plain greedy's tokens; they part at "\
    f"token {next((i for i, (a, b) in enumerate(zip(fast + [None], plain + [None])) if a != b), None)}"
print(f"{len(fast)} tokens in {lookup.rounds} target forwards instead of {len(plain)} "
      f"({len(fast) / lookup.rounds:.2f} tokens per forward); "
      f"{lookup.accepted} of {lookup.proposed} guesses accepted")
print(repr(tok.decode(fast)))

# %% [markdown]
# With sampling (temperature > 0) a guess d is accepted with probability p(d) — for a drafting
# model q, min(1, p(d)/q(d)) — and a rejection draws from what is left of p. The tokens then follow
# the model's own distribution exactly (`minillm/decoding/speculative.py` writes out the proof; a
# chi-square test checks it). Whether a forward over k + 1 positions costs about as little as one
# position is a property of the machine — the roofline above says it should, while the products
# stay memory-bound; `benchmarks/bench_speculative.py` measures it on SmolLM2.

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
