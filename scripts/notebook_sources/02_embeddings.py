# %% [markdown]
# # 02 · Embeddings: ids become vectors
#
# > Token 化之后，每个 Token 会被映射为一个整数 ID（如‘海水’→48572），再通过 Embedding 层转换为固定维度的
# > 数值向量。这些向量构成模型后续计算的基础输入——Transformer 并不直接处理文字，而是处理这些高维数值序列。
# >
# > *After tokenisation each token is mapped to an integer id (e.g. 海水 → 48572) and then, by the
# > embedding layer, to a vector of fixed dimension. These vectors are the model's input: a
# > transformer does not process text, it processes sequences of high-dimensional numbers.*
#
# This notebook does a lookup by hand on a 3 × 2 table, follows the explainer articles' sentence
# from ids to vectors in the 宋词 model shipped with minillm, prints the shapes, shows why a model
# needs positions (attention without them cannot tell 海水 from 水海) and what the learned
# position table looks like, and then looks at what training puts into the embedding matrix: the
# nearest neighbours of a few tokens, in trained models and in an untrained one, and a 2-D
# picture checked against random words.
#
# **Try this:** change `TOY_IDS` (1 to 8 ids, each 0, 1 or 2), the characters in `CHARS` (1 to 12
# characters), the words in `GROUPS` (2 to 6 groups of 2 to 8 words; words that are not one
# token of the model are dropped, then groups left with fewer than 2, and 2 groups must remain)
# and re-run. A value outside its
# range is refused with a message before any work starts.

# %%
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # CI runs two notebooks at once on two cores

import matplotlib.pyplot as plt
import numpy as np

from minillm import GPT
from minillm.model.attention import attention, causal_mask
from minillm.model.embedding import embed
from minillm.hooks import Layer
from minillm.model.norm import norm
from minillm.model.rope import apply_rope, rope_angles
from minillm.tokenizer.display import render_token
from nbhelpers import WEIGHTS, claim, knob, load_pretrained, load_shipped

np.set_printoptions(precision=3, suppress=True, linewidth=120)
songci, songci_tok = load_shipped("songci", fast=False)   # plain ndarrays, to inspect
c = songci.config
print(f"weights/songci: vocabulary V = {c.vocab_size}, width C = {c.d_model}, "
      f"positions {c.position} ({c.n_ctx} of them)")

# %% [markdown]
# ## A lookup by hand
#
# A vocabulary of 3 tokens, vectors of width 2: the table has 3 rows. Embedding ids is picking
# rows — no arithmetic at all.

# %%
TOY_WTE = np.array([[0.0, 0.0],      # row of token 0
                    [1.0, 2.0],      # row of token 1
                    [3.0, 4.0]])     # row of token 2
TOY_IDS = [2, 1, 1]
knob("TOY_IDS", TOY_IDS, lambda ids: 1 <= len(ids) <= 8 and all(i in (0, 1, 2) for i in ids),
     "a list of 1 to 8 ids, each 0, 1 or 2 (the table has 3 rows)")
toy = embed(TOY_WTE, np.array([TOY_IDS]))                           # [1, T] -> [1, T, C]
print("ids", TOY_IDS, "->\n", toy[0])
assert (toy[0] == TOY_WTE[TOY_IDS]).all(), \
    f"embed should pick rows {TOY_IDS} of TOY_WTE, got\n{toy[0]}: every id must be a row number 0-{len(TOY_WTE) - 1}"

# %% [markdown]
# ## From ids to rows
#
# The embedding matrix `wte` has one row per vocabulary entry: shape [V, C]. Embedding is a
# lookup — id i selects row i. (The articles' 48572 is a row of DeepSeek-V4's matrix; here ids
# are rows of this model's.) GPT-2-style models like this one then add a learned position vector
# `wpe[t]`; Llama-style models (SmolLM2) add nothing here and rotate Q and K instead (RoPE).

# %%
SENTENCE = "海水会吸收较多红光，蓝光更容易被散射回来，所以大海常呈蓝色。"
ids = np.array(songci_tok.encode(SENTENCE))                         # [T]
T = len(ids)
print(f"{len(SENTENCE)} characters → {T} ids: {ids[:10].tolist()} …")
print("wte", songci.params.wte.shape, " wpe", None if songci.params.wpe is None else songci.params.wpe.shape)

positions = np.arange(T)[None]                                      # [1, T]
h = embed(songci.params.wte, ids[None], songci.params.wpe, positions)   # [1, T, C]
print("embed(wte, ids, wpe, positions):", h.shape, "= [batch, T, C]")

rows = songci.params.wte[ids]                                       # [T, C]: plain row lookup
pos = songci.params.wpe[:T] if songci.params.wpe is not None else 0.0
assert (h[0] == rows + pos).all(), "embed should be wte[ids] + wpe[:T]"
print("equals wte[ids] + wpe[:T] exactly: True")
one_hot = np.eye(c.vocab_size, dtype=np.float32)[ids]              # [T, V]
print("a one-hot row times wte gives the same rows (V times the work):",
      bool(np.allclose(one_hot @ songci.params.wte, rows)))
print(f"first token {render_token(songci_tok.token_bytes(int(ids[0])))!r} (id {ids[0]}), first 8 of its {c.d_model} numbers:",
      rows[0, :8])

# %% [markdown]
# ## Positions: attention without them is order-blind
#
# The rows of `wte` say *which* token sits somewhere, nothing about *where*. Attention (notebook
# 03) compares every query with every key and sums the values weighted by those scores — and a
# sum does not care about order. So without position information, shuffling the tokens only
# shuffles the outputs: the model sees a bag of tokens. Checked on this model's first attention
# layer (its norm and its attention, with the model's own weights), fed the rows of `wte` alone:
#
# 1. no mask, no positions: permute the tokens → the outputs are the same rows, permuted;
# 2. the same with `wpe[t]` added to position t: the outputs are no longer a permutation;
# 3. the causal mask, no positions: swap 海 and 水 (the first two tokens) → every later position
#    computes exactly what it computed before: "水海会吸收…" and "海水会吸收…" are the same to it.

# %%
block = songci.params.blocks[0]
def first_attention(x, mask):
    """Layer 0's norm and attention on x [1, T, C] -> [1, T, C]."""
    return attention(norm(x, block.norm1, c.norm, c.norm_eps), block.attn, Layer(c, mask))

x_plain = songci.params.wte[ids][None]                               # [1, T, C] no positions
everyone = np.ones((1, T, T), dtype=bool)                            # [1, T, T] no mask
perm = np.random.default_rng(0).permutation(T)                       # [T] a shuffle of the positions
out = first_attention(x_plain, everyone)                             # [1, T, C]
gap_plain = np.abs(first_attention(x_plain[:, perm], everyone) - out[:, perm]).max()
x_pos = x_plain + songci.params.wpe[:T]                               # [1, T, C] with positions
gap_pos = np.abs(first_attention(x_plain[:, perm] + songci.params.wpe[:T], everyone)
                 - first_attention(x_pos, everyone)[:, perm]).max()
print(f"1. no positions: shuffled outputs vs the outputs shuffled: largest difference {gap_plain:.1e}")
print(f"2. with wpe added: largest difference {gap_pos:.2f} (outputs are up to "
      f"{np.abs(out).max():.2f} in size)")
assert gap_plain < 1e-4, f"without positions attention should only permute its outputs (float32, ±1e-4); " \
    f"they differ by {gap_plain:.2g}"

swap = np.arange(T)
swap[[0, 1]] = [1, 0]                                                # 海水… -> 水海…
causal = causal_mask(T, T)[None]                                     # [1, T, T]
moved = np.abs(first_attention(x_plain[:, swap], causal) - first_attention(x_plain, causal)).max(axis=-1)[0]   # [T]
moved_pos = np.abs(first_attention(x_plain[:, swap] + songci.params.wpe[:T], causal)
                   - first_attention(x_pos, causal)).max(axis=-1)[0]                                        # [T]
print(f"3. causal, no positions, 海 and 水 swapped: positions that moved {np.flatnonzero(moved > 1e-5).tolist()}; "
      f"with wpe: {np.flatnonzero(moved_pos > 1e-5).tolist()}")
assert (moved[2:] < 1e-5).all(), f"under the causal mask, without positions, positions after the swap " \
    f"see the same set of tokens and should not move; they move by up to {moved[2:].max():.2g}"
_ = claim(gap_pos > 0.01 and (moved_pos[2:] > 1e-5).all(),
      "with the learned positions added, the shuffle and the swap change the outputs",
      f"largest difference {gap_pos:.2g}; later positions moved: {(moved_pos[2:] > 1e-5).sum()} of {T - 2}")

# %% [markdown]
# (Subtle: under the causal mask a position is not entirely blind to where it is — it can count
# how many tokens it sees. But "which token came first" is lost, as case 3 shows.)
#
# ## The learned position table
#
# GPT-2-style models like this one learn one more table, `wpe` [n_ctx, C]: row t is added to the
# token's row at position t. Nothing forces any structure on it; training does. The cosine
# similarity of every pair of rows:

# %%
wpe = songci.params.wpe                                               # [P, C]
unit_p = wpe / np.linalg.norm(wpe, axis=1, keepdims=True)            # [P, C]
sim_p = unit_p @ unit_p.T                                             # [P, P]
P = len(wpe)
by_distance = np.array([np.diag(sim_p, k).mean() for k in range(P)])  # [P] mean cosine at distance k
fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.5))
fig.colorbar(a1.imshow(sim_p, cmap="RdBu_r", vmin=-1, vmax=1), ax=a1, label="cosine")
a1.set_xlabel("position s")
a1.set_ylabel("position t")
a1.set_title("weights/songci: cosine between rows t and s of wpe")
a2.plot(range(1, P), by_distance[1:])
a2.axhline(0, color="grey", lw=0.5)
a2.set_xlabel("distance |t − s|")
a2.set_ylabel("mean cosine")
a2.set_title("the same, averaged by distance")
plt.tight_layout()
plt.show()
near, far = by_distance[1], by_distance[P // 2]
print(f"mean cosine at distance 1: {near:.3f}; at distance {P // 2}: {far:.3f}; at {P - 1}: {by_distance[-1]:.3f}")
_ = claim(near > far + 0.3, f"neighbouring positions have similar rows, distant ones do not ({near:.2f} vs {far:.2f})",
      "this table has no such structure")

# %% [markdown]
# Training made nearby positions similar and far ones unlike: a position's row encodes roughly
# *where* it is, and nearby rows are nearly interchangeable. A learned table has one weakness:
# it stops at its last row (128 positions here); the model has never seen position 128.
#
# **The bridge to RoPE.** Llama-style models (SmolLM2) add nothing to the input. Inside every
# attention layer they *rotate* each query and key: pair i of the features, (i, i + D/2), turns
# by the angle m·θ_i at position m, θ_i = theta^(−2i/D). A rotation keeps lengths, and turning q
# by m·θ and k by n·θ changes their dot product only through n − m: the score depends on how far
# apart two tokens are, not on where they are. Notebook 13_formulas derives it with a toy; here
# is the fact, measured with minillm's `apply_rope`, and exercise 3 below writes the rotation.

# %%
def rotated(vec, m, theta=10000.0):
    """vec [D] as seen at position m: minillm's rotation (pairs (i, i + D/2))."""
    cos, sin = rope_angles(np.array([m]), len(vec), theta)            # [1, D/2] each
    return apply_rope(vec[None, None, None], cos[None, None], sin[None, None])[0, 0, 0]   # [D]

rng_q = np.random.default_rng(1)
q_vec, k_vec = rng_q.standard_normal(8, dtype=np.float32), rng_q.standard_normal(8, dtype=np.float32)
for m, n in ((5, 3), (12, 10), (102, 100), (5, 1)):
    print(f"query at {m:3d}, key at {n:3d} (distance {m - n}): q·k = {rotated(q_vec, m) @ rotated(k_vec, n):+.5f}")

# %% [markdown]
# ## What training puts in the matrix: nearest neighbours
#
# The rows start random. Training moves tokens that are used in similar contexts towards similar
# directions, because that helps predict the next token. Cosine similarity between rows shows
# it: below, each token's five nearest neighbours, in the trained 宋词 model and, as a control, in
# an untrained model of the same shape.

# %%
def centred(wte):
    """The rows minus their mean row: the direction every trained row shares is removed."""
    return wte - wte.mean(axis=0)                                   # [V, C]

def neighbours(wte, tok, word, k=5):
    """The k tokens whose (centred) embedding rows are most similar (cosine) to ``word``'s token."""
    (i,) = tok.encode(word)
    wte = centred(wte)
    unit = wte / np.linalg.norm(wte, axis=1, keepdims=True)         # [V, C]
    sims = unit @ unit[i]                                           # [V]
    best = [j for j in np.argsort(-sims) if j != i][:k]
    return [(render_token(tok.token_bytes(int(j))), round(float(sims[j]), 2)) for j in best]

untrained = GPT(c, seed=0)
CHARS = [ch for ch in "春秋月花山水酒愁红东" if len(songci_tok.encode(ch)) == 1]
knob("CHARS", CHARS, lambda cs: 1 <= len(cs) <= 12 and all(len(songci_tok.encode(ch)) == 1 for ch in cs),
     "a list of 1 to 12 characters, each one token of the 宋词 model")
for ch in CHARS:
    print(f"{ch}: trained {neighbours(songci.params.wte, songci_tok, ch)}")
    print(f"   untrained {neighbours(untrained.params.wte, songci_tok, ch)}")

# %% [markdown]
# Read the lists: in the trained model a character's neighbours tend to be characters used in
# the same places of a poem; in the untrained one they are arbitrary. The untrained similarities
# are not 0 even so: two random directions in C dimensions have a cosine of about ±1/√C, and the
# top five of V such cosines are a few times that.
#
# The same few characters turn up in many trained lists. They are among the most frequent in the
# poems (their rank by frequency in the shipped sample of the corpus, printed below): a frequent
# token is used in so many contexts that its row ends near the centre of many others. "Nearest"
# mixes meaning with frequency.

# %%
from collections import Counter

sample = (WEIGHTS / "songci" / "val_sample.txt").read_text(encoding="utf-8")
rank_of = {ch: r for r, (ch, _) in enumerate(Counter(sample).most_common(), 1)}
seen = Counter(w for ch in CHARS for w, _ in neighbours(songci.params.wte, songci_tok, ch))
print(f"most frequent neighbours over the {len(CHARS)} lists (times listed, rank by frequency in the sample):")
print("   ", ", ".join(f"{w} ×{n} (rank {rank_of.get(w, '—')})" for w, n in seen.most_common(5)))
print(f"    ({len(rank_of):,} different characters in the sample)")
_ = claim(all(rank_of.get(w, len(rank_of)) <= 50 for w, _ in seen.most_common(3)),
      "the three most listed neighbours are among the 50 most frequent characters of the sample",
      "not for these CHARS")

# %% [markdown]
#
# **Crowded directions.** Trained rows are not spread evenly over all directions: they share a
# common component (their mean row is far from 0), so every pair of raw rows looks somewhat
# similar. That is why the neighbours above are computed on *centred* rows (the mean row
# subtracted): what is left is what distinguishes one token from another. The typical (median)
# similarity, raw and centred:

# %%
def median_similarity(wte, n=500, seed=0):
    rows = wte[np.random.default_rng(seed).choice(len(wte), n, replace=False)]
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    sims = unit @ unit.T
    return float(np.median(np.abs(sims[np.triu_indices(n, 1)])))

sim = {(name, how): median_similarity(f(w)) for name, w in (("trained", songci.params.wte),
        ("untrained", untrained.params.wte)) for how, f in (("raw", lambda w: w), ("centred", centred))}
for (name, how), v in sim.items():
    print(f"median |cosine| between random rows, {name:9s} {how:7s}: {v:.3f}")
print(f"1/√C = {1 / np.sqrt(c.d_model):.3f}")
assert sim["trained", "raw"] > sim["trained", "centred"], "centring should remove the shared direction"
assert sim["trained", "centred"] > sim["untrained", "centred"], "training should make rows more alike"

# %% [markdown]
# ## A bigger model's space
#
# SmolLM2 (or, without it, the shipped Shakespeare model) has a larger vocabulary trained on far
# more text. Nearest neighbours of some English words, and a 2-D projection (the first two
# principal components) of a few groups of words:

# %%
model, tok, model_name = load_pretrained(fast=False)
wte = model.params.wte
GROUPS = {"colours": [" red", " blue", " green", " yellow", " black", " white"],
          "numbers": [" one", " two", " three", " four", " five", " six"],
          "family": [" mother", " father", " brother", " sister", " son", " daughter"],
          "places": [" London", " Paris", " Rome", " France", " England", " Italy"]}
knob("GROUPS", GROUPS, lambda gs: 2 <= len(gs) <= 6 and all(2 <= len(ws) <= 8 for ws in gs.values()),
     "2 to 6 groups of 2 to 8 words")
GROUPS = {g: [w for w in words if len(tok.encode(w)) == 1] for g, words in GROUPS.items()}
dropped = [g for g, ws in GROUPS.items() if len(ws) < 2]
if dropped:
    print(f"groups dropped (fewer than 2 of their words are one token of {model_name}): {dropped}")
GROUPS = {g: ws for g, ws in GROUPS.items() if g not in dropped}
knob("GROUPS", GROUPS, lambda gs: len(gs) >= 2,
     f"at least 2 groups that each keep 2 words that are one token of {model_name}")
for word in [" blue", " three", " king", " Paris"]:
    if len(tok.encode(word)) == 1:
        print(f"{word!r:9}: {neighbours(wte, tok, word)}")

words = [w for ws in GROUPS.values() for w in ws]
X = centred(wte)[[tok.encode(w)[0] for w in words]]                # [n, C]
X = X - X.mean(axis=0)                                              # centred again, for the PCA
_, _, Vt = np.linalg.svd(X, full_matrices=False)
P = X @ Vt[:2].T                                                    # [n, 2] principal components
def stack(columns, clearance, width):
    """Label columns, one per group: (x, top y, bottom y). Each column moves down as a whole just
    enough to clear by ``clearance`` every column above it closer than ``width`` in x; from the
    top column down, deterministic. Returns each column's downward shift."""
    placed, shifts = [], {}
    for k in sorted(range(len(columns)), key=lambda k: -columns[k][1]):
        x, top, bottom = columns[k]
        shift = 0.0
        while clash := [b for px, t, b in placed if abs(px - x) < width
                        and bottom - shift - clearance < t and top - shift + clearance > b]:
            shift = top - (min(clash) - clearance)                   # its top just below the lowest
        placed.append((x, top - shift, bottom - shift))
        shifts[k] = shift
    return [shifts[k] for k in range(len(columns))]

fig, ax = plt.subplots(figsize=(9, 7))
span = P.max(axis=0) - P.min(axis=0)                                # [2]
gap = 0.04 * span[1]                                                # between two labels' centres
columns, k = [], 0                                                  # per group: labels and their x
for g, ws in GROUPS.items():
    pts = P[k:k + len(ws)]                                          # [n_g, 2]
    dots = ax.scatter(pts[:, 0], pts[:, 1], label=g)
    # labels in a column right of the group, in the points' vertical order, joined by a line:
    # points of one group sit too close together to label in place
    label_x = pts[:, 0].max() + 0.08 * span[0]
    order = np.argsort(-pts[:, 1])
    ys = pts[:, 1].mean() + (len(ws) / 2 - 0.5 - np.arange(len(ws))) * gap   # [n_g] top down
    columns.append((label_x, [(ws[j].strip(), pts[j], y) for j, y in zip(order, ys)], dots.get_facecolor()[0]))
    k += len(ws)
# two groups' columns can meet (SmolLM2's places and family did): the lower one moves down
shifts = stack([(x, labs[0][2], labs[-1][2]) for x, labs, _ in columns], 2 * gap, width=0.15 * span[0])
for (x, labs, colour), shift in zip(columns, shifts):
    for word, point, y in labs:
        ax.annotate(word, point, xytext=(x, y - shift), fontsize=9, va="center", color=colour,
                    arrowprops=dict(arrowstyle="-", lw=0.5, color="grey"))
lowest = min(labs[-1][2] - shift for (_, labs, _), shift in zip(columns, shifts))
ax.set_ylim(min(P[:, 1].min(), lowest) - 0.05 * span[1], None)
ax.set_xlim(P[:, 0].min() - 0.05 * span[0], P[:, 0].max() + 0.3 * span[0])
ax.set_xlabel("principal component 1")
ax.set_ylabel("principal component 2")
ax.set_title(f"Token embeddings of {model_name}, projected to 2-D")
ax.legend(loc="center")
plt.show()

# %% [markdown]
# Checked, not just seen: the average cosine between two words of the same group against two
# words of different groups (centred rows):

# %%
def within_across(rows, sizes):
    """Mean cosine between two rows of one group and between rows of different groups; the rows
    [n, C] come group after group (``sizes`` rows each) and are centred on their own mean first."""
    rows = rows - rows.mean(axis=0)
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    cos = unit @ unit.T                                             # [n, n]
    group = np.repeat(np.arange(len(sizes)), sizes)                 # [n] group of each row
    same = (group[:, None] == group[None]) & ~np.eye(len(rows), dtype=bool)
    return cos[same].mean(), cos[group[:, None] != group[None]].mean()

sizes = [len(ws) for ws in GROUPS.values()]
within, across = within_across(X, sizes)
print(f"{model_name}: mean cosine within a group {within:.3f}, across groups {across:.3f}")
if model_name == "SmolLM2-135M-Instruct":
    claim(within > across + 0.1, f"words of one group are more alike than words of different groups "
          f"({within:.3f} vs {across:.3f}, by more than 0.1)", "not for these GROUPS")
else:
    print("(the groups are a demonstration for SmolLM2; the small fallback model knows few of "
          "these words, so no claim is made about it)")

# %% [markdown]
# ## A control: random words
#
# The projection above was fitted on the chosen words only: PCA picks the two directions that
# spread *those* words most, so some grouping is built in before the model has any say. Two
# controls. (1) The same words on axes fitted to up to 2,000 random whole-word tokens of the
# vocabulary (" " followed by three or more lowercase letters): directions nobody chose for these
# groups. (2) The within/across measure for random groups of random whole words, of the same
# sizes, 200 times: how big a gap does chance give?

# %%
import re

rng = np.random.default_rng(0)
whole_words = np.array([i for i in range(tok.vocab_size) if re.fullmatch(r" [a-z]{3,}", tok.decode([i]))])
background = rng.choice(whole_words, size=min(2000, len(whole_words)), replace=False)   # [N] ids
B = centred(wte)[background]                                         # [N, C]
_, _, Vt_bg = np.linalg.svd(B - B.mean(axis=0), full_matrices=False)
axes_bg = Vt_bg[:2].T                                                 # [C, 2] fitted on random words
chosen_bg = (centred(wte)[[tok.encode(w)[0] for w in words]] - B.mean(axis=0)) @ axes_bg   # [n, 2]

random_gaps = np.array([np.subtract(*within_across(centred(wte)[rng.choice(whole_words, sum(sizes), replace=False)],
                                                   sizes)) for _ in range(200)])          # [200]
print(f"{len(whole_words):,} whole-word tokens; the background: {len(background):,} of them")
print(f"within − across: chosen groups {within - across:+.3f}; random groups of the same sizes: mean "
      f"{random_gaps.mean():+.3f}, 99th percentile {np.percentile(random_gaps, 99):+.3f}, "
      f"largest of 200 {random_gaps.max():+.3f}")

fig, (a1, a2) = plt.subplots(1, 2, figsize=(13, 5))
a1.scatter(*((B - B.mean(axis=0)) @ axes_bg).T, s=3, color="lightgrey", label="random whole words")
k = 0
for g, ws in GROUPS.items():
    a1.scatter(*chosen_bg[k:k + len(ws)].T, label=g)
    for w, point in zip(ws, chosen_bg[k:k + len(ws)]):
        a1.annotate(w.strip(), point, fontsize=7)
    k += len(ws)
a1.set_title("the chosen words on axes fitted to random words")
a1.set_xlabel("component 1 of the random words")
a1.set_ylabel("component 2")
a1.legend(fontsize=7)
a2.hist(random_gaps, bins=30, color="grey", label="200 random groupings")
a2.axvline(within - across, color="C3", label="the chosen groups")
a2.set_xlabel("mean cosine within groups − across groups")
a2.set_ylabel("count")
a2.set_title(f"{model_name}: the chosen groups against chance")
a2.legend(fontsize=8)
plt.tight_layout()
plt.show()
_ = claim(within - across > random_gaps.max(), "the chosen groups are more alike inside than any of 200 random "
      "groupings of random words", f"{within - across:+.3f} against a largest random {random_gaps.max():+.3f}")

# %% [markdown]
# The random groupings set the scale of chance (the histogram); the chosen groups' gap is to be
# read against it (the claim above is computed, ✓ or ✗). On the random words' own axes the
# groups may look less separated than on axes fitted to them: the first plot of this section
# chose its view. With SmolLM2, groups of related words sit together: nobody told the model what
# a colour or a number is; the rows moved there because it helped predict the next token. An
# embedding is nothing more than
# this learned table — the first layer of the model, and, when the embeddings are *tied*, also
# its last: the logits are the final hidden state times `wteᵀ`, so a token's row is both how it
# is read and how it is scored as the next token.

# %%
for name, m in (("weights/songci", songci), (model_name, model)):
    print(f"{name}: tie_embeddings = {m.config.tie_embeddings}; "
          f"{m.params.wte.size / m.num_parameters():.0%} of the parameters are the embedding table")

# %% [markdown]
# ## Exercises
#
# Write the function, run the cell: `check` prints the first case it gets wrong, or how many it
# passed. Solutions: `solutions/02_embeddings.py`.
#
# **1. Embedding lookup.** `wte` is [V, C], `ids` a 1-D array of ids: return the [T, C] rows.

# %%
from exercises import check

def embedding_lookup(wte, ids):
    raise NotImplementedError    # your code here

check("embedding_lookup", embedding_lookup)

# %% [markdown]
# **2. Cosine similarity** of two vectors: a·b / (|a| |b|) — the measure used for the neighbours.

# %%
def cosine_similarity(a, b):
    raise NotImplementedError    # your code here

check("cosine_similarity", cosine_similarity)

# %% [markdown]
# **3. One RoPE step.** `x` is [T, D] (D even), `positions` [T] whole numbers, `theta` a number
# (10,000 for Llama 2). Split each row's D features into D/2 pairs — pair i is `(x[t, i],
# x[t, i + D/2])`, the first half of the row against the second — and turn pair i of row t
# counter-clockwise by the angle `positions[t] · θ_i`, with θ_i = theta^(−2i/D):
#
#     a' = a·cos(angle) − b·sin(angle)
#     b' = b·cos(angle) + a·sin(angle)
#
# Return the rotated [T, D]. (This is the layout minillm and Hugging Face use; llama.cpp pairs
# neighbours (2i, 2i + 1) — the same model with its weights' rows reordered.) Once it passes, try
# it on two random vectors: the dot product of q at m and k at n depends only on m − n.

# %%
def rope_rotate(x, positions, theta):
    raise NotImplementedError    # your code here

check("rope_rotate", rope_rotate)
