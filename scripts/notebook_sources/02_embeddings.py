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
# This notebook follows the seed sentence from ids to vectors in the 宋词 model shipped with
# minillm, prints the shapes, and then looks at what training puts into the embedding matrix:
# the nearest neighbours of a few tokens, in trained models and in an untrained one.

# %%
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # CI runs two notebooks at once on two cores

import matplotlib.pyplot as plt
import numpy as np

from minillm import GPT
from minillm.model.embedding import embed
from nbhelpers import load_pretrained, load_shipped

np.set_printoptions(precision=3, suppress=True, linewidth=120)
songci, songci_tok = load_shipped("songci")
c = songci.config
print(f"weights/songci: vocabulary V = {c.vocab_size}, width C = {c.d_model}, "
      f"positions {c.position} ({c.n_ctx} of them)")

# %% [markdown]
# ## From ids to rows
#
# The embedding matrix `wte` has one row per vocabulary entry: shape [V, C]. Embedding is a
# lookup — id i selects row i. (The seed's 48572 is a row of DeepSeek's matrix; here ids are
# rows of this model's.) GPT-2-style models like this one then add a learned position vector
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
print("equals wte[ids] + wpe[:T] exactly:", bool((h[0] == rows + pos).all()))
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
def neighbours(wte, tok, word, k=5):
    """The k tokens whose embedding rows are most similar (cosine) to ``word``'s single token."""
    (i,) = tok.encode(word)
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
# top five of V such cosines are a few times that. The typical (median) similarity tells the two
# apart:

# %%
def median_similarity(wte, n=500, seed=0):
    rows = wte[np.random.default_rng(seed).choice(len(wte), n, replace=False)]
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    sims = unit @ unit.T
    return float(np.median(np.abs(sims[np.triu_indices(n, 1)])))

print(f"median |cosine| between random rows: trained {median_similarity(songci.params.wte):.3f}, "
      f"untrained {median_similarity(untrained.params.wte):.3f}; 1/√C = {1 / np.sqrt(c.d_model):.3f}")

# %% [markdown]
# ## A bigger model's space
#
# SmolLM2 (or, without it, the shipped Shakespeare model) has a larger vocabulary trained on far
# more text. Nearest neighbours of some English words, and a 2-D projection (the first two
# principal components) of a few groups of words:

# %%
model, tok, model_name = load_pretrained()
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
X = wte[[tok.encode(w)[0] for w in words]]                         # [n, C]
X = X - X.mean(axis=0)
_, _, Vt = np.linalg.svd(X, full_matrices=False)
P = X @ Vt[:2].T                                                    # [n, 2] principal components
fig, ax = plt.subplots(figsize=(8, 6))
k = 0
for g, ws in GROUPS.items():
    ax.scatter(P[k:k + len(ws), 0], P[k:k + len(ws), 1], label=g)
    for w, (x, y) in zip(ws, P[k:k + len(ws)]):
        ax.annotate(w.strip(), (x, y), fontsize=8)
    k += len(ws)
ax.set_xlabel("principal component 1")
ax.set_ylabel("principal component 2")
ax.set_title(f"Token embeddings of {model_name}, projected to 2-D")
ax.legend()
plt.show()

# %% [markdown]
# Groups of related words sit together: nobody told the model what a colour or a number is; the
# rows moved there because it helped predict the next token. An embedding is nothing more than
# this learned table — the first layer of the model, and, when the embeddings are *tied*, also
# its last: the logits are the final hidden state times `wteᵀ`, so a token's row is both how it
# is read and how it is scored as the next token.

# %%
for name, m in (("weights/songci", songci), (model_name, model)):
    print(f"{name}: tie_embeddings = {m.config.tie_embeddings}; "
          f"{m.params.wte.size / m.num_parameters():.0%} of the parameters are the embedding table")
