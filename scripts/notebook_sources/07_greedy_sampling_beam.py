# %% [markdown]
# # 07 · Greedy, sampling, beam search — measured
#
# The explainer articles compare the three decoding strategies in a table:
#
# | 维度 (aspect) | 加权随机采样 (sampling) | 贪心采样 (greedy) | Beam Search |
# |---|---|---|---|
# | 分支数 (branches) | 1 | 1 | beam_size |
# | 确定性 (determinism) | 随机 (random) | 完全确定 (fully deterministic) | 较确定 (fairly deterministic) |
# | 多样性 (diversity) | 高 (high) | 无 (none) | 低 (low) |
# | Token 消耗 (tokens consumed) | N | N | N × beam_size |
#
# This notebook first runs beam search by hand on a toy model small enough to follow — the
# articles' 很 → 很好 picture — and compares its total log-probability with greedy's; then measures
# every row of the table on the 宋词 (Song ci) model shipped with minillm: the same prompt, several
# runs of each strategy, and counts of the token positions the model actually computed.
#
# **Try this:** change the toy's probabilities in `CONTINUE` (each row's numbers sum to 1; can you
# make beam search and greedy agree?), `BEAM` (1 to 8), `N_NEW` (2 to 64), the `PROMPT` or beam
# search's `LENGTH_PENALTY` (0 to 3), and re-run.

# %%
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # CI runs two notebooks at once on two cores

import math

import matplotlib.pyplot as plt
import numpy as np

from minillm import beam_search, generate
from minillm.sampling import PRESETS
from minillm.functional import log_softmax
from nbhelpers import CountingModel, claim, knob_range, load_shipped

# %% [markdown]
# ## Beam search by hand: 很 → 很好
#
# > beam_size = 3 — 步骤 1：保留 top-3 候选 A: "很" B: "真" C: "挺"；步骤 2：每个分支扩展，再保留总分最高的
# > 3 条路径 A → ["很好", "很不错", "很棒"] … 最终：选分数最高的 1 条路径
# >
# > *Step 1: keep the top 3 candidates 很, 真, 挺. Step 2: extend every branch and keep the 3 paths
# > with the highest total score. Finally: pick the path with the highest score.*
#
# A toy "model" with two steps: the first token has the articles' distribution
# [0.5, 0.3, 0.15, 0.05]; the second depends on the first. A path's score is the sum of its
# tokens' log-probabilities (= the log of the product of the probabilities). Greedy is beam
# search with a beam of 1.

# %%
FIRST = {"很": 0.5, "真": 0.3, "挺": 0.15, "非常": 0.05}
CONTINUE = {"很": {"好": 0.4, "不错": 0.35, "棒": 0.25},      # after 很 the model hesitates
            "真": {"好": 0.9, "不错": 0.05, "棒": 0.05},      # after 真 it is sure
            "挺": {"好": 0.5, "不错": 0.3, "棒": 0.2},
            "非常": {"好": 0.6, "不错": 0.2, "棒": 0.2}}

for first_token, row in CONTINUE.items():
    if abs(sum(row.values()) - 1) > 1e-6 or min(row.values()) < 0:
        raise ValueError(f"CONTINUE[{first_token!r}] must hold probabilities ≥ 0 that sum to 1, got {row}")


def toy_next(path):
    """The toy model: next-token probabilities after ``path`` (a tuple of tokens)."""
    return FIRST if not path else CONTINUE[path[-1]]

def toy_beam_search(beam_size, steps=2, show=True, history=None):
    """The best path of a beam search on the toy; ``history`` (a list) receives each step's
    (candidates, kept) for the tree below."""
    beams = [((), 0.0)]                                               # (path, Σ log p)
    for step in range(1, steps + 1):
        candidates = [(path + (token,), score + math.log(p))
                      for path, score in beams for token, p in toy_next(path).items() if p > 0]
        candidates.sort(key=lambda c: -c[1])                          # best total first
        beams = candidates[:beam_size]                                # keep beam_size of them
        if history is not None:
            history.append((candidates, beams))
        if show:
            print(f"  step {step}: {len(candidates)} candidates, kept " + ", ".join(
                f"{''.join(path)} (p = {math.exp(score):.3f}, log p = {score:.3f})" for path, score in beams))
    return beams[0]

print("greedy (beam of 1):")
greedy_path, greedy_score = toy_beam_search(1)
print("beam search, beam of 3:")
tree = []
beam_path, beam_score = toy_beam_search(3, history=tree)
claim("".join(greedy_path) == "很好" and "".join(beam_path) == "真好" and beam_score > greedy_score,
      "beam search finds 真好, more probable than greedy's 很好",
      "with your CONTINUE they agree" if beam_path == greedy_path else "your CONTINUE changed the paths")
print(f"greedy: {''.join(greedy_path)} p = {math.exp(greedy_score):.3f};  "
      f"beam: {''.join(beam_path)} p = {math.exp(beam_score):.3f}")

# %% [markdown]
# The search as a tree: every path beam search scored (its probability at the node), the beams
# it kept at each step in colour, the pruned ones in grey; greedy's path dashed. (Labels in
# English — 很 very, 真 really, 挺 quite, 非常 extremely; 好 good, 不错 not bad, 棒 great — since a
# plotting font may lack Chinese characters.)

# %%
ENGLISH = {"很": "very", "真": "really", "挺": "quite", "非常": "extremely", "好": "good",
           "不错": "not bad", "棒": "great"}                     # the figure's labels (fonts may lack 汉字)
fig, ax = plt.subplots(figsize=(10, 5.2))
kept_paths = {path for _, kept in tree for path, _ in kept}
level1 = [path for path, _ in tree[0][0]]                            # first tokens, best first
rows2 = [path for path, _ in tree[1][0]]                             # extensions of the kept first tokens
y_of = {(): 0.5}
for i, path in enumerate(level1):
    y_of[path] = 1 - (i + 0.5) / len(level1)
for i, path in enumerate(rows2):
    y_of[path] = 1 - (i + 0.5) / len(rows2)
greedy_nodes = {greedy_path[:k] for k in range(1, len(greedy_path) + 1)}
for step, (candidates, _) in enumerate(tree, start=1):
    for path, score in candidates:
        parent, kept = path[:-1], path in kept_paths
        colour = "C3" if beam_path[:len(path)] == path else ("C0" if kept else "lightgrey")
        ax.plot([step - 1, step], [y_of[parent], y_of[path]], color=colour,
                ls="--" if path in greedy_nodes else "-", lw=2.5 if kept else 1, zorder=1)
        label = " ".join(ENGLISH.get(token, token) for token in path)
        ax.text(step, y_of[path], f" {label}  p = {math.exp(score):.3f}", va="center",
                fontsize=9, color="black" if kept else "grey")
ax.scatter([0], [0.5], color="black", zorder=2)
ax.text(0, 0.5, "start ", ha="right", va="center")
ax.set_xticks([0, 1, 2], ["", "step 1: all first tokens", "step 2: extensions of the kept ones"])
ax.set_yticks([])
ax.set_xlim(-0.3, 2.7)
ax.set_title("Beam search (beam of 3) on the toy: red = the best path, blue = kept, grey = pruned, "
             "dashed = greedy", fontsize=10)
plt.show()

# %% [markdown]
# Greedy commits to 很 (0.5) at step 1 and then the best it can do is 很好, 0.5 × 0.4 = 0.20.
# Beam search keeps 真 alive at step 1 although it looks worse (0.3), and after 真 the model is
# sure: 真好 = 0.3 × 0.9 = 0.27 — a more probable sentence that greedy never sees.
#
# **When beam search does not help.** If the runner-up's continuation is not confident enough to
# make up for its worse start, beam search returns exactly greedy's answer — just at
# beam_size times the cost. Make the model less sure after 真:

# %%
CONTINUE["真"] = {"好": 0.6, "不错": 0.2, "棒": 0.2}                 # 0.3 × 0.6 = 0.18 < 0.20
same = toy_beam_search(3, show=False)
print(f"beam of 3 now returns {''.join(same[0])} (p = {math.exp(same[1]):.3f}) — greedy's answer")
claim(same[0] == greedy_path, "beam search now returns greedy's answer", "not with your CONTINUE")
CONTINUE["真"] = {"好": 0.9, "不错": 0.05, "棒": 0.05}              # back to the first version

# %% [markdown]
# And beam search is not an exhaustive search either: a path that falls out of the beam at one
# step is gone for good, however good its continuation (try `FIRST["非常"] = 0.05` with a
# continuation `{"好": 1.0}` and a beam of 2). On real models the beam's answer is usually, not
# always, more probable than greedy's — measured below.
#
# ## The real thing: the 宋词 model

# %%
model, tok = load_shipped("songci")
counter = CountingModel(model)
PROMPT = "鹊桥仙\n"                  # a tune title (词牌); the model continues with an author and lines
N_NEW, RUNS, BEAM = 24, 8, 3
knob_range("N_NEW", N_NEW, 2, 64)
knob_range("BEAM", BEAM, 1, 8)
prompt = tok.encode(PROMPT)
print(f"prompt {PROMPT!r}: {len(prompt)} tokens; {N_NEW} new tokens per run, {RUNS} runs per strategy")

# %% [markdown]
# ## Run each strategy several times
#
# - **greedy**: `temperature=0` — always the argmax;
# - **sampling**: the 'creative' preset (its settings are printed below), seeds 0, 1, … (`RUNS`
#   of them) — and seed 0 once more;
# - **beam search**: `beam_search(beam_size=3)`, which keeps the 3 best partial answers by total
#   log-probability and returns the best (HF's rules, see `minillm/decoding/beam.py`).
#
# A `CountingModel` wrapper counts the forward passes and the token positions they computed.

# %%
def run(strategy, seed):
    counter.reset()
    if strategy == "greedy":
        ids = [s.id for s in generate(counter, prompt, N_NEW, temperature=0)]
    elif strategy == "sampling":
        ids = [s.id for s in generate(counter, prompt, N_NEW, preset="creative", seed=seed)]
    else:
        ids = beam_search(counter, prompt, beam_size=BEAM, max_new_tokens=N_NEW)[0].ids
    return dict(ids=ids, calls=counter.calls, positions=counter.positions)

results = {name: [run(name, seed) for seed in range(RUNS)] for name in ("greedy", "sampling", "beam")}
again = run("sampling", 0)
creative = PRESETS["creative"]
print(f"sampling: the 'creative' preset, T = {creative.temperature:g}, top-k {creative.top_k} (0 = off), "
      f"top-p {creative.top_p:g}; seeds 0 to {RUNS - 1}")
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
# - *repetition*: distinct-2 *within* each output, averaged (the articles say greedy decoding
#   "容易重复" — easily repeats itself);
# - *tokens computed*: token positions the forward passes processed, prompt included, per run;
# - *Σ log p*: the output's total log-probability under the model, Σ log p(token | everything
#   before it) — what beam search maximises — averaged over the runs.

# %%
def distinct_n(seqs, n=2):
    grams = [tuple(s[i:i + n]) for s in seqs for i in range(len(s) - n + 1)]
    return len(set(grams)) / max(1, len(grams))

def total_logprob(new_ids):
    """Σ log p of the new tokens after the prompt, from one forward over prompt + new."""
    ids = np.array(prompt + list(new_ids))
    logp = log_softmax(model(ids[:-1]))                                # [T - 1, V]
    return float(logp[np.arange(len(prompt) - 1, len(ids) - 1), ids[len(prompt):]].sum())

rows = {}
for name, runs in results.items():
    outs = [tuple(r["ids"]) for r in runs]
    rows[name] = dict(identical=len(set(outs)) == 1, distinct_outputs=len(set(outs)),
                      distinct2=distinct_n(outs), within=np.mean([distinct_n([o]) for o in outs]),
                      calls=np.mean([r["calls"] for r in runs]),
                      positions=np.mean([r["positions"] for r in runs]),
                      logprob=np.mean([total_logprob(o) for o in outs]))
print(f"{'':9s} {'all runs identical':>18s} {'distinct outputs':>17s} {'distinct-2':>10s} "
      f"{'within-run':>10s} {'forwards':>9s} {'positions':>10s} {'Σ log p':>11s}")
for name, r in rows.items():
    print(f"{name:9s} {str(r['identical']):>18s} {r['distinct_outputs']:>11d} of {RUNS} "
          f"{r['distinct2']:>10.2f} {r['within']:>10.2f} {r['calls']:>9.0f} {r['positions']:>10.0f} "
          f"{r['logprob']:>11.2f}")
print(f"sampling with the same seed twice gives the same tokens: {again['ids'] == results['sampling'][0]['ids']}")
P = len(prompt)
print(f"generated positions computed: greedy {rows['greedy']['positions'] - P:.0f}, "
      f"sampling {rows['sampling']['positions'] - P:.0f}, beam {rows['beam']['positions'] - P:.0f} "
      f"= {(rows['beam']['positions'] - P) / (rows['greedy']['positions'] - P):.2f} × greedy "
      f"(the prompt, {P} tokens, is computed once in every case)")

# %% [markdown]
# Why "24 new tokens" costs greedy 23 positions after the prompt: the first forward (over the
# prompt) already yields the first new token, and the last new token is chosen but never fed back
# — nothing comes after it. So N new tokens take 1 prompt pass + N − 1 one-token passes.
# (Wall time is not plotted: at this model's size a run takes milliseconds and the timing is
# noise; the counts are exact.)

# %%
assert rows["greedy"]["identical"] and rows["beam"]["identical"], "greedy and beam are deterministic"
assert again["ids"] == results["sampling"][0]["ids"], "the same seed must give the same sample"
claim(rows["sampling"]["distinct_outputs"] > 1, "sampling gives different texts from different seeds",
      "all runs agreed: try more RUNS or a longer N_NEW")
assert rows["greedy"]["positions"] - P == N_NEW - 1 and rows["greedy"]["calls"] == N_NEW, \
    "greedy with the cache: one pass over the prompt, then one position per new token"
beam_ratio = (rows["beam"]["positions"] - P) / (rows["greedy"]["positions"] - P)
assert BEAM - 1 < beam_ratio <= BEAM + 0.5, f"beam search should compute about BEAM × greedy's positions: {beam_ratio:.2f}"
print(f"✓ deterministic, reproducible, {N_NEW - 1} positions after the prompt for greedy, beam "
      f"{beam_ratio:.2f} × greedy's")
claim(rows["greedy"]["within"] < rows["sampling"]["within"] and rows["beam"]["within"] < rows["sampling"]["within"],
      "greedy and beam repeat themselves more than sampling", "not for this PROMPT / N_NEW")
claim(rows["beam"]["logprob"] >= rows["greedy"]["logprob"], f"beam's Σ log p {rows['beam']['logprob']:.2f} ≥ "
      f"greedy's {rows['greedy']['logprob']:.2f}", "beam search is not guaranteed to win: it prunes too")
claim(rows["sampling"]["logprob"] < min(rows["greedy"]["logprob"], rows["beam"]["logprob"]),
      f"sampling's mean Σ log p {rows['sampling']['logprob']:.2f} is the lowest of the three",
      "not for this PROMPT / N_NEW / seed")

fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
names = list(rows)
axes[0].bar(names, [rows[n]["distinct2"] for n in names])
axes[0].set_ylabel("distinct-2 over the runs")
axes[0].set_title(f"Diversity ({RUNS} runs each)")
axes[1].bar(names, [rows[n]["positions"] - P for n in names])
axes[1].set_ylabel("token positions computed")
axes[1].set_title(f"Work beyond the prompt for {N_NEW} new tokens")
for i, n in enumerate(names):
    axes[1].text(i, rows[n]["positions"] - P, f"{rows[n]['positions'] - P:.0f}", ha="center", va="bottom")
axes[2].bar(names, [rows[n]["logprob"] for n in names])
axes[2].set_ylabel("Σ log p of the output (mean)")
axes[2].set_title("How probable the output is (higher = more)")
plt.tight_layout()
plt.show()

# %% [markdown]
# **Reading the measurements against the articles' table.**
#
# - Branches and cost: beam search runs `beam_size` rows through every step, so the generated
#   positions it computes are ≈ beam_size × those of greedy or sampling — the articles' N × beam_size
#   — but the prompt is computed once and shared by all beams (`kv_cache.shared_prefix_cache`), and
#   the rows run as one batched forward (`forwards` above: the same count as greedy).
# - Probability: beam search's output has the highest total log-probability of the three here
#   and sampling's the lowest (both checked above). Beam search keeps the likeliest partial
#   sequences (ranked by the length-normalised score below, which orders outputs of equal length
#   as Σ log p does); sampling draws unlikely tokens by design.
# - Determinism: greedy and beam search are deterministic algorithms — not "fairly" but *fully*
#   deterministic: no random number is drawn. Sampling is random across seeds and exactly
#   reproducible with the same seed (minillm draws only from the generator it is given).
# - Diversity: greedy and beam search produce one output per prompt however often they run
#   (diversity across runs: none — the articles' "low" for beam search refers to its `beam_size`
#   candidates, which differ only slightly from each other; see below); sampling gives a
#   different text every run. Within one output, greedy and beam text repeat themselves more
#   (lower within-run distinct-2): always taking the likeliest continuation falls into loops.
#
# **Two numbers per hypothesis.** `beam_search` returns each finished hypothesis with its
# `logprob`, the plain Σ log p of its tokens (the table's "Σ log p" column, a mean over the runs), and its
# `score`, what the beams are ranked by: Hugging Face's length normalisation,
#
#     score = Σ log p / generated_length ** length_penalty
#
# (`minillm/decoding/beam.py`; the length counts the new tokens, not the prompt). A sum of
# negative numbers falls with every token, so ranking by the sum favours short answers; with the
# default `length_penalty = 1` the score is the mean log p per token instead, 0 ranks by the plain
# sum, and > 1 favours longer answers. When all hypotheses have the same length, the two orders
# agree.

# %%
LENGTH_PENALTY = 1.0                                                 # beam_search's default, as HF's
knob_range("LENGTH_PENALTY", LENGTH_PENALTY, 0, 3)
beams = beam_search(model, prompt, beam_size=BEAM, max_new_tokens=N_NEW, num_return_sequences=BEAM,
                    length_penalty=LENGTH_PENALTY)
for h in beams:
    print(f"Σ log p {h.logprob:8.3f} / {len(h.ids)} tokens ** {LENGTH_PENALTY:g} = score {h.score:7.3f}  "
          f"{tok.decode(h.ids)!r}")
    assert math.isclose(h.score, h.logprob / len(h.ids) ** LENGTH_PENALTY, rel_tol=1e-9), \
        f"score {h.score} should be Σ log p / length ** length_penalty = {h.logprob / len(h.ids) ** LENGTH_PENALTY}"
print(f"the best hypothesis's Σ log p {beams[0].logprob:.2f} is the beam row's 'Σ log p' above "
      f"({rows['beam']['logprob']:.2f}, recomputed from one forward pass)")
if len(beams) > 1:            # distinct-2 across outputs, the measure of the sampling runs' diversity
    claim(distinct_n([h.ids for h in beams]) < rows["sampling"]["distinct2"],
          "the returned beams are less diverse than the sampling runs", "not for this PROMPT / N_NEW / BEAM")
    print(f"distinct-2 among the {len(beams)} returned beams: {distinct_n([h.ids for h in beams]):.2f} "
          f"(among the {RUNS} sampling runs: {rows['sampling']['distinct2']:.2f})")
else:
    print(f"BEAM = {BEAM}: beam search returns one hypothesis — greedy's — so there is no diversity "
          f"among beams to compare with the sampling runs")

# %% [markdown]
# ## Exercises
#
# Write the function, run the cell: `check` prints the first case it gets wrong, or how many it
# passed. Solutions: `solutions/07_greedy_sampling_beam.py`.
#
# **1. One beam step.** `scores` [B] are the live beams' total log-probabilities, `logprobs`
# [B, V] each beam's next-token log-probabilities. Return the `beam_size` best extensions over
# ALL B·V candidates as a list of `(beam, token, score + logprob)`, best first.

# %%
from exercises import check

def beam_step(scores, logprobs, beam_size):
    raise NotImplementedError    # your code here

check("beam_step", beam_step)

# %% [markdown]
# **2. A sequence's log-probability.** `logprobs` [T, V] holds log p of every token at each of T
# positions, `ids` the T tokens chosen: return their total log-probability (a hypothesis's
# `logprob`; beam search ranks by it divided by length ** length_penalty, its `score`).

# %%
def sequence_logprob(logprobs, ids):
    raise NotImplementedError    # your code here

check("sequence_logprob", sequence_logprob)
