# %% [markdown]
# # 07 · Greedy, sampling, beam search — measured
#
# The seed compares the three decoding strategies in a table:
#
# | 维度 (aspect) | 加权随机采样 (sampling) | 贪心采样 (greedy) | Beam Search |
# |---|---|---|---|
# | 分支数 (branches) | 1 | 1 | beam_size |
# | 确定性 (determinism) | 随机 (random) | 完全确定 (fully deterministic) | 较确定 (fairly deterministic) |
# | 多样性 (diversity) | 高 (high) | 无 (none) | 低 (low) |
# | Token 消耗 (tokens consumed) | N | N | N × beam_size |
#
# This notebook measures every row on the 宋词 (Song ci) model shipped with minillm: the same
# prompt, several runs of each strategy, and counts of the token positions the model actually
# computed.

# %%
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # CI runs two notebooks at once on two cores

import time

import matplotlib.pyplot as plt
import numpy as np

from minillm.beam import beam_search
from minillm.generate import generate
from nbhelpers import CountingModel, load_shipped

model, tok = load_shipped("songci")
counter = CountingModel(model)
PROMPT = "鹊桥仙\n"                  # a tune title (词牌); the model continues with an author and lines
N_NEW, RUNS, BEAM = 24, 8, 3
prompt = tok.encode(PROMPT)
print(f"prompt {PROMPT!r}: {len(prompt)} tokens; {N_NEW} new tokens per run, {RUNS} runs per strategy")

# %% [markdown]
# ## Run each strategy several times
#
# - **greedy**: `temperature=0` — always the argmax;
# - **sampling**: the 'creative' preset (T = 1, top-p 0.95), seeds 0 … 7 — and seed 0 once more;
# - **beam search**: `beam_search(beam_size=3)`, which keeps the 3 best partial answers by total
#   log-probability and returns the best (HF's rules, see `minillm/beam.py`).
#
# A `CountingModel` wrapper counts the forward passes and the token positions they computed.

# %%
def run(strategy, seed):
    counter.reset()
    start = time.perf_counter()
    if strategy == "greedy":
        ids = [s.id for s in generate(counter, prompt, N_NEW, temperature=0)]
    elif strategy == "sampling":
        ids = [s.id for s in generate(counter, prompt, N_NEW, preset="creative", seed=seed)]
    else:
        ids = beam_search(counter, prompt, beam_size=BEAM, max_new_tokens=N_NEW)[0].ids
    return dict(ids=ids, calls=counter.calls, positions=counter.positions,
                seconds=time.perf_counter() - start)

results = {name: [run(name, seed) for seed in range(RUNS)] for name in ("greedy", "sampling", "beam")}
again = run("sampling", 0)
for name, runs in results.items():
    print(f"── {name}")
    for r in runs[:3]:
        print("   ", repr(tok.decode(r["ids"])))
print("sampling, seed 0 again:", repr(tok.decode(again["ids"])))

# %% [markdown]
# ## The table, measured
#
# - *determinism*: do the runs give identical tokens? (for sampling: across seeds, and with the
#   same seed twice);
# - *diversity*: distinct outputs among the runs, and distinct-2 — the share of the runs'
#   bigrams (pairs of consecutive tokens) that are different from each other (1 = no bigram
#   repeats anywhere, low = the runs say the same thing);
# - *repetition*: distinct-2 *within* each output, averaged (the seed says greedy decoding
#   "容易重复" — easily repeats itself);
# - *tokens computed*: token positions the forward passes processed, prompt included, per run.

# %%
def distinct_n(seqs, n=2):
    grams = [tuple(s[i:i + n]) for s in seqs for i in range(len(s) - n + 1)]
    return len(set(grams)) / max(1, len(grams))

rows = {}
for name, runs in results.items():
    outs = [tuple(r["ids"]) for r in runs]
    rows[name] = dict(identical=len(set(outs)) == 1, distinct_outputs=len(set(outs)),
                      distinct2=distinct_n(outs), within=np.mean([distinct_n([o]) for o in outs]),
                      calls=np.mean([r["calls"] for r in runs]),
                      positions=np.mean([r["positions"] for r in runs]),
                      seconds=np.median([r["seconds"] for r in runs]))
print(f"{'':9s} {'all runs identical':>18s} {'distinct outputs':>17s} {'distinct-2':>10s} "
      f"{'within-run':>10s} {'forwards':>9s} {'positions':>10s} {'time (s)':>9s}")
for name, r in rows.items():
    print(f"{name:9s} {str(r['identical']):>18s} {r['distinct_outputs']:>11d} of {RUNS} "
          f"{r['distinct2']:>10.2f} {r['within']:>10.2f} {r['calls']:>9.0f} {r['positions']:>10.0f} "
          f"{r['seconds']:>9.2f}")
print(f"sampling with the same seed twice gives the same tokens: {again['ids'] == results['sampling'][0]['ids']}")
P = len(prompt)
print(f"generated positions computed: greedy {rows['greedy']['positions'] - P:.0f}, "
      f"sampling {rows['sampling']['positions'] - P:.0f}, beam {rows['beam']['positions'] - P:.0f} "
      f"= {(rows['beam']['positions'] - P) / (rows['greedy']['positions'] - P):.2f} × greedy "
      f"(the prompt, {P} tokens, is computed once in every case)")

# %%
fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
names = list(rows)
axes[0].bar(names, [rows[n]["distinct2"] for n in names])
axes[0].set_ylabel("distinct-2 over the runs")
axes[0].set_title(f"Diversity ({RUNS} runs each)")
axes[1].bar(names, [rows[n]["positions"] - P for n in names])
axes[1].set_ylabel("token positions computed")
axes[1].set_title(f"Work for {N_NEW} new tokens (prompt excluded)")
axes[2].bar(names, [rows[n]["seconds"] for n in names])
axes[2].set_ylabel("seconds (median run)")
axes[2].set_title("Wall time")
plt.tight_layout()
plt.show()

# %% [markdown]
# **Reading the measurements against the seed's table.**
#
# - Branches and cost: beam search runs `beam_size` rows through every step, so the generated
#   positions it computes are ≈ beam_size × those of greedy or sampling — the seed's N × beam_size
#   — but the prompt is computed once and shared by all beams (`batch.shared_prefix_cache`), and
#   the rows run as one batched forward, so its wall time grows by much less than beam_size.
# - Determinism: greedy and beam search are deterministic algorithms — not "fairly" but *fully*
#   deterministic: no random number is drawn. Sampling is random across seeds and exactly
#   reproducible with the same seed (minillm draws only from the generator it is given).
# - Diversity: greedy and beam search produce one output per prompt however often they run
#   (diversity across runs: none — the seed's "low" for beam search refers to its `beam_size`
#   candidates, which differ only slightly from each other; see below); sampling gives a
#   different text every run. Within one output, greedy and beam text repeat themselves more
#   (lower within-run distinct-2): always taking the likeliest continuation falls into loops.

# %%
beams = beam_search(model, prompt, beam_size=BEAM, max_new_tokens=N_NEW, num_return_sequences=BEAM)
for h in beams:
    print(f"score {h.score:7.3f}  {tok.decode(h.ids)!r}")
print(f"distinct-2 among the {BEAM} returned beams: {distinct_n([h.ids for h in beams]):.2f} "
      f"(sampling runs: {rows['sampling']['distinct2']:.2f})")
