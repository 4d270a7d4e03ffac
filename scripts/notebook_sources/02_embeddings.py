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
# from ids to vectors in the 宋词 model shipped with minillm, prints the shapes, and then looks at
# what training puts into the embedding matrix: the nearest neighbours of a few tokens, in trained
# models and in an untrained one.
#
# **Try this:** change `TOY_IDS`, the characters in `CHARS`, the words in `GROUPS` and re-run.

# %%
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # CI runs two notebooks at once on two cores

import matplotlib.pyplot as plt
import numpy as np

from minillm import GPT
from minillm.model.embedding import embed
from nbhelpers import claim, load_pretrained, load_shipped

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
print(f"first token {songci_tok.decode([int(ids[0])])!r} (id {ids[0]}), first 8 of its {c.d_model} numbers:",
      rows[0, :8])

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
    return [(tok.decode([int(j)]), round(float(sims[j]), 2)) for j in best]

untrained = GPT(c, seed=0)
CHARS = [ch for ch in "春秋月花山水酒愁红东" if len(songci_tok.encode(ch)) == 1]
for ch in CHARS:
    print(f"{ch}: trained {neighbours(songci.params.wte, songci_tok, ch)}")
    print(f"   untrained {neighbours(untrained.params.wte, songci_tok, ch)}")

# %% [markdown]
# Read the lists: in the trained model a character's neighbours tend to be characters used in
# the same places of a poem; in the untrained one they are arbitrary. The untrained similarities
# are not 0 even so: two random directions in C dimensions have a cosine of about ±1/√C, and the
# top five of V such cosines are a few times that.
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
GROUPS = {g: [w for w in words if len(tok.encode(w)) == 1] for g, words in GROUPS.items()}
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
unit = X / np.linalg.norm(X, axis=1, keepdims=True)
cos = unit @ unit.T                                                 # [n, n]
group = np.repeat(np.arange(len(GROUPS)), [len(ws) for ws in GROUPS.values()])
same = (group[:, None] == group[None]) & ~np.eye(len(words), dtype=bool)
within, across = cos[same].mean(), cos[group[:, None] != group[None]].mean()
print(f"{model_name}: mean cosine within a group {within:.3f}, across groups {across:.3f}")
if model_name == "SmolLM2-135M-Instruct":
    claim(within > across + 0.1, f"words of one group are more alike than words of different groups "
          f"({within:.3f} vs {across:.3f}, by more than 0.1)", "not for these GROUPS")
else:
    print("(the groups are a demonstration for SmolLM2; the small fallback model knows few of "
          "these words, so no claim is made about it)")

# %% [markdown]
# With SmolLM2, groups of related words sit together: nobody told the model what a colour or a
# number is; the rows moved there because it helped predict the next token. An embedding is nothing more than
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
